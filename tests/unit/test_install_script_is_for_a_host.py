"""install.sh is a bare-metal script: no OpenShift permission steps on the host's folders, its
environment in a file a new shell sources, and generating it leaves the Dockerfile beside it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Dict

import pytest

VARIANT = "maskrcnn/cuda10.1-cudnn7-ubi8-x86_64"
ENV_FILE = "/etc/mlcc/env.sh"


@pytest.fixture
def generated(cli) -> Dict[str, str]:  # type: ignore[no-untyped-def]
    """The install.sh and the Dockerfile of one variant, generated into the same folder."""
    assert cli("gen", "maskrcnn", "--cuda", "10.1", "--format", "script").code == 0
    assert cli("gen", "maskrcnn", "--cuda", "10.1", "--only", "dockerfile").code == 0
    folder = Path("dockerfiles") / VARIANT
    return {name: (folder / name).read_text() for name in ("install.sh", "Dockerfile")}


def test_no_openshift_permission_steps_on_host_folders(generated: Dict[str, str]) -> None:
    script = generated["install.sh"]
    assert "chgrp" not in script and "g=u" not in script
    assert "mkdir -p /workspace/object_detection /results /data" in script  # the folders still exist
    # the image still needs them: OpenShift runs it as an arbitrary UID of group 0
    assert "chgrp -R 0 /workspace/object_detection /results /data" in generated["Dockerfile"]


def _env_file(script: str) -> str:
    match = re.search(rf"install -D -m 0644 /dev/stdin {ENV_FILE} <<'(\w+)'\n(.*?)\n\1\n", script, re.S)
    assert match, "install.sh writes no environment file"
    return match.group(2)


def test_the_environment_is_written_to_a_file_a_new_shell_sources(
    generated: Dict[str, str], tmp_path: Path
) -> None:
    script = generated["install.sh"]
    env_file = tmp_path / "env.sh"
    env_file.write_text(_env_file(script) + "\n")
    exported = dict(re.findall(r'^export (\w+)="([^"$]*)"$', script, re.M))
    for name in ("NVIDIA_MIRROR", "GIT_MIRROR", "HOME"):  # build-time only; a user keeps their home
        exported.pop(name, None)
    # a new shell: only the basic environment, as after a fresh login
    shell = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    probe = "; ".join(f'printf "%s=%s\\n" {name} "${name}"' for name in [*sorted(exported), "HOME"])
    out = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", f"source {env_file} && {probe} && echo PATH=$PATH"],
        capture_output=True,
        text=True,
        env=shell,
        check=True,
    ).stdout
    seen = dict(line.split("=", 1) for line in out.splitlines())
    for name, value in exported.items():  # a name exported twice: its last value, as in the script
        assert seen[name] == value, name
    assert seen["PATH"] == "/opt/mlcc/venv/bin:/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/bin:/bin"
    assert seen["HOME"] == str(tmp_path)  # the user's home, not the image's /opt/mlcc/home
    last = script.rstrip().splitlines()[-1]
    assert f"source {ENV_FILE}" in last and "./run_and_time.sh" in last, last


def test_generating_one_format_leaves_the_others(cli) -> None:  # type: ignore[no-untyped-def]
    folder = Path("dockerfiles") / VARIANT
    for fmt in ("script", "dockerfile", "singularity", "script"):
        result = cli("gen", "maskrcnn", "--cuda", "10.1", "--format", fmt, "--only", "dockerfile")
        assert result.code == 0, result
        assert "removed" not in result.out, result.out
    assert {p.name for p in folder.iterdir()} >= {"Dockerfile", "install.sh", "Singularity.def", "stack.json"}
    (folder / "stale.txt").write_text("not generated")
    assert "removed" in cli("gen", "maskrcnn", "--cuda", "10.1", "--only", "dockerfile").out
    assert not (folder / "stale.txt").exists()  # anything else is still pruned
