"""pytest's view of the end-to-end world (tests/e2e/world.py): one per session.

Marked ``e2e``: tests/run (and so .ci/run) runs them after installing what they need;
they fail, never skip, when something is missing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

import pytest

from tests.conftest import USER_STATE
from tests.e2e.world import World, missing_tools, mlcc, open_world

__all__ = ["World", "mlcc"]


@pytest.hookimpl(tryfirst=True)  # before -m selects: `pytest` leaves these out, `-m e2e` runs them
def pytest_collection_modifyitems(items: List[pytest.Item]) -> None:
    for item in items:
        if "tests/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)


def _snapshot(paths: Tuple[Path, ...]) -> Dict[str, Optional[Tuple[int, int]]]:
    """(size, mtime) of each file under the paths; what the e2e world must not change."""
    found: Dict[str, Optional[Tuple[int, int]]] = {}
    for path in paths:
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for file in files:
            stat = file.stat()
            found[str(file)] = (stat.st_size, stat.st_mtime_ns)
        if not files:
            found[str(path)] = None
    return found


@pytest.fixture(scope="session", autouse=True)
def _users_state_is_untouched() -> Iterator[None]:
    """The e2e world builds, records and caches only in its own folders: the user's build
    history and cache (as mlcc finds them without the tests) stay byte for byte as they were."""
    before = _snapshot(USER_STATE)
    yield
    after = _snapshot(USER_STATE)
    if after != before:
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        pytest.fail(f"the e2e suite wrote into the user's own state: {', '.join(changed)}")


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
