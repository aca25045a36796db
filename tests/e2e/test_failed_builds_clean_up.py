"""A failed build leaves no working container behind (they piled up in CI): buildah itself,
told by mlcc's command line, removes the containers of a build that fails at a step."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Set

import pytest

from mlcc.engines.base import EngineBuild, EngineSettings, Log
from mlcc.engines.commandline import Buildah
from mlcc.errors import BuildError


def _scratch_containers() -> Set[str]:
    """buildah's working containers of FROM scratch builds (other builds may run meanwhile)."""
    listed = subprocess.run(["buildah", "containers", "--json"], capture_output=True, text=True, check=True)
    return {c["id"] for c in json.loads(listed.stdout or "null") or [] if c.get("imagename") == "scratch"}


def test_a_build_that_fails_at_a_step_removes_its_working_container(tmp_path: Path) -> None:
    context = tmp_path / "context"
    context.mkdir()
    (context / "Dockerfile").write_text("FROM scratch\nCOPY no-such-file /x\n")
    before = _scratch_containers()
    with pytest.raises(BuildError):
        Buildah(EngineSettings()).build_image(EngineBuild(context=context, platform="linux/amd64"), Log())
    assert _scratch_containers() <= before
