"""A mirror given to the build itself (``--build-arg NVIDIA_MIRROR=...``, the install script's
environment) is checked by the generated step that writes it into a repository file: a
newline in it must not add ``gpgcheck=0`` to /etc/yum.repos.d/cuda.repo.

The generated RUN step is run here with bash, its repository folder moved to a temporary one.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO

BASH = shutil.which("bash")
DOCKERFILE = REPO / "dockerfiles" / "maskrcnn" / "cuda10.1-cudnn7-ubi8-x86_64" / "Dockerfile"


def _repository_step(dockerfile: Path) -> str:
    """The shell command of the RUN step under the "NVIDIA package repositories" comment."""
    text = dockerfile.read_text(encoding="utf-8")
    match = re.search(r"# NVIDIA package repositories[^\n]*\nRUN (.*?)(?<!\\)\n", text, re.S)
    assert match is not None, "the Dockerfile adds NVIDIA's repositories"
    return match.group(1).replace("\\\n", " ")  # the engine joins continued lines


def _run(step: str, mirror: str, folder: Path) -> subprocess.CompletedProcess[str]:
    assert BASH is not None
    command = step.replace("/etc/yum.repos.d/", f"{folder}/")
    return subprocess.run(
        [BASH, "-c", command],
        env={"NVIDIA_MIRROR": mirror, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.mark.skipif(BASH is None, reason="needs bash")
@pytest.mark.parametrize(
    "mirror",
    [
        "https://mirror.example\ngpgcheck=0",
        "https://mirror.example/x\ngpgcheck=0\n#",
        "https://mirror.example\rgpgcheck=0",
        'https://mirror.example" gpgcheck=0 "',
        "https://user:secret@mirror.example",
        "https://mirror.example/$(touch pwned)",
        "ftp://mirror.example",
        "file:///etc",
        "mirror.example",
        "https://",
        "",
    ],
)
def test_a_bad_build_time_mirror_stops_the_step_before_any_file(tmp_path: Path, mirror: str) -> None:
    result = _run(_repository_step(DOCKERFILE), mirror, tmp_path)
    assert result.returncode != 0
    assert "NVIDIA_MIRROR is not a plain http(s) URL" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(BASH is None, reason="needs bash")
@pytest.mark.parametrize("mirror", ["https://developer.download.nvidia.com", "http://10.0.0.5:8080/nvidia"])
def test_a_plain_mirror_writes_the_repository_file(tmp_path: Path, mirror: str) -> None:
    result = _run(_repository_step(DOCKERFILE), mirror, tmp_path)
    assert result.returncode == 0, result.stderr
    written = (tmp_path / "cuda.repo").read_text(encoding="utf-8")
    assert f"baseurl={mirror}/compute/cuda/repos/rhel8/x86_64\n" in written
    assert "gpgcheck=1" in written and "gpgcheck=0" not in written


def test_every_generated_repository_step_checks_the_mirror() -> None:
    """Every published Dockerfile and install script that writes NVIDIA's repositories checks first."""
    checked = 0
    for path in sorted((REPO / "dockerfiles").rglob("*")):
        if path.name not in ("Dockerfile", "install.sh"):
            continue
        text = path.read_text(encoding="utf-8")
        if "NVIDIA package repositories" not in text:
            continue
        block = text.split("NVIDIA package repositories", 1)[1]
        assert block.index('case "${NVIDIA_MIRROR}"') < block.index("${NVIDIA_MIRROR}/"), path
        checked += 1
    assert checked >= 10
