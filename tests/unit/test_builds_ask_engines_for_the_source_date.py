"""Builds ask each engine for the stack's source date instead of the clock: buildah and
podman get ``--timestamp`` (the image's created time and every layer file's time), and
every generated Dockerfile's stages declare ``SOURCE_DATE_EPOCH`` so that build steps read
it (Python's compileall then writes hash-based .pyc files, wheel builds stamp it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List

import pytest

from mlcc.engines.base import EngineBuild, EngineSettings, Log
from mlcc.engines.commandline import Buildah, Podman
from mlcc.render.plan import SOURCE_DATE_EPOCH
from tests.conftest import REPO

# A stand-in for the engine's program: records its arguments, writes an image id.
FAKE_ENGINE = """#!/bin/sh
printf '%s\\n' "$@" > "$MLCC_TEST_ARGS"
while [ $# -gt 0 ]; do
  if [ "$1" = --iidfile ]; then echo sha256:0123 > "$2"; fi
  shift
done
"""


@pytest.mark.parametrize("engine_class", [Buildah, Podman])
def test_local_engines_stamp_the_source_date_on_image_and_files(
    engine_class: type, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / engine_class.program
    program.write_text(FAKE_ENGINE)
    program.chmod(0o755)
    args_file = tmp_path / "args"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("MLCC_TEST_ARGS", str(args_file))
    context = tmp_path / "context"
    context.mkdir()

    def argv(**fields: object) -> List[str]:
        spec = EngineBuild(context=context, platform="linux/amd64", **fields)  # type: ignore[arg-type]
        assert engine_class(EngineSettings()).build_image(spec, Log()) == "sha256:0123"
        return args_file.read_text().splitlines()

    stamped = argv(source_date_epoch=SOURCE_DATE_EPOCH)
    assert stamped[stamped.index("--timestamp") + 1] == str(SOURCE_DATE_EPOCH)
    assert "--timestamp" not in argv()  # none asked: the engine's own clock


def test_every_published_dockerfile_stage_declares_the_source_date() -> None:
    declared = f"ARG SOURCE_DATE_EPOCH={SOURCE_DATE_EPOCH}"
    dockerfiles = sorted((REPO / "dockerfiles").glob("*/*/Dockerfile"))
    assert dockerfiles
    for path in dockerfiles:
        lines = path.read_text().splitlines()
        stages = [i for i, line in enumerate(lines) if line.startswith("FROM ")]
        for start in stages:  # each stage right after its FROM (an ARG is scoped to its stage)
            assert declared in lines[start + 1 : start + 3], f"{path}:{start + 1}"
