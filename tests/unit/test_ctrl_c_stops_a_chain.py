"""Ctrl-C during ``mlcc build --chain``: Python raises KeyboardInterrupt in the main thread
only, while the builds run in worker threads. The running engine program is stopped, no
further stage or image is built, the stage it stopped and its image are recorded as failed
("interrupted"), nothing as built, and KeyboardInterrupt reaches the CLI (exit 130).

The engine is the real buildah engine driving a stand-in ``buildah`` program on PATH (it
builds nothing: it logs each call and waits in its RUN step until SIGINT ends it, as
buildah does); the real chain e2e test is tests/e2e/test_build.py's
``test_ctrl_c_stops_a_chain_after_the_running_stage``."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Iterator, List

import pytest

from mlcc import engines
from mlcc.api import request_for
from mlcc.app import build as building
from mlcc.engines.base import BuildJob, BuildPolicy, Log, job_for
from mlcc.history import History
from mlcc.image.base import ResolvedBase
from mlcc.kb import load
from mlcc.render import render
from mlcc.resolve import Resolver
from mlcc.resolve.pins import Pins
from tests.fakeopenshift import Cluster, cluster

__all__ = ["cluster"]  # the fixture: a recording API server on 127.0.0.1

POLICY = BuildPolicy(chain=True)
FAKE_BUILDAH = """#!/bin/sh
# a stand-in for buildah: nothing is in its storage; a build waits in its RUN step
echo "$*" >> "$CALLS"
case "$1" in
  bud)
    echo "STEP 1/2: RUN sleep"
    trap 'echo interrupted >> "$CALLS"; exit 130' INT
    sleep 60 &
    wait
    ;;
  *) exit 1 ;;
esac
"""


@pytest.fixture
def fake_buildah(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    program = tmp_path / "bin" / "buildah"
    program.parent.mkdir()
    program.write_text(FAKE_BUILDAH)
    program.chmod(0o755)
    calls = tmp_path / "calls.txt"
    monkeypatch.setenv("PATH", f"{program.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CALLS", str(calls))
    monkeypatch.setenv("MLCC_CACHE_DIR", str(tmp_path / "cache"))
    yield calls


def _job(benchmark: str) -> BuildJob:
    kb = load()
    request = request_for(kb, benchmark, Pins(cuda="10.1"))
    rendered = render(Resolver(kb).resolve(request), request=request)
    base = ResolvedBase(
        rendered.plan.base_image, "sha256:" + "1" * 64, rendered.stack.arch.name, ("rhel",), "8.10"
    )
    return job_for(rendered, POLICY, benchmark)._replace(base=base)


def _ctrl_c_once_building(calls: Path) -> threading.Thread:
    """SIGINT to this process (Python raises it in the main thread) once a build runs."""

    def watch() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if calls.exists() and "bud" in calls.read_text():
                time.sleep(0.3)  # in its RUN step
                os.kill(os.getpid(), signal.SIGINT)
                return
            time.sleep(0.05)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def _builds(calls: Path) -> List[str]:
    return [line for line in calls.read_text().splitlines() if line.startswith("bud ")]


def test_ctrl_c_stops_the_chain_in_its_first_stage_and_records_it_interrupted(
    fake_buildah: Path, tmp_path: Path
) -> None:
    history = History(tmp_path / "history.sqlite")
    jobs = [_job("maskrcnn"), _job("gnmt")]  # a stack and a framework stage each, then their own
    watcher = _ctrl_c_once_building(fake_buildah)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        building.run_jobs(engines.create("buildah"), jobs, POLICY, history=history, log_for=lambda job: Log())
    watcher.join()
    assert time.monotonic() - started < 30  # the engine was stopped, not waited for (it sleeps 60 s)
    assert len(_builds(fake_buildah)) == 1  # the stack stage only: no framework stage, no image
    assert "interrupted" in fake_buildah.read_text()  # the engine got the SIGINT mlcc alone got
    rows = history.rows()
    assert [(row["benchmark"], row["status"]) for row in rows] == [
        ("maskrcnn", "failed"),
        ("mlcc-stack", "failed"),
    ]
    assert all("interrupted (Ctrl-C)" in row["reason"] for row in rows), rows


def test_ctrl_c_reaches_the_cli_as_exit_130_without_a_traceback(
    cli, fake_buildah: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """The same through ``mlcc build``: one line, exit 130."""
    job = _job("nccl-tests")
    monkeypatch.setattr(building, "pin_base", lambda engine, j, policy, log: j._replace(base=job.base))
    watcher = _ctrl_c_once_building(fake_buildah)
    result = cli(
        "build", "nccl-tests", "--backend", "buildah", "--chain", "--history", str(tmp_path / "h.sqlite")
    )
    watcher.join()
    assert result.code == 130 and "mlcc: interrupted" in result.err, result
    assert "Traceback" not in result.err and "built in" not in result.out
    assert len(_builds(fake_buildah)) == 1


def _ctrl_c_once_following(state: Cluster) -> threading.Thread:
    """SIGINT to this process once mlcc polls the cluster's build for its phase."""

    def watch() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if any(
                "/builds/" in r.path and r.method == "GET" and not r.path.endswith("/log")
                for r in state.requests
            ):
                os.kill(os.getpid(), signal.SIGINT)
                return
            time.sleep(0.05)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_ctrl_c_stops_following_a_cluster_build_and_says_how_to_cancel_it(
    cli, cluster, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """OpenShift: the build runs in the cluster; Ctrl-C ends mlcc's wait for it at once, the
    build is recorded as interrupted, and the log names the Build and how to cancel it."""
    state, kubeconfig = cluster
    state.build_phase = "Running"  # a build that does not end while the test runs
    history = tmp_path / "h.sqlite"
    log = tmp_path / "build.log"
    args = ("--cuda", "12.6", "--backend", "openshift", "--kubeconfig", str(kubeconfig), "--log", str(log))
    watcher = _ctrl_c_once_following(state)
    started = time.monotonic()
    result = cli("build", "nccl-tests", *args, "--history", str(history))
    watcher.join()
    assert result.code == 130 and "mlcc: interrupted" in result.err, result
    assert time.monotonic() - started < 20 and "Traceback" not in result.err
    (row,) = History(history).rows()
    assert row["status"] == "failed" and "interrupted (Ctrl-C)" in row["reason"], row
    text = log.read_text()
    assert "stopped following build nccl-tests-" in text and "oc cancel-build nccl-tests-" in text, text
