"""Output that cannot be written is a one-line error with its exit code, never a traceback:
stdout on /dev/full (ENOSPC), stdout closed before mlcc starts (Python then drops every
line silently), stderr gone too, and a reader that closes the pipe early (not an error)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
COMMANDS = [["--version"], ["--help"], ["list", "benchmarks"], ["resolve", "maskrcnn", "--cuda", "10.1"]]
IDS = ["version", "help", "list", "resolve"]


def _shell(args: list, redirect: str) -> subprocess.CompletedProcess[str]:  # type: ignore[type-arg]
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "mlcc", *args])
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("MLCC_DEBUG", None)
    return subprocess.run(
        ["bash", "-c", f"{command} {redirect}"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", COMMANDS, ids=IDS)
def test_a_full_stdout_is_a_clear_error(args: list) -> None:  # type: ignore[type-arg]
    result = _shell(args, ">/dev/full")
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == "mlcc: error: cannot write the output: No space left on device"


@pytest.mark.parametrize("args", COMMANDS, ids=IDS)
def test_a_closed_stdout_is_a_clear_error_not_silence(args: list) -> None:  # type: ignore[type-arg]
    result = _shell(args, ">&-")
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == "mlcc: error: cannot write the output: standard output is closed"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("redirect", [">/dev/full 2>/dev/full", ">&- 2>&-"], ids=["full", "closed"])
def test_nowhere_to_say_it_still_exits_with_the_code(redirect: str) -> None:
    result = _shell(["list", "benchmarks"], redirect)
    assert result.returncode == 2


@pytest.mark.parametrize("args", [["matrix", "--explain"], ["list", "benchmarks"]], ids=["matrix", "list"])
def test_a_reader_that_stops_early_is_not_an_error(args: list) -> None:  # type: ignore[type-arg]
    result = _shell(args, "| (exec 0<&-; sleep 0.5); exit ${PIPESTATUS[0]}")
    assert result.returncode == 0 and result.stderr == "", result.stderr
