"""Run pods request CPU and memory (issue 38): a benchmark pod is Burstable, never BestEffort
(the first pods a node evicts), and its /dev/shm is sized as NVIDIA's launchers size it.

On a node NVIDIA ran on (recipes/systems.yaml, from NVIDIA's system descriptions) a pod asks
for its GPUs' share of the node's cores and, as /dev/shm and memory request, half of their share
of the memory: NVIDIA's run scripts start containers with --ipc=host, whose /dev/shm is the
host's tmpfs, half the RAM by default. --run-cpu and --run-memory override the requests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest
import yaml

from mlcc.kb.model import KnowledgeBase
from tests.conftest import REPO


def _pod_specs(document: Dict[str, Any]) -> Iterator[Tuple[str, Dict[str, Any]]]:
    kind = document["kind"]
    if kind == "Pod":
        yield "Pod", document["spec"]
    elif kind == "Job":
        yield "Job", document["spec"]["template"]["spec"]
    elif kind == "MPIJob":
        for role, replica in document["spec"]["mpiReplicaSpecs"].items():
            yield f"MPIJob {role}", replica["template"]["spec"]


def _qos(container: Dict[str, Any]) -> str:
    """The QoS class Kubernetes gives a pod of this one container (the rules of
    kubernetes.io/docs/concepts/workloads/pods/pod-qos)."""
    resources = container.get("resources", {})
    requests, limits = resources.get("requests", {}), resources.get("limits", {})
    if not any(k in requests or k in limits for k in ("cpu", "memory")):
        return "BestEffort"
    if all(k in limits and requests.get(k, limits[k]) == limits[k] for k in ("cpu", "memory")):
        return "Guaranteed"
    return "Burstable"


def _published_run_pods() -> List[Tuple[str, str, Dict[str, Any]]]:
    found = []
    for path in sorted((REPO / "buildconfigs").rglob("run/*.yaml")):
        document = yaml.safe_load(path.read_text())
        for role, spec in _pod_specs(document):
            found.append((str(path.relative_to(REPO)), role, spec))
    return found


PUBLISHED = _published_run_pods()


def test_the_published_set_has_run_pods_of_every_kind() -> None:
    roles = {role for _, role, _ in PUBLISHED}
    assert roles == {"Pod", "Job", "MPIJob Launcher", "MPIJob Worker"}


@pytest.mark.parametrize(("path", "role", "spec"), PUBLISHED, ids=[f"{p}:{r}" for p, r, _ in PUBLISHED])
def test_no_published_run_pod_is_best_effort(path: str, role: str, spec: Dict[str, Any]) -> None:
    for container in spec["containers"]:
        assert _qos(container) == "Burstable", (path, role)
        requests = container["resources"]["requests"]
        assert set(requests) == {"cpu", "memory"}


def _gen(cli, out: Path, *args: str) -> Dict[str, Any]:  # type: ignore[no-untyped-def]
    result = cli("gen", *args, "--only", "openshift", "--openshift-output", str(out))
    assert result.code == 0, result.err
    return {p.name: yaml.safe_load(p.read_text()) for p in out.rglob("*.yaml")}


def _shm(spec: Dict[str, Any]) -> str:
    [volume] = [v for v in spec["volumes"] if v["name"] == "dshm"]
    return str(volume["emptyDir"]["sizeLimit"])


@pytest.mark.parametrize(
    ("args", "cpu", "memory"),
    [
        # a whole DGX A100 (128 cores, 2 TiB): its cores, and half its memory (the host's tmpfs)
        (("ssd", "--round", "v2.1", "--gpu", "a100", "--gpus", "8"), "128", "1Ti"),
        # a whole DGX H100 (112 cores, 2 TiB)
        (("maskrcnn", "--round", "v2.1", "--gpu", "h100", "--gpus", "8"), "112", "1Ti"),
        # half a DGX-1 (40 cores, 503 GiB)
        (("maskrcnn", "--cuda", "10.1", "--gpus", "4"), "20", "128768Mi"),
        # a whole DGX-2 (48 cores, 1510 GiB, 16 GPUs)
        (("gnmt", "--gpus", "16"), "48", "755Gi"),
    ],
)
def test_a_pod_asks_its_gpus_share_of_the_node_nvidia_ran_on(
    cli, tmp_path: Path, args: Tuple[str, ...], cpu: str, memory: str
) -> None:  # type: ignore[no-untyped-def]
    found = _gen(cli, tmp_path / "bc", *args, "--nodes", "1")
    spec = found["pod.yaml"]["spec"]
    assert spec["containers"][0]["resources"]["requests"] == {"cpu": cpu, "memory": memory}
    assert _shm(spec) == memory


def test_mpijob_workers_ask_their_share_and_the_launcher_a_floor(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    found = _gen(
        cli, tmp_path / "bc", "ssd", "--round", "v2.1", "--gpu", "a100", "--gpus", "4", "--nodes", "4"
    )
    replicas = found["mpijob.yaml"]["spec"]["mpiReplicaSpecs"]
    worker = replicas["Worker"]["template"]["spec"]
    assert worker["containers"][0]["resources"]["requests"] == {"cpu": "64", "memory": "512Gi"}
    assert _shm(worker) == "512Gi"
    launcher = replicas["Launcher"]["template"]["spec"]["containers"][0]
    assert launcher["resources"] == {"requests": {"cpu": "1", "memory": "1Gi"}}


def test_flags_override_the_requests_but_not_the_shm(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    found = _gen(
        cli, tmp_path / "bc", "ssd", "--round", "v2.1", "--gpu", "a100", "--gpus", "8", "--nodes", "1",
        "--run-cpu", "32", "--run-memory", "256Gi",
    )  # fmt: skip
    spec = found["job.yaml"]["spec"]["template"]["spec"]
    assert spec["containers"][0]["resources"]["requests"] == {"cpu": "32", "memory": "256Gi"}
    assert _shm(spec) == "1Ti"


@pytest.mark.parametrize("flag", ["--run-cpu", "--run-memory"])
def test_a_malformed_request_is_refused_before_anything_is_written(cli, tmp_path: Path, flag: str) -> None:  # type: ignore[no-untyped-def]
    result = cli(
        "gen",
        "ssd",
        "--round",
        "v2.1",
        "--only",
        "openshift",
        "--openshift-output",
        str(tmp_path / "o"),
        flag,
        "lots",
    )
    assert result.code == 2 and f"{flag}: 'lots' is not a Kubernetes quantity" in result.err
    assert not (tmp_path / "o").exists()


def test_every_node_shape_a_launch_names_is_a_system_with_as_many_gpus(kb: KnowledgeBase) -> None:
    for bench in kb.benchmarks.values():
        launch = bench.build.launch if bench.build else None
        for shape in launch.node_shapes if launch else ():
            system = kb.systems[shape.name]
            assert system.gpus == shape.gpus, (bench.name, shape.name)
            assert system.threads == system.cores * shape.hyperthreads, shape.name


@pytest.mark.parametrize("dropped", [("cpu",), ("memory",), ("cpu", "memory")])
def test_lint_refuses_a_gpu_pod_that_would_be_best_effort(tmp_path: Path, dropped: Tuple[str, ...]) -> None:
    from mlcc.lint.kube import lint_yaml

    published = next(REPO.glob("buildconfigs/ssd-v2.1/*/run/pod.yaml"))
    pod = yaml.safe_load(published.read_text())
    assert not [f for f in lint_yaml(published, None) if f.rule == "KS010"]
    for name in dropped:
        del pod["spec"]["containers"][0]["resources"]["requests"][name]
    changed = tmp_path / "pod.yaml"
    changed.write_text(yaml.safe_dump(pod))
    [finding] = [f for f in lint_yaml(changed, None) if f.rule == "KS010"]
    assert finding.severity == "error"
    assert f"GPUs without a {' or '.join(dropped)} request: the pod is BestEffort" in finding.message
