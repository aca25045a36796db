"""A cluster's answers are read within deadlines in all: a silent API server is asked once
per call, not retried until four read timeouts have passed (242 s), and a pod log that drips
a byte at a time meets its overall deadline (a read waited for 64 KiB, so the deadline was
never checked). Real HTTP servers on 127.0.0.1."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Iterator, List

import pytest
import urllib3

from mlcc.results import collect as collect_module
from mlcc.results.collect import ClusterError, _Bounded
from tests.fakekube import serve, write_kubeconfig

from .test_results_store import _stack

STACK = str(_stack("maskrcnn", "cuda10.1-cudnn7-ubi8-x86_64"))


@pytest.fixture
def silent(tmp_path: Path) -> Iterator[List[str]]:
    release = threading.Event()
    asked: List[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            release.wait(30)  # accepts, reads the request, never answers

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = serve(Handler)
    write_kubeconfig(tmp_path / "kubeconfig", server, token="t0ken", namespace="mlperf")
    yield asked
    release.set()
    server.shutdown()
    server.server_close()


def test_a_silent_api_server_is_asked_once_not_retried(
    cli, silent: List[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(collect_module, "REQUEST_TIMEOUT", (1.0, 1.0))
    result = cli(
        "results",
        "collect",
        "--job",
        "x",
        "--kubeconfig",
        str(tmp_path / "kubeconfig"),
        "--stack",
        STACK,
        "--history",
        str(tmp_path / "h.sqlite"),
    )
    assert result.code == 5 and "cannot reach the cluster" in result.err, result
    assert len(silent) == 1, silent


@pytest.fixture
def dripping() -> Iterator[str]:
    stop = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            while not stop.is_set():
                try:
                    self.wfile.write(b"x")
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(0.05)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = serve(Handler)
    yield f"http://127.0.0.1:{server.server_address[1]}/log"
    stop.set()
    server.shutdown()
    server.server_close()


def test_a_dripping_log_meets_its_overall_deadline(dripping: str) -> None:
    response = urllib3.PoolManager().request(
        "GET", dripping, preload_content=False, timeout=urllib3.Timeout(5, 5)
    )
    started = time.monotonic()
    with pytest.raises(ClusterError, match="not complete after 1 s"):
        _Bounded(response, "log of pod p", 1 << 20, 1.0).read_all()
    assert time.monotonic() - started < 5
    response.release_conn()
