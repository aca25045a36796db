"""History: a read command writes nothing; foreign and read-only databases are named as such."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest


def _foreign_db(path: Path) -> bytes:
    connection = sqlite3.connect(str(path))
    connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    connection.execute("INSERT INTO notes (text) VALUES ('hello')")
    connection.commit()
    connection.close()
    return path.read_bytes()


def test_history_of_another_applications_database_changes_nothing(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    other = tmp_path / "other.sqlite"
    before = _foreign_db(other)
    result = cli("history", "--history", str(other))
    assert result.code == 9, result.err
    assert "not an mlcc build history" in result.err
    assert other.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cwd", "other.sqlite"]  # no -wal / -shm
    connection = sqlite3.connect(str(other))
    assert connection.execute("PRAGMA user_version").fetchone()[0] == 0
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_recording_into_a_foreign_database_is_refused(tmp_path: Path) -> None:
    from mlcc.errors import HistoryError
    from mlcc.history import History, Record

    other = tmp_path / "other.sqlite"
    before = hashlib.sha256(_foreign_db(other)).hexdigest()
    with pytest.raises(HistoryError, match="not an mlcc build history"):
        History(other).record(Record("ssd", "v", "sha256:" + "0" * 64, "podman", "built", 1.0))
    assert hashlib.sha256(other.read_bytes()).hexdigest() == before


def test_history_read_of_a_missing_or_empty_database_writes_nothing(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    result = cli("history", "--history", str(empty))
    assert result.code == 0, result.err
    assert empty.read_bytes() == b""


def test_read_only_history_is_not_called_damaged(tmp_path: Path) -> None:
    from mlcc.history import History

    path = tmp_path / "h.sqlite"
    History(path).check()
    # tests run as root, which writes 0444 files: a read-only connection gives sqlite's real error
    readonly = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
    with pytest.raises(sqlite3.OperationalError) as raised:
        readonly.execute("INSERT INTO builds (finished) VALUES ('x')")
    message = str(History(path)._error(raised.value))
    assert "read-only" in message and "damaged" not in message
