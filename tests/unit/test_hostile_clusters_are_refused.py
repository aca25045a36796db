"""What a cluster (or a kubeconfig, or a log) can send to `mlcc results collect` is a clear
error, and nothing is stored: malformed, binary and FIFO kubeconfigs, a FIFO as --stack,
an API server that never answers, objects of unexpected shapes, counts no cluster has,
run times no run takes, result lines nested without end, integers beyond SQLite's range.
The API server is a real one on loopback (tests/fakekube.py, the official client's traffic).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Iterator, List, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlcc.errors import MlccError
from mlcc.results import collect as collect_module
from mlcc.results.collect import Cluster, collect
from tests.conftest import mlperf_v06
from tests.fakekube import serve, write_kubeconfig

from .test_results_store import JOBS, Api, _job, _pod, _stack, api

__all__ = ["api"]  # the fixture

REPO = Path(__file__).resolve().parents[2]
STACK = str(_stack("maskrcnn", "cuda10.1-cudnn7-ubi8-x86_64"))
MPIJOB = "/apis/kubeflow.org/v2beta1/namespaces/mlperf/mpijobs/mr"
LAUNCHER = "training.kubeflow.org/job-name=mr,training.kubeflow.org/job-role=launcher"


@pytest.fixture(scope="module")
def log() -> bytes:
    return (mlperf_v06("NVIDIA", "dgx1_ngc19.05_pytorch", "maskrcnn") / "result_0.txt").read_bytes()


def _clean(result: Any) -> None:
    assert "internal error" not in result.err and "Traceback" not in result.err, result.err


def _nothing_stored(history: Path) -> None:
    if history.exists():
        with sqlite3.connect(history) as db:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            assert "results" not in tables or db.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 0


def _collect(cli: Any, kubeconfig: Path, tmp_path: Path, *args: str) -> Any:
    history = tmp_path / "h.sqlite"
    result = cli(
        "results",
        "collect",
        *args,
        "--kubeconfig",
        str(kubeconfig),
        "--stack",
        STACK,
        "--history",
        str(history),
    )
    _clean(result)
    _nothing_stored(history)
    return result


# ----------------------------------------------------------------------------- kubeconfigs


@pytest.mark.parametrize(
    "text",
    [
        b"garbage: [\n",
        b"- a\n",
        b"\x00\x01\x02binary",
        b"\xff\xfe not utf-8",
        b"clusters: 5\n",
        b"contexts: [a, b]\ncurrent-context: a\n",
        b"users: [{name: me, user: 5}]\nclusters: [{name: c, cluster: {server: 5}}]\n"
        b"contexts: [{name: x, context: {cluster: c, user: me}}]\ncurrent-context: x\n",
    ],
    ids=["broken", "list", "binary", "not-utf8", "clusters-number", "contexts-strings", "odd-values"],
)
def test_a_malformed_kubeconfig_is_a_usage_error(cli, tmp_path: Path, text: bytes) -> None:  # type: ignore[no-untyped-def]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_bytes(text)
    result = _collect(cli, kubeconfig, tmp_path, "--job", "x")
    assert result.code == 2 and "no usable kubeconfig" in result.err, result.err


def _mlcc(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "mlcc", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def test_a_fifo_as_kubeconfig_or_stack_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    history = str(tmp_path / "h.sqlite")
    base = ("results", "collect", "--job", "x", "--history", history)
    result = _mlcc(*base, "--kubeconfig", str(fifo), "--stack", STACK)
    assert result.returncode == 2 and "not a regular file" in result.stderr, result.stderr
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("{}")
    result = _mlcc(*base, "--kubeconfig", str(kubeconfig), "--stack", str(fifo))
    assert result.returncode == 2 and "--stack" in result.stderr and "not a regular file" in result.stderr
    assert not Path(history).exists()
    build = ("build", "maskrcnn", "--cuda", "10.1", "--backend", "openshift", "--kubeconfig", str(fifo))
    result = _mlcc(*build)
    assert result.returncode == 2 and "not a regular file" in result.stderr, result.stderr


# ----------------------------------------------------------------------------- a silent server


@pytest.fixture
def silent(tmp_path: Path) -> Iterator[Path]:
    release = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            release.wait(30)  # accepts, reads the request, never answers

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = serve(Handler)
    yield write_kubeconfig(tmp_path / "kubeconfig", server, token="t0ken-never-printed", namespace="mlperf")
    release.set()
    server.shutdown()
    server.server_close()


def test_an_api_server_that_never_answers_meets_a_deadline(  # type: ignore[no-untyped-def]
    cli, silent: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(collect_module, "REQUEST_TIMEOUT", (1.0, 1.0))
    started = time.monotonic()
    result = _collect(cli, silent, tmp_path, "--job", "x")
    assert result.code == 5 and "cannot reach the cluster" in result.err, result.err
    assert time.monotonic() - started < 20


# ----------------------------------------------------------------------------- odd objects


def _good_job(state: Api, log: bytes) -> None:
    state.objects[f"{JOBS}/j"] = _job("j", "Complete")
    state.pods["job-name=j"] = [_pod("j-a", "node1", 8, {"job-name": "j"})]
    state.logs["j-a"] = log


ODD_JOBS: List[Tuple[str, Any]] = [
    ("job-list", lambda s: s.objects.__setitem__(f"{JOBS}/j", [1, 2])),
    ("status-string", lambda s: s.objects[f"{JOBS}/j"].__setitem__("status", "x")),
    ("conditions-object", lambda s: s.objects[f"{JOBS}/j"]["status"].__setitem__("conditions", {"a": 1})),
    ("condition-numbers", lambda s: s.objects[f"{JOBS}/j"]["status"].__setitem__("conditions", [1, None])),
    ("items-string", lambda s: s.pods.__setitem__("job-name=j", "pods")),
    ("pod-number", lambda s: s.pods.__setitem__("job-name=j", [5])),
    ("pod-without-name", lambda s: s.pods["job-name=j"][0].__setitem__("metadata", {})),
    ("pod-name-object", lambda s: s.pods["job-name=j"][0]["metadata"].__setitem__("name", {"a": 1})),
    ("spec-list", lambda s: s.pods["job-name=j"][0].__setitem__("spec", [])),
    ("containers-object", lambda s: s.pods["job-name=j"][0]["spec"].__setitem__("containers", {"a": 1})),
    (
        "container-name-number",
        lambda s: s.pods["job-name=j"][0]["spec"]["containers"][0].__setitem__("name", 7),
    ),
]


@pytest.mark.parametrize("change", [c for _, c in ODD_JOBS], ids=[n for n, _ in ODD_JOBS])
def test_unexpected_api_objects_are_clear_errors(cli, api, tmp_path: Path, log: bytes, change: Any) -> None:  # type: ignore[no-untyped-def]
    state, kubeconfig = api
    _good_job(state, log)
    change(state)
    result = _collect(cli, kubeconfig, tmp_path, "--job", "j")
    assert result.code in (2, 5), result.err


@pytest.mark.parametrize("gpus", ["-4", "99999999999999999999999", "4.5", "\u0661", True])
def test_a_pod_gpu_limit_that_is_no_count_is_refused(cli, api, tmp_path: Path, log: bytes, gpus: Any) -> None:  # type: ignore[no-untyped-def]
    state, kubeconfig = api
    _good_job(state, log)
    state.pods["job-name=j"][0]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = gpus
    result = _collect(cli, kubeconfig, tmp_path, "--job", "j")
    assert result.code == 5 and "not a count" in result.err and "nothing stored" in result.err, result.err


@pytest.mark.parametrize("replicas", [-2, 10**30, "many", 2.5])
def test_mpijob_worker_replicas_that_are_no_count_are_refused(  # type: ignore[no-untyped-def]
    cli, api, tmp_path: Path, log: bytes, replicas: Any
) -> None:
    state, kubeconfig = api
    state.objects[MPIJOB] = {
        "kind": "MPIJob",
        "metadata": {"name": "mr"},
        "spec": {"mpiReplicaSpecs": {"Worker": {"replicas": replicas}}},
        "status": {"conditions": [{"type": "Succeeded", "status": "True"}]},
    }
    state.pods[LAUNCHER] = [_pod("mr-launcher", "node1", 0, {})]
    state.logs["mr-launcher"] = log
    result = _collect(cli, kubeconfig, tmp_path, "--mpijob", "mr")
    assert result.code == 5 and "Worker replicas" in result.err and "not a count" in result.err, result.err


# ----------------------------------------------------------------------------- run times


def _restamped(log: bytes, stop: bytes) -> bytes:
    """The log with its run_stop line's timestamp replaced by ``stop``."""
    lines = log.split(b"\n")
    [index] = [n for n, line in enumerate(lines) if b" run_stop:" in line]
    head, _, rest = lines[index].partition(b":::MLL ")
    lines[index] = head + b":::MLL " + stop + b" " + rest.split(b" ", 1)[1]
    return b"\n".join(lines)


@pytest.mark.parametrize(
    ("stop", "said"),
    [(b"1458588319.710", "impossible run time"), (b"1658588319.710", "impossible run time")],
    ids=["before-its-start", "three-years"],
)
def test_an_impossible_run_time_from_a_cluster_is_refused(  # type: ignore[no-untyped-def]
    cli, api, tmp_path: Path, log: bytes, stop: bytes, said: str
) -> None:
    state, kubeconfig = api
    _good_job(state, log)
    state.logs["j-a"] = _restamped(log, stop)
    result = _collect(cli, kubeconfig, tmp_path, "--job", "j")
    assert result.code == 5 and said in result.err and "nothing stored" in result.err, result.err


# ----------------------------------------------------------------------------- logs


def test_a_deeply_nested_result_line_is_a_noted_problem(cli, tmp_path: Path, log: bytes) -> None:  # type: ignore[no-untyped-def]
    deep = b":::MLL 1558576743.700 eval_accuracy: " + b"[" * 200000 + b"]" * 200000
    path = tmp_path / "deep.txt"
    path.write_bytes(log.replace(b"\n", b"\n" + deep + b"\n", 30))
    result = cli("results", "add", str(path), "--stack", STACK, "--history", str(tmp_path / "h.sqlite"))
    _clean(result)
    assert result.code == 0 and "nests deeper than a result line does" in result.out + result.err


def test_a_count_longer_than_int_reads_is_no_internal_error(cli, tmp_path: Path, log: bytes) -> None:  # type: ignore[no-untyped-def]
    """int() refuses strings of over 4,300 digits: such a count is cut as log text or refused."""
    path = tmp_path / "longer.txt"
    path.write_bytes(log.replace(b"'num_nodes': '1'", b"'num_nodes': '" + b"9" * 5000 + b"'"))
    result = cli("results", "add", str(path), "--stack", STACK, "--history", str(tmp_path / "h.sqlite"))
    assert result.code in (0, 2) and "internal error" not in result.err, result.err


def test_counts_beyond_sqlite_integers_are_refused(cli, tmp_path: Path, log: bytes) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "huge.txt"
    path.write_bytes(log.replace(b"'num_nodes': '1'", b"'num_nodes': '99999999999999999999999'"))
    history = tmp_path / "h.sqlite"
    result = cli("results", "add", str(path), "--stack", STACK, "--history", str(history))
    _clean(result)
    assert result.code == 2 and "not a count mlcc can store" in result.err, result.err
    _nothing_stored(history)


# ----------------------------------------------------------------------------- any shape

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)
POD = st.fixed_dictionaries(
    {},
    optional={
        "metadata": st.fixed_dictionaries({}, optional={"name": st.just("p") | JSON}) | JSON,
        "spec": st.fixed_dictionaries(
            {},
            optional={
                "nodeName": JSON,
                "containers": st.lists(
                    st.dictionaries(st.sampled_from(["name", "resources"]), JSON), max_size=2
                )
                | JSON,
            },
        )
        | JSON,
    },
)
JOB = st.fixed_dictionaries(
    {},
    optional={
        "status": st.fixed_dictionaries({}, optional={"conditions": st.lists(JSON, max_size=3) | JSON})
        | JSON,
        "spec": JSON,
    },
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(job=JOB | JSON, pods=st.lists(POD, max_size=3) | JSON, complete=st.booleans())
def test_any_cluster_object_is_read_or_a_clear_error(
    api: Tuple[Api, Path], log: bytes, job: Any, pods: Any, complete: bool
) -> None:
    state, kubeconfig = api
    if complete and isinstance(job, dict):
        job["status"] = {"conditions": [{"type": "Complete", "status": "True"}]}
    state.objects[f"{JOBS}/j"] = job
    state.pods["job-name=j"] = pods
    state.logs["p"] = log
    try:
        found = collect(Cluster(kubeconfig=str(kubeconfig)), "job", "j")
    except MlccError as error:
        assert str(error)
        return
    assert found.nodes is None or found.nodes >= 0
    assert found.gpus is None or found.gpus >= 0
    assert all(isinstance(log.path, str) for log in found.logs)
