"""A multi-node MPIJob's ranks see the environment the pods state, and as many ranks start as
NVIDIA's run.sub starts tasks.

Ranks on the workers start from sshd, which hands them neither the image's ENV nor the pod's
env: only what mpirun's -x passes arrives. The launcher's bash runs here for real under an
mpirun stand-in that gives each rank only its -x variables (tests/unit/
test_every_rank_of_a_run_sees_one_seed.py has the same stand-in), then mlcc's real
run_with_config.sh (written by the recipe's script) and a probe in place of NVIDIA's
run_and_time.sh that records what each rank sees.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
import yaml

from mlcc.render import render
from mlcc.render.openshift import ClusterOptions, render_openshift
from mlcc.resolve.request import build_request
from tests.unit.test_every_rank_of_a_run_sees_one_seed import MPIRUN

Obj = Dict[str, Any]
REPO = Path(__file__).resolve().parents[2]
WRAPPER = REPO / "recipes/benchmarks/v5.1/scripts/run-with-config.sh"
# what NVIDIA's run_and_time.sh would see: one JSON line per rank
DUMP = "import json, os; print(json.dumps(dict(os.environ)))"
PROBE = f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -c '{DUMP}' >> \"$PROBE_OUT\"\n"


def _objects(kb, resolver, benchmark: str, gpus: int, nodes: int) -> Dict[str, Obj]:  # type: ignore[no-untyped-def]
    request = build_request(kb, benchmark, round_="v5.1", gpu="gb200")
    rendered = render(resolver.resolve(request), request=request)
    files = render_openshift(rendered, ClusterOptions(gpus=gpus, nodes=nodes))
    dockerfile = dict(rendered.files)["Dockerfile"]
    objects = {path.rsplit("/", 1)[1]: yaml.safe_load(text) for path, text in files.files}
    objects["Dockerfile"] = {"text": dockerfile}
    return objects


def _launcher(objects: Dict[str, Obj]) -> Obj:
    spec = objects["mpijob.yaml"]["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]
    container: Obj = spec["containers"][0]
    return container


def _ranks_environments(objects: Dict[str, Obj], tmp_path: Path, workers: int) -> List[Dict[str, str]]:
    """Run the launcher's command as its pod would (its env), with mpirun a stand-in; each
    rank's environment as NVIDIA's run_and_time.sh would see it."""
    launcher = _launcher(objects)
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["bash", str(WRAPPER)], cwd=work, check=True)
    (work / "run_and_time.sh").write_text(PROBE)
    (work / "run_and_time.sh").chmod(0o755)
    mpirun = tmp_path / "mpirun"
    mpirun.write_text(MPIRUN.format(python=sys.executable))
    mpirun.chmod(0o755)
    (tmp_path / "hostfile").write_text("".join(f"worker-{i} slots=4\n" for i in range(workers)))
    script = launcher["command"][-1]
    prefix = script.split("/bin/mpirun", 1)[0].rsplit(" ", 1)[-1]
    script = (
        script.replace("/etc/mpi/hostfile", str(tmp_path / "hostfile"))
        .replace(f"{prefix}/bin/mpirun", str(mpirun))
        .replace(f"-wdir {launcher['workingDir']}", f"-wdir {work}")
    )
    out = tmp_path / "ranks.jsonl"
    env = {"PATH": os.environ["PATH"], "PROBE_OUT": str(out)}
    env.update({item["name"]: item["value"] for item in launcher["env"]})
    subprocess.run([*launcher["command"][:-1], script], env=env, check=True, timeout=120)
    return [yaml.safe_load(line) for line in out.read_text().splitlines()]


def test_dlrm_runs_one_rank_a_node_and_every_rank_sees_the_pods_environment(
    kb, resolver, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """NVIDIA's dlrm_dcnv2 run.sub starts run_and_time.sh once a node (srun --ntasks-per-node=1;
    HugeCTR's train.py drives the node's GPUs): two nodes of 4 GB200 give two ranks, each
    with its node's Slurm task variables and the recipe's values (SHARP, NCCL_LAUNCH_MODE,
    the GPU's arch list) the pods state."""
    objects = _objects(kb, resolver, "dlrm_dcnv2", 4, 2)
    assert objects["mpijob.yaml"]["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 2
    ranks = _ranks_environments(objects, tmp_path, 2)
    assert [r["SLURM_NODEID"] for r in ranks] == ["0", "1"]
    assert {r["SLURM_NTASKS"] for r in ranks} == {"2"} and {r["SLURM_LOCALID"] for r in ranks} == {"0"}
    stated = {item["name"]: item["value"] for item in _launcher(objects)["env"]}
    for name in ("SM", "NCCL_LAUNCH_MODE", "SHARP_COLL_LOCK_ON_COMM_INIT"):
        assert name in stated, name
    for rank in ranks:
        missing = {k: v for k, v in stated.items() if rank.get(k) != v}
        assert not missing, missing
        assert rank["SEED"] == ranks[0]["SEED"]


def test_the_pods_arch_list_is_the_images_as_the_gpu_spells_it(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    """With --gpu gb200, HugeCTR's SM list is that GPU's alone in the image's ENV; the pods,
    whose env replaces the image's value, state the same and not the recipe's default list."""
    objects = _objects(kb, resolver, "dlrm_dcnv2", 4, 2)
    dockerfile = objects["Dockerfile"]["text"]
    assert 'ENV SM="100"' in dockerfile
    assert "80;90;100" not in yaml.safe_dump(objects["mpijob.yaml"])
    assert {"name": "SM", "value": "100"} in _launcher(objects)["env"]


@pytest.mark.parametrize("benchmark", ["llama31_8b", "rgat"])
def test_per_gpu_ranks_keep_their_task_variables_and_see_the_recipes_values(
    kb,
    resolver,
    tmp_path: Path,
    benchmark: str,  # type: ignore[no-untyped-def]
) -> None:
    objects = _objects(kb, resolver, benchmark, 2, 2)
    ranks = _ranks_environments(objects, tmp_path, 2)
    assert sorted(r["SLURM_PROCID"] for r in ranks) == ["0", "1", "2", "3"]
    stated = {item["name"]: item["value"] for item in _launcher(objects)["env"]}
    for rank in ranks:
        assert {k: v for k, v in stated.items() if rank.get(k) != v} == {}
