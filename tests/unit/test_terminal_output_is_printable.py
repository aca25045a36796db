"""Every value mlcc prints passes through one printable filter: terminal escapes from file
names, --system, recipe text, flag values, cluster pod names and build output arrive as
visible text, and rich never reads [brackets] in them as markup."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from mlcc.cli.live import LiveView
from mlcc.ui.safe_text import echo
from tests.conftest import REPO, mlperf_v06

ESC = "\x1b]0;owned\x07\x1b[2J"  # set the window title, then clear the screen
SHOWN = "\\x1b]0;owned\\x07\\x1b[2J"
STACK = REPO / "dockerfiles" / "maskrcnn" / "cuda10.1-cudnn7-ubi8-x86_64" / "stack.json"


def _clean(text: str) -> bool:
    return not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", text)


def test_only_the_filter_writes_to_the_terminal() -> None:
    """No module prints but through mlcc.ui.safe_text.echo (rich tables render to a string first)."""
    direct = []
    for path in sorted((REPO / "mlcc").rglob("*.py")):
        if path.name == "safe_text.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\bclick\.(echo|secho)\(|(?<![.\w])print\(|sys\.stdout\.write|\.show\(\)", line):
                direct.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert direct == []


def test_echo_keeps_lines_and_tabs_and_escapes_the_rest(capsys: pytest.CaptureFixture[str]) -> None:
    echo(f"a\tb\nc{ESC}")
    assert capsys.readouterr().out == f"a\tb\nc{SHOWN}\n"


def test_a_file_name_with_escapes_is_shown_escaped(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / f"out{ESC}"
    result = cli("gen", "maskrcnn", "-o", str(out), "--only", "dockerfile")
    assert result.code == 0, result.err
    assert SHOWN in result.out and _clean(result.out + result.err)


def test_a_log_file_name_and_system_are_shown_escaped(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    logs = tmp_path / f"logs{ESC}"
    shutil.copytree(mlperf_v06("NVIDIA", "dgx1_ngc19.05_pytorch", "maskrcnn"), logs)
    history = tmp_path / "h.sqlite"
    added = cli(
        "results", "add", str(logs), "--stack", str(STACK), "--system", f"dgx{ESC}", "--history", str(history)
    )
    assert added.code == 0, added.err
    assert SHOWN in added.out and _clean(added.out + added.err)
    compared = cli("results", "compare", "--history", str(history))
    assert compared.code == 0, compared.err
    assert "dgx\\x1b" in compared.out and _clean(compared.out)


def test_recipe_text_in_an_error_is_shown_escaped(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("resolve", f"maskrcnn{ESC}")
    assert result.code == 2
    assert SHOWN in result.err and _clean(result.err)


def test_a_flag_value_in_clicks_own_error_is_shown_escaped(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("gen", "maskrcnn", "--gpus", ESC)
    assert result.code == 2 and "--gpus" in result.err
    assert _clean(result.err) and "\\x1b" in result.err


def test_a_recipe_title_with_escapes_never_reaches_the_terminal(cli, recipes_copy: Path) -> None:  # type: ignore[no-untyped-def]
    recipe = recipes_copy / "benchmarks" / "maskrcnn.yaml"
    text = recipe.read_text(encoding="utf-8")
    recipe.write_text(
        re.sub(r"(?m)^title: .*$", lambda _: 'title: "Mask \\e[2J R-CNN"', text, count=1), encoding="utf-8"
    )
    result = cli("--recipes", str(recipes_copy), "list", "benchmarks")
    assert _clean(result.out + result.err)


def test_the_live_build_table_shows_output_as_plain_text() -> None:
    """A build's last output line with escapes and [markup] is shown as it is, escaped."""
    view = LiveView([])
    view.last[0] = "x"
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, color_system=None, force_terminal=False)

    class Job:
        label = f"[bold]mask{ESC}"
        variant = "[red]v[/red]"

    view.jobs = [Job()]  # type: ignore[list-item]
    view.status = {0: "building"}
    view.last[0] = f"step [link=http://x]1[/link]{ESC}"
    console.print(view._table())
    shown = buffer.getvalue()
    assert "[bold]mask\\x1b" in shown and "[red]v[/red]" in shown and "[link=http://x]1[/link]" in shown
    assert _clean(shown)
