"""Command line: repeated flags, gen -i at end of input, Ctrl-C at start-up, aliases."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from tests.conftest import REPO


@pytest.mark.parametrize(
    "args",
    [
        ("resolve", "maskrcnn", "--cuda", "10.1", "--cuda", "10.2"),
        ("gen", "maskrcnn", "--namespace=a", "--namespace", "b"),
        ("gen", "maskrcnn", "-o", "x", "--output", "y"),
    ],
)
def test_a_single_valued_flag_given_twice_is_refused(cli, args) -> None:  # type: ignore[no-untyped-def]
    result = cli(*args)
    assert result.code == 2, result.err
    assert "is given 2 times" in result.err


def test_repeatable_flags_still_repeat(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("resolve", "tf_cnn_benchmarks", "--with", "tensorflow=1.14", "--with", "python=3.6")
    assert result.code == 0, result.err


def test_arch_and_its_alias_are_the_same_pin(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("resolve", "maskrcnn", "--arch", "x86_64", "--with", "arch=amd64")
    assert result.code == 0, result.err
    assert cli("resolve", "maskrcnn", "--arch", "x86_64", "--with", "arch=ppc64le").code == 2


def test_gen_interactive_at_end_of_input_is_a_usage_error(cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    result = cli("gen", "-i")
    assert result.code == 2 and "input ended" in result.err and "interrupted" not in result.err


def test_gen_interactive_gives_up_after_a_few_wrong_answers(cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "stdin", io.StringIO("garbage\n" * 100_000 + "x" * 1_000_000))
    result = cli("gen", "-i")
    assert result.code == 2 and "no valid answer" in result.err
    assert len(result.err) < 5_000  # bounded, whatever is piped in


def test_ctrl_c_while_importing_exits_130_without_a_traceback() -> None:
    script = (
        "import sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'click':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Interrupt())\n"
        "from mlcc._entry import main\n"
        "main()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr and "mlcc: interrupted" in proc.stderr
