"""What buildah and podman are told: --no-tls-verify reaches the pull of the base (a plain-HTTP
mirror works without editing registries.conf), and a failed build removes its working
containers (--force-rm). The engine program is a script on PATH that records its arguments
(the unit suite has no engine; tests/e2e/test_failed_builds_clean_up.py runs buildah itself);
docker's API has no TLS setting per build, and the build log says so."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from types import SimpleNamespace
from typing import Dict, Iterator, List

import pytest

from mlcc.engines.base import EngineBuild, EngineSettings, Log
from mlcc.engines.commandline import Buildah, CliEngine, Podman
from mlcc.engines.docker_api import NO_TLS_VERIFY_NOTE, Docker
from mlcc.errors import BuildError, Interrupted

RECORDER = """#!/bin/sh
printf '%s\\n' "$@" > "$(dirname "$0")/argv"
while [ $# -gt 0 ]; do
  if [ "$1" = "--iidfile" ]; then printf 'sha256:%064d' 1 > "$2"; fi
  shift
done
exit "${EXIT:-0}"
"""


def _fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, program: str) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / program
    script.write_text(RECORDER)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return bin_dir / "argv"


def _spec(tmp_path: Path, *, tls_verify: bool) -> EngineBuild:
    context = tmp_path / "context"
    context.mkdir()
    (context / "Dockerfile").write_text("FROM scratch\n")
    return EngineBuild(context=context, platform="linux/amd64", tls_verify=tls_verify)


@pytest.mark.parametrize("engine", [Buildah, Podman], ids=["buildah", "podman"])
@pytest.mark.parametrize("tls_verify", [False, True], ids=["no-tls-verify", "tls-verify"])
def test_the_build_passes_tls_verify_to_the_pull_of_the_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: type, tls_verify: bool
) -> None:
    argv = _fake(tmp_path, monkeypatch, engine.program)
    built = engine(EngineSettings()).build_image(_spec(tmp_path, tls_verify=tls_verify), Log())
    assert built == "sha256:" + "0" * 63 + "1"
    args: List[str] = argv.read_text().splitlines()
    assert args[0] == engine.build_verb
    assert f"--tls-verify={'true' if tls_verify else 'false'}" in args
    assert args.count("--tls-verify=false") + args.count("--tls-verify=true") == 1


@pytest.mark.parametrize("engine", [Buildah, Podman], ids=["buildah", "podman"])
def test_a_failed_build_asks_the_engine_to_remove_its_containers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: type
) -> None:
    argv = _fake(tmp_path, monkeypatch, engine.program)
    monkeypatch.setenv("EXIT", "1")
    cli_engine: CliEngine = engine(EngineSettings())
    with pytest.raises(BuildError):
        cli_engine.build_image(_spec(tmp_path, tls_verify=True), Log())
    assert "--force-rm" in argv.read_text().splitlines()


class _DaemonApi:
    """Stands in for a Docker daemon (none runs in the unit suite): one build that succeeds."""

    def build(self, **kwargs: object) -> List[Dict[str, object]]:
        assert kwargs["forcerm"] is True and not {"tls_verify", "tlsverify"} & set(kwargs)
        return [{"aux": {"ID": "sha256:" + "2" * 64}}]


@pytest.mark.parametrize(("tls_verify", "said"), [(False, [NO_TLS_VERIFY_NOTE]), (True, [])])
def test_docker_says_no_tls_verify_cannot_reach_its_pull(
    tmp_path: Path, tls_verify: bool, said: List[str]
) -> None:
    docker = Docker(EngineSettings())
    docker._client = SimpleNamespace(api=_DaemonApi())
    lines: List[str] = []
    assert (
        docker.build_image(_spec(tmp_path, tls_verify=tls_verify), Log(lines.append)) == "sha256:" + "2" * 64
    )
    assert lines == said


class _LongBuild:
    """A daemon build that prints a line, then (as Ctrl-C arrives) more lines."""

    def __init__(self, docker: Docker) -> None:
        self.docker = docker
        self.closed = False
        self.lines_sent = 0

    def build(self, **kwargs: object) -> Iterator[Dict[str, object]]:
        try:
            for number in range(100):
                self.lines_sent += 1
                yield {"stream": f"STEP {number}: RUN step\n"}
                if number == 0:
                    self.docker.interrupt()  # what run_jobs' main thread does on Ctrl-C
        finally:
            self.closed = True


def test_ctrl_c_stops_a_docker_build_at_its_next_line_and_ends_its_request(tmp_path: Path) -> None:
    docker = Docker(EngineSettings())
    daemon = _LongBuild(docker)
    docker._client = SimpleNamespace(api=daemon)
    with pytest.raises(Interrupted):
        docker.build_image(_spec(tmp_path, tls_verify=True), Log())
    assert daemon.lines_sent == 2 and daemon.closed  # not read to its end; the stream is closed
