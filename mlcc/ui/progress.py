"""Progress of a command that runs longer than a few seconds, on stderr.

On a terminal a rich progress bar per phase (removed when done); elsewhere (a pipe, a file,
``CI=true``) plain lines, and only once the command has run for a few seconds, so that short
runs and scripts reading stderr see nothing. The use cases (``mlcc.app``) take a ``Step``
callback and know nothing of either.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Dict, Optional, Set

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

QUIET_SECONDS = 3.0  # plain lines start after this long: a quick command prints none
LINE_SECONDS = 10.0  # and then come at most this often per phase (and when a phase ends)


def in_ci() -> bool:
    """Whether ``CI`` says this runs in continuous integration (GitHub, GitLab: ``true``)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


class ProgressReport:
    """A :data:`mlcc.ui.Step` for the CLI, used as a context manager around the long call."""

    def __init__(
        self, console: Optional[Console] = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.console = console or Console(stderr=True)
        self.clock = clock
        self.started = clock()
        self.live = self.console.is_terminal and not in_ci()
        self._bar: Any = None
        self._tasks: Dict[str, Any] = {}
        self._said: Dict[str, float] = {}  # phase -> when its last line was printed
        self._finished: Set[str] = set()

    def __enter__(self) -> ProgressReport:
        self.started = self.clock()
        if self.live:
            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def __call__(self, what: str, done: int, total: int) -> None:
        if self._bar is not None:
            if what not in self._tasks:
                self._tasks[what] = self._bar.add_task(what, total=total)
            self._bar.update(self._tasks[what], completed=done, total=total)
            return
        now = self.clock()
        if now - self.started < QUIET_SECONDS or what in self._finished:
            return
        last = self._said.get(what)
        if done < total and last is not None and now - last < LINE_SECONDS:
            return
        if done >= total:
            self._finished.add(what)
        self._said[what] = now
        self.console.print(f"{what}: {done}/{total}", markup=False, highlight=False, soft_wrap=True)
