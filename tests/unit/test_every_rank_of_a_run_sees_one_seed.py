"""Every rank of one run mlcc renders for NVIDIA's v5.x benchmarks sees one SEED, drawn when the
run starts (a new one each submission) or the user's, as NVIDIA's run.sub hands its tasks one.

The rendered commands run for real: the Pod's torch.distributed.run, the PyTorchJob's Master
and Worker pods as processes on localhost (torch's TCPStore between them, then a real torchrun
rendezvous), and the MPIJob launcher's bash under an mpirun stand-in that gives each rank only
what -x passes, as ranks started from the workers' sshd get. NVIDIA's run_with_config.sh is
replaced by a probe that records each rank's RANK and SEED.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import pytest
import yaml

from mlcc.render import render
from mlcc.render.openshift import ClusterOptions, render_openshift
from mlcc.resolve.request import build_request
from tests.kube_schemas import object_errors, schema_store

Obj = Dict[str, Any]
WORKDIR = "/workspace/llm"
# A stand-in for NVIDIA's run_with_config.sh: one line per rank
PROBE = '#!/bin/bash\necho "${RANK:-pod${PET_NODE_RANK:-}} ${SEED:-unset}" >> "$PROBE_OUT"\n'
# A stand-in for mpirun: each rank gets only the -x variables (and Open MPI's rank variables),
# started in -wdir
MPIRUN = r"""#!{python}
import os, subprocess, sys
args, exports, np, wdir = sys.argv[1:], [], 1, "."
while args and args[0].startswith("-"):
    flag = args.pop(0)
    if flag in ("-x",):
        exports.append(args.pop(0))
    elif flag == "-np":
        np = int(args.pop(0))
    elif flag == "-wdir":
        wdir = args.pop(0)
    elif flag in ("--prefix", "--map-by", "--bind-to"):
        args.pop(0)
for rank in range(np):
    env = {{}}
    for item in exports:
        name, is_set, value = item.partition("=")
        if is_set or name in os.environ:  # Open MPI skips an unset name with a warning
            env[name] = value if is_set else os.environ[name]
    env.update(OMPI_COMM_WORLD_RANK=str(rank), OMPI_COMM_WORLD_SIZE=str(np),
               OMPI_COMM_WORLD_LOCAL_RANK=str(rank), OMPI_COMM_WORLD_LOCAL_SIZE=str(np),
               PROBE_OUT=os.environ["PROBE_OUT"])
    subprocess.run(args, env=env, cwd=wdir, check=True)
"""


@pytest.fixture(scope="module")
def objects(kb, resolver) -> Dict[str, Obj]:  # type: ignore[no-untyped-def]
    """llama31_8b v5.1 on GB200 trays, 2 GPUs a pod: its Pod, Job, MPIJob and PyTorchJob."""
    request = build_request(kb, "llama31_8b", round_="v5.1", gpu="gb200")
    files = render_openshift(render(resolver.resolve(request), request=request), ClusterOptions(gpus=2))
    return {path.rsplit("/", 1)[1]: yaml.safe_load(text) for path, text in files.files}


def _container(job: Obj, replica: str) -> Obj:
    spec = job["spec"]["pytorchReplicaSpecs"][replica]["template"]["spec"]
    container: Obj = spec["containers"][0]
    return container


def _free_port_pair() -> int:
    """A port p with p and p + 1 free (MASTER_PORT and the seed's port beside it)."""
    for _ in range(50):
        with socket.socket() as first:
            first.bind(("127.0.0.1", 0))
            port = int(first.getsockname()[1])
            with socket.socket() as second:
                try:
                    second.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
        return port
    raise AssertionError("no two adjacent free ports")


def _workdir(tmp_path: Path) -> Path:
    """The work directory with the probe in place of NVIDIA's wrapper."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    probe = work / "run_with_config.sh"
    probe.write_text(PROBE)
    probe.chmod(0o755)
    return work


def _env(tmp_path: Path, **extra: str) -> Dict[str, str]:
    """The pod's environment here: the venv's python first on PATH (the image's ``python``)."""
    env = {k: v for k, v in os.environ.items() if k not in ("SEED", "MLCC_SEED_TIMEOUT")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env["PROBE_OUT"] = str(tmp_path / "ranks.txt")
    env.update(extra)
    return env


def _seen(tmp_path: Path) -> Dict[str, str]:
    """RANK -> SEED as the probe recorded them (then cleared for the next run)."""
    out = tmp_path / "ranks.txt"
    lines = out.read_text().split("\n")
    out.unlink()
    return dict(line.split(" ") for line in lines if line)


def _start_pytorchjob(
    command: Sequence[str],
    tmp_path: Path,
    nodes: int,
    seeds: Optional[Mapping[int, str]] = None,
    **extra: str,
) -> List[subprocess.Popen[str]]:
    """Each pod of a PyTorchJob as the operator starts it (PET_* variables), Workers first."""
    port = _free_port_pair()
    pods = []
    for rank in reversed(range(nodes)):  # the Workers start before their Master, to wait for it
        env = _env(
            tmp_path,
            PET_NNODES=str(nodes),
            PET_NPROC_PER_NODE="2",
            PET_NODE_RANK=str(rank),
            PET_MASTER_ADDR="127.0.0.1",
            PET_MASTER_PORT=str(port),
            **extra,
        )
        if seeds and rank in seeds:
            env["SEED"] = seeds[rank]
        pods.append(
            subprocess.Popen(
                list(command), cwd=_workdir(tmp_path), env=env, stderr=subprocess.PIPE, text=True
            )
        )
    return pods


def _finish(pods: List[subprocess.Popen[str]]) -> List[Tuple[int, str]]:
    return [(pod.wait(timeout=120), pod.communicate()[1]) for pod in pods]


def _seed_only(command: Sequence[str]) -> List[str]:
    """The rendered command's seed step, running the probe in place of torchrun."""
    assert list(command[:2]) == ["python", "-c"] and command[3] == "SEED"
    return [*command[:4], "./run_with_config.sh"]


def test_the_run_objects_validate_and_render_byte_identical(kb, resolver, objects: Dict[str, Obj]) -> None:  # type: ignore[no-untyped-def]
    """The seed is drawn when the run starts: the files are the same on every render, and each
    object still passes its schema and mlcc's lint."""
    for name in ("pod.yaml", "job.yaml", "mpijob.yaml", "pytorchjob.yaml"):
        assert object_errors(objects[name], schema_store()) == [], name
    request = build_request(kb, "llama31_8b", round_="v5.1", gpu="gb200")
    again = render_openshift(render(resolver.resolve(request), request=request), ClusterOptions(gpus=2))
    first = render_openshift(render(resolver.resolve(request), request=request), ClusterOptions(gpus=2))
    assert again.files == first.files


def test_the_pods_torchrun_gives_its_processes_one_seed_a_new_one_each_run(
    objects: Dict[str, Obj], tmp_path: Path
) -> None:
    command = objects["pod.yaml"]["spec"]["containers"][0]["command"]
    assert command[4:] == [
        "python", "-m", "torch.distributed.run", "--standalone", "--no_python", "--nproc_per_node=2",
        "./run_with_config.sh",
    ]  # fmt: skip
    draws = []
    for _ in range(3):
        subprocess.run(command, cwd=_workdir(tmp_path), env=_env(tmp_path), check=True, timeout=120)
        seen = _seen(tmp_path)
        assert sorted(seen) == ["0", "1"] and len(set(seen.values())) == 1, seen
        draws.append(seen["0"])
    assert all(0 <= int(seed) < 32768 for seed in draws)  # NVIDIA's $RANDOM range
    assert len(set(draws)) > 1, draws  # three draws alike: 1 in 2**30


def test_the_pytorchjob_master_hands_its_seed_to_every_worker_pod_through_torchrun(
    objects: Dict[str, Obj], tmp_path: Path
) -> None:
    """Two pods of two processes each, started by the rendered command as the operator starts
    them: the Worker (started first) waits for the Master's seed, then torchrun's rendezvous
    runs the four ranks, which all see it."""
    job = objects["pytorchjob.yaml"]
    command = _container(job, "Master")["command"]
    assert _container(job, "Worker")["command"] == command
    assert command[4:] == ["python", "-m", "torch.distributed.run", "--no_python", "./run_with_config.sh"]
    results = _finish(_start_pytorchjob(command, tmp_path, nodes=2))
    assert [code for code, _ in results] == [0, 0], results
    seen = _seen(tmp_path)
    assert sorted(seen) == ["0", "1", "2", "3"] and len(set(seen.values())) == 1, seen
    worker, master = (err for _, err in results)
    assert f"mlcc: SEED={seen['0']}, handed to 1 worker pod(s)" in master
    assert f"mlcc: SEED={seen['0']}, from the Master at 127.0.0.1:" in worker


def test_each_pytorchjob_submission_draws_anew_and_a_users_seed_wins(
    objects: Dict[str, Obj], tmp_path: Path
) -> None:
    command = _seed_only(_container(objects["pytorchjob.yaml"], "Master")["command"])
    draws = []
    for _ in range(3):
        assert [code for code, _ in _finish(_start_pytorchjob(command, tmp_path, nodes=2))] == [0, 0]
        seen = list(_seen(tmp_path).values())
        assert len(seen) == 2 and len(set(seen)) == 1, seen
        draws.append(seen[0])
    assert len(set(draws)) > 1, draws
    # the user's SEED on the Master's template (and the same on a Worker's) is every pod's
    assert [c for c, _ in _finish(_start_pytorchjob(command, tmp_path, 3, seeds={0: "4242", 2: "4242"}))] == [
        0,
        0,
        0,
    ]
    assert list(_seen(tmp_path).values()) == ["4242"] * 3


def test_a_worker_given_another_seed_than_the_masters_stops_and_says_so(
    objects: Dict[str, Obj], tmp_path: Path
) -> None:
    command = _seed_only(_container(objects["pytorchjob.yaml"], "Master")["command"])
    (worker_code, worker_err), (master_code, _) = _finish(
        _start_pytorchjob(command, tmp_path, nodes=2, seeds={0: "1", 1: "2"})
    )
    assert (worker_code, master_code) == (1, 0)
    assert "mlcc: SEED=2 here but 1 on the Master" in worker_err


@pytest.mark.parametrize("role", ["worker", "master"])
def test_a_pod_whose_peers_never_come_stops_at_the_deadline_with_a_message(
    objects: Dict[str, Obj], tmp_path: Path, role: str
) -> None:
    """A Worker without a Master, a Master whose Worker never comes: both stop after
    MLCC_SEED_TIMEOUT, naming the address, instead of hanging."""
    command = _seed_only(_container(objects["pytorchjob.yaml"], "Master")["command"])
    port = _free_port_pair()
    env = _env(
        tmp_path,
        PET_NNODES="2",
        PET_NODE_RANK="1" if role == "worker" else "0",
        PET_MASTER_ADDR="127.0.0.1",
        PET_MASTER_PORT=str(port),
        MLCC_SEED_TIMEOUT="1",
    )
    done = subprocess.run(
        command, cwd=_workdir(tmp_path), env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    expected = (
        "no seed came from the Master for SEED" if role == "worker" else "the Workers did not all take SEED"
    )
    assert (
        f"mlcc: {expected} at " in done.stderr
        and f":{port + 1} within 1 s (MLCC_SEED_TIMEOUT)" in done.stderr
    )
    assert not (tmp_path / "ranks.txt").exists()  # the benchmark never started


@pytest.mark.parametrize("seed", ["abc", "007", "-1", "4294967296"])
def test_a_seed_that_is_not_a_whole_number_below_2_to_the_32_is_refused(
    objects: Dict[str, Obj], tmp_path: Path, seed: str
) -> None:
    command = objects["job.yaml"]["spec"]["template"]["spec"]["containers"][0]["command"]
    done = subprocess.run(
        _seed_only(command),
        cwd=_workdir(tmp_path),
        env=_env(tmp_path, SEED=seed),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert f"mlcc: SEED='{seed}': give a whole number from 0 to 4294967295" in done.stderr


def _launcher_command(objects: Dict[str, Obj], tmp_path: Path) -> List[str]:
    """The MPIJob launcher's command, its paths moved here: the hostfile, mpirun (the
    stand-in) and the work directory."""
    container = objects["mpijob.yaml"]["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"][
        "containers"
    ][0]
    command: List[str] = container["command"]
    assert command[4:6] == ["/bin/bash", "-c"] and " -x SEED " in command[6]
    (tmp_path / "hostfile").write_text("worker-0 slots=2\nworker-1 slots=2\n")
    mpirun = tmp_path / "mpirun"
    mpirun.write_text(MPIRUN.format(python=sys.executable))
    mpirun.chmod(0o755)
    script = (
        command[6]
        .replace("/etc/mpi/hostfile", str(tmp_path / "hostfile"))
        .replace("/usr/local/mpi/bin/mpirun", str(mpirun))
        .replace(f"-wdir {WORKDIR}", f"-wdir {_workdir(tmp_path)}")
    )
    return [*command[:6], script]


def test_the_mpijob_launcher_draws_one_seed_and_mpirun_gives_it_to_every_rank(
    objects: Dict[str, Obj], tmp_path: Path
) -> None:
    command = _launcher_command(objects, tmp_path)
    draws = []
    for _ in range(3):
        subprocess.run(command, env=_env(tmp_path), check=True, timeout=60)
        seen = _seen(tmp_path)
        assert sorted(seen) == ["0", "1", "2", "3"] and len(set(seen.values())) == 1, seen
        draws.append(seen["0"])
    assert len(set(draws)) > 1, draws
    subprocess.run(command, env=_env(tmp_path, SEED="31337"), check=True, timeout=60)
    assert set(_seen(tmp_path).values()) == {"31337"}


def test_benchmarks_whose_scripts_seed_themselves_keep_their_commands(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    """v2.1's BERT (run_and_time.sh's own draw, broadcast from rank 0 by run_pretraining.py) and
    v5.1's retinanet (train.py draws and broadcasts its seed; no script reads SEED) get no seed
    step, and their launcher passes no SEED."""
    for name, round_ in (("bert", "v2.1"), ("retinanet", "v5.1")):
        request = build_request(kb, name, round_=round_)
        files = render_openshift(render(resolver.resolve(request), request=request), ClusterOptions(gpus=2))
        text = "\n".join(content for path, content in files.files if "/run/" in path)
        assert "mlcc/seed" not in text and "-x SEED" not in text, name
