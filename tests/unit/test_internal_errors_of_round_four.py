"""Inputs that reached an internal error or a raw traceback (issue 39, round four): a history
whose format number is negative, a history file name longer than the system allows,
``gen -i`` with standard input closed, and a Ctrl-C while mlcc is still importing."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mlcc.history import History, Record
from tests.conftest import REPO

STACK = REPO / "dockerfiles" / "maskrcnn" / "cuda10.1-cudnn7-ubi8-x86_64" / "stack.json"
LOG = (
    ':::MLL 1 submission_benchmark: {"value": "maskrcnn"}\n'
    ':::MLL 100 run_start: {"value": null}\n'
    ':::MLL 700 run_stop: {"value": null, "metadata": {"status": "success"}}\n'
)


def _clean(result) -> None:  # type: ignore[no-untyped-def]
    assert "internal error" not in result.err and "Traceback" not in result.err, result.err


def _history_of_format(path: Path, number: int) -> Path:
    History(path).record(Record("maskrcnn", "v", "d", "podman", "built", 1.0))
    connection = sqlite3.connect(path)
    connection.execute(f"PRAGMA user_version = {number}")
    connection.commit()
    connection.close()
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ("report", "--html", "{tmp}/r.html"),
        ("history",),
        ("results", "compare", "--html", "{tmp}/c.html"),
    ],
    ids=lambda a: a[0] if a[0] != "results" else "results-compare",
)
def test_a_history_of_a_negative_format_is_refused(cli, tmp_path: Path, argv) -> None:  # type: ignore[no-untyped-def]
    history = _history_of_format(tmp_path / "h.sqlite", -1)
    result = cli(*(a.format(tmp=tmp_path) for a in argv), "--history", str(history))
    _clean(result)
    assert result.code == 9 and "format -1" in result.err, result


def test_results_add_refuses_a_history_of_a_negative_format(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    history = _history_of_format(tmp_path / "h.sqlite", -1)
    log = tmp_path / "run.log"
    log.write_text(LOG)
    result = cli("results", "add", str(log), "--stack", str(STACK), "--history", str(history))
    _clean(result)
    assert result.code == 9 and "format -1" in result.err, result


@pytest.mark.parametrize("command", [("history",), ("report", "--html", "r.html")], ids=lambda c: c[0])
def test_a_history_file_name_too_long_for_the_system_is_a_history_error(cli, tmp_path: Path, command) -> None:  # type: ignore[no-untyped-def]
    name = tmp_path / ("h" * 300 + ".sqlite")
    result = cli(*command, "--history", str(name))
    _clean(result)
    assert result.code == 9 and "too long" in result.err.lower(), result


def test_gen_interactive_with_standard_input_closed_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mlcc", "gen", "-i"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        # close fd 0 in the child: Python then starts with sys.stdin None
        preexec_fn=lambda: __import__("os").close(0),
    )
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    assert done.returncode == 2 and "standard input" in done.stderr, done.stderr


def test_a_ctrl_c_while_mlcc_imports_is_quiet(tmp_path: Path) -> None:
    """A KeyboardInterrupt raised by the first import mlcc's entry makes (as a Ctrl-C
    there would) exits 130 with one line, not a traceback."""
    script = textwrap.dedent(
        """
        import sys

        class Interrupt:
            def find_spec(self, name, path=None, target=None):
                if name.startswith("mlcc.") and name != "mlcc._entry":
                    raise KeyboardInterrupt
                return None

        sys.meta_path.insert(0, Interrupt())
        sys.argv = ["mlcc", "--version"]
        from mlcc._entry import main
        main()
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 130 and done.stderr == "mlcc: interrupted\n", done
