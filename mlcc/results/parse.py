"""A streaming parser for MLPerf training result logs.

An MLPerf log is ordinary training output with result lines mixed in:

- v0.6 and later: ``:::MLL <unix time> <key>: <json>``, e.g.
  ``:::MLL 1558576743.667 run_start: {"value": null, "metadata": {...}}``;
- v0.5: ``:::MLPv0.5.0 <benchmark> <unix time> (<file>:<line>) <key>[: <json>]``;
- v0.7 and later (MLLOG): ``:::MLLOG <json>`` (:mod:`mlcc.results.mllog` reads them).

The file is read in fixed-size chunks and searched for the ``:::ML`` marker with
``bytes.find`` (C speed); only marked lines are decoded, and only the keys a score needs
are parsed as JSON. Memory stays bounded by the chunk size plus one result line, whatever
the file's size. A file may hold several runs (a run_start after a run_stop starts the
next one). Nothing here raises on bad content: problems are collected with their line
numbers so the caller can show them and mark the results partial.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from pathlib import Path
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Protocol, Tuple

from mlcc.results.mllog import MLLOG_MARKER, MllogLineError, parse_event
from mlcc.validate import finite_time

CHUNK = 1 << 20
# Longer "result lines" are not MLPerf output (submission_entry, the longest, is ~1.5 kB).
MAX_LINE = 1 << 20
MARKER = b":::ML"  # the start of :::MLL, :::MLPv0.5.0 and :::MLLOG alike
MLLOG = "mllog"  # the log_format of :::MLLOG runs (v0.7 and later)
MAX_PROBLEMS = 20

_V06 = re.compile(rb":::MLL\s+(-?[0-9][0-9.eE+-]*)\s+([A-Za-z0-9_.]+)\s*:\s?(.*)")
_V05 = re.compile(
    rb":::MLPv0\.5\.0\s+(\S+)\s+([0-9][0-9.]*)\s+\(([^)]*)\)\s+([A-Za-z0-9_.]+)(?:\s*:\s?(.*))?"
)
# MLLOG's submission_platform: "<nodes>x<system>" (github:NVIDIA/mlperf-common
# @a2dea848867703b2be9a9a350d9830d9494a2918 mlperf_common/logging.py, mlperf_submission_log:
# value=f'{num_nodes}x...', num_nodes from SLURM_JOB_NUM_NODES)
_PLATFORM_NODES = re.compile(r"([1-9][0-9]{0,6})x\S")
# The keys whose JSON a score or the system description needs; others are only hashed.
WANTED_KEYS = frozenset(
    {
        "run_start",
        "run_stop",
        "eval_accuracy",
        "eval_result",
        "submission_benchmark",
        "submission_org",
        "submission_division",
        "submission_status",
        "submission_platform",
        "submission_entry",
    }
)


class Readable(Protocol):
    """What a log is read from: a file, or a pod log streamed from a cluster."""

    def read(self, n: int = -1, /) -> bytes: ...


class Run(NamedTuple):
    """One training run found in a log."""

    file: str
    position: int  # 0 for the first run of the file
    run_id: str  # sha256 of the run's result lines: the same run copied anywhere has the same id
    log_format: str  # "v0.6+", "v0.5" or "mllog"
    benchmark: Optional[str]
    start: Optional[float]
    stop: Optional[float]
    stop_status: Optional[str]  # run_stop's status ("success", "aborted" ...)
    result_seconds: Optional[float]  # v0.6 MiniGo: eval_result's timestamp (0 = target missed)
    quality: Any  # the last eval_accuracy value
    system: Dict[str, str]  # submitter, division, category, platform, hardware, framework, nodes, gpus ...
    first_line: int
    last_line: int
    problems: Tuple[str, ...]


class LogFile(NamedTuple):
    path: str
    size: int
    lines: int
    runs: Tuple[Run, ...]
    problems: Tuple[str, ...]  # about the file, not one run (cut off, unreadable line ...)


class _Builder:
    def __init__(self, path: str, position: int) -> None:
        self.path = path
        self.position = position
        self.hasher = hashlib.sha256()
        self.log_format = "v0.6+"
        self.benchmark: Optional[str] = None
        self.start: Optional[float] = None
        self.stop: Optional[float] = None
        self.stop_status: Optional[str] = None
        self.result_seconds: Optional[float] = None
        self.quality: Any = None
        self.system: Dict[str, str] = {}
        self.first_line = 0
        self.last_line = 0
        self.problems: List[str] = []
        self.seen = False

    def note(self, text: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(text)

    def build(self) -> Run:
        return Run(
            file=self.path,
            position=self.position,
            run_id=self.hasher.hexdigest(),
            log_format=self.log_format,
            benchmark=self.benchmark,
            start=self.start,
            stop=self.stop,
            stop_status=self.stop_status,
            result_seconds=self.result_seconds,
            quality=self.quality,
            system=dict(sorted(self.system.items())),
            first_line=self.first_line,
            last_line=self.last_line,
            problems=tuple(self.problems),
        )


class _Parser:
    def __init__(self, path: str) -> None:
        self.path = path
        self.runs: List[Run] = []
        self.problems: List[str] = []
        self.current = _Builder(path, 0)
        self.preamble: Dict[str, str] = {}  # submission_* seen before the first run_start

    def note(self, text: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(text)

    def line(self, raw: bytes, number: int, cut: bool) -> None:
        if MLLOG_MARKER in raw:
            self._mllog(raw, number, cut)
            return
        match = _V06.search(raw)
        if match:
            stamp, key, payload = match.group(1), match.group(2), match.group(3)
            benchmark = None
            log_format = "v0.6+"
        else:
            match = _V05.search(raw)
            if not match:
                return  # ":::ML" inside ordinary output
            benchmark = log_text(match.group(1).decode("ascii", "replace"), 60)
            stamp, key, payload = match.group(2), match.group(4), match.group(5) or b""
            log_format = "v0.5"
        name = key.decode("ascii", "replace")
        try:
            when = finite_time(float(stamp))
        except ValueError:
            when = None
        if when is None:  # 1e999 is infinity to float(): no time at all
            self.note(f"line {number}: {name} has no valid time ({stamp[:40]!r})")
            return
        run = self._enter(raw, number, name, log_format)
        if benchmark and not run.benchmark:
            run.benchmark = benchmark
        if name not in WANTED_KEYS:
            return
        document = self._json(payload, number, cut, name, log_format)
        if document is _BAD:
            return
        self._apply(run, name, when, document, number, log_format)

    def _enter(self, raw: bytes, number: int, name: str, log_format: str) -> _Builder:
        """The run a result line belongs to (a run_start after a finished run starts the next)."""
        if name == "run_start" and (self.current.stop is not None or self.current.result_seconds is not None):
            self._finish()
        run = self.current
        if not run.seen:
            run.seen = True
            run.first_line = number
            run.system.update(self.preamble)
        run.last_line = number
        run.log_format = log_format
        run.hasher.update(raw.rstrip(b"\r"))
        run.hasher.update(b"\n")
        return run

    def _mllog(self, raw: bytes, number: int, cut: bool) -> None:
        """A ``:::MLLOG`` line (v0.7 and later), read and checked by :mod:`mlcc.results.mllog`."""
        try:
            event = parse_event(raw)
        except MllogLineError as error:
            why = "cut off: the log ends in the middle of it" if cut else str(error)
            # Before any run's line the problem is the file's (no run would carry it).
            note = self.current.note if self.current.seen else self.note
            note(f"line {number}: :::MLLOG line {why}")
            return
        if event is None:
            return
        run = self._enter(raw, number, event.key, MLLOG)
        if event.key in WANTED_KEYS:
            document = {"value": event.value, "metadata": event.metadata}
            self._apply(run, event.key, event.seconds, document, number, MLLOG)

    def _json(self, payload: bytes, number: int, cut: bool, name: str, log_format: str) -> Any:
        if log_format == "v0.5" and not payload.strip():
            return None
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError:
            text = payload.decode("utf-8", "replace")
            self.current.note(f"line {number}: {name}: bytes that are not UTF-8 (replaced)")
        try:
            return json.loads(text)
        except RecursionError:
            self.current.note(f"line {number}: {name} nests deeper than a result line does (skipped)")
            return _BAD
        except ValueError:
            if cut:
                self.current.note(f"line {number}: {name} is cut off: the log ends in the middle of it")
            else:
                self.current.note(f"line {number}: {name} is not valid JSON: {text[:80]!r}")
            return _BAD

    def _apply(self, run: _Builder, name: str, when: float, document: Any, number: int, fmt: str) -> None:
        value = document.get("value") if isinstance(document, dict) and fmt != "v0.5" else document
        metadata = document.get("metadata") if isinstance(document, dict) else None
        metadata = metadata if isinstance(metadata, dict) else {}
        if name == "run_start":
            if run.start is not None:
                run.note(f"line {number}: a second run_start before run_stop (kept the first)")
            else:
                run.start = when
        elif name == "run_stop":
            if run.stop is not None:
                run.note(
                    f"line {number}: a second run_stop (kept the first; which ended the run cannot be told)"
                )
            else:
                run.stop = when
                if fmt == "v0.5":
                    run.stop_status = _v05_status(value)
                else:
                    status = metadata.get("status")
                    run.stop_status = str(status) if status is not None else None
        elif name == "eval_accuracy":
            run.quality = value.get("value", value) if fmt == "v0.5" and isinstance(value, dict) else value
        elif name == "eval_result":
            stamp = metadata.get("timestamp")
            if finite_time(stamp) is not None:  # JSON may say NaN or Infinity
                run.result_seconds = finite_time(stamp)
        elif name.startswith("submission_"):
            self._submission(run, name[len("submission_") :], value)
            if name == "submission_platform" and fmt == MLLOG:
                self._nodes_of_platform(run, value)

    def _nodes_of_platform(self, run: _Builder, value: Any) -> None:
        """MLLOG's submission_platform is ``<nodes>x<system>`` (``1xNVIDIA DGX A100``: NVIDIA's
        mlperf_common logger writes f"{num_nodes}x..."), so it names the node count."""
        found = _PLATFORM_NODES.match(value) if isinstance(value, str) else None
        if found is None:
            return
        for facts in (run.system, self.preamble) if run.start is None else (run.system,):
            facts.setdefault("nodes", found.group(1))

    def _submission(self, run: _Builder, field: str, value: Any) -> None:
        if field == "benchmark" and isinstance(value, str):
            run.benchmark = log_text(value, 60)
            return
        if field == "entry":
            facts = _entry_facts(value)
            run.system.update(facts)
            if run.start is None:
                self.preamble.update(facts)
            return
        names = {"org": "submitter", "division": "division", "status": "category", "platform": "platform"}
        if field in names and isinstance(value, (str, int, float)):
            run.system[names[field]] = log_text(str(value))
            if run.start is None:
                self.preamble[names[field]] = log_text(str(value))

    def _finish(self) -> None:
        if self.current.seen:
            self.runs.append(self.current.build())
        benchmark = self.current.benchmark
        self.current = _Builder(self.path, len(self.runs))
        self.current.benchmark = benchmark  # a log keeps its benchmark across its runs

    def close(self) -> Tuple[Run, ...]:
        if self.current.seen:
            self.runs.append(self.current.build())
        return tuple(self.runs)


_BAD = object()


def _v05_status(value: Any) -> Optional[str]:
    """v0.5's run_stop carries {"success": true|false}."""
    success = value.get("success") if isinstance(value, dict) else None
    if success is True:
        return "success"
    return "aborted" if success is False else None


def log_text(text: str, limit: int = 200) -> str:
    """Log text made safe for a terminal, a table cell or a database row: control characters
    (escape sequences included) become "?", and it is cut at ``limit`` characters."""
    clean = "".join(c if c.isprintable() else "?" for c in text[:limit])
    return clean + ("..." if len(text) > limit else "")


def _entry_facts(value: Any) -> Dict[str, str]:
    """submission_entry is a Python dict literal (nested ones as strings) in v0.6 logs."""
    entry = _literal(value)
    if not isinstance(entry, dict):
        return {}
    facts: Dict[str, str] = {}
    for key, name in (("hardware", "hardware"), ("framework", "framework"), ("interconnect", "interconnect")):
        if isinstance(entry.get(key), str) and entry[key] not in ("", "N/A"):
            facts[name] = log_text(entry[key])
    nodes = _literal(entry.get("nodes"))
    if isinstance(nodes, dict):
        for key, name in (
            ("num_nodes", "nodes"),
            ("num_accelerators", "gpus_per_node"),
            ("accelerator", "accelerator"),
        ):
            if nodes.get(key) not in (None, ""):
                facts[name] = log_text(str(nodes[key]))
    return facts


def _literal(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return ast.literal_eval(value)  # literals only: no names, no calls
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


class _Scanner:
    """Finds the marked lines of a byte stream, chunk by chunk; counts every line."""

    def __init__(self) -> None:
        self.lines = 0
        self.too_long: List[int] = []  # line numbers of marked lines longer than MAX_LINE

    def marked(self, stream: Readable) -> Iterator[Tuple[bytes, int, bool]]:
        """Yield (result line, line number, cut off by the end of the file)."""
        carry = b""
        number = 1  # the line number at the start of ``carry``
        while True:
            chunk = stream.read(CHUNK)
            if not chunk:
                break
            buffer = carry + chunk if carry else chunk
            position = 0
            counted = 0  # newlines are counted up to here
            last_newline = buffer.rfind(b"\n")
            while True:
                hit = buffer.find(MARKER, position)
                if hit < 0 or hit > last_newline:
                    break
                start = buffer.rfind(b"\n", 0, hit) + 1
                end = buffer.find(b"\n", hit)
                number += buffer.count(b"\n", counted, start)
                counted = start
                if end - start <= MAX_LINE:
                    yield buffer[start:end], number, False
                else:
                    self.too_long.append(number)
                position = end + 1
            if last_newline < 0:
                carry = buffer
            else:
                number += buffer.count(b"\n", counted, last_newline + 1)
                carry = buffer[last_newline + 1 :]
            if len(carry) > MAX_LINE + CHUNK:
                # One unterminated line longer than any result line: keep its tail only
                # (memory stays bounded); no newline is dropped, so numbers stay right.
                carry = carry[-MAX_LINE:]
        self.lines = number - 1 + (1 if carry else 0)
        hit = carry.find(MARKER)
        if hit >= 0:
            yield carry[hit:], number, True


def parse_stream(stream: Readable, path: str) -> Tuple[Tuple[Run, ...], Tuple[str, ...], int]:
    """The runs of one log, the problems of the file, and its number of lines."""
    parser = _Parser(path)
    scanner = _Scanner()
    for raw, number, cut in scanner.marked(stream):
        parser.line(raw, number, cut)
    for number in scanner.too_long[:MAX_PROBLEMS]:
        parser.note(f"line {number}: a result line longer than {MAX_LINE} bytes (skipped)")
    runs = parser.close()
    return runs, tuple(parser.problems), scanner.lines


def parse_file(path: Path) -> LogFile:
    """Parse one log; unreadable files raise OSError for the caller to report."""
    with open(path, "rb") as stream:
        runs, problems, lines = parse_stream(stream, str(path))
        size = stream.tell()
    return LogFile(path=str(path), size=size, lines=lines, runs=runs, problems=problems)
