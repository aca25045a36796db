"""Readers never upgrade a history in place; writers do. ``report`` and ``results compare``
migrated an older history to the current format (``history`` did not), after which an
older mlcc refused the file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

FORMAT_1 = """
CREATE TABLE builds (
    id INTEGER PRIMARY KEY AUTOINCREMENT, finished TEXT NOT NULL, benchmark TEXT NOT NULL,
    variant TEXT NOT NULL, arch TEXT, cuda TEXT, base TEXT, cell TEXT, content_digest TEXT NOT NULL,
    backend TEXT NOT NULL, status TEXT NOT NULL, seconds REAL NOT NULL, image_digest TEXT,
    size INTEGER, log_path TEXT, mlcc_version TEXT NOT NULL, reason TEXT, reference TEXT
);
INSERT INTO builds (finished, benchmark, variant, content_digest, backend, status, seconds, mlcc_version)
VALUES ('2026-01-01T00:00:00Z', 'maskrcnn', 'cuda10.1-cudnn7-ubi8-x86_64', 'd', 'podman', 'built', 5.0,
        '0.0.9');
PRAGMA user_version = 1;
"""


@pytest.mark.parametrize(
    "argv",
    [("history",), ("report", "--html", "{tmp}/r.html"), ("results", "compare", "--html", "{tmp}/c.html")],
    ids=["history", "report", "results-compare"],
)
def test_a_reader_leaves_an_older_history_as_it_was(cli, tmp_path: Path, argv) -> None:  # type: ignore[no-untyped-def]
    history = tmp_path / "old.sqlite"
    connection = sqlite3.connect(history)
    connection.executescript(FORMAT_1)
    connection.close()
    before = history.read_bytes()
    result = cli(*(a.format(tmp=tmp_path) for a in argv), "--history", str(history))
    assert result.code == 0, result
    connection = sqlite3.connect(history)
    assert connection.execute("PRAGMA user_version").fetchone()[0] == 1
    assert "flavour" not in {row[1] for row in connection.execute("PRAGMA table_info(builds)")}
    connection.close()
    assert history.read_bytes() == before
