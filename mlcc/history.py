"""Build history: every build, skip and failure, in an embedded SQLite database.

Where: ``--history FILE``, else ``MLCC_HISTORY``, else ``$XDG_DATA_HOME/mlcc/history.sqlite``
(``~/.local/share/mlcc/history.sqlite``). Each record is one short write transaction in
WAL mode with a busy timeout, so parallel builds (threads or processes) can record at
once. A database that stays locked, or is corrupt, is an error that names the file; mlcc
never recreates or truncates it, so recorded rows are never lost.
"""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional

from mlcc.errors import HistoryError
from mlcc.validate import count, finite_time

SCHEMA_VERSION = 3
BUSY_TIMEOUT_SECONDS = 30.0
MAX_LAYERS_SHOWN = 10  # of the largest layers a row keeps
STATUSES = ("built", "skipped", "failed")
COLUMNS = (
    "finished",
    "benchmark",
    "variant",
    "arch",
    "cuda",
    "base",
    "cell",
    "content_digest",
    "backend",
    "status",
    "seconds",
    "image_digest",
    "size",
    "log_path",
    "mlcc_version",
    "reason",
    "reference",
    "inputs_digest",
    "base_digest",
    "uncompressed",
    "flavour",
    "largest_layers",
)
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS builds (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    finished TEXT NOT NULL,
    benchmark TEXT NOT NULL,
    variant TEXT NOT NULL,
    arch TEXT,
    cuda TEXT,
    base TEXT,
    cell TEXT,
    content_digest TEXT NOT NULL,
    backend TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN {STATUSES}),
    seconds REAL NOT NULL,
    image_digest TEXT,
    size INTEGER,
    log_path TEXT,
    mlcc_version TEXT NOT NULL,
    reason TEXT,
    reference TEXT,
    inputs_digest TEXT,
    base_digest TEXT,
    uncompressed INTEGER,
    flavour TEXT,
    largest_layers TEXT
);
CREATE INDEX IF NOT EXISTS builds_by_cell ON builds (benchmark, variant, id);
"""
# Format 1 -> 2: the generated files' digest and the base image's digest, apart (the
# content digest folds both), so that a rebuild can say the base tag moved.
MIGRATIONS = {
    1: "ALTER TABLE builds ADD COLUMN inputs_digest TEXT; ALTER TABLE builds ADD COLUMN base_digest TEXT;",
    # Format 2 -> 3: the unpacked size, the image's flavour and its largest layers beside the
    # pulled (compressed) size, so that history and the report show what a node pays for.
    2: "ALTER TABLE builds ADD COLUMN uncompressed INTEGER; ALTER TABLE builds ADD COLUMN flavour TEXT;"
    " ALTER TABLE builds ADD COLUMN largest_layers TEXT;",
}


class Record(NamedTuple):
    benchmark: str
    variant: str
    content_digest: str
    backend: str
    status: str  # built | skipped | failed
    seconds: float
    arch: Optional[str] = None
    cuda: Optional[str] = None
    base: Optional[str] = None
    cell: Optional[str] = None
    image_digest: Optional[str] = None
    size: Optional[int] = None
    log_path: Optional[str] = None
    mlcc_version: str = ""
    reason: Optional[str] = None
    reference: Optional[str] = None
    finished: str = ""
    inputs_digest: Optional[str] = None  # the generated files and build args
    base_digest: Optional[str] = None  # the base image's manifest the build pulled
    uncompressed: Optional[int] = None  # bytes unpacked on a node, from the engine
    flavour: Optional[str] = None  # devel | runtime (the image's io.mlcc.flavour label)
    largest_layers: Optional[str] = None  # JSON list of {compressed, uncompressed, instruction}


def default_path() -> Path:
    explicit = os.environ.get("MLCC_HISTORY")
    if explicit:
        return Path(explicit)
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(data) / "mlcc" / "history.sqlite"


class History:
    def __init__(self, path: Optional[Path] = None) -> None:
        self.path = path or default_path()

    def exists(self) -> bool:
        """Whether the history file exists; a name the system cannot look up (too long, a
        loop of links) is a HistoryError, not an OSError."""
        try:
            return self.path.exists()
        except OSError as error:
            raise HistoryError(
                f"cannot open the build history {self.path}: {error.strerror or error}", hint=_hint(self.path)
            ) from None

    def _connect(self, *, write: bool = True) -> sqlite3.Connection:
        """An open database; ``write=False`` opens it read-only and changes nothing in it."""
        try:
            if write:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                connection = sqlite3.connect(
                    str(self.path), timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None
                )
            else:
                connection = sqlite3.connect(
                    self.path.resolve().as_uri() + "?mode=ro",
                    timeout=BUSY_TIMEOUT_SECONDS,
                    isolation_level=None,
                    uri=True,
                )
        except (OSError, ValueError, sqlite3.Error) as error:
            raise HistoryError(
                f"cannot open the build history {self.path}: {error}", hint=_hint(self.path)
            ) from None
        try:
            connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
            self._check_owner(connection)
            if write:
                self._prepare(connection)
        except HistoryError:
            connection.close()
            raise
        except sqlite3.DatabaseError as error:
            connection.close()
            raise self._error(error) from None
        return connection

    def _check_owner(self, connection: sqlite3.Connection) -> None:
        """Refuse a database another application owns: mlcc must not add tables to it."""
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if version < 0:
            raise HistoryError(
                f"{self.path} is not an mlcc build history "
                f"(format {version}; mlcc writes 1 to {SCHEMA_VERSION})",
                hint="point --history / MLCC_HISTORY at a new file; mlcc leaves this one untouched",
            )
        if version > SCHEMA_VERSION:
            raise HistoryError(
                f"the build history {self.path} was written by a newer mlcc (format {version})",
                hint="upgrade mlcc, or point --history at another file",
            )
        # a new mlcc database has no tables before its format is set; mlcc's own modules
        # (results) add theirs only after the builds table exists
        if (version == 0 and tables) or (version != 0 and "builds" not in tables):
            raise HistoryError(
                f"{self.path} is not an mlcc build history (it holds other tables or another format)",
                hint="point --history / MLCC_HISTORY at a new file; mlcc leaves this one untouched",
            )

    def _prepare(self, connection: sqlite3.Connection) -> None:
        mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()
        if mode and str(mode[0]).lower() != "wal":
            connection.execute("PRAGMA journal_mode = DELETE")
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            connection.executescript(
                "BEGIN IMMEDIATE;" + SCHEMA + f"PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
            )
        elif version < SCHEMA_VERSION:
            steps = "".join(MIGRATIONS[v] for v in range(version, SCHEMA_VERSION))
            connection.executescript(
                "BEGIN IMMEDIATE;" + steps + f"PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
            )

    def _error(self, error: sqlite3.Error) -> HistoryError:
        text = str(error)
        if "locked" in text or "busy" in text:
            return HistoryError(
                f"the build history {self.path} stayed locked for {BUSY_TIMEOUT_SECONDS:.0f} s",
                hint="another process holds it; try again, or use --history to record elsewhere",
            )
        if "readonly" in text or "read-only" in text or "unable to open" in text:
            return HistoryError(
                f"the build history {self.path} is read-only or cannot be opened: {text}",
                hint="make it writable, or use --history / MLCC_HISTORY to record elsewhere",
            )
        if "not a database" in text:
            if not _sqlite_file(self.path):  # someone else's file: never advise moving it
                return HistoryError(
                    f"{self.path} is not a build history (not an SQLite database)", hint=_hint(self.path)
                )
            return HistoryError(f"the build history {self.path} is damaged", hint=_hint(self.path))
        return HistoryError(f"the build history {self.path} is damaged: {text}", hint=_hint(self.path))

    def connection(self, *, write: bool = True) -> sqlite3.Connection:
        """An open connection (WAL, busy timeout, format checked) for tables other modules
        keep in the same database, such as the results of mlcc.results.store.

        ``write=False``: read-only, the format as it is (a reader never upgrades a history:
        an older mlcc would then refuse it; writers do)."""
        return self._connect(write=write)

    def check(self) -> None:
        """Open (and create) the database now: a build should not run only to fail recording."""
        self._connect().close()

    def record(self, record: Record) -> None:
        seconds = finite_time(record.seconds)
        if seconds is None:  # a build's duration is finite: anything else is a bug upstream
            raise ValueError(f"seconds {record.seconds!r}")
        # a size beyond SQLite's integer is a bug upstream, but must not lose a build that
        # succeeded: it is stored as unknown
        values = record._replace(
            finished=record.finished or _now(),
            seconds=seconds,
            size=count(record.size),
            uncompressed=count(record.uncompressed),
        )
        if values.status not in STATUSES:
            raise ValueError(f"status {values.status!r}")
        connection = self._connect()
        try:
            connection.execute("BEGIN IMMEDIATE")
            connection.execute(
                f"INSERT INTO builds ({', '.join(COLUMNS)}) VALUES ({', '.join('?' for _ in COLUMNS)})",
                [getattr(values, c) for c in COLUMNS],
            )
            connection.execute("COMMIT")
        except sqlite3.DatabaseError as error:
            raise self._error(error) from None
        finally:
            connection.close()

    def rows(
        self,
        *,
        benchmark: Optional[str] = None,
        variant: Optional[str] = None,
        status: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> List[Dict[str, Any]]:
        """Newest first."""
        if not self.exists():
            return []
        where: List[str] = []
        params: List[Any] = []
        for column, value in (("benchmark", benchmark), ("variant", variant), ("status", status)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        query = "SELECT id, {columns} FROM builds"
        if where:
            query += " WHERE " + " AND ".join(where)
        query += " ORDER BY id DESC"
        if limit is not None:
            query += " LIMIT ?"
            params.append(limit)
        connection = self._connect(write=False)
        try:
            if "builds" not in {r[0] for r in connection.execute("SELECT name FROM sqlite_master")}:
                return []  # an empty database: nothing recorded yet
            # read-only: an older format is read as it is (columns it lacks are None), not migrated
            present = {r[1] for r in connection.execute("PRAGMA table_info(builds)")}
            columns = ", ".join(c if c in present else f"NULL AS {c}" for c in COLUMNS)
            cursor = connection.execute(query.format(columns=columns), params)
            names = [d[0] for d in cursor.description]
            rows = [dict(zip(names, row)) for row in cursor.fetchall()]
        except sqlite3.DatabaseError as error:
            raise self._error(error) from None
        finally:
            connection.close()
        for row in rows:  # an infinite or NaN time read as unknown: it cannot break a report
            row["seconds"] = finite_time(row["seconds"])
            row["size"] = count(row["size"])
            row["uncompressed"] = count(row["uncompressed"])
            row["largest_layers"] = largest_layers(row["largest_layers"])
        return rows

    def base_before(self, benchmark: str, variant: str, inputs_digest: str) -> Optional[str]:
        """The base digest of the newest good build of the same generated inputs, if any."""
        for row in self.rows(benchmark=benchmark, variant=variant):
            if row["inputs_digest"] == inputs_digest and row["status"] != "failed" and row["base_digest"]:
                return str(row["base_digest"])
        return None

    def latest(self) -> Dict[tuple, Dict[str, Any]]:  # type: ignore[type-arg]
        """The newest row per (benchmark, variant)."""
        found: Dict[tuple, Dict[str, Any]] = {}  # type: ignore[type-arg]
        for row in reversed(self.rows()):
            found[(row["benchmark"], row["variant"])] = row
        return found


def largest_layers(text: object) -> List[Dict[str, Any]]:
    """The recorded largest layers, each ``compressed``, ``uncompressed`` (a count or None)
    and ``instruction`` (text); anything else in the column reads as no layers."""
    if not isinstance(text, str):
        return []
    try:
        loaded = json.loads(text)
    except (ValueError, RecursionError):
        return []
    if not isinstance(loaded, list):
        return []
    layers = []
    for entry in loaded[:MAX_LAYERS_SHOWN]:
        if isinstance(entry, dict) and isinstance(entry.get("instruction"), str):
            layers.append(
                {
                    "compressed": count(entry.get("compressed")),
                    "uncompressed": count(entry.get("uncompressed")),
                    "instruction": entry["instruction"],
                }
            )
    return layers


# the first bytes of every SQLite 3 database file (sqlite.org/fileformat.html, 1.3)
SQLITE_HEADER = b"SQLite format 3\x00"


def _sqlite_file(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def _hint(path: Path) -> str:
    """What to do: for a damaged history, move it aside, named as a shell takes it (and the
    file a link leads to); a file that is no SQLite database is someone else's: leave it."""
    shown = shlex.quote(str(path))
    other = "point --history / MLCC_HISTORY at another file"
    try:
        foreign = path.exists() and not _sqlite_file(path)
    except OSError:  # a name the system cannot look up (too long, a loop of links)
        return other
    if foreign:
        return f"{other}; mlcc never changes {shown}"
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        real = path
    if real != path.absolute():
        shown += f" (a link to {shlex.quote(str(real))})"
    return f"move {shown} aside (mlcc never deletes it) or {other}"


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
