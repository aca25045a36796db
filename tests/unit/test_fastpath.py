"""The click-free `mlcc resolve --json` and `mlcc gen BENCHMARK [pins]` (mlcc.fastpath)
parse exactly as click does, print what click prints, and fall back to click for
everything else."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlcc.app.generate import OutputFlags
from mlcc.app.kb import ResolveView
from mlcc.cli import _refuse_repeats
from mlcc.cli.gen import gen_command
from mlcc.cli.knowledge import resolve_command
from mlcc.fastpath.gen import GEN_TYPES, GenArgs, parse_gen
from mlcc.fastpath.parse import spellings
from mlcc.fastpath.resolve import RESOLVE_TYPES, ResolveArgs, parse_resolve
from mlcc.flags import flags_of, from_flags
from mlcc.resolve.pins import Pins
from tests.conftest import REPO

SPELLINGS = sorted(spellings(RESOLVE_TYPES))
values = st.text(max_size=8) | st.sampled_from(["10.1", "7", ">=10.1,<11", "tensorflow=1.13", "-x", "", "="])
tokens = st.one_of(
    st.sampled_from(SPELLINGS),
    st.builds(lambda name, value: f"{name}={value}", st.sampled_from(SPELLINGS), values),
    values,
    st.sampled_from(["maskrcnn", "--", "-", "--help", "-h", "-vx", "--nope", "--cud", "--recipes"]),
)


def _click_parse(argv: Sequence[str]) -> Optional[ResolveArgs]:
    """What the click command receives, or None when click refuses the arguments."""
    try:
        _refuse_repeats(resolve_command, argv)
        ctx = resolve_command.make_context("resolve", list(argv), resilient_parsing=False)
    except (click.exceptions.ClickException, click.exceptions.Exit, Exception):
        return None
    params = ctx.params

    def build(cls: type, argument: str) -> object:
        return from_flags(cls, {name: params[f"{argument}__{name}"] for name in flags_of(cls)})

    return ResolveArgs(params["benchmark"], build(Pins, "pins"), build(ResolveView, "view"))  # type: ignore[arg-type]


@settings(max_examples=400, deadline=None)
@given(st.lists(tokens, max_size=7))
def test_whatever_the_fast_parser_accepts_click_parses_the_same(argv: List[str]) -> None:
    fast = parse_resolve(argv)
    if fast is not None:
        assert _click_parse(argv) == fast


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["maskrcnn", "ssd", "minigo"]),
    st.lists(st.sampled_from(SPELLINGS), max_size=6, unique=True),
    st.lists(st.sampled_from(["10.1", "7", "tensorflow=1.13", ">=2.4"]), min_size=6, max_size=6),
    st.booleans(),
)
def test_the_plain_forms_take_the_fast_path(
    benchmark: str, names: List[str], picked: List[str], inline: bool
) -> None:
    """Not vacuous: the forms users type are accepted (and so compared with click above)."""
    options = spellings(RESOLVE_TYPES)
    argv = [benchmark]
    for name, value in zip(names, picked):
        spec = options[name][2]
        if spec.is_flag:
            argv.append(name)
        else:
            argv += [f"{name}={value}"] if inline else [name, value]
    spelled = {options[name][:2] for name in names}
    if len(spelled) < len(names):  # -v and --verbose both: click refuses a repeat
        return
    fast = parse_resolve(argv)
    assert fast is not None and fast == _click_parse(argv)


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["maskrcnn", "--cuda"],  # a value missing
        ["maskrcnn", "--cuda", "--cpu"],  # click takes --cpu as the value; we do not guess
        ["maskrcnn", "--cuda", "1", "--cuda", "2"],
        ["maskrcnn", "--json", "--json"],
        ["maskrcnn", "ssd"],
        ["maskrcnn", "--", "--cuda"],
        ["maskrcnn", "-vx"],
        ["maskrcnn", "--cpu=yes"],
        ["maskrcnn", "--help"],
        ["maskrcnn", "--nope", "1"],
    ],
)
def test_anything_unusual_goes_to_click(argv: List[str]) -> None:
    assert parse_resolve(argv) is None


def test_the_parse_of_a_typical_line() -> None:
    parsed = parse_resolve(
        ["maskrcnn", "--cuda", "10.1", "--with=tensorflow=1.13", "--with", "x=1", "--json"]
    )
    assert parsed == ResolveArgs(
        "maskrcnn", Pins(cuda="10.1", with_=("tensorflow=1.13", "x=1")), ResolveView(json=True)
    )


def _mlcc(
    args: Sequence[str], *, click_only: bool, env: Optional[dict] = None, cwd: Path = REPO
) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    entry = "from mlcc.cli import main" if click_only else "from mlcc._entry import main"
    code = f"import sys\n{entry}\nsys.argv = ['mlcc', *sys.argv[1:]]\nmain()"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
    )


@pytest.mark.parametrize(
    "args",
    [
        ["resolve", "maskrcnn", "--cuda", "10.1", "--json"],
        ["resolve", "maskrcnn", "--cuda=10.1", "--json", "-v"],
        ["resolve", "maskrcnn", "--cuda", "9.9", "--json"],  # a conflict: click prints it
        ["resolve", "no-such-benchmark", "--json"],
        ["resolve", "maskrcnn", "--cuda", "10.1"],  # the table: click
    ],
)
def test_output_and_exit_code_are_the_click_cli_s(args: List[str]) -> None:
    fast, slow = _mlcc(args, click_only=False), _mlcc(args, click_only=True)
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr)
    assert fast.stdout or fast.stderr


def test_mlcc_recipes_in_the_environment_goes_to_click() -> None:
    code = (
        "import sys\nfrom mlcc.fastpath import run\n"
        "print(run(['resolve', 'maskrcnn', '--json']), 'click' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "MLCC_RECIPES": str(REPO / "recipes")},
        check=True,
    )
    assert done.stdout.strip() == "None False"


# ----------------------------------------------------------------------------- gen


def _click_parse_gen(argv: Sequence[str]) -> Optional[GenArgs]:
    """What the click gen command receives when everything but the pins and output folders
    is at its default."""
    try:
        _refuse_repeats(gen_command, argv)
        ctx = gen_command.make_context("gen", list(argv), resilient_parsing=False)
    except (click.exceptions.ClickException, click.exceptions.Exit, Exception):
        return None
    params = dict(ctx.params)
    pins = from_flags(Pins, {name: params.pop(f"pins__{name}") for name in flags_of(Pins)})
    out = from_flags(OutputFlags, {name: params.pop(f"out__{name}") for name in flags_of(OutputFlags)})
    plain = gen_command.make_context("gen", ["benchmark"], resilient_parsing=False).params
    others = {name: value for name, value in params.items() if name != "benchmark"}
    assert others == {name: plain[name] for name in others}, "the fast path ran with a non-default option"
    return GenArgs(params["benchmark"], pins, out)  # type: ignore[arg-type]


GEN_SPELLINGS = sorted({*spellings(GEN_TYPES), "--mirror", "--all", "-i", "--chain", "--gpus"})
gen_tokens = st.one_of(
    st.sampled_from(GEN_SPELLINGS),
    st.builds(lambda name, value: f"{name}={value}", st.sampled_from(GEN_SPELLINGS), values),
    values,
    st.sampled_from(["maskrcnn", "--", "-", "--help", "--json", "--cud", "--recipes"]),
    st.sampled_from(["dockerfile", "openshift", "script", "singularity", "Script"]),  # the choices
)


@settings(max_examples=300, deadline=None)
@given(st.lists(gen_tokens, max_size=7))
def test_whatever_the_fast_gen_parser_accepts_click_parses_the_same(argv: List[str]) -> None:
    fast = parse_gen(argv)
    if fast is not None:
        assert _click_parse_gen(argv) == fast


def test_the_fast_gen_parser_takes_the_plain_pins_and_output_options_and_nothing_else() -> None:
    assert parse_gen(
        ["maskrcnn", "--cuda", "10.1", "--arch=ppc64le", "--with", "x=1", "-o", "out"]
    ) == GenArgs("maskrcnn", Pins(cuda="10.1", arch="ppc64le", with_=("x=1",)), OutputFlags(output="out"))
    assert parse_gen(["maskrcnn", "--only", "dockerfile", "--format=script"]) == GenArgs(
        "maskrcnn", Pins(), OutputFlags(only="dockerfile", fmt="script")
    )
    for argv in (
        ["maskrcnn", "--only", "Dockerfile"],  # not one of the choices: click says which are
        ["maskrcnn", "--format", "docker"],
        ["maskrcnn", "-o=out"],  # click reads "=out" as the value; left to it
        ["--all"],
        ["maskrcnn", "--json"],
    ):
        assert parse_gen(argv) is None, argv


def _tree(root: Path) -> Dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    "runs",
    [
        [
            ["gen", "maskrcnn", "--cuda", "10.1"],
            ["gen", "maskrcnn", "--cuda", "10.1"],
        ],  # created, then unchanged
        [["gen", "ssd", "--arch", "ppc64le"], ["gen", "ssd", "--cuda", "10.2"]],  # a second variant beside it
        [["gen", "maskrcnn", "--cuda", "9.9"]],  # a conflict: click explains it
        [["gen", "no-such-benchmark"]],
        [["gen", "maskrcnn", "--cuda", "10.1", "-o", "elsewhere", "--openshift-output=objects"]],
        [["gen", "maskrcnn", "--cuda", "10.1", "-o", ""]],  # an empty folder: click's error
        [["gen", "maskrcnn", "--cuda", "10.1", "--format", "script"]],
        [
            ["gen", "maskrcnn", "--cuda", "10.1", "--only", "dockerfile"],
            ["gen", "maskrcnn", "--only=openshift"],
        ],
        [["gen", "ssd", "--format", "singularity", "--only", "openshift"]],
        [["gen", "maskrcnn", "--only", "docker"]],  # not a choice: click's error
        [["gen", "maskrcnn", "--cuda", "10.1", "--mirror", "http://mirror.example"]],  # left to click
    ],
)
def test_gen_prints_writes_and_exits_as_the_click_cli(tmp_path: Path, runs: List[List[str]]) -> None:
    fast_dir, slow_dir = tmp_path / "fast", tmp_path / "slow"
    fast_dir.mkdir()
    slow_dir.mkdir()
    for args in runs:
        fast = _mlcc(args, click_only=False, cwd=fast_dir)
        slow = _mlcc(args, click_only=True, cwd=slow_dir)
        assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr)
        assert fast.stdout or fast.stderr
    assert _tree(fast_dir) == _tree(slow_dir)


@pytest.mark.parametrize(
    ("args", "printed"),
    [
        (["resolve", "maskrcnn", "--cuda", "10.1", "--json"], '"variant": "cuda10.1-cudnn7-ubi8-x86_64"'),
        (
            ["gen", "maskrcnn", "--cuda", "10.1"],
            "created   dockerfiles/maskrcnn/cuda10.1-cudnn7-ubi8-x86_64/Dockerfile",
        ),
    ],
)
def test_the_fast_paths_import_neither_click_nor_the_matrix(
    tmp_path: Path, args: List[str], printed: str
) -> None:
    code = (
        "import sys\nfrom mlcc.fastpath import run\n"
        f"code = run({args!r})\n"
        "print(code, 'click' in sys.modules, 'mlcc.matrix' in sys.modules, file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    assert done.stderr.strip() == "0 False False"
    assert printed in done.stdout
