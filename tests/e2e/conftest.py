"""pytest's view of the end-to-end world (tests/e2e/world.py): one per session.

Marked ``e2e``: tests/run (and so .ci/run) runs them after installing what they need;
they fail, never skip, when something is missing.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator, List

import pytest

from tests.conftest import USER_STATE
from tests.e2e.world import World, missing_tools, mlcc, open_world

__all__ = ["World", "mlcc"]


@pytest.hookimpl(tryfirst=True)  # before -m selects: `pytest` leaves these out, `-m e2e` runs them
def pytest_collection_modifyitems(items: List[pytest.Item]) -> None:
    for item in items:
        if "tests/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)


E2E_BENCHMARKS = (
    "e2e-probe",
    "e2e-probe2",
    "e2e-compiled",
    "e2e-ngc",
)  # tests/e2e/recipes: no real benchmark has these


def _e2e_rows_since(history: Path, since: str) -> int:
    """Rows the e2e benchmarks added to a history DB after ``since`` (read-only)."""
    if not history.is_file():
        return 0
    uri = f"file:{history}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=30)) as connection:
        marks = ", ".join("?" for _ in E2E_BENCHMARKS)
        query = f"SELECT COUNT(*) FROM builds WHERE benchmark IN ({marks}) AND finished >= ?"
        return int(connection.execute(query, (*E2E_BENCHMARKS, since)).fetchone()[0])


@pytest.fixture(scope="session", autouse=True)
def _users_history_is_untouched() -> Iterator[None]:
    """The e2e world records its builds in its own history: at the end, the user's own
    database (as mlcc finds it without the tests) has no row of an e2e benchmark from this
    session. (Other programs may use that database meanwhile; only our rows count.)"""
    history = USER_STATE[0]
    since = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    yield
    added = _e2e_rows_since(history, since)
    if added:
        pytest.fail(f"the e2e suite recorded {added} build(s) in the user's own history {history}")


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
