"""Results in the history database: one row per training run, with the stack it ran on.

The ``results`` table sits beside ``builds`` in the same SQLite file (mlcc.history owns
the connection: WAL, busy timeout, format checks). A run is identified by the hash of its
MLPerf result lines (:mod:`mlcc.results.parse`), and ``run_id`` is unique: the same run
added again, from a copy of the log or from a pod's log, is stored once.
"""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from mlcc.errors import UsageError
from mlcc.history import History
from mlcc.results.parse import Run, log_text
from mlcc.results.rules import ScoringRules, scoring_rules
from mlcc.results.score import SCALING_FILE, RunResult, read_scaling, run_result
from mlcc.stackfile.document import StackManifest, problem_of
from mlcc.validate import count, finite_time

RESULTS_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL UNIQUE,
    added TEXT NOT NULL,
    benchmark TEXT NOT NULL,
    status TEXT NOT NULL,
    minutes REAL,
    quality TEXT,
    log TEXT NOT NULL,
    run_start REAL,
    submitter TEXT,
    system TEXT,
    nodes INTEGER,
    gpus INTEGER,
    stack TEXT NOT NULL,
    variant TEXT,
    image TEXT,
    image_digest TEXT,
    content_digest TEXT,
    stack_json TEXT,
    mlcc_version TEXT NOT NULL,
    round TEXT,
    scaling_factor REAL
);
CREATE INDEX IF NOT EXISTS results_by_benchmark ON results (benchmark, stack);
"""
# Added after the table's first release: a database from before gets the column, and its
# rows are v0.6's, since mlcc read no other round's logs (no :::MLLOG) before it.
ROUND_COLUMN = ("round", "TEXT", "v0.6")
# The factor of the scaling.json beside the run's log (the RCP normalization v2.1's rules
# apply to a score, mlcc.results.score), stored so that a comparison scores the stored runs
# as `results score` scores their logs; rows from before it had none applied (NULL).
SCALING_COLUMN = ("scaling_factor", "REAL", None)
ADDED_COLUMNS = (ROUND_COLUMN, SCALING_COLUMN)
RESULT_COLUMNS = (
    "run_id",
    "added",
    "benchmark",
    "status",
    "minutes",
    "quality",
    "log",
    "run_start",
    "submitter",
    "system",
    "nodes",
    "gpus",
    "stack",
    "variant",
    "image",
    "image_digest",
    "content_digest",
    "stack_json",
    "mlcc_version",
    "round",
    "scaling_factor",
)


class StackInfo(NamedTuple):
    """What a stored run ran on: the image's stamped stack, summarised for comparing."""

    label: str  # one line, e.g. "cuda10.1-cudnn7-ubi8-x86_64 · pytorch 1.1.0a0+828a6a3 · Python 3.6"
    benchmark: Optional[str]  # the recipe the image was built for
    variant: Optional[str]
    image: Optional[str]
    image_digest: Optional[str]
    content_digest: Optional[str]
    document: Optional[str]  # stack.json, compact


def stack_info(
    stack: Any,
    *,
    image: Optional[str] = None,
    image_digest: Optional[str] = None,
    labels: Optional[Dict[str, str]] = None,
    origin: str = "the stack",
) -> StackInfo:
    """Summarise a stack.json document (as ``mlcc inspect`` reads it from an image)."""
    unreadable = stack is None or (isinstance(stack, dict) and "error" in stack)  # see ImageContent.json_file
    problem = "no /etc/mlcc/stack.json, or not JSON" if unreadable else problem_of(stack)
    if problem is not None:
        raise UsageError(
            f"{origin} holds no mlcc stack ({problem})",
            hint="give an image mlcc built (mlcc inspect IMAGE shows its stack), or --stack stack.json",
        )
    manifest = StackManifest.of(stack)
    framework = manifest.components.framework
    python = manifest.components.python
    parts = [manifest.variant]
    if framework:
        parts.append(f"{framework.name} {framework.version}")
    if python:
        parts.append(f"Python {python.version}")
    return StackInfo(
        label=log_text(" · ".join(parts)),
        benchmark=log_text(manifest.benchmark.name, 60),
        variant=log_text(manifest.variant, 100),
        image=image,
        image_digest=image_digest,
        content_digest=(labels or {}).get("io.mlcc.digest"),
        document=json.dumps(manifest.to_json(), sort_keys=True, separators=(",", ":")),
    )


class Placement(NamedTuple):
    """Where the runs ran; None takes the value from the log's submission_entry."""

    system: Optional[str] = None
    nodes: Optional[int] = None
    gpus: Optional[int] = None  # in all


class Added(NamedTuple):
    stored: List[RunResult]
    already: List[Tuple[RunResult, str]]  # (run, the stack it is stored with)


SQLITE_MAX_INTEGER = 2**63 - 1


def _placement(run: Run, given: Placement) -> Tuple[Optional[str], Optional[int], Optional[int]]:
    nodes = given.nodes if given.nodes is not None else _int(run.system.get("nodes"))
    gpus = given.gpus
    if gpus is None:
        per_node = _int(run.system.get("gpus_per_node"))
        gpus = per_node * (nodes or 1) if per_node is not None else None
    for what, value in (("nodes", nodes), ("GPUs", gpus)):
        # sqlite3 raises OverflowError (not a DatabaseError) beyond its 64-bit integers
        if value is not None and not 0 <= value <= SQLITE_MAX_INTEGER:
            raise UsageError(
                f"{run.file}: {value} {what} is not a count mlcc can store (0 to {SQLITE_MAX_INTEGER}); "
                "nothing stored",
                hint="give the real count with --nodes / --gpus",
            )
    return given.system or run.system.get("platform"), nodes, gpus


def _int(text: Optional[str]) -> Optional[int]:
    """A count from a log: ASCII digits, else unknown. A count too large to store stays as
    written, so that _placement refuses the log instead of storing "unknown" for it."""
    digits = text.strip() if isinstance(text, str) else ""
    if digits.isascii() and digits.isdigit():
        # beyond 20 digits it cannot be stored anyway, and int() refuses over 4,300 digits
        return int(digits) if len(digits) <= 20 else SQLITE_MAX_INTEGER + 1
    return count(text)


def add_runs(
    history: History,
    runs: Sequence[Run],
    stack: StackInfo,
    placement: Placement,
    version: str,
    round_name: Optional[str] = None,
    rules: Optional[ScoringRules] = None,
) -> Added:
    """Store each run once; a run already stored is reported with its stack, never twice.

    Each run is stored with its MLPerf round: ``round_name``, or the one its log format
    implies (:meth:`mlcc.results.rules.ScoringRules.round_of`, which raises UsageError when
    the format fits several rounds). ``rules``: the rounds' scoring rules of the knowledge
    base in use (default: the one :func:`mlcc.kb.load` finds).
    """
    rules = rules if rules is not None else scoring_rules()
    rounds = [
        rules.round_of(run.log_format, round_name, benchmark=run.benchmark, path=run.file) for run in runs
    ]
    factors = [_scaling(rules, run, round_of_run) for run, round_of_run in zip(runs, rounds)]
    connection = history.connection()
    added = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    stored: List[RunResult] = []
    already: List[Tuple[RunResult, str]] = []
    try:
        connection.execute("BEGIN IMMEDIATE")
        _create(connection)
        for run, round_of_run, factor in zip(runs, rounds, factors):
            result = run_result(run)
            row = connection.execute("SELECT stack FROM results WHERE run_id = ?", (run.run_id,)).fetchone()
            if row is not None:
                already.append((result, str(row[0])))
                continue
            system, nodes, gpus = _placement(run, placement)
            values = {
                "run_id": run.run_id,
                "added": added,
                "benchmark": run.benchmark or "unknown",
                "status": result.status,
                "minutes": finite_time(result.minutes),
                "quality": json.dumps(result.quality, sort_keys=True) if result.quality is not None else None,
                "log": run.file if run.position == 0 else f"{run.file} (run {run.position + 1})",
                "run_start": run.start,
                "submitter": run.system.get("submitter"),
                "system": system,
                "nodes": count(nodes),
                "gpus": count(gpus),
                "stack": stack.label,
                "variant": stack.variant,
                "image": stack.image,
                "image_digest": stack.image_digest,
                "content_digest": stack.content_digest,
                "stack_json": stack.document,
                "mlcc_version": version,
                "round": round_of_run,
                "scaling_factor": factor,
            }
            connection.execute(
                f"INSERT INTO results ({', '.join(RESULT_COLUMNS)})"
                f" VALUES ({', '.join('?' for _ in RESULT_COLUMNS)})",
                [values[c] for c in RESULT_COLUMNS],
            )
            stored.append(result)
        connection.execute("COMMIT")
    except sqlite3.DatabaseError as error:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise history._error(error) from None
    finally:
        connection.close()
    return Added(stored, already)


def _scaling(rules: ScoringRules, run: Run, round_name: str) -> Optional[float]:
    """The scaling.json factor beside the run's log, when its round's rules apply one.

    Raises:
        UsageError: The scaling.json is not a scaling factor (nothing is stored).
    """
    if not rules.rule(round_name, run.benchmark or "unknown").scaling_json:
        return None
    return read_scaling(Path(run.file).parent / SCALING_FILE)


def _create(connection: sqlite3.Connection) -> None:
    # executescript would COMMIT the open transaction; run the statements one by one.
    for statement in RESULTS_SCHEMA.split(";"):
        if statement.strip():
            connection.execute(statement)
    present = _columns(connection)
    for name, kind, _ in ADDED_COLUMNS:
        if name not in present:
            connection.execute(f"ALTER TABLE results ADD COLUMN {name} {kind}")
            before = _before_the_column(name)
            if before != "NULL":
                connection.execute(f"UPDATE results SET {name} = {before}")


def _before_the_column(name: str) -> str:
    """The SQL value of column ``name`` in a row stored before the column was added."""
    if name == ROUND_COLUMN[0]:
        return _round_before_the_column()
    value = {column: before for column, _, before in ADDED_COLUMNS}[name]
    return "NULL" if value is None else repr(value)


def _round_before_the_column() -> str:
    """The SQL value of a row's round in a table from before the round column: v0.6, except
    for a benchmark only later rounds have (bert, rnnt ...), whose round is unknown (NULL)."""
    rounds = scoring_rules().rounds
    before = ROUND_COLUMN[2]
    assert before is not None
    earlier = {name for name, _ in rounds[before].benchmarks}
    later = sorted({b for name, row in rounds.items() if name != before for b, _ in row.benchmarks})
    later = [b for b in later if b not in earlier and re.fullmatch(r"[a-z0-9_-]+", b)]
    names = ", ".join(f"'{b}'" for b in later) or "''"
    return f"CASE WHEN benchmark IN ({names}) THEN NULL ELSE '{before}' END"


def _columns(connection: sqlite3.Connection) -> List[str]:
    return [str(row[1]) for row in connection.execute("PRAGMA table_info(results)")]


def _meaningful(row: Dict[str, Any]) -> Dict[str, Any]:
    """A stored row as the reports read it: an infinite or NaN time, a negative count (stored
    by an older mlcc, or written by hand) read as unknown, so one bad row cannot break every
    report of the history from then on."""
    row["minutes"] = finite_time(row.get("minutes"))
    row["nodes"] = count(row.get("nodes"))
    row["gpus"] = count(row.get("gpus"))
    return row


def stored_runs(
    history: History,
    *,
    benchmarks: Sequence[str] = (),
    stacks: Sequence[str] = (),
    systems: Sequence[str] = (),
) -> List[Dict[str, Any]]:
    """Stored runs, oldest first, filtered by benchmark, stack (substring) and system."""
    if not history.exists():
        return []
    connection = history.connection(write=False)  # a reader: an older format is read as it is
    try:
        exists = connection.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'results'"
        ).fetchone()
        if not exists:
            return []
        where: List[str] = []
        params: List[Any] = []
        for column, values, exact in (
            ("benchmark", benchmarks, True),
            ("stack", stacks, False),
            ("system", systems, False),
        ):
            if values:
                if exact:
                    where.append(f"{column} IN ({', '.join('?' for _ in values)})")
                    params.extend(values)
                else:
                    where.append("(" + " OR ".join(f"instr({column}, ?) > 0" for _ in values) + ")")
                    params.extend(values)
        present = set(_columns(connection))
        # A database from before a column: its rows read as the column's ADDED_COLUMNS value
        # (before the round column, v0.6 but for later rounds' benchmarks; before scaling_factor, none
        # applied).
        selected = [
            c if c in present else f"{_before_the_column(c)} AS {c}"
            for c in RESULT_COLUMNS
            if c != "stack_json"
        ]
        query = "SELECT id, " + ", ".join(selected) + " FROM results"
        if where:
            query += " WHERE " + " AND ".join(where)
        cursor = connection.execute(query + " ORDER BY id", params)
        names = [d[0] for d in cursor.description]
        return [_meaningful(dict(zip(names, row))) for row in cursor.fetchall()]
    except sqlite3.DatabaseError as error:
        raise history._error(error) from None
    finally:
        connection.close()
