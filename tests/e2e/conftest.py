"""pytest's view of the end-to-end world (tests/e2e/world.py): one per session.

Marked ``e2e``: tests/run (and so .ci/run) runs them after installing what they need;
they fail, never skip, when something is missing.
"""

from __future__ import annotations

import os
from typing import Iterator, List

import pytest

from tests.e2e.world import World, missing_tools, mlcc, open_world

__all__ = ["World", "mlcc"]


def pytest_collection_modifyitems(items: List[pytest.Item]) -> None:
    for item in items:
        if "tests/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    missing = missing_tools()
    if missing:
        pytest.fail(f"the e2e suite needs {', '.join(missing)}: tests/run installs them (as root, with apt)")
    if os.geteuid() != 0:
        pytest.fail("the e2e suite runs as root (chroot builds, binfmt, dockerd)")
    # ppc64le comes from qemu: slow, but the manifest-list test needs it
    arches = os.environ.get("MLCC_E2E_ARCHES", "x86_64,ppc64le").split(",")
    with open_world(tmp_path_factory.mktemp("e2e"), arches) as world:
        yield world
