"""At every size NVIDIA ran a v2.1 benchmark, mlcc's config_MLCC.sh holds NVIDIA's values, and
the stack's GPU picks NVIDIA's file for that GPU.

NVIDIA's v2.1 files (tests/data/mlperf-v2.1/NVIDIA/benchmarks, byte for byte; tests/data/README.md
lists them) and the file mlcc writes for the same size and GPU are both sourced by a real bash;
every variable NVIDIA's file sets must come out with the same value. Mask R-CNN: DGX A100 at 1 and
48 nodes, DGX H100 at 1 and 4. BERT: DGX A100 at 1 and 8 nodes, DGX H100 at 1 and 4. SSD
(RetinaNet): DGX A100 at 1, 8, 160 and 256 nodes, DGX H100 at 1 and 4.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
import yaml

from mlcc.errors import UsageError
from mlcc.kb.model import KnowledgeBase, Launch
from mlcc.render.openshift.launch import Size, config_file
from tests.conftest import REPO
from tests.nvidia_configs import Variable, sourced

COMMIT = "158189d4cbfbee366c10da1f0f086c85d8f15b5f"
DATA = REPO / "tests" / "data" / "mlperf-v2.1"
BENCHMARKS = Path("NVIDIA/benchmarks")
# (benchmark, implementation folder, file): every file the v2.1 recipes carry.
FILES: List[Tuple[str, str, str]] = [
    ("maskrcnn", "pytorch-22.09", "config_DGXA100.sh"),
    ("maskrcnn", "pytorch-22.09", "config_DGXA100_multi.sh"),
    ("maskrcnn", "pytorch-preview", "config_DGXH100.sh"),
    ("maskrcnn", "pytorch-preview", "config_DGXH100_multi_4x8x4.sh"),
    ("bert", "pytorch-22.09", "config_DGXA100_1x8x56x1.sh"),
    ("bert", "pytorch-22.09", "config_DGXA100_8x8x48x1.sh"),
    ("bert", "pytorch-preview", "config_DGXH100_1x8x48x1_pack.sh"),
    ("bert", "pytorch-preview", "config_DGXH100_4x8x48x1_pack.sh"),
    ("ssd", "pytorch-22.09", "config_DGXA100_001x08x032.sh"),
    ("ssd", "pytorch-22.09", "config_DGXA100_008x08x004.sh"),
    ("ssd", "pytorch-22.09", "config_DGXA100_160x08x001.sh"),
    ("ssd", "pytorch-22.09", "config_DGXA100_256x08x001.sh"),
    ("ssd", "pytorch-preview", "config_DGXH100_001x08x032.sh"),
    ("ssd", "pytorch-preview", "config_DGXH100_004x08x008.sh"),
]
# Slurm's (WALLTIME and the minutes it is made of), the file's own name (DGXSYSTEM), and the
# paths of NVIDIA's clusters: BERT's DATADIR_PHASE2 is the host directory docker mounts (the
# OpenShift run mounts the dataset volume), SSD's MLPERF_LOGIN_HOST and MLPERF_HOST_CONFIG look
# up a data-path file by the login host's name.
NOT_COMPARED = {
    "DGXSYSTEM",
    "WALLTIME",
    "WALLTIME_MINUTES",
    "DATADIR_PHASE2",
    "MLPERF_LOGIN_HOST",
    "MLPERF_HOST_CONFIG",
}
# NVIDIA's v2.1 files export the system shape, mlcc's file sets it for run_and_time.sh, which
# sources it in the same shell: the value counts, not the export.
VALUE_ONLY = {"DGXNNODES", "DGXNGPU", "DGXSOCKETCORES", "DGXNSOCKET", "DGXHT"}
MLCC_ONLY = {"DGXIBDEVICES", "BIND_LAUNCH"}
GPU_OF_SHAPE = {"DGXA100": "a100", "DGXH100": "h100"}


def _launch(kb: KnowledgeBase, benchmark: str) -> Launch:
    launch = kb.benchmarks[f"{benchmark}-v2.1"].build.launch
    assert launch is not None
    return launch


def _nvidia(benchmark: str, implementation: str, file: str) -> Dict[str, Variable]:
    return sourced(DATA / BENCHMARKS / benchmark / "implementations" / implementation / file)


def _capability(kb: KnowledgeBase, file: str) -> str:
    return kb.gpus["h100" if "H100" in file else "a100"].compute_capability


def _started_from(text: str) -> str:
    line = next(x for x in text.splitlines() if x.startswith("# Started from NVIDIA's "))
    return line.split()[4]


@pytest.mark.parametrize("benchmark", sorted({b for b, _, _ in FILES}))
def test_each_v2_1_recipe_carries_nvidias_files_with_their_sources(kb: KnowledgeBase, benchmark: str) -> None:
    launch = _launch(kb, benchmark)
    by_file = {config.file: config for config in launch.configs}
    ours = [(implementation, file) for b, implementation, file in FILES if b == benchmark]
    assert sorted(by_file) == sorted(file for _, file in ours)
    for implementation, name in ours:
        config = by_file[name]
        upstream = BENCHMARKS / benchmark / "implementations" / implementation / name
        assert config.source == f"github:mlcommons/training_results_v2.1 @{COMMIT} {upstream}"
        nvidia = _nvidia(benchmark, implementation, name)
        assert (config.nodes, config.gpus_per_node) == (
            int(str(nvidia["DGXNNODES"].value)),
            int(str(nvidia["DGXNGPU"].value)),
        )
        shape = launch.shape(config.node_shape)
        assert shape.name == ("DGXH100" if "H100" in name else "DGXA100")
        assert shape.gpu == GPU_OF_SHAPE[shape.name]
        assert shape.gpu_capability == kb.gpus[GPU_OF_SHAPE[shape.name]].compute_capability
        assert shape.socket_cores == int(str(nvidia["DGXSOCKETCORES"].value))
        assert shape.sockets == int(str(nvidia["DGXNSOCKET"].value))


@pytest.mark.parametrize(("benchmark", "implementation", "file"), FILES)
def test_at_every_v2_1_size_nvidia_ran_mlcc_writes_nvidias_values(
    kb: KnowledgeBase, tmp_path: Path, benchmark: str, implementation: str, file: str
) -> None:
    nvidia = _nvidia(benchmark, implementation, file)
    size = Size(nodes=int(str(nvidia["DGXNNODES"].value)), gpus=int(str(nvidia["DGXNGPU"].value)))
    launch = _launch(kb, benchmark)
    text = config_file(launch, size, benchmark, _capability(kb, file))
    config = next(c for c in launch.configs if c.file == file)
    if config.image_lacks is not None:
        # kept with NVIDIA's values, but the image cannot run it: the run starts elsewhere and
        # says so
        assert _started_from(text) != file
        assert f"#   {file}: " in text and "# Passed over: " in text
        for name, value in config.exports:
            assert nvidia[name].value == value, name
        return
    assert _started_from(text) == file
    written = tmp_path / "config_MLCC.sh"
    written.write_text(text)
    ours = sourced(written)
    compared = set(nvidia) - NOT_COMPARED
    assert compared <= set(ours), sorted(compared - set(ours))
    for name in sorted(compared):
        if name in VALUE_ONLY:
            assert ours[name].value == nvidia[name].value, name
        else:
            assert ours[name] == nvidia[name], name
    assert set(ours) - set(nvidia) <= MLCC_ONLY, sorted(set(ours) - set(nvidia))
    assert {"BATCHSIZE", "EXTRA_PARAMS"} & set(ours)


# (benchmark, --gpu, --nodes): the file the run manifests start from.
BY_GPU: List[Tuple[str, str, int, str]] = [
    ("bert", "a100", 1, "config_DGXA100_1x8x56x1.sh"),
    # NVIDIA's DGX H100 file for that size needs what the image lacks (image_lacks): the same
    # size's DGX A100 file, on DGX H100 nodes
    ("bert", "h100", 1, "config_DGXA100_1x8x56x1.sh"),
    ("maskrcnn", "a100", 1, "config_DGXA100.sh"),
    ("maskrcnn", "h100", 1, "config_DGXH100.sh"),
    ("ssd", "a100", 1, "config_DGXA100_001x08x032.sh"),
    ("ssd", "h100", 1, "config_DGXA100_001x08x032.sh"),
    # 4 nodes: H100 has NVIDIA's file for 32 GPUs; A100's nearest is its 8-node file (64 GPUs).
    ("ssd", "h100", 4, "config_DGXH100_004x08x008.sh"),
    ("ssd", "a100", 4, "config_DGXA100_008x08x004.sh"),
]


@pytest.mark.parametrize(("benchmark", "gpu", "nodes", "file"), BY_GPU)
def test_the_gpu_of_the_stack_picks_nvidias_file_for_that_gpu(
    kb: KnowledgeBase, benchmark: str, gpu: str, nodes: int, file: str
) -> None:
    capability = kb.gpus[gpu].compute_capability
    text = config_file(_launch(kb, benchmark), Size(nodes=nodes, gpus=8), benchmark, capability)
    assert _started_from(text) == file
    machine = "DGXH100" if gpu == "h100" else "DGXA100"
    assert f" on {machine} nodes:" in text.splitlines()[1]


def test_without_a_gpu_the_recipes_first_file_for_the_size_is_kept(kb: KnowledgeBase) -> None:
    """No --gpu: the choice is by size alone, as for v0.6 (the recipe's first file of that size)."""
    text = config_file(_launch(kb, "bert"), Size(nodes=1, gpus=8), "bert", None)
    assert _started_from(text) == "config_DGXA100_1x8x56x1.sh"


@pytest.mark.parametrize(
    ("gpu", "file", "batch"),
    [("a100", "config_DGXA100_1x8x56x1.sh", "56"), ("h100", "config_DGXA100_1x8x56x1.sh", "56")],
)
def test_mlcc_gen_run_manifests_for_a_gpu_start_from_that_gpus_file(
    cli, tmp_path: Path, gpu: str, file: str, batch: str
) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "bc"
    result = cli(
        "gen", "bert", "--gpu", gpu, "--gpus", "8", "--nodes", "1",
        "--only", "openshift", "--openshift-output", str(out),
    )  # fmt: skip
    assert result.code == 0, result.err
    [launch] = out.rglob("launch-1x8.yaml")
    text = yaml.safe_load(launch.read_text())["data"]["config_MLCC.sh"]
    assert _started_from(text) == file
    written = tmp_path / "config_MLCC.sh"
    written.write_text(text)
    assert sourced(written)["BATCHSIZE"].value == batch


def test_a_launch_whose_every_file_needs_what_the_image_lacks_is_refused(kb: KnowledgeBase) -> None:
    launch = _launch(kb, "bert")
    lacking = launch._replace(configs=tuple(c._replace(image_lacks="a flag") for c in launch.configs))
    refusal = re.escape("need what its image lacks: config_DGXA100_1x8x56x1.sh: a flag")
    with pytest.raises(UsageError, match=refusal):
        config_file(lacking, Size(nodes=1, gpus=8), "bert", None)


# NVIDIA's multi-node files the image runs: `mlcc gen --nodes N` writes an MPIJob for each size,
# and the configuration it mounts holds NVIDIA's values.
MULTI_NODE = [
    (b, implementation, file)
    for b, implementation, file in FILES
    if int(str(sourced(DATA / BENCHMARKS / b / "implementations" / implementation / file)["DGXNNODES"].value))
    > 1
]


def _gen_openshift(cli, out: Path, *args: str) -> Dict[str, object]:  # type: ignore[no-untyped-def]
    result = cli("gen", *args, "--only", "openshift", "--openshift-output", str(out))
    assert result.code == 0, result.err
    return {path.name: yaml.safe_load(path.read_text()) for path in out.rglob("*.yaml")}


def test_the_multi_node_files_are_the_ones_nvidia_ran_on_several_nodes() -> None:
    assert {(b, f) for b, _, f in MULTI_NODE} >= {
        ("ssd", "config_DGXA100_008x08x004.sh"),
        ("maskrcnn", "config_DGXA100_multi.sh"),
        ("bert", "config_DGXA100_8x8x48x1.sh"),
        ("bert", "config_DGXH100_4x8x48x1_pack.sh"),
    }


@pytest.mark.parametrize(("benchmark", "implementation", "file"), MULTI_NODE)
def test_at_every_multi_node_size_nvidia_ran_the_mpijob_mounts_nvidias_values(
    kb: KnowledgeBase, cli, tmp_path: Path, benchmark: str, implementation: str, file: str
) -> None:  # type: ignore[no-untyped-def]
    nvidia = _nvidia(benchmark, implementation, file)
    nodes, gpus = int(str(nvidia["DGXNNODES"].value)), int(str(nvidia["DGXNGPU"].value))
    gpu = "h100" if "H100" in file else "a100"
    found = _gen_openshift(
        cli, tmp_path / "bc", benchmark, "--round", "v2.1", "--gpu", gpu,
        "--gpus", str(gpus), "--nodes", str(nodes),
    )  # fmt: skip
    mpijob = found["mpijob.yaml"]
    assert isinstance(mpijob, dict) and mpijob["kind"] == "MPIJob"
    assert mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == nodes
    assert mpijob["spec"]["slotsPerWorker"] == gpus
    launch = found[f"launch-{nodes}x{gpus}.yaml"]
    assert isinstance(launch, dict)
    text = launch["data"]["config_MLCC.sh"]
    config = next(c for c in _launch(kb, benchmark).configs if c.file == file)
    if config.image_lacks is not None:
        assert _started_from(text) != file and f"#   {file}: " in text
        return
    assert _started_from(text) == file
    written = tmp_path / "config_MLCC.sh"
    written.write_text(text)
    ours = sourced(written)
    for name in sorted(set(nvidia) - NOT_COMPARED):
        if name in VALUE_ONLY:
            assert ours[name].value == nvidia[name].value, name
        else:
            assert ours[name] == nvidia[name], name


def test_ssd_on_four_a100_nodes_is_an_mpijob_from_nvidias_8_node_file(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 38's case: `mlcc gen ssd --round v2.1 --gpu a100 --gpus 8 --nodes 4` exited 2."""
    found = _gen_openshift(
        cli, tmp_path / "bc", "ssd", "--round", "v2.1", "--gpu", "a100", "--gpus", "8", "--nodes", "4"
    )
    text = found["launch-4x8.yaml"]["data"]["config_MLCC.sh"]  # type: ignore[index]
    assert _started_from(text) == "config_DGXA100_008x08x004.sh"
    assert "NVIDIA ran no 32-GPU configuration (8, 64, 1280, 2048 GPUs on DGXA100)" in text
    mpijob = found["mpijob.yaml"]
    specs = mpijob["spec"]["mpiReplicaSpecs"]  # type: ignore[index]
    assert specs["Worker"]["replicas"] == 4 and mpijob["spec"]["slotsPerWorker"] == 8  # type: ignore[index]
    script = specs["Launcher"]["template"]["spec"]["containers"][0]["command"][2]
    assert " -np 32 --map-by slot " in script and " -x DGXNNODES=4 " in script
    worker = specs["Worker"]["template"]["spec"]["containers"][0]
    assert {"name": "launch", "mountPath": "/workspace/ssd/config_MLCC.sh", "subPath": "config_MLCC.sh",
            "readOnly": True} in worker["volumeMounts"]  # fmt: skip


def test_each_rank_gets_torch_distributeds_variables_from_open_mpis(tmp_path: Path) -> None:
    """The rank script, run by a real bash as Open MPI's orted would start rank 13 of 32 (local
    rank 5 of 8): the entrypoint sees what torchrun would give it."""
    from mlcc.render.openshift.launch import MASTER_PORT, torch_rank_script

    script = torch_rank_script("env")
    ompi = {
        "OMPI_COMM_WORLD_RANK": "13",
        "OMPI_COMM_WORLD_SIZE": "32",
        "OMPI_COMM_WORLD_LOCAL_RANK": "5",
        "OMPI_COMM_WORLD_LOCAL_SIZE": "8",
        "MLCC_MASTER_ADDR": "worker-0",
        "PATH": "/usr/bin:/bin",
    }
    out = subprocess.run(["bash", "-c", script], env=ompi, capture_output=True, text=True, check=True).stdout
    seen = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    assert {k: seen[k] for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR")} == {
        "RANK": "13",
        "WORLD_SIZE": "32",
        "LOCAL_RANK": "5",
        "LOCAL_WORLD_SIZE": "8",
        "MASTER_ADDR": "worker-0",
    }
    assert seen["MASTER_PORT"] == str(MASTER_PORT)


@pytest.mark.parametrize("benchmark", ["maskrcnn", "bert", "ssd"])
def test_each_v2_1_pytorch_recipe_launches_one_rank_per_gpu_with_torchs_variables(
    kb: KnowledgeBase, benchmark: str
) -> None:
    build = kb.benchmarks[f"{benchmark}-v2.1"].build
    assert build is not None and build.mpi is not None
    assert (build.mpi.ranks, build.mpi.rank_env) == ("gpu", "torch")


@pytest.mark.parametrize("benchmark", ["maskrcnn", "bert", "ssd"])
def test_on_one_node_the_pod_starts_a_process_per_gpu_as_nvidias_run_with_docker_does(
    cli, tmp_path: Path, benchmark: str
) -> None:  # type: ignore[no-untyped-def]
    """run_with_docker.sh: ${TORCH_RUN} --nproc_per_node=${DGXNGPU} ./run_and_time.sh, TORCH_RUN
    being "python -m torch.distributed.run --standalone --no_python"; run_and_time.sh alone
    would train in one process on one GPU."""
    found = _gen_openshift(cli, tmp_path / "bc", benchmark, "--round", "v2.1", "--gpus", "4", "--nodes", "1")
    for kind in ("pod.yaml", "job.yaml"):
        document = found[kind]
        spec = document["spec"] if kind == "pod.yaml" else document["spec"]["template"]["spec"]  # type: ignore[index]
        assert spec["containers"][0]["command"] == [
            "python", "-m", "torch.distributed.run", "--standalone", "--no_python",
            "--nproc_per_node=4", "./run_and_time.sh",
        ]  # fmt: skip
