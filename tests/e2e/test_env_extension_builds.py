"""A recipe's ``env: {NAME: {prepend: [...]}}`` as a real builder reads it: the environment
step mlcc writes for dlrm_dcnv2 v5.1, built by buildah over an image whose environment is an
NGC image's, keeps that environment behind HugeCTR's folders (``${NAME:+:${NAME}}`` is
Docker's environment replacement, which buildah's Dockerfile reader shares), and adds no
empty entry where the base sets none."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Dict

from tests.conftest import run_mlcc

# An NGC image's environment before the benchmark's ENV; CPATH and PYTHONPATH unset
BASE_ENV = (
    'ENV PATH="/usr/local/cuda/bin:/usr/bin:/bin"'
    ' LD_LIBRARY_PATH="/usr/local/cuda/compat/lib:/usr/local/nvidia/lib64"'
    ' LIBRARY_PATH="/usr/local/cuda/lib64/stubs"\n'
)


def _environment_step(dockerfile: str) -> str:
    """The ENV instruction of the benchmark's environment step, as mlcc wrote it."""
    step = dockerfile.split("# dlrm_dcnv2-v5.1: environment\n", 1)[1]
    return step.split("\n\n", 1)[0] + "\n"


def _built_env(folder: Path) -> Dict[str, str]:
    """The Env of the image buildah builds from ``folder`` (its own storage under it)."""
    storage = ["--storage-driver", "vfs", "--root", str(folder / "root"), "--runroot", str(folder / "run")]
    tag = "localhost/mlcc-env-probe:latest"
    try:
        subprocess.run(
            ["buildah", *storage, "bud", "-q", "-t", tag, str(folder)], check=True, capture_output=True
        )
        shown = subprocess.run(
            ["buildah", *storage, "inspect", "--type", "image", tag],
            check=True,
            capture_output=True,
            text=True,
        )
    finally:
        subprocess.run(["buildah", *storage, "rmi", "-a", "-f"], capture_output=True)
    env = json.loads(shown.stdout)["OCIv1"]["config"]["Env"]
    return dict(item.split("=", 1) for item in env)


def test_buildah_keeps_the_bases_environment_behind_the_prepended_folders(tmp_path: Path) -> None:
    # an e2e test that cannot run fails (tests/system-tools.txt names buildah), never skips
    assert shutil.which("buildah"), "buildah is not on PATH: install what tests/system-tools.txt lists"
    generated = run_mlcc(
        ["gen", "dlrm_dcnv2", "--round", "v5.1", "--arch", "x86_64", "-o", str(tmp_path / "gen")]
    )
    assert generated.code == 0, generated.err
    [dockerfile] = (tmp_path / "gen").rglob("Dockerfile")
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "Dockerfile").write_text("FROM scratch\n" + BASE_ENV + _environment_step(dockerfile.read_text()))
    env = _built_env(probe)
    assert env["PATH"] == "/usr/local/hugectr/bin:/usr/local/cuda/bin:/usr/bin:/bin"
    assert (
        env["LD_LIBRARY_PATH"] == "/usr/local/hugectr/lib:/usr/local/cuda/compat/lib:/usr/local/nvidia/lib64"
    )
    assert env["LIBRARY_PATH"] == "/usr/local/hugectr/lib:/usr/local/cuda/lib64/stubs"
    assert env["CPATH"] == "/usr/local/include" and env["PYTHONPATH"] == "/usr/local/hugectr/lib"
    assert env["SHARP_COLL_LOG_LEVEL"] == "3"  # the step's plain values beside them
