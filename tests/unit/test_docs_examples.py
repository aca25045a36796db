"""Every example in README.md and docs/*.md runs, and prints what the page shows.

The convention (docs/development.md, "Examples in the docs"):

- a ```console block is an example. Each ``$ `` line is a command (a line ending in ``\\``
  continues on the next); the lines after it, up to the next command, are output it must
  print (stdout or stderr), in order. Runs of spaces match any run of spaces, ``...`` in a
  line matches any text, and a line that is only ``...`` stands for lines left out.
- ``# exits N`` at the end of a command is the exit code it must end with (default 0).
- ```console requires=cluster (or registry, engine, index) marks an example that needs what the
  unit suite does not have; the page says so beside it. Every other block runs here, and
  all its commands are mlcc commands, so nothing in it is silently skipped.
- a ```python block runs as a script.

The examples of one page run in order, in one fresh folder (so a page can write a file in
one block and use it in the next), through the real CLI in process, as the ``cli`` fixture
runs it.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Callable, List, NamedTuple, Optional

import pytest

from tests.conftest import REPO, Result

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# What an example may need that the unit suite does not have: a live OpenShift or
# Kubernetes cluster, a container registry holding the image, a container engine that
# builds, the package index (PyPI). Anything else an example needs, the unit suite has.
NEEDS = {"cluster", "registry", "engine", "index"}
FENCE = re.compile(r"^```(\w*)(.*)$")
EXIT = re.compile(r"#\s*exits\s+(\d+)\s*$")


class Command(NamedTuple):
    line: int  # where it is written, for the failure message
    argv: List[str]
    code: int
    shown: List[str]  # the output lines the page shows


class Block(NamedTuple):
    page: Path
    line: int
    language: str
    needs: Optional[str]
    text: List[str]

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks_of(page: Path) -> List[Block]:
    """The fenced blocks of a Markdown page, with their info string read."""
    found: List[Block] = []
    lines = page.read_text().splitlines()
    index = 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        start, language, info = index + 1, match.group(1), match.group(2).strip()
        end = start
        while not lines[end].startswith("```"):
            end += 1
        needs = info.split("=", 1)[1] if info.startswith("requires=") else None
        found.append(Block(page, start, language, needs, lines[start:end]))
        index = end + 1
    return found


def commands_of(block: Block) -> List[Command]:
    """The commands of a console block, each with its exit code and the lines it shows."""
    commands: List[Command] = []
    lines = iter(enumerate(block.text, block.line + 1))
    for number, text in lines:
        if text.startswith("$ "):
            command = text[2:]
            while command.endswith("\\"):
                command = command[:-1] + next(lines)[1]
            code = EXIT.search(command)
            commands.append(
                Command(number, shlex.split(command, comments=True), int(code.group(1)) if code else 0, [])
            )
        elif commands:
            commands[-1].shown.append(text)
        else:
            raise AssertionError(f"{block.name}: output before the first $ command: {text!r}")
    return commands


def pattern_of(shown: str) -> re.Pattern[str]:
    """A shown output line as a pattern: ``...`` is any text, a run of spaces any run."""
    parts = [r"\s+".join(re.escape(word) for word in piece.split()) for piece in shown.split("...")]
    return re.compile(".*".join(parts))


def missing_output(shown: List[str], printed: str) -> Optional[str]:
    """The first shown line that the printed output does not have, in order; else None."""
    output = printed.splitlines()
    position = 0
    for line in shown:
        if line.strip() in ("", "..."):
            continue
        pattern = pattern_of(line)
        while position < len(output) and not pattern.search(output[position]):
            position += 1
        if position == len(output):
            return line
        position += 1
    return None


def run_block(block: Block, cli: Callable[..., Result]) -> None:
    """Run a console block's commands in order; fail naming the page line that went wrong."""
    for command in commands_of(block):
        assert command.argv[0] == "mlcc", (
            f"{block.name}: `{' '.join(command.argv)}` is not an mlcc command; "
            f"mark the block requires={'|'.join(sorted(NEEDS))} and say why on the page"
        )
        result = cli(*command.argv[1:])
        where = f"{block.page.relative_to(REPO)}:{command.line}: $ {shlex.join(command.argv)}"
        assert result.code == command.code, (
            f"{where}\nexit {result.code}, the page says {command.code}\n{result.err}"
        )
        missing = missing_output(command.shown, result.out + result.err)
        assert missing is None, f"{where}\ndoes not print {missing!r}; it printed:\n{result.out}{result.err}"


EXAMPLES = [block for page in PAGES for block in blocks_of(page) if block.language in ("console", "python")]
RUNNABLE = [block for block in EXAMPLES if block.needs is None]


def test_the_pages_hold_examples_and_few_need_what_the_unit_suite_lacks() -> None:
    assert len(RUNNABLE) >= 20
    unknown = [(block.name, block.needs) for block in EXAMPLES if block.needs and block.needs not in NEEDS]
    assert not unknown, f"requires= takes one of {sorted(NEEDS)}"
    assert len(EXAMPLES) - len(RUNNABLE) <= len(RUNNABLE) // 2


def run_python(block: Block) -> None:
    """Run a python block as a script; its own asserts are what it checks."""
    exec(compile("\n".join(block.text), block.name, "exec"), {"__name__": "__doc_example__"})


@pytest.mark.parametrize("page", PAGES, ids=[str(page.relative_to(REPO)) for page in PAGES])
def test_the_examples_of_a_page_run_and_print_what_it_shows(page: Path, cli) -> None:  # type: ignore[no-untyped-def]
    for block in RUNNABLE:
        if block.page == page:
            run_python(block) if block.language == "python" else run_block(block, cli)


def test_a_failing_python_example_fails_the_test() -> None:
    block = Block(
        REPO / "x.md",
        1,
        "python",
        None,
        ["import mlcc.api", "assert mlcc.api.resolve('maskrcnn').cuda is None"],
    )
    with pytest.raises(AssertionError):
        run_python(block)


def test_a_failing_example_fails_the_test(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    page = tmp_path / "broken.md"
    page.write_text(
        "```console\n$ mlcc resolve maskrcnn --cuda 10.1\n```\n\n"  # runs
        "```console\n$ mlcc resolve no-such-benchmark\n```\n\n"  # exits 2, the page says 0
        "```console\n$ mlcc resolve maskrcnn --cuda 10.1\nno such line\n```\n\n"  # prints otherwise
        "```console\n$ mlcc resolve no-such-benchmark   # exits 2\n```\n"  # as stated
    )
    runs, wrong_code, wrong_output, stated_code = (
        block._replace(page=REPO / "x.md") for block in blocks_of(page)
    )
    run_block(runs, cli)
    with pytest.raises(AssertionError, match="exit 2, the page says 0"):
        run_block(wrong_code, cli)
    with pytest.raises(AssertionError, match="does not print 'no such line'"):
        run_block(wrong_output, cli)
    run_block(stated_code, cli)


def test_a_block_with_another_tool_must_say_what_it_needs(cli) -> None:  # type: ignore[no-untyped-def]
    block = Block(REPO / "x.md", 1, "console", None, ["$ podman build ."])
    with pytest.raises(AssertionError, match="not an mlcc command"):
        run_block(block, cli)


def test_shown_output_matches_with_gaps_and_any_spacing() -> None:
    printed = "maskrcnn  cuda10.1  (reference)\n\ncuda     10.1.243   nearest run\n"
    assert missing_output(["maskrcnn cuda10.1 ...", "...", "cuda   10.1.243 ..."], printed) is None
    assert missing_output(["cuda 10.1.243", "maskrcnn"], printed) == "maskrcnn"  # order counts


def test_the_readme_gives_the_command_ci_runs() -> None:
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    assert "exec tests/run" in ci.splitlines()
    assert "```bash\ntests/run\n```" in readme


def _readme_install() -> str:
    """The README's first command: the install line of a new user."""
    return next(
        line for block in blocks_of(REPO / "README.md") if block.language == "bash" for line in block.text
    )


def _readme_commands() -> List[str]:
    return [
        " ".join(command.argv)
        for block in EXAMPLES
        if block.page == REPO / "README.md" and block.language == "console"
        for command in commands_of(block)
    ]


def test_the_readme_install_carries_the_extra_its_lint_example_needs() -> None:
    # `pip install .` lacks hadolint: the Quick start's `mlcc lint` would exit 2
    install = _readme_install()
    assert "pip install" in install
    if any(command.startswith("mlcc lint") for command in _readme_commands()):
        assert re.search(r"pip install '?\.\[[^\]]*\blint\b", install), install


def test_the_readme_main_job_is_one_of_its_tested_examples() -> None:
    install = _readme_install()
    main_job = install.split(".venv/bin/", 2)[-1]
    assert main_job.startswith("mlcc "), install
    assert main_job in _readme_commands(), f"{main_job!r} is not run by any README example"


def test_the_readme_shows_a_round_and_todays_gpu() -> None:
    shown = [c for c in _readme_commands() if "--round" in c and re.search(r"--gpu (a100|h100)\b", c)]
    assert shown, "the README shows no --round example on an A100/H100"


def test_the_readme_stays_a_five_minute_read() -> None:
    assert len((REPO / "README.md").read_text().split()) <= 1250
