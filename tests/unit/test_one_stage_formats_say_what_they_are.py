"""An install script and an Apptainer file build in one stage: they are devel. ``gen --format
script --flavour runtime`` wrote a devel install into the runtime-named folder and stamped
"asked for (--flavour devel)", which nobody asked for; runtime is now refused for them, and
the stamp says why they are devel."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.mark.parametrize("fmt", ["script", "singularity"])
def test_runtime_is_refused_for_a_one_stage_format(cli, tmp_path: Path, fmt: str) -> None:  # type: ignore[no-untyped-def]
    result = cli(
        "gen",
        "maskrcnn",
        "--round",
        "v2.1",
        "--format",
        fmt,
        "--flavour",
        "runtime",
        "-o",
        str(tmp_path / "o"),
    )
    assert result.code == 2 and "--flavour runtime" in result.err and fmt in result.err, result
    assert not (tmp_path / "o").exists()


def test_a_script_stamps_why_it_is_devel_not_a_flag_nobody_gave(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("gen", "maskrcnn", "--round", "v2.1", "--format", "script", "-o", str(tmp_path / "o"))
    assert result.code == 0, result.err
    (stack_file,) = (tmp_path / "o").rglob("stack.json")
    stack = json.loads(stack_file.read_text())
    (flavour,) = [c for c in stack["choices"] if c["component"] == "flavour"]
    assert stack["flavour"] == "devel" and "--flavour devel" not in flavour["reason"], flavour
    assert "one stage" in flavour["reason"]
