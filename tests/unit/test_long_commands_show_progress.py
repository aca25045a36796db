"""Commands that run longer than a few seconds (lint of the published set, kb check) show
progress on stderr: a rich bar on a terminal, plain lines in a pipe or with CI=true, and
nothing at all for a command that ends quickly."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import List, Tuple

import pytest
from rich.console import Console

from mlcc.cli import run as cli_run
from mlcc.lint import lint_paths
from mlcc.ui import progress
from mlcc.ui.progress import ProgressReport
from tests.conftest import REPO

from .test_kb_check import index

__all__ = ["index"]  # the fixture: a simple index on 127.0.0.1


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _plain(clock: Clock, *, terminal: bool = False) -> Tuple[ProgressReport, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, force_terminal=terminal, width=100)
    return ProgressReport(console, clock=clock), out


def test_plain_lines_start_after_a_few_seconds_and_stay_sparse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    clock = Clock()
    report, out = _plain(clock)
    with report:
        report("lint: files", 1, 100)  # at once: a quick command says nothing
        clock.now = progress.QUIET_SECONDS + 0.5
        report("lint: files", 40, 100)
        clock.now += 1
        report("lint: files", 41, 100)  # too soon after the last line
        clock.now += progress.LINE_SECONDS
        report("lint: files", 90, 100)
        report("lint: files", 100, 100)  # a phase's end is said once
        report("lint: files", 100, 100)
    assert out.getvalue().splitlines() == [
        "lint: files: 40/100",
        "lint: files: 90/100",
        "lint: files: 100/100",
    ]


def test_a_quick_command_prints_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    report, out = _plain(Clock())
    with report:
        for done in range(1, 11):
            report("lint: files", done, 10)
    assert out.getvalue() == ""


def test_ci_gets_plain_lines_even_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    clock = Clock()
    report, out = _plain(clock, terminal=True)
    assert not report.live
    with report:
        clock.now = 60
        report("kb check: pins", 5, 10)
    assert out.getvalue() == "kb check: pins: 5/10\n"


def test_a_terminal_gets_a_bar_that_goes_away(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    report, out = _plain(Clock(), terminal=True)
    assert report.live
    with report:
        report("lint: files", 3, 10)
    assert "lint: files" in out.getvalue() and "3/10" in out.getvalue()


def test_lint_reports_each_file_then_hadolint(tmp_path: Path) -> None:
    told: List[Tuple[str, int, int]] = []
    variant = REPO / "dockerfiles" / "maskrcnn" / "cuda10.1-cudnn7-ubi8-x86_64"
    yaml_variant = REPO / "buildconfigs" / "maskrcnn" / "cuda10.1-cudnn7-ubi8-x86_64"
    lint_paths([variant, yaml_variant], step=lambda *args: told.append(args))
    files = [t for t in told if t[0] == "lint: files"]
    assert files and [t[1] for t in files] == list(range(1, files[-1][2] + 1)), files
    assert told[-1] == ("lint: hadolint", 1, 1)


def test_lint_cli_shows_progress_on_stderr_only(cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(progress, "QUIET_SECONDS", 0.0)
    monkeypatch.delenv("CI", raising=False)
    result = cli("lint", "--json", str(REPO / "buildconfigs" / "maskrcnn" / "cuda10.1-cudnn7-ubi8-x86_64"))
    assert result.code == 0, result.err
    assert result.out.startswith("{")  # stdout holds the JSON only
    assert "lint: files: " in result.err


def test_kb_check_shows_its_pins_as_it_judges_them(index, capsys, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(progress, "QUIET_SECONDS", 0.0)
    monkeypatch.delenv("CI", raising=False)
    code = cli_run(["kb", "check", "--index-url", index.url + "/simple/", "--sample", "0", "--wheels", "0"])
    out = capsys.readouterr()
    assert code == 10, out.err
    pins = [line for line in out.err.splitlines() if line.startswith("kb check: pins: ")]
    assert pins and pins[-1].split(": ")[-1].split("/")[0] == pins[-1].split("/")[-1], pins
    assert "kb check: pins" not in out.out


def test_kb_check_shows_each_framework_wheel_as_it_reads_it(
    index, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """The wheel phases (the minute of kb check --wheels) count their builds and wheels one
    by one, as the pins do, instead of a 0/1 at their start and a 1/1 at their end."""
    monkeypatch.setattr(progress, "QUIET_SECONDS", 0.0)
    monkeypatch.setattr(progress, "LINE_SECONDS", 0.0)  # every step a line, to count them
    monkeypatch.delenv("CI", raising=False)
    code = cli_run(["kb", "check", "--index-url", index.url + "/simple/", "--sample", "0", "--wheels", "0"])
    out = capsys.readouterr()
    assert code == 10, out.err
    for phase in ("kb check: bundled libraries", "kb check: framework wheels"):
        told = [line.rsplit(": ", 1)[1] for line in out.err.splitlines() if line.startswith(phase + ": ")]
        totals = {int(t.split("/")[1]) for t in told}
        assert len(totals) == 1 and totals.pop() > 1, (phase, told)  # every build, not 0/1 then 1/1
        assert len(told) > 2 and told[-1].split("/")[0] == told[-1].split("/")[1], (phase, told)
    assert "kb check:" not in out.out


def test_kb_check_json_keeps_progress_off_stdout_and_a_pipe_quiet(
    index, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """A quick run into a pipe (no terminal, under QUIET_SECONDS) prints no progress at all."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(progress, "QUIET_SECONDS", 3600.0)
    code = cli_run(
        ["kb", "check", "--index-url", index.url + "/simple/", "--sample", "0", "--wheels", "0", "--json"]
    )
    out = capsys.readouterr()
    assert code == 10 and out.out.startswith("{")
    progress_line = re.compile(r"kb check: [a-z ]+: [0-9]+/[0-9]+")
    assert not progress_line.search(out.err) and not progress_line.search(out.out)
