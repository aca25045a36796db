"""NVIDIA's v0.6 launch at the size asked: the generated config_MLCC.sh is sourced by a real
bash, the generated launch lines are run by a real bash (with the benchmark's own script
replaced by a stub that reports what it was given), and every object validates against the
real API schemas (tests/kube_schemas.py says whose)."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest
import yaml

from mlcc.api import Pins, request_for
from mlcc.errors import UsageError
from mlcc.lint.kube import SchemaStore
from mlcc.render import render
from mlcc.render.openshift import ClusterOptions, check_cluster_options, render_openshift
from tests.kube_schemas import KUBERNETES, object_errors, schema_store

Obj = Dict[str, Any]
MULTI_NODE = ("maskrcnn", "ssd", "gnmt", "transformer", "resnet50")


@pytest.fixture(scope="module")
def store() -> SchemaStore:
    return schema_store()


def _objects(kb, resolver, benchmark: str, **options: Any) -> List[Obj]:  # type: ignore[no-untyped-def]
    rendered = render(resolver.resolve(request_for(kb, benchmark, Pins())))
    files = render_openshift(rendered, check_cluster_options(ClusterOptions(**options)))
    found: List[Obj] = []
    for _, content in files.files:
        document = yaml.safe_load(content)
        found += document["items"] if document["kind"] == "List" else [document]
    return found


def _kind(objects: List[Obj], kind: str) -> List[Obj]:
    return [o for o in objects if o["kind"] == kind]


def _launch_map(objects: List[Obj]) -> Dict[str, str]:
    [found] = [m for m in _kind(objects, "ConfigMap") if "config_MLCC.sh" in m.get("data", {})]
    data: Dict[str, str] = found["data"]
    return data


def _sourced(config: str, tmp_path: Path, *names: str) -> Dict[str, str]:
    """What bash sees after sourcing the file the way run_and_time.sh does (set -eu on top)."""
    (tmp_path / "config_MLCC.sh").write_text(config)
    script = "set -eu; source config_MLCC.sh; " + "; ".join(f'echo "{n}=${{{n}}}"' for n in names)
    out = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True)
    return dict(line.split("=", 1) for line in out.stdout.splitlines())


@pytest.mark.parametrize("benchmark", MULTI_NODE)
def test_every_benchmark_gets_a_valid_mpijob_of_the_size_asked(
    kb, resolver, store: SchemaStore, benchmark: str, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    objects = _objects(kb, resolver, benchmark, gpus=4, nodes=2)
    assert not _kind(objects, "Pod") and not _kind(objects, "Job")
    [mpi] = _kind(objects, "MPIJob")
    for obj in objects:
        problems = object_errors(obj, store, "4")
        assert problems == [], (obj["kind"], problems)
    spec = mpi["spec"]
    assert spec["slotsPerWorker"] == 4 and spec["mpiReplicaSpecs"]["Worker"]["replicas"] == 2
    [worker] = spec["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"]
    assert worker["resources"]["limits"]["nvidia.com/gpu"] == 4
    config_mount = [m for m in worker["volumeMounts"] if m.get("subPath") == "config_MLCC.sh"]
    assert config_mount and config_mount[0]["mountPath"] == worker["workingDir"] + "/config_MLCC.sh"
    seen = _sourced(_launch_map(objects)["config_MLCC.sh"], tmp_path, "DGXNGPU", "DGXNNODES", "DGXNSOCKET")
    assert seen == {"DGXNGPU": "4", "DGXNNODES": "2", "DGXNSOCKET": "2"}
    env = {e["name"]: e["value"] for e in worker["env"]}
    assert env["DGXSYSTEM"] == "MLCC" and env["SLURM_NTASKS_PER_NODE"] == "4"


def test_maskrcnn_keeps_images_per_gpu_and_scales_the_learning_rate(kb, resolver, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    def solver(**size: int) -> Dict[str, str]:
        objects = _objects(kb, resolver, "maskrcnn", **size)
        text = _launch_map(objects)["config_MLCC.sh"]
        (tmp_path / "config_MLCC.sh").write_text(text)
        script = 'source config_MLCC.sh; printf "%s\\n" "${EXTRA_CONFIG[@]}"'
        out = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True)
        items = out.stdout.splitlines()
        return dict(zip(items[::2], items[1::2]))

    four = solver(gpus=4, nodes=1)  # NVIDIA's DGX-1 configuration: 48 images, LR 0.06 on 8 GPUs
    assert four["SOLVER.IMS_PER_BATCH"] == "24" and four["SOLVER.BASE_LR"] == "0.03"
    assert four["TEST.IMS_PER_BATCH"] == "4" and four["SOLVER.STEPS"] == "(24000, 32000)"
    big = solver(gpus=8, nodes=24)  # exactly NVIDIA's 24-node configuration
    assert big["SOLVER.IMS_PER_BATCH"] == "192" and big["SOLVER.BASE_LR"] == "0.24"
    assert big["SOLVER.MAX_ITER"] == "40000"


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"gpus": 3}, "binds GPUs evenly to 2 CPU sockets"),
        ({"gpus": 32}, "at most 16 GPUs"),  # a DGX-2, the largest node NVIDIA ran it on
        ({"gpus": 2, "nodes": 2, "nccl_profile": "ib"}, "without an RDMA device"),
        ({"gpus": 2, "nodes": 1, "nccl_env": (("NCCL_DEBUG", "WARN"),)}, "no effect with --nodes 1"),
    ],
)
def test_sizes_and_flags_that_cannot_be_honoured_are_refused(
    kb, resolver, options: Dict[str, Any], fragment: str
) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError, match=fragment):
        _objects(kb, resolver, "maskrcnn", **options)


def test_cli_refuses_a_multi_node_run_it_cannot_launch_and_writes_nothing(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "bc"
    result = cli("gen", "minigo", "--only", "openshift", "--openshift-output", str(out), "--nodes", "2")
    assert result.code == 2 and "--nodes 2" in result.err and not out.exists()
    result = cli("gen", "ssd", "--only", "openshift", "--openshift-output", str(out), "--git-ref", "v1")
    assert result.code == 2 and "--git-uri" in result.err and not out.exists()


def test_per_node_launch_gives_every_node_its_rank_and_the_master(kb, resolver, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The launcher's per-node command, run by bash for each node rank mpirun would give it,
    reaches run_and_time.sh (a stub here) with the MULTI_NODE arguments run.sub passes."""
    [mpi] = _kind(_objects(kb, resolver, "gnmt", gpus=2, nodes=3), "MPIJob")
    [launcher] = mpi["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"]
    line = shlex.split(launcher["command"][2].splitlines()[-1])
    assert line[line.index("-np") + 1] == "3" and "ppr:1:node" in line
    exported = dict(line[i + 1].split("=", 1) for i, w in enumerate(line) if w == "-x" and "=" in line[i + 1])
    assert exported["SLURM_NTASKS_PER_NODE"] == "2" and exported["DGXSYSTEM"] == "MLCC"
    node = line[-1]  # bash -c '<per-node command>'
    stub = tmp_path / "run_and_time.sh"
    stub.write_text('#!/bin/bash\necho "$MULTI_NODE"\n')
    stub.chmod(0o755)
    for rank in range(3):
        env = {**os.environ, "OMPI_COMM_WORLD_RANK": str(rank), "MLCC_MASTER_ADDR": "gnmt-worker-0.gnmt"}
        out = subprocess.run(["bash", "-c", node], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == [
            "--nnodes=3",
            f"--node_rank={rank}",
            "--master_addr=gnmt-worker-0.gnmt",
            "--master_port=29500",
        ]


def test_resnet50_binds_each_local_rank_to_its_own_cores(kb, resolver, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """resnet50 runs under ./ompi_bind_${DGXSYSTEM}.sh: the generated one, run for every local
    rank with a numactl stub, gives disjoint CPU sets on the rank's own socket."""
    objects = _objects(kb, resolver, "resnet50", gpus=4, nodes=2)
    bind = _launch_map(objects)["ompi_bind_MLCC.sh"]
    (tmp_path / "ompi_bind_MLCC.sh").write_text(bind)
    (tmp_path / "numactl").write_text('#!/bin/bash\necho "$@"\n')
    (tmp_path / "numactl").chmod(0o755)
    seen: List[set] = []  # type: ignore[type-arg]
    for rank in range(4):
        env = {
            **os.environ,
            "OMPI_COMM_WORLD_LOCAL_RANK": str(rank),
            "PATH": f"{tmp_path}:{os.environ['PATH']}",
        }
        out = subprocess.run(
            ["bash", "ompi_bind_MLCC.sh", "python", "train_imagenet.py"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        cpus, membind, *command = out.stdout.split()
        assert command == ["python", "train_imagenet.py"] and membind == f"--membind={rank // 2}"
        cores = set()
        for span in cpus.split("=", 1)[1].split(","):
            first, last = (int(x) for x in span.split("-"))
            cores |= set(range(first, last + 1))
        assert all((c % 40) // 20 == rank // 2 for c in cores)  # the rank's own socket (DGX-1 layout)
        seen.append(cores)
    assert sum(len(c) for c in seen) == len(set().union(*seen))  # no two ranks share a CPU
    [mpi] = _kind(objects, "MPIJob")
    [launcher] = mpi["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"]
    line = shlex.split(launcher["command"][2].splitlines()[-1])
    assert line[line.index("-np") + 1] == "8" and line[-1] == "./run_and_time.sh"


def _build_configs(kb, resolver, benchmark: str, pins: Pins, **options: Any) -> List[Obj]:  # type: ignore[no-untyped-def]
    rendered = render(resolver.resolve(request_for(kb, benchmark, pins)))
    found: List[Obj] = []
    for _, content in render_openshift(rendered, check_cluster_options(ClusterOptions(**options))).files:
        document = yaml.safe_load(content)
        found += [o for o in document.get("items", [document]) if o["kind"] == "BuildConfig"]
    return found


def _size(config: Obj) -> Tuple[str, Optional[str]]:
    env = {e["name"]: e["value"] for e in config["spec"]["strategy"]["dockerStrategy"].get("env", [])}
    return config["spec"]["resources"]["limits"]["memory"], env.get("MAX_JOBS")


def test_source_builds_size_memory_and_max_jobs_together(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    source = Pins(with_=("pytorch=1.1.0a0+828a6a3",))
    [flat] = _build_configs(kb, resolver, "maskrcnn", source)
    assert _size(flat) == ("16Gi", "4")  # PyTorch from source: 16Gi, a job per 4 GiB
    [flat] = _build_configs(kb, resolver, "maskrcnn", source, build_memory="64Gi")
    assert _size(flat) == ("64Gi", "16")
    [flat] = _build_configs(kb, resolver, "maskrcnn", source, build_memory="64Gi", build_max_jobs=6)
    assert _size(flat) == ("64Gi", "6")
    stages = {
        c["metadata"]["name"].split("-")[0]: c
        for c in _build_configs(kb, resolver, "maskrcnn", source, chain=True, namespace="mlperf")
    }
    assert _size(stages["stack"]) == ("8Gi", None)  # packages only: nothing to compile
    assert _size(stages["framework"]) == ("16Gi", "4")
    [nccl] = _build_configs(kb, resolver, "nccl-tests", Pins())
    assert _size(nccl) == ("8Gi", "2")  # make of nccl-tests


def test_configmaps_and_claims_validate_against_the_kubernetes_schemas(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    """Kubernetes' own kinds are checked by Kubernetes' own schemas (kubernetes-validate ships
    them, strict, for the 1.30 API of OpenShift 4.17), and those schemas reject a typo."""
    import kubernetes_validate

    objects = _objects(
        kb,
        resolver,
        "maskrcnn",
        gpus=4,
        nodes=2,
        storage_class="cephfs",
        data_size="200Gi",
        results_claim="maskrcnn-results",
    )
    claims = _kind(objects, "PersistentVolumeClaim")
    assert {c["metadata"]["name"] for c in claims} == {"maskrcnn-data", "maskrcnn-results"}
    assert all(c["spec"]["accessModes"] == ["ReadWriteMany"] for c in claims)
    single = _objects(kb, resolver, "resnet50", gpus=2, nodes=1)
    checked = [
        o for o in objects + single if o["kind"] in ("ConfigMap", "PersistentVolumeClaim", "Pod", "Job")
    ]
    assert {o["kind"] for o in checked} == {"ConfigMap", "PersistentVolumeClaim", "Pod", "Job"}
    for obj in checked:
        kubernetes_validate.validate(obj, KUBERNETES, strict=True)
    broken = dict(claims[0], spec={**claims[0]["spec"], "accesModes": ["ReadWriteMany"]})
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES, strict=True)


def test_storage_flags_that_would_be_dropped_are_refused() -> None:
    with pytest.raises(UsageError, match="--data-size"):
        check_cluster_options(ClusterOptions(storage_class="cephfs"))
    with pytest.raises(UsageError, match="no effect without --storage-class"):
        check_cluster_options(ClusterOptions(data_size="10Gi"))


def test_a_field_left_at_its_default_factory_counts_as_not_given() -> None:
    """``mlcc build --backend podman`` refused every build: EngineSettings.cluster (a
    default_factory field) always looked "given"."""
    from mlcc.engines.base import EngineSettings
    from mlcc.flags import given

    assert given(EngineSettings()) == {}
    changed = EngineSettings(cluster=ClusterOptions(namespace="mlperf"))
    assert set(given(changed)) == {"cluster"}
