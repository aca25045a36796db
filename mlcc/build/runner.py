"""Building many cells: in parallel, past failures, one log file per cell, every outcome
recorded in the history, with a live view (rich) that falls back to plain lines in CI.

    outcomes = run_cells(engine, cells, options, jobs=2, logs=Path("mlcc-logs"), history=History())
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, ClassVar, Dict, List, NamedTuple, Optional, Sequence

import mlcc
from mlcc.build import BuildOptions, Outcome, Target, build_target
from mlcc.build.engine import Engine, Log
from mlcc.errors import BuildError, MlccError
from mlcc.history import History, Record


class Cell(NamedTuple):
    """One cell to build: its target and the matrix cell it came from."""

    target: Target
    label: str  # e.g. "maskrcnn base=ubi8 arch=x86_64"


class _State:
    def __init__(self, cells: Sequence[Cell]) -> None:
        self.lock = threading.Lock()
        self.status: Dict[int, str] = {i: "queued" for i in range(len(cells))}
        self.started: Dict[int, float] = {}
        self.ended: Dict[int, float] = {}
        self.last: Dict[int, str] = {}

    def set(self, index: int, status: str) -> None:
        with self.lock:
            self.status[index] = status
            if status == "building":
                self.started[index] = time.monotonic()
            elif status in ("built", "skipped", "failed"):
                self.ended[index] = time.monotonic()

    def line(self, index: int, text: str) -> None:
        with self.lock:
            self.last[index] = text

    def seconds(self, index: int) -> float:
        start = self.started.get(index)
        if start is None:
            return 0.0
        return self.ended.get(index, time.monotonic()) - start


def log_path(logs: Path, target: Target) -> Path:
    return logs / target.rendered.stack.benchmark.name / f"{target.variant}.log"


def run_cells(
    engine: Engine,
    cells: Sequence[Cell],
    options: BuildOptions,
    *,
    jobs: int,
    logs: Path,
    history: Optional[History],
    console: Any = None,
) -> List[Outcome]:
    """Build every cell; failures are outcomes too (status "failed"), never an exception."""
    if jobs < 1:
        from mlcc.errors import UsageError

        raise UsageError(f"-j {jobs}: give at least 1 parallel build")
    if history is not None:
        history.check()
    state = _State(cells)
    outcomes: Dict[int, Outcome] = {}
    done = threading.Lock()
    live = _Live(cells, state, console)

    def finished(index: int, outcome: Outcome) -> None:
        with done:
            outcomes[index] = outcome
            if history is not None:
                history.record(
                    _record(cells[index], outcome, engine.name, log_path(logs, cells[index].target))
                )
            live.finished(index, outcome)

    def work(group: Sequence[int]) -> None:
        for index in group:  # in order: the first builds the shared layers, the rest reuse them
            finished(index, _one(engine, cells[index], options, logs, state, index))

    with live, ThreadPoolExecutor(max_workers=jobs) as pool:
        for future in as_completed([pool.submit(work, group) for group in prefix_groups(cells)]):
            future.result()
    return [outcomes[i] for i in range(len(cells))]


def prefix_groups(cells: Sequence[Cell]) -> List[List[int]]:
    """Cells whose images share leading layers (same stack prefix, build args and platform),
    grouped: one worker builds a group in order so the later cells reuse the first one's
    layers, while groups with nothing in common build in parallel. Largest groups first."""
    groups: Dict[str, List[int]] = {}
    for index, cell in enumerate(cells):
        groups.setdefault(prefix_key(cell.target), []).append(index)
    return sorted(groups.values(), key=lambda g: (-len(g), g[0]))


def prefix_key(target: Target) -> str:
    import hashlib
    import json

    rendered = target.rendered
    prefix = [list(step) for step in rendered.plan.steps if step.stage == "stack"]
    data = json.dumps([prefix, list(rendered.build_args), rendered.platform], sort_keys=True)
    return hashlib.sha256(data.encode()).hexdigest()


def _one(engine: Engine, cell: Cell, options: BuildOptions, logs: Path, state: _State, index: int) -> Outcome:
    path = log_path(logs, cell.target)
    path.parent.mkdir(parents=True, exist_ok=True)
    state.set(index, "building")
    start = time.monotonic()
    with path.open("w", encoding="utf-8") as handle:

        def sink(line: str) -> None:
            handle.write(line + "\n")
            handle.flush()
            state.line(index, line)

        log = Log(sink)
        try:
            outcome = build_target(engine, cell.target, options, log)
        except MlccError as error:
            handle.write(f"mlcc: error: {error}\n")
            reason = str(error).splitlines()[0]
            outcome = Outcome(cell.target, "failed", reason, time.monotonic() - start)
        except Exception as error:  # a bug in one cell must not stop the others
            handle.write(f"mlcc: internal error: {type(error).__name__}: {error}\n")
            outcome = Outcome(cell.target, "failed", f"internal error: {error}", time.monotonic() - start)
    state.set(index, outcome.status)
    return outcome


def _record(cell: Cell, outcome: Outcome, backend: str, log: Path) -> Record:
    stack = cell.target.rendered.stack
    return Record(
        benchmark=stack.benchmark.name,
        variant=cell.target.variant,
        content_digest=cell.target.rendered.digest,
        backend=backend,
        status=outcome.status,
        seconds=round(outcome.seconds, 3),
        arch=stack.arch.name,
        cuda=stack.cuda.version if stack.cuda else "cpu",
        base=stack.base.name,
        cell=cell.label,
        image_digest=outcome.digest,
        size=outcome.size,
        log_path=str(log.resolve()),
        mlcc_version=mlcc.__version__,
        reason=outcome.reason,
        reference=str(cell.target.readable),
    )


def record_single(
    history: History, target: Target, outcome: Outcome, backend: str, log: Optional[Path]
) -> None:
    """What `mlcc build` of one benchmark records."""
    cell = Cell(target, target.rendered.stack.request.flags() or target.rendered.stack.benchmark.name)
    history.record(
        _record(cell, outcome, backend, log or Path("-"))._replace(log_path=str(log) if log else None)
    )


# ----------------------------------------------------------------------------- display


class _Live:
    """A live table on a terminal; one line per finished cell elsewhere (CI logs)."""

    SYMBOLS: ClassVar[Dict[str, str]] = {
        "queued": "·",
        "building": "…",
        "built": "✔",
        "skipped": "↷",
        "failed": "✘",
    }

    def __init__(self, cells: Sequence[Cell], state: _State, console: Any) -> None:
        from rich.console import Console

        self.cells = cells
        self.state = state
        self.console = console or Console(stderr=True)
        self._live: Any = None

    def __enter__(self) -> _Live:
        if self.console.is_terminal:
            from rich.live import Live

            self._live = Live(
                get_renderable=self._table, console=self.console, refresh_per_second=4, transient=True
            )
            self._live.__enter__()
        else:
            self.console.print(f"building {len(self.cells)} cells")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)

    def finished(self, index: int, outcome: Outcome) -> None:
        if self._live is None:
            cell = self.cells[index]
            mark = self.SYMBOLS[outcome.status]
            self.console.print(
                f"{mark} {outcome.status:8} {outcome.seconds:7.1f} s  {cell.label}  ({cell.target.variant})",
                highlight=False,
            )

    def _table(self) -> Any:
        from rich.table import Table

        table = Table(box=None, show_header=True, header_style="bold")
        for column in ("", "cell", "variant", "time", "last output"):
            table.add_column(column, overflow="ellipsis", no_wrap=True)
        with self.state.lock:
            for index, cell in enumerate(self.cells):
                status = self.state.status[index]
                seconds = self.state.seconds(index)
                last = self.state.last.get(index, "") if status == "building" else status
                table.add_row(
                    self.SYMBOLS[status],
                    cell.label,
                    cell.target.variant,
                    f"{seconds:6.1f} s" if seconds else "",
                    last[-80:],
                )
        return table


def summary_rows(cells: Sequence[Cell], outcomes: Sequence[Outcome], logs: Path) -> List[List[str]]:
    rows = []
    for cell, outcome in zip(cells, outcomes):
        size = f"{outcome.size / 1e6:.1f} MB" if outcome.size else "-"
        digest = (outcome.digest or "-")[:19]
        rows.append(
            [
                outcome.status,
                cell.label,
                cell.target.variant,
                f"{outcome.seconds:.1f} s",
                size,
                digest,
                str(log_path(logs, cell.target)),
            ]
        )
    return rows


def failure(outcomes: Sequence[Outcome]) -> Optional[BuildError]:
    failed = [o for o in outcomes if o.status == "failed"]
    if not failed:
        return None
    details = [f"{o.target.rendered.stack.benchmark.name} {o.target.variant}: {o.reason}" for o in failed]
    return BuildError(
        f"{len(failed)} of {len(outcomes)} cells failed", details=details, hint="see each cell's log"
    )
