"""The live view of a matrix build: a table on a terminal (rich), one line per finished
job elsewhere (CI logs)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, ClassVar, Dict, Optional, Sequence

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from mlcc.engines.base import BuildJob, BuildResult, Log
from mlcc.ui.safe_text import printable


class LiveView:
    SYMBOLS: ClassVar[Dict[str, str]] = {
        "queued": "·",
        "building": "…",
        "built": "✔",
        "skipped": "↷",
        "failed": "✘",
    }

    def __init__(self, jobs: Sequence[BuildJob], console: Optional[Console] = None) -> None:
        self.jobs = list(jobs)
        self.index = {id(job): i for i, job in enumerate(self.jobs)}
        self.console = console or Console(stderr=True)
        self.lock = threading.Lock()
        self.status: Dict[int, str] = {i: "queued" for i in range(len(self.jobs))}
        self.begun: Dict[int, float] = {}
        self.ended: Dict[int, float] = {}
        self.last: Dict[int, str] = {}
        self._live: Any = None
        self._files: Dict[int, Any] = {}

    def __enter__(self) -> LiveView:
        if self.console.is_terminal:
            self._live = Live(
                get_renderable=self._table, console=self.console, refresh_per_second=4, transient=True
            )
            self._live.__enter__()
        else:
            self.console.print(f"building {len(self.jobs)} cells", markup=False, highlight=False)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)

    def log_for(self, job: BuildJob, path: Path) -> Log:
        """The job's log file, whose last line the live table shows."""
        index = self.index[id(job)]
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.open("w", encoding="utf-8")
        self._files[index] = handle

        def sink(line: str) -> None:
            handle.write(line + "\n")
            handle.flush()
            with self.lock:
                self.last[index] = line

        return Log(sink)

    def started(self, index: int, job: BuildJob) -> None:
        with self.lock:
            self.status[index] = "building"
            self.begun[index] = time.monotonic()

    def finished(self, index: int, result: BuildResult) -> None:
        with self.lock:
            self.status[index] = result.status
            self.ended[index] = time.monotonic()
            handle = self._files.pop(index, None)
        if handle is not None:
            handle.close()
        if self._live is None:
            job = self.jobs[index]
            mark = self.SYMBOLS[result.status]
            # a label or variant is plain text: rich would read [brackets] in it as markup
            self.console.print(
                Text(
                    printable(
                        f"{mark} {result.status:8} {result.seconds:7.1f} s  {job.label}  ({job.variant})"
                    )
                ),
                highlight=False,
            )

    def _seconds(self, index: int) -> float:
        start = self.begun.get(index)
        if start is None:
            return 0.0
        return self.ended.get(index, time.monotonic()) - start

    def _table(self) -> Table:
        table = Table(box=None, show_header=True, header_style="bold")
        for column in ("", "cell", "variant", "time", "last output"):
            table.add_column(column, overflow="ellipsis", no_wrap=True)
        with self.lock:
            for index, job in enumerate(self.jobs):
                status = self.status[index]
                seconds = self._seconds(index)
                last = self.last.get(index, "") if status == "building" else status
                # every cell plain text through the printable filter: a build's output line
                # may hold terminal escapes or [rich markup]
                table.add_row(
                    *(
                        Text(printable(cell))
                        for cell in (
                            self.SYMBOLS[status],
                            job.label,
                            job.variant,
                            f"{seconds:6.1f} s" if seconds else "",
                            last[-80:],
                        )
                    )
                )
        return table
