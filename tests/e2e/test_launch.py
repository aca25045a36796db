"""A run at the size asked, in real containers: the image is built by mlcc from the generated
Dockerfile of the e2e-launch probe (NVIDIA's launch contract, with stand-ins for the training
script, tests/e2e/recipes/benchmarks/e2e-launch.d), and the MPIJob's per-node command is run
in one container per node, as mpirun would run it on each worker, under an arbitrary non-root
UID in group 0 as OpenShift assigns one. Nothing may be written outside the paths the image
prepared for it."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import yaml

from tests.e2e.conftest import World, mlcc
from tests.e2e.test_build import _tag
from tests.e2e.world import _environment

OPENSHIFT_UID = "1000680000"  # from an OpenShift project's UID range; group 0 as OpenShift sets
NODES, GPUS = 2, 2
PREPARED = ("/results", "/workspace/launch", "/opt/mlcc/home", "/tmp")
# files the container runtime itself mounts or writes (the benchmark never touches them)
RUNTIME = ("/etc/hosts", "/etc/hostname", "/etc/resolv.conf", "/run/.containerenv")


def _prepared(kind: str, path: str) -> bool:
    """Inside a prepared path, or a directory (C) holding a prepared path or a file the runtime
    mounts (podman marks /etc changed for its /etc/hosts mount), not itself written to."""
    if any(path == d or path.startswith(d + "/") for d in PREPARED):
        return True
    return kind == "C" and any(d.startswith(path.rstrip("/") + "/") for d in (*PREPARED, *RUNTIME))


def _podman(world: World, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["podman", *args], capture_output=True, text=True, env=_environment(world), timeout=300
    )


def _manifests(world: World, out: Path) -> Dict[str, Any]:
    result = mlcc(
        world,
        "gen",
        "e2e-launch",
        "--base",
        "ubi8",
        "--gpus",
        str(GPUS),
        "--nodes",
        str(NODES),
        "--only",
        "openshift",
        "--openshift-output",
        str(out),
    )
    assert result.code == 0, result.err
    mpijob = yaml.safe_load(next(out.rglob("mpijob.yaml")).read_text())
    config = yaml.safe_load(next(out.rglob(f"launch-{NODES}x{GPUS}.yaml")).read_text())
    return {"mpijob": mpijob, "config": config}


def test_two_nodes_of_two_gpus_start_four_ranks_configured_for_that_size(
    world: World, tmp_path: Path
) -> None:
    build = mlcc(
        world,
        "build",
        "e2e-launch",
        "--base",
        "ubi8",
        "--base-image",
        world.stage.base_image,
        "--mirror",
        world.stage.mirror,
        "--backend",
        "podman",
        "--push",
        "--registry",
        f"{world.registry.host}/launch",
        "--no-tls-verify",
        "--no-history",  # the user's history file is no business of this test
    )
    assert build.code == 0, build.err
    image = _tag(build.out)
    found = _manifests(world, tmp_path / "bc")
    replicas = found["mpijob"]["spec"]["mpiReplicaSpecs"]
    assert replicas["Worker"]["replicas"] == NODES and found["mpijob"]["spec"]["slotsPerWorker"] == GPUS
    [launcher] = replicas["Launcher"]["template"]["spec"]["containers"]
    [worker] = replicas["Worker"]["template"]["spec"]["containers"]
    line = shlex.split(launcher["command"][2].splitlines()[-1])
    assert line[line.index("-np") + 1] == str(NODES)
    node_command = line[-1]  # what mpirun runs, once per worker, under /bin/bash -c
    exported = dict(w.split("=", 1) for i, w in enumerate(line) if i and line[i - 1] == "-x" and "=" in w)
    env = {e["name"]: e["value"] for e in worker["env"]}
    env.update((k, v) for k, v in exported.items() if "$" not in v)
    # the generated configuration, mounted where the MPIJob mounts it
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    mounts: List[str] = []
    for mount in worker["volumeMounts"]:
        if mount["name"] == "launch":
            file = config_dir / mount["subPath"]
            file.write_text(found["config"]["data"][mount["subPath"]])
            mounts += ["-v", f"{file}:{mount['mountPath']}:ro"]
    results = tmp_path / "results"
    results.mkdir()
    results.chmod(0o777)  # a results volume the project's UID can write
    names = [f"mlcc-e2e-node{rank}-{tmp_path.name[-6:]}" for rank in range(NODES)]
    try:
        for rank, name in enumerate(names):
            # --passwd=false: podman would otherwise add the UID to /etc/passwd itself
            args = [
                "run",
                "--name",
                name,
                "--user",
                f"{OPENSHIFT_UID}:0",
                "--passwd=false",
                "--network",
                "none",
            ]
            args += ["-w", worker["workingDir"], "-v", f"{results}:/results", *mounts]
            for key, value in {
                **env,
                "OMPI_COMM_WORLD_RANK": str(rank),
                "MLCC_MASTER_ADDR": names[0],
            }.items():
                args += ["-e", f"{key}={value}"]
            args += ["--entrypoint", "/bin/bash", image, "-c", node_command]
            ran = _podman(world, *args)
            assert ran.returncode == 0, ran.stderr
        reports = {}
        for path in sorted(results.glob("rank-*.txt")):
            reports[path.name] = dict(line.split("=", 1) for line in path.read_text().splitlines())
        assert sorted(reports) == [f"rank-{r}.txt" for r in range(NODES * GPUS)]
        for report in reports.values():
            assert report["world"] == str(NODES * GPUS) and report["master"] == f"{names[0]}:29500"
            assert report["uid"] == OPENSHIFT_UID
            # what the generated config_MLCC.sh says, not NVIDIA's DGX-1 defaults (8 GPUs, LR 5)
            assert report["DGXSYSTEM"] == "MLCC" and report["DGXNGPU"] == str(GPUS)
            assert report["DGXNNODES"] == str(NODES) and report["DGXNSOCKET"] == "2"
            assert report["BATCHSIZE"] == "16" and report["LR"] == "0.4"  # 0.8 at 8 GPUs, scaled to 4
            assert report["NCCL_IB_DISABLE"] == "1"  # no RDMA asked: the tcp profile
        for name in names:
            diff = _podman(world, "diff", name)
            assert diff.returncode == 0, diff.stderr
            changed = [line.split(maxsplit=1) for line in diff.stdout.splitlines() if line.strip()]
            outside = [(kind, path) for kind, path in changed if not _prepared(kind, path)]
            assert outside == [], outside
    finally:
        for name in names:
            _podman(world, "rm", "-f", name)
