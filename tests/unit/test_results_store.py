"""`mlcc results add` and `mlcc results collect`: runs stored once, with the image's stack,
system, GPUs and nodes; collect reads a finished Job's / MPIJob's pod logs through a
recording Kubernetes API server on 127.0.0.1 (the official client's real HTTP traffic)."""

from __future__ import annotations

import json
import sqlite3
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.conftest import mlperf_v06
from tests.fakekube import serve, write_kubeconfig
from tests.oci_layout import layer, oci_layout

TOKEN = "sha256~results-token-never-printed"
STACKS = Path(__file__).resolve().parents[2] / "dockerfiles"


@pytest.fixture(scope="module")
def maskrcnn_logs() -> Path:
    return mlperf_v06("NVIDIA", "dgx1_ngc19.05_pytorch", "maskrcnn")


def _stack(benchmark: str, variant: str) -> Path:
    return STACKS / benchmark / variant / "stack.json"


def _rows(history: Path) -> List[Dict[str, Any]]:
    with sqlite3.connect(history) as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute("SELECT * FROM results ORDER BY id")]


def test_add_stores_each_run_once_with_its_stack(cli, tmp_path: Path, maskrcnn_logs: Path) -> None:  # type: ignore[no-untyped-def]
    history = tmp_path / "h.sqlite"
    stack = _stack("maskrcnn", "cuda10.1-cudnn7-ubi8-x86_64")
    result = cli("results", "add", str(maskrcnn_logs), "--stack", str(stack), "--history", str(history))
    assert result.code == 0, result.err
    assert (
        "stored 5 run(s) of maskrcnn with cuda10.1-cudnn7-ubi8-x86_64 · pytorch 1.1.0a0+828a6a3" in result.out
    )
    rows = _rows(history)
    assert len(rows) == 5 and {r["status"] for r in rows} == {"success"}
    assert {(r["system"], r["nodes"], r["gpus"]) for r in rows} == {("1xDGX-1 with V100", 1, 8)}
    assert json.loads(rows[0]["stack_json"])["variant"] == "cuda10.1-cudnn7-ubi8-x86_64"
    # The same run again, even from a copy and with another stack: stored once, and said so.
    copy = tmp_path / "copy.txt"
    copy.write_bytes((maskrcnn_logs / "result_2.txt").read_bytes())
    other = _stack("maskrcnn", "cuda10.1-cudnn7-ubi7-x86_64")
    again = cli("results", "add", str(copy), "--stack", str(other), "--history", str(history))
    assert again.code == 0 and "already stored, not added again" in again.out
    assert "cuda10.1-cudnn7-ubi8-x86_64" in again.out
    assert len(_rows(history)) == 5


def test_add_from_an_image_reads_its_stamped_stack(cli, tmp_path: Path, maskrcnn_logs: Path) -> None:  # type: ignore[no-untyped-def]
    stack = _stack("maskrcnn", "cuda10.1-cudnn7-ubi7-x86_64").read_bytes()
    layout = oci_layout(
        tmp_path / "img",
        [layer({"etc/mlcc/stack.json": stack})],
        {"io.mlcc.digest": "sha256:" + "a" * 64},
        architecture="ppc64le",
    )
    history = tmp_path / "h.sqlite"
    result = cli(
        "results", "add", str(maskrcnn_logs / "result_0.txt"), "--image", f"oci:{layout}",
        "--history", str(history), "--gpus", "16", "--nodes", "2", "--system", "ocp-lab",
    )  # fmt: skip
    assert result.code == 0, result.err
    (row,) = _rows(history)
    assert row["variant"] == "cuda10.1-cudnn7-ubi7-x86_64" and row["image"] == f"oci:{layout}"
    assert row["content_digest"] == "sha256:" + "a" * 64
    assert (row["system"], row["gpus"], row["nodes"]) == ("ocp-lab", 16, 2)


def test_add_refuses_another_benchmarks_stack_and_stores_nothing(
    cli, tmp_path: Path, maskrcnn_logs: Path
) -> None:  # type: ignore[no-untyped-def]
    history = tmp_path / "h.sqlite"
    stack = _stack("ssd", next(p.name for p in (STACKS / "ssd").iterdir() if p.is_dir()))
    result = cli("results", "add", str(maskrcnn_logs), "--stack", str(stack), "--history", str(history))
    assert result.code == 2
    assert (
        "is a maskrcnn run, but the stack was built for ssd" in result.err
        and "nothing was stored" in result.err
    )
    assert not history.exists() or _rows(history) == []


def test_a_log_that_never_names_its_benchmark_takes_the_images(
    cli, tmp_path: Path, maskrcnn_logs: Path
) -> None:  # type: ignore[no-untyped-def]
    data = (maskrcnn_logs / "result_4.txt").read_bytes()
    anonymous = tmp_path / "run.log"
    anonymous.write_bytes(
        b"\n".join(line for line in data.split(b"\n") if b"submission_benchmark" not in line)
    )
    history = tmp_path / "h.sqlite"
    stack = _stack("resnet50", next(p.name for p in (STACKS / "resnet50").iterdir() if p.is_dir()))
    result = cli("results", "add", str(anonymous), "--stack", str(stack), "--history", str(history))
    assert result.code == 0, result.err
    assert [r["benchmark"] for r in _rows(history)] == ["resnet"]  # resnet50's name in MLPerf logs


def test_add_needs_exactly_one_stack_source_and_a_real_stack(
    cli, tmp_path: Path, maskrcnn_logs: Path
) -> None:  # type: ignore[no-untyped-def]
    log = str(maskrcnn_logs / "result_0.txt")
    assert "--image REF or --stack" in cli("results", "add", log).err
    bad = tmp_path / "stack.json"
    bad.write_text('{"not": "a stack"}')
    result = cli("results", "add", log, "--stack", str(bad), "--history", str(tmp_path / "h.sqlite"))
    assert result.code == 2 and "holds no mlcc stack" in result.err
    bad.write_text("{")
    assert "not JSON" in cli("results", "add", log, "--stack", str(bad)).err


# ----------------------------------------------------------------- collect (Kubernetes API)


class Api:
    """A recording Kubernetes API server with scripted objects and pod logs."""

    def __init__(self) -> None:
        self.requests: List[Tuple[str, str, Dict[str, List[str]], Dict[str, str]]] = []
        self.objects: Dict[str, Any] = {}
        self.logs: Dict[str, bytes] = {}
        self.pods: Dict[str, List[Dict[str, Any]]] = {}  # label selector -> pods

    def answer(self, path: str, query: Dict[str, List[str]]) -> Tuple[int, Any]:
        if path.endswith("/log"):
            pod = path.split("/")[-2]
            return (200, self.logs[pod]) if pod in self.logs else (404, _status(404))
        if path.endswith("/pods"):
            selector = query.get("labelSelector", [""])[0]
            return 200, {
                "kind": "PodList",
                "apiVersion": "v1",
                "metadata": {},
                "items": self.pods.get(selector, []),
            }
        if path in self.objects:
            return 200, self.objects[path]
        return 404, _status(404)


def _status(code: int) -> Dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": code}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Tuple[Api, Path]]:
    state = Api()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urlsplit(self.path)
            query = parse_qs(url.query)
            state.requests.append(("GET", url.path, query, {k.lower(): v for k, v in self.headers.items()}))
            status, answer = state.answer(url.path, query)
            data = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
            self.send_response(status)
            self.send_header(
                "Content-Type", "text/plain" if isinstance(answer, bytes) else "application/json"
            )
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = serve(Handler)
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server, token=TOKEN, namespace="mlperf")
    yield state, kubeconfig
    server.shutdown()
    server.server_close()


def _pod(name: str, node: str, gpus: int, labels: Dict[str, str]) -> Dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "mlperf", "labels": labels},
        "spec": {
            "nodeName": node,
            "containers": [
                {"name": "maskrcnn", "image": "x", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}
            ],
        },
        "status": {"phase": "Succeeded"},
    }


def _job(name: str, condition: Optional[str]) -> Dict[str, Any]:
    conditions = [{"type": condition, "status": "True"}] if condition else []
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "mlperf"},
        "spec": {"template": {"spec": {"containers": [{"name": "maskrcnn", "image": "x"}]}}},
        "status": {"conditions": conditions, "active": 0 if condition else 1},
    }


JOBS = "/apis/batch/v1/namespaces/mlperf/jobs"


def test_collect_reads_a_finished_jobs_pod_logs(cli, api, tmp_path: Path, maskrcnn_logs: Path) -> None:  # type: ignore[no-untyped-def]
    state, kubeconfig = api
    state.objects[f"{JOBS}/mrcnn"] = _job("mrcnn", "Complete")
    state.pods["job-name=mrcnn"] = [
        _pod("mrcnn-a", "node1", 8, {"job-name": "mrcnn"}),
        _pod("mrcnn-b", "node2", 8, {"job-name": "mrcnn"}),
    ]
    state.logs["mrcnn-a"] = (maskrcnn_logs / "result_0.txt").read_bytes()
    state.logs["mrcnn-b"] = (maskrcnn_logs / "result_1.txt").read_bytes()
    history = tmp_path / "h.sqlite"
    stack = _stack("maskrcnn", "cuda10.1-cudnn7-ubi8-x86_64")
    args = ("results", "collect", "--job", "mrcnn", "--kubeconfig", str(kubeconfig))
    result = cli(*args, "--stack", str(stack), "--history", str(history))
    assert result.code == 0, result.err
    assert "Job mrcnn Complete: 2 pod log(s), 2 run(s)" in result.out
    rows = _rows(history)
    assert [r["log"] for r in rows] == ["pod/mlperf/mrcnn-a/maskrcnn", "pod/mlperf/mrcnn-b/maskrcnn"]
    assert [round(r["minutes"], 2) for r in rows] == [192.93, 207.81]
    assert {(r["nodes"], r["gpus"]) for r in rows} == {(2, 16)}  # two nodes, 8 GPUs each
    log_requests = [r for r in state.requests if r[1].endswith("/log")]
    assert [r[1] for r in log_requests] == [
        "/api/v1/namespaces/mlperf/pods/mrcnn-a/log",
        "/api/v1/namespaces/mlperf/pods/mrcnn-b/log",
    ]
    assert all(r[2].get("container") == ["maskrcnn"] for r in log_requests)
    assert all(r[3].get("authorization") == f"Bearer {TOKEN}" for r in state.requests)
    assert TOKEN not in result.out + result.err
    # Collecting again stores nothing twice.
    again = cli(*args, "--stack", str(stack), "--history", str(history))
    assert again.code == 0 and again.out.count("already stored") == 2 and len(_rows(history)) == 2


def test_collect_an_mpijob_reads_the_launcher(cli, api, tmp_path: Path, maskrcnn_logs: Path) -> None:  # type: ignore[no-untyped-def]
    state, kubeconfig = api
    path = "/apis/kubeflow.org/v2beta1/namespaces/mlperf/mpijobs/mr"
    worker = {
        "replicas": 2,
        "template": {"spec": {"containers": [{"name": "w", "resources": {"limits": {"nvidia.com/gpu": 8}}}]}},
    }
    state.objects[path] = {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "mr"},
        "spec": {"mpiReplicaSpecs": {"Launcher": {"replicas": 1}, "Worker": worker}},
        "status": {
            "conditions": [{"type": "Created", "status": "True"}, {"type": "Succeeded", "status": "True"}]
        },
    }
    selector = "training.kubeflow.org/job-name=mr,training.kubeflow.org/job-role=launcher"
    state.pods[selector] = [_pod("mr-launcher", "node1", 0, {})]
    state.logs["mr-launcher"] = b"[1,0]<stdout>:" + (maskrcnn_logs / "result_3.txt").read_bytes()
    stack = _stack("maskrcnn", "cuda10.1-cudnn7-ubi8-x86_64")
    result = cli(
        "results", "collect", "--mpijob", "mr", "--kubeconfig", str(kubeconfig), "--stack", str(stack),
        "--history", str(tmp_path / "h.sqlite"),
    )  # fmt: skip
    assert result.code == 0, result.err
    (row,) = _rows(tmp_path / "h.sqlite")
    assert (row["nodes"], row["gpus"]) == (2, 16) and round(row["minutes"], 2) == 208.46


def test_collect_refuses_a_running_job_and_names_gone_pods(cli, api, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    state, kubeconfig = api
    stack = str(_stack("maskrcnn", "cuda10.1-cudnn7-ubi8-x86_64"))
    base = (
        "results",
        "collect",
        "--kubeconfig",
        str(kubeconfig),
        "--stack",
        stack,
        "--history",
        str(tmp_path / "h"),
    )
    state.objects[f"{JOBS}/running"] = _job("running", None)
    result = cli(*base, "--job", "running")
    assert result.code == 2 and "has not finished" in result.err
    state.objects[f"{JOBS}/gone"] = _job("gone", "Failed")
    result = cli(*base, "--job", "gone")
    assert result.code == 2 and "pods are gone" in result.err
    result = cli(*base, "--job", "nope")
    assert result.code == 2 and "Job nope: not found in namespace mlperf" in result.err
    assert "Traceback" not in result.err and not (tmp_path / "h").exists()
