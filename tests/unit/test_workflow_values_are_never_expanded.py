"""The cell workflow hands a cell's pins to mlcc through the environment: split into words,
never expanded as file names. ``$PINS`` unquoted let a pin with ``*?[`` match files of the
runner's folder. The step's own script runs here under bash, with stand-ins for sudo and mlcc
that record the arguments."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

WORKFLOW = REPO / ".github" / "workflows" / "build-cells.yml"


def _build_step() -> str:
    jobs = yaml.safe_load(WORKFLOW.read_text())["jobs"]
    for job in jobs.values():
        for step in job.get("steps", []):
            if 'mlcc)" build' in str(step.get("run", "")):
                return str(step["run"])
    raise AssertionError("no build step in build-cells.yml")


@pytest.mark.skipif(shutil.which("bash") is None, reason="the workflow's shell is bash")
def test_pins_are_split_into_words_and_never_globbed(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sudo").write_text('#!/bin/sh\nshift\nexec "$@"\n')
    (bin_dir / "mlcc").write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done > "$ARGS_FILE"\n')
    for tool in ("sudo", "mlcc"):
        (bin_dir / tool).chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    (work / "10.1-from-the-runner").write_text("")
    (work / "u").write_text("")
    env = dict(
        os.environ,
        PATH=f"{bin_dir}:{os.environ['PATH']}",
        ARGS_FILE=str(tmp_path / "args"),
        BENCHMARK="maskrcnn",
        PINS="--cuda 10.*  --base [u]",
        REGISTRY="127.0.0.1:5000/me",
    )
    subprocess.run(["bash", "-e", "-c", _build_step()], cwd=work, env=env, check=True, timeout=30)
    args = (tmp_path / "args").read_text().splitlines()
    assert args[:6] == ["build", "maskrcnn", "--cuda", "10.*", "--base", "[u]"], args
