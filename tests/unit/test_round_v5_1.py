"""MLPerf Training v5.1's benchmarks, NVIDIA's seven implementations, one table per behaviour:

- launching: every config_*.sh NVIDIA published for each (GB200 and GB300 trays of 4 GPUs, the
  v5.0 DGX B200 files where the v5.0 code is the v5.1 code, v5.0's HGX H100 llama31_405b
  files and v5.0's DGX B200 and GB200 llama2_70b_lora files in the v5.0 recipes of those images)
  is in its recipe with its
  source, and at every size NVIDIA ran, the config_MLCC.sh mlcc writes for that size and GPU
  holds NVIDIA's values: both are sourced by a real bash (NVIDIA's files byte for byte under
  tests/data/nvidia-launch-v5.1 and nvidia-launch-v5.0, whose ORIGIN.md says where from);
- the arch lists source builds compile for: NVIDIA's (TransformerEngine's "100a;103a" or "100",
  HugeCTR's "80;90;100") without --gpu, the GPU's own sm with --gpu, arch-specific (100a,
  103a) where NVIDIA's list has it, plain 90 on H100/H200 (which NVIDIA's v5.1 list lacks);
- source builds beside the benchmark's code: retinanet's DALI operators (NVIDIA's builder
  stages) and dlrm_dcnv2's CUDA-aware hwloc, apt packages and SHARP environment, as NVIDIA's
  Dockerfiles have them;
- the entrypoint: NVIDIA's v5.x run_and_time.sh reads its configuration from the environment,
  so the image's wrapper sources the mounted config_MLCC.sh first.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
import yaml

from mlcc.errors import ConflictError
from mlcc.kb.model import KnowledgeBase, Launch, spell_target
from mlcc.render.openshift.launch import Size, config_file
from mlcc.resolve.request import build_request
from tests.conftest import REPO
from tests.nvidia_configs import Variable, sourced

V51 = REPO / "recipes" / "benchmarks" / "v5.1"
TEST_DATA = REPO / "tests" / "data"
DATA = {
    "441d65f4445cd59687466533fd9f55399136e7a4": ("training_results_v5.1", TEST_DATA / "nvidia-launch-v5.1"),
    "0fdc28f013256aea84fa36fdaf1e0fa46094b18c": ("training_results_v5.0", TEST_DATA / "nvidia-launch-v5.0"),
}
R51, R50 = list(DATA)


def _impl(benchmark: str, folder: str) -> str:
    return f"NVIDIA/benchmarks/{benchmark}/implementations/{folder}"


# (recipe id, commit, implementation folder, file): every file the v5.1 recipes carry. llama31_405b:
# its four folders' files (GB200 at 128, 640 and 1280 trays, GB300 at 32 and 128, DGX B200 at 64
# nodes; _fp4 and plain at 128 and 32). llama31_8b and llama2_70b_lora: GB200 and GB300 at 2, 18
# and 128. flux1: GB200 at 4, 18, 128, 288, GB300 at 4, 18, 128. retinanet, rgat and dlrm_dcnv2:
# their GB200 files and v5.0's DGX B200 file of the same code.
FILES: List[Tuple[str, str, str, str]] = [
    *[
        ("llama31_405b-v5.1", R51, _impl("llama31_405b", folder), file)
        for folder, file in [
            ("tyche_ngpu512_ngc25.09_nemo", "config_GB200_128x4x144xtp4pp8cp2_cg_fp4.sh"),
            ("tyche_ngpu512_ngc25.09_nemo", "config_GB200_128x4x144xtp4pp8cp2_cg.sh"),
            ("hsg_ngpu2560_ngc25.09_nemo", "config_GB200_640x4x24xtp4pp8cp2_cg_fp4.sh"),
            ("hsg_ngpu5120_ngc25.09_nemo", "config_GB200_1280x4x16xtp4pp8cp2_cg_fp4.sh"),
            ("theia_ngpu512_ngc25.09_nemo", "config_GB300_128x4x72xtp2pp8cp2_cg_fp4.sh"),
            ("theia_ngpu512_ngc25.09_nemo", "config_GB300_128x4x72xtp2pp8cp2_cg.sh"),
            ("tyche_ngpu512_ngc25.09_nemo", "config_GB300_32x4x288xtp2pp8cp2_cg_fp4.sh"),
            ("tyche_ngpu512_ngc25.09_nemo", "config_GB300_32x4x288xtp2pp8cp2_cg.sh"),
            ("tyche_ngpu512_ngc25.09_nemo", "config_DGXB200_64x8x144xtp4pp8cp2_cg.sh"),
        ]
    ],
    *[
        ("llama31_8b-v5.1", R51, _impl("llama31_8b", "nemo"), f"config_{system}_{size}.sh")
        for system in ("GB200", "GB300")
        for size in ("2x4x2xtp1pp1cp1_8b_fp4", "18x4x1xtp1pp1cp2_8b", "128x4x1xtp2pp1cp4_8b")
    ],
    *[
        ("llama2_70b_lora-v5.1", R51, _impl("llama2_70b_lora", "nemo"), file)
        for file in [
            "config_GB200_2x4x2xtp1pp1cp2_fp4.sh",
            "config_GB200_18x4x1xtp1pp1cp8.sh",
            "config_GB200_128x4x1xtp1pp1cp8.sh",
            "config_GB300_2x4x1xtp1pp1cp1_fp4.sh",
            "config_GB300_18x4x1xtp1pp1cp8.sh",
            "config_GB300_128x4x1xtp1pp1cp8.sh",
        ]
    ],
    *[
        ("flux1-v5.1", R51, _impl("flux1", folder), file)
        for folder, file in [
            ("tyche_ngpu16_ngc25.09_nemo", "config_GB200_04x04x32.sh"),
            ("tyche_ngpu72_ngc25.09_nemo", "config_GB200_18x04x32.sh"),
            ("tyche_ngpu512_ngc25.09_nemo", "config_GB200_128x04x16xtp4.sh"),
            ("hsg_ngpu1152_ngc25.09_nemo", "config_GB200_288x04x08xtp4.sh"),
            ("theia_ngpu16_ngc25.09_nemo", "config_GB300_04x04x64.sh"),
            ("theia_ngpu72_ngc25.09_nemo", "config_GB300_18x04x32.sh"),
            ("theia_ngpu512_ngc25.09_nemo", "config_GB300_128x04x16xtp4.sh"),
        ]
    ],
    *[
        ("retinanet-v5.1", R51, _impl("retinanet", folder), file)
        for folder, file in [
            ("tyche_ngpu8_ngc25.04_pytorch", "config_GB200_002x04x032.sh"),
            ("tyche_ngpu72_ngc25.04_pytorch", "config_GB200_018x04x004.sh"),
            ("tyche_ngpu512_ngc25.04_pytorch", "config_GB200_128x04x002.sh"),
        ]
    ],
    ("retinanet-v5.1", R50, _impl("retinanet", "nyx_n1_ngc25.04_pytorch"), "config_DGXB200_001x08x032.sh"),
    ("rgat-v5.1", R51, _impl("rgat", "tyche_ngpu8_ngc25.03_dgl"), "config_GB200_2x4x4096.sh"),
    ("rgat-v5.1", R51, _impl("rgat", "tyche_ngpu72_ngc25.03_dgl"), "config_GB200_18x4x1024.sh"),
    ("rgat-v5.1", R51, _impl("rgat", "tyche_ngpu256_ngc25.03_dgl"), "config_GB200_64x4x1024.sh"),
    ("rgat-v5.1", R50, _impl("rgat", "nyx_n1_ngc25.03_dgl"), "config_DGXB200_1x8x4096.sh"),
    ("dlrm_dcnv2-v5.1", R51, _impl("dlrm_dcnv2", "hugectr"), "config_GB200_2x4x6912.sh"),
    ("dlrm_dcnv2-v5.1", R51, _impl("dlrm_dcnv2", "hugectr"), "config_GB200_16x4x2112.sh"),
    ("dlrm_dcnv2-v5.1", R50, _impl("dlrm_dcnv2", "hugectr"), "config_DGXB200_1x8x6912.sh"),
    # HGX H100 has only v5.0 files, of another image (NGC 25.01, NeMo v2.2.0): a v5.0 recipe
    *[
        ("llama31_405b-v5.0", R50, _impl("llama31_405b", f"eos-dfw_n{nodes}_ngc25.01_nemo"), file)
        for nodes, file in [
            (64, "config_DGXH100_64x8x288xtp8pp8cp2.sh"),
            (256, "config_DGXH100_256x8x72xtp8pp8cp2.sh"),
            (304, "config_DGXH100_304x8x64xtp8pp8cp2.sh"),
            (320, "config_DGXH100_320x8x56xtp8pp8cp2.sh"),
            (1024, "config_DGXH100_1024x8x24xtp8pp8cp2.sh"),
        ]
    ],
    # DGX B200 has only v5.0 llama2_70b_lora files, of another image (NGC 25.04, NeMo
    # 25.04-alpha.rc1): a v5.0 recipe, with the GB200 files of the same folders' code
    *[
        ("llama2_70b_lora-v5.0", R50, _impl("llama2_70b_lora", f"{folder}_ngc25.04_nemo"), file)
        for folder, file in [
            ("nyx_n1", "config_DGXB200_1x8x1xtp1pp1cp1.sh"),
            ("tyche_ngpu8", "config_GB200_2x4x1xtp1pp1cp1.sh"),
            ("tyche_ngpu72", "config_GB200_18x4x1xtp1pp1cp8.sh"),
            ("tyche_ngpu144", "config_GB200_36x4x1xtp1pp1cp8.sh"),
            ("tyche_ngpu512", "config_GB200_128x4x1xtp1pp1cp8.sh"),
        ]
    ],
]
BENCHMARKS = sorted({f[0] for f in FILES})
# What is not compared: Slurm's walltime (and the minutes it is made of) and the file's own name
# (DGXSYSTEM): an OpenShift run has no wall-time limit from the file, and mlcc's file is
# config_MLCC.sh. flux1's EXP_NAME is made from the date at sourcing. retinanet's files set a
# DGX's socket values (DGXNSOCKET=2 DGXSOCKETCORES=64 DGXHT=2) on GB200 trays too: mlcc writes
# the node's own (the round's systems).
SLURM = {"DGXSYSTEM", "WALLTIME", "WALLTIME_RUNANDTIME"}
NOT_COMPARED = {
    "flux1-v5.1": SLURM | {"EXP_NAME"},
    "retinanet-v5.1": SLURM | {"DGXSOCKETCORES", "DGXNSOCKET", "DGXHT"},
}
# NVIDIA's files export the system size, mlcc's file sets it (the value counts, not the export);
# mlcc's file also sets the socket layout its launcher binds by.
VALUE_ONLY = {"DGXNNODES", "DGXNGPU"}
# (v5.0's DGX H100 files leave DGXNGPU to run.sub's default, 8)
MLCC_ONLY = {"DGXIBDEVICES", "BIND_LAUNCH", "DGXSOCKETCORES", "DGXNSOCKET", "DGXHT", "DGXNGPU"}
GPU_OF_SHAPE = {"GB200": "gb200", "GB300": "gb300", "DGXB200": "b200", "HGXH100": "h100"}
# NVIDIA's v5.0 files call Eos-dfw's HGX H100 nodes DGXH100; recipes/systems.yaml's DGXH100 is
# the DGX H100 of v2.1 (56-core Xeons), so the recipe names this machine HGXH100
SHAPE_OF_SYSTEM = {"DGXH100": "HGXH100"}


def _launch(kb: KnowledgeBase, benchmark: str) -> Launch:
    build = kb.benchmarks[benchmark].build
    assert build is not None and build.launch is not None
    return build.launch


def _nvidia(commit: str, folder: str, file: str) -> Dict[str, Variable]:
    return sourced(DATA[commit][1] / folder.removeprefix("NVIDIA/benchmarks/") / file)


def _shape_name(file: str) -> str:
    system = file.split("_")[1]
    return SHAPE_OF_SYSTEM.get(system, system)


def _size(nvidia: Dict[str, Variable], file: str) -> Size:
    """The nodes and GPUs per node NVIDIA's file sets (DGXNGPU: run.sub's default 8 where the
    file leaves it, as its name says)."""
    gpus = nvidia["DGXNGPU"].value if "DGXNGPU" in nvidia else file.split("_")[2].split("x")[1]
    return Size(nodes=int(str(nvidia["DGXNNODES"].value)), gpus=int(str(gpus)))


def _started_from(text: str) -> str:
    line = next(x for x in text.splitlines() if x.startswith("# Started from NVIDIA's "))
    return line.split()[4]


@pytest.mark.parametrize("commit", list(DATA))
def test_every_kept_file_is_listed_with_its_upstream_blob(commit: str) -> None:
    folder = DATA[commit][1]
    rows = dict(re.findall(r"^\| `([^`]+)` \| `([0-9a-f]{40})` \|", (folder / "ORIGIN.md").read_text(), re.M))
    files = {str(p.relative_to(folder)) for p in folder.rglob("*.sh")}
    assert files and set(rows) == files
    for name, blob in rows.items():
        data = (folder / name).read_bytes()
        assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob, name
    assert (
        f"github.com/mlcommons/{DATA[commit][0]} at commit `{commit}`" in (folder / "ORIGIN.md").read_text()
    )


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_each_v5_x_recipe_carries_nvidias_files_with_their_sources(kb: KnowledgeBase, benchmark: str) -> None:
    launch = _launch(kb, benchmark)
    ours = [(commit, folder, file) for b, commit, folder, file in FILES if b == benchmark]
    assert [c.file for c in launch.configs] == [file for _, _, file in ours]
    for config, (commit, folder, file) in zip(launch.configs, ours):
        assert config.source == f"github:mlcommons/{DATA[commit][0]} @{commit} {folder}/{file}"
        assert (config.nodes, config.gpus_per_node) == _size(_nvidia(commit, folder, file), file)
        shape = launch.shape(config.node_shape)
        assert shape.name == _shape_name(file)
        assert shape.gpu == GPU_OF_SHAPE[shape.name]
        assert shape.gpu_capability == kb.gpus[GPU_OF_SHAPE[shape.name]].compute_capability


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_the_node_shapes_are_the_rounds_systems(kb: KnowledgeBase, benchmark: str) -> None:
    """A GB200 or GB300 tray is 4 GPUs and two 72-core Grace; a DGX B200 8 GPUs and two 56-core
    Xeons (recipes/rounds/v5.1.yaml and v5.0.yaml, from NVIDIA's system JSONs)."""
    for shape in _launch(kb, benchmark).node_shapes:
        round_ = kb.benchmarks[benchmark].round or ""
        named = {v: k for k, v in SHAPE_OF_SYSTEM.items()}.get(shape.name, shape.name)
        system = kb.round(round_).system(named) or kb.round("v5.0").system(named)
        assert system is not None, shape.name
        assert (shape.gpus, shape.sockets, shape.socket_cores, shape.hyperthreads, shape.gpu) == (
            system.gpus,
            system.sockets,
            system.socket_cores,
            system.hyperthreads,
            system.gpu,
        )


@pytest.mark.parametrize(("benchmark", "commit", "folder", "file"), FILES)
def test_at_every_v5_x_size_nvidia_ran_mlcc_writes_nvidias_values(
    kb: KnowledgeBase, tmp_path: Path, benchmark: str, commit: str, folder: str, file: str
) -> None:
    """NVIDIA's file (with the config_common*.sh it sources) and the config_MLCC.sh mlcc writes
    for the same size on the same GPU, both sourced by a real bash."""
    nvidia = _nvidia(commit, folder, file)
    size = _size(nvidia, file)
    capability = kb.gpus[GPU_OF_SHAPE[_shape_name(file)]].compute_capability
    launch = _launch(kb, benchmark)
    text = config_file(launch, size, benchmark.rsplit("-", 1)[0], capability)
    if _started_from(text) != file:
        # the same size's twin without FP4 (llama31_405b): a run starts from the _fp4 file
        # NVIDIA ran; this one's values are in the recipe as NVIDIA's file sets them
        assert _started_from(text) == file.replace(".sh", "_fp4.sh")
        config = next(c for c in launch.configs if c.file == file)
        skipped = NOT_COMPARED.get(benchmark, SLURM) | VALUE_ONLY | MLCC_ONLY
        assert {**dict(config.settings), **dict(config.exports)} == {
            name: variable.value for name, variable in nvidia.items() if name not in skipped
        }
        return
    written = tmp_path / "config_MLCC.sh"
    written.write_text(text)
    ours = sourced(written)
    compared = set(nvidia) - NOT_COMPARED.get(benchmark, SLURM)
    assert compared <= set(ours), sorted(compared - set(ours))
    for name in sorted(compared):
        if name in VALUE_ONLY:
            assert ours[name].value == nvidia[name].value, name
        else:
            assert ours[name] == nvidia[name], name
    assert set(ours) - set(nvidia) <= MLCC_ONLY, sorted(set(ours) - set(nvidia))


# (benchmark, --gpu, nodes x GPUs per node): the file a run of that size starts from. The 128-tray
# llama31_405b run starts from the _fp4 file NVIDIA ran (README-<system>.md), not the plain one.
BY_GPU: List[Tuple[str, str, int, int, str]] = [
    ("llama31_8b", "gb200", 18, 4, "config_GB200_18x4x1xtp1pp1cp2_8b.sh"),
    ("llama31_8b", "gb300", 18, 4, "config_GB300_18x4x1xtp1pp1cp2_8b.sh"),
    ("llama31_405b", "gb200", 128, 4, "config_GB200_128x4x144xtp4pp8cp2_cg_fp4.sh"),
    ("llama31_405b", "gb300", 32, 4, "config_GB300_32x4x288xtp2pp8cp2_cg_fp4.sh"),
    ("llama31_405b", "b200", 64, 8, "config_DGXB200_64x8x144xtp4pp8cp2_cg.sh"),
    ("llama2_70b_lora", "gb200", 18, 4, "config_GB200_18x4x1xtp1pp1cp8.sh"),
    ("flux1", "gb200", 18, 4, "config_GB200_18x04x32.sh"),
    ("retinanet", "gb200", 18, 4, "config_GB200_018x04x004.sh"),
    ("retinanet", "b200", 1, 8, "config_DGXB200_001x08x032.sh"),
    ("rgat", "gb200", 18, 4, "config_GB200_18x4x1024.sh"),
    # dlrm_dcnv2: NVIDIA ran 8 and 64 GB200 GPUs; 72 is nearest to 64
    ("dlrm_dcnv2", "gb200", 18, 4, "config_GB200_16x4x2112.sh"),
]


@pytest.mark.parametrize(("benchmark", "gpu", "nodes", "gpus", "file"), BY_GPU)
def test_the_gpu_of_the_stack_picks_nvidias_file_for_that_gpu(
    kb: KnowledgeBase, benchmark: str, gpu: str, nodes: int, gpus: int, file: str
) -> None:
    capability = kb.gpus[gpu].compute_capability
    text = config_file(_launch(kb, f"{benchmark}-v5.1"), Size(nodes=nodes, gpus=gpus), benchmark, capability)
    assert _started_from(text) == file


def _gen_openshift(cli, out: Path, *args: str) -> Dict[str, object]:  # type: ignore[no-untyped-def]
    result = cli("gen", *args, "--only", "openshift", "--openshift-output", str(out))
    assert result.code == 0, result.err
    return {path.name: yaml.safe_load(path.read_text()) for path in out.rglob("*.yaml")}


def test_gen_on_18_gb200_trays_runs_an_mpijob_from_nvidias_18_tray_file(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 37's case: `mlcc gen llama31_8b --round v5.1 --gpu gb200 --gpus 4 --nodes 18` (72
    GPUs) starts from NVIDIA's config_GB200_18x4x1xtp1pp1cp2_8b.sh, one rank per GPU."""
    size = ("--gpu", "gb200", "--gpus", "4", "--nodes", "18")
    found = _gen_openshift(cli, tmp_path / "oc", "llama31_8b", "--round", "v5.1", *size)
    mpijob = found["mpijob.yaml"]
    assert isinstance(mpijob, dict) and mpijob["kind"] == "MPIJob"
    assert mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 18
    assert mpijob["spec"]["slotsPerWorker"] == 4
    launch = found["launch-18x4.yaml"]
    assert isinstance(launch, dict)
    text = launch["data"]["config_MLCC.sh"]
    assert _started_from(text) == "config_GB200_18x4x1xtp1pp1cp2_8b.sh"
    written = tmp_path / "config_MLCC.sh"
    written.write_text(text)
    values = sourced(written)
    assert (values["CONTEXT_PARALLEL"].value, values["MINIBS"].value) == ("2", "1")


# ============================================================================= resolving

# (benchmark, NGC base its Dockerfile FROMs, CUDA major.minor of that release): NVIDIA's stack
NGC = [
    ("llama31_405b", "ngc-pytorch-25.09", "13.0"),
    ("llama31_8b", "ngc-pytorch-25.09", "13.0"),
    ("llama2_70b_lora", "ngc-pytorch-25.09", "13.0"),
    ("flux1", "ngc-pytorch-25.09", "13.0"),
    ("retinanet", "ngc-pytorch-25.04", "12.9"),
    ("rgat", "ngc-dgl-25.03", "12.8"),
    ("dlrm_dcnv2", "ngc-pytorch-25.03", "12.8"),
]
# The GPUs a benchmark resolves for, each with its host arch: Grace trays are aarch64, the
# DGX/HGX boards x86_64; GB300 (sm_103) needs CUDA >= 12.9, which NGC 25.03 lacks.
GPU_ARCH = {"gb200": "aarch64", "gb300": "aarch64", "b200": "x86_64", "h100": "x86_64"}


@pytest.mark.parametrize(
    ("benchmark", "base", "cuda", "gpu"),
    [
        (b, base, cuda, gpu)
        for b, base, cuda in NGC
        for gpu in GPU_ARCH
        if not (gpu == "gb300" and cuda == "12.8")
    ],
)
def test_v5_1_resolves_to_nvidias_ngc_image_for_the_gpu(
    kb: KnowledgeBase, resolver, benchmark: str, base: str, cuda: str, gpu: str
) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(build_request(kb, benchmark, round_="v5.1", gpu=gpu))
    assert stack.benchmark.name == f"{benchmark}-v5.1"
    assert stack.base.name == base
    assert stack.cuda is not None and stack.cuda.minor == cuda
    assert stack.arch.name == GPU_ARCH[gpu]
    assert stack.gpu_capability == kb.gpus[gpu].compute_capability


@pytest.mark.parametrize("benchmark", ["rgat", "dlrm_dcnv2"])
def test_on_gb300_ngc_25_03_is_refused_for_its_cuda(kb: KnowledgeBase, resolver, benchmark: str) -> None:  # type: ignore[no-untyped-def]
    """NGC 25.03's CUDA 12.8 has no sm_103 (HugeCTR's SM list has no 103 either): the refusal
    names the CUDA GB300 needs."""
    with pytest.raises(ConflictError, match=r"sm_103.*CUDA >= 12\.9"):
        resolver.resolve(build_request(kb, benchmark, round_="v5.1", gpu="gb300"))


def test_the_h100_implementation_nvidia_published_is_v5_0s(kb: KnowledgeBase, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(build_request(kb, "llama31_405b", round_="v5.0", gpu="h100"))
    assert (stack.benchmark.name, stack.base.name, stack.arch.name) == (
        "llama31_405b-v5.0",
        "ngc-pytorch-25.01",
        "x86_64",
    )


@pytest.mark.parametrize(("gpu", "arch"), [("b200", "x86_64"), ("gb200", "aarch64")])
def test_llama2_70b_lora_v5_0_resolves_to_nvidias_ngc_25_04_image_for_the_gpu(
    kb: KnowledgeBase, resolver, gpu: str, arch: str
) -> None:  # type: ignore[no-untyped-def]
    """NVIDIA's v5.0 llama2_70b_lora (DGX B200, GB200): NGC PyTorch 25.04 (CUDA 12.9), the
    GPU's host arch and its sm; TransformerEngine is the base's (TE_REVISION=SKIP), so no arch
    list is set for a build of it."""
    stack = resolver.resolve(build_request(kb, "llama2_70b_lora", round_="v5.0", gpu=gpu))
    assert (stack.benchmark.name, stack.base.name, stack.arch.name) == (
        "llama2_70b_lora-v5.0",
        "ngc-pytorch-25.04",
        arch,
    )
    assert stack.cuda is not None and stack.cuda.minor == "12.9"
    assert stack.gpu_capability == kb.gpus[gpu].compute_capability == "10.0"
    assert "NVTE_CUDA_ARCHS" not in dict(kb.benchmarks["llama2_70b_lora-v5.0"].build.env)  # type: ignore[union-attr]


def test_gen_on_a_dgx_b200_starts_llama2_70b_lora_from_nvidias_v5_0_file(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 37's B200 case: `mlcc gen llama2_70b_lora --round v5.0 --gpu b200 --gpus 8 --nodes 1`
    starts from NVIDIA's config_DGXB200_1x8x1xtp1pp1cp1.sh: one amd64 pod of 8 GPUs whose
    torch.distributed.run starts a process per GPU (run.sub's srun --ntasks-per-node=8)."""
    size = ("--gpu", "b200", "--gpus", "8", "--nodes", "1")
    found = _gen_openshift(cli, tmp_path / "oc", "llama2_70b_lora", "--round", "v5.0", *size)
    assert "mpijob.yaml" not in found
    pod = found["job.yaml"]["spec"]["template"]["spec"]  # type: ignore[index]
    assert pod["nodeSelector"]["kubernetes.io/arch"] == "amd64"
    [container] = pod["containers"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 8
    assert container["command"][-3:] == ["--no_python", "--nproc_per_node=8", "./run_with_config.sh"]
    text = found["launch-1x8.yaml"]["data"]["config_MLCC.sh"]  # type: ignore[index]
    assert _started_from(text) == "config_DGXB200_1x8x1xtp1pp1cp1.sh"


# (benchmark, NVIDIA's file a 72-GPU GB200 run starts from): its 18-tray file, or the nearest
# (dlrm_dcnv2 ran 8 and 64 GPUs)
AT_18_TRAYS = [
    ("llama31_405b", "config_GB200_128x4x144xtp4pp8cp2_cg_fp4.sh"),
    ("llama31_8b", "config_GB200_18x4x1xtp1pp1cp2_8b.sh"),
    ("llama2_70b_lora", "config_GB200_18x4x1xtp1pp1cp8.sh"),
    ("flux1", "config_GB200_18x04x32.sh"),
    ("retinanet", "config_GB200_018x04x004.sh"),
    ("rgat", "config_GB200_18x4x1024.sh"),
    ("dlrm_dcnv2", "config_GB200_16x4x2112.sh"),
]


@pytest.mark.parametrize(("benchmark", "file"), AT_18_TRAYS)
def test_every_v5_1_benchmark_runs_on_18_gb200_trays_from_nvidias_file(
    cli, tmp_path: Path, benchmark: str, file: str
) -> None:  # type: ignore[no-untyped-def]
    size = ("--gpu", "gb200", "--gpus", "4", "--nodes", "18")
    found = _gen_openshift(cli, tmp_path / "oc", benchmark, "--round", "v5.1", *size)
    mpijob = found["mpijob.yaml"]
    assert mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 18  # type: ignore[index]
    worker = mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]  # type: ignore[index]
    assert worker["nodeSelector"]["kubernetes.io/arch"] == "arm64"
    text = found["launch-18x4.yaml"]["data"]["config_MLCC.sh"]  # type: ignore[index]
    assert _started_from(text) == file


def test_the_nemo_benchmarks_also_get_a_pytorchjob_of_a_pod_per_node(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """NVIDIA's NeMo run_and_time.sh runs under torchrun: a Kubeflow PyTorchJob of 18 pods (a
    Master and 17 Workers) each starts torch.distributed.run with 4 processes of the entrypoint,
    with the same configuration mounted; it validates against the operator's CRD schema, and
    its pod template is a valid Pod."""
    from tests.kube_schemas import kubernetes_errors, object_errors, schema_store

    size = ("--gpu", "gb200", "--gpus", "4", "--nodes", "18")
    found = _gen_openshift(cli, tmp_path / "oc", "llama31_8b", "--round", "v5.1", *size)
    job = found["pytorchjob.yaml"]
    assert isinstance(job, dict) and (job["apiVersion"], job["kind"]) == ("kubeflow.org/v1", "PyTorchJob")
    assert job["spec"]["nprocPerNode"] == "4"
    replicas = job["spec"]["pytorchReplicaSpecs"]
    assert (replicas["Master"]["replicas"], replicas["Worker"]["replicas"]) == (1, 17)
    spec = replicas["Worker"]["template"]["spec"]
    [container] = spec["containers"]
    assert container["name"] == "pytorch"  # the container the operator configures
    # after the run-seed step (python -c <script> SEED: test_every_rank_of_a_run_sees_one_seed.py)
    assert container["command"][3:] == [
        "SEED",
        "python",
        "-m",
        "torch.distributed.run",
        "--no_python",
        "./run_with_config.sh",
    ]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 4
    assert {"name": "launch", "mountPath": "/workspace/llm/config_MLCC.sh", "subPath": "config_MLCC.sh",
            "readOnly": True} in container["volumeMounts"]  # fmt: skip
    assert object_errors(job, schema_store()) == []
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "worker"}, "spec": spec}
    assert kubernetes_errors(pod) == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c.update(name="torch"), "no container is named pytorch"),
        (
            lambda c: c["resources"]["limits"].update({"nvidia.com/gpu": 2}),
            "nprocPerNode is 4 but each pod has 2",
        ),
    ],
)
def test_lint_refuses_a_pytorchjob_the_operator_would_misrun(
    cli, tmp_path: Path, change, message: str
) -> None:  # type: ignore[no-untyped-def]
    import copy

    from mlcc.lint.kube import object_findings
    from tests.kube_schemas import schema_store

    size = ("--gpu", "gb200", "--gpus", "4", "--nodes", "2")
    job = _gen_openshift(cli, tmp_path / "oc", "rgat", "--round", "v5.1", *size)["pytorchjob.yaml"]
    assert isinstance(job, dict)
    assert [f for f in object_findings(job, schema_store(), "4") if f.rule == "KS013"] == []
    broken = copy.deepcopy(job)
    change(broken["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0])
    found = [f.message for f in object_findings(broken, schema_store(), "4") if f.rule == "KS013"]
    assert any(message in m for m in found), found


def test_hugectrs_mpi_launch_gets_no_pytorchjob(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    size = ("--gpu", "gb200", "--gpus", "4", "--nodes", "2")
    found = _gen_openshift(cli, tmp_path / "oc", "dlrm_dcnv2", "--round", "v5.1", *size)
    assert "mpijob.yaml" in found and "pytorchjob.yaml" not in found


def test_each_dataset_is_a_claim_mounted_where_nvidias_config_mounts_sh_mounts_it(
    cli, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """llama31_405b reads its C4 data at /preproc_data, the tokenizer in its work directory and
    Meta's checkpoint at /load_checkpoints (config_mounts.sh): each is a PVC every worker
    mounts, and --storage-class writes all three claims."""
    size = (
        "--gpu",
        "gb200",
        "--gpus",
        "4",
        "--nodes",
        "128",
        "--storage-class",
        "fast",
        "--data-size",
        "10Ti",
    )
    found = _gen_openshift(cli, tmp_path / "oc", "llama31_405b", "--round", "v5.1", *size)
    mpijob = found["mpijob.yaml"]
    spec = mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]  # type: ignore[index]
    claims = {
        v["name"]: v["persistentVolumeClaim"]["claimName"]
        for v in spec["volumes"]
        if "persistentVolumeClaim" in v
    }
    mounts = {m["name"]: m["mountPath"] for m in spec["containers"][0]["volumeMounts"]}
    assert {mounts[name]: claim for name, claim in claims.items()} == {
        "/preproc_data": "llama31-405b-v5-1-data",
        "/workspace/llm/nemo_tokenizer": "llama31-405b-v5-1-llama31-tokenizer",
        "/load_checkpoints": "llama31-405b-v5-1-llama31-405b-checkpoint",
    }
    volumes = found["volumes.yaml"]
    written = {item["metadata"]["name"] for item in volumes["items"]}  # type: ignore[index]
    assert written == set(claims.values())


def test_without_a_round_a_benchmark_of_v5_0_and_v5_1_means_v5_1s(kb: KnowledgeBase) -> None:
    """llama31_405b has a v5.0 recipe (NVIDIA's HGX H100 image) and a v5.1 one; the default round
    (v0.6) holds neither, so the name means the newest round's."""
    from mlcc.resolve.request import find_benchmark

    assert kb.rounds_of("llama31_405b") == ("v5.0", "v5.1")
    assert find_benchmark(kb, "llama31_405b") == "llama31_405b-v5.1"
    assert find_benchmark(kb, "llama31_405b", "v5.0") == "llama31_405b-v5.0"
    assert kb.rounds_of("llama2_70b_lora") == ("v5.0", "v5.1")
    assert find_benchmark(kb, "llama2_70b_lora") == "llama2_70b_lora-v5.1"
    assert find_benchmark(kb, "llama2_70b_lora", "v5.0") == "llama2_70b_lora-v5.0"


# ============================================================================= arch lists


@pytest.mark.parametrize(
    ("name", "value", "capability", "narrowed"),
    [
        ("NVTE_CUDA_ARCHS", "100a;103a", "10.0", "100a"),
        ("NVTE_CUDA_ARCHS", "100a;103a", "10.3", "103a"),
        ("NVTE_CUDA_ARCHS", "100a;103a", "9.0", "90"),  # NVIDIA's v5.1 list has no sm_90
        ("NVTE_CUDA_ARCHS", "100", "10.3", "103"),
        ("NVTE_CUDA_ARCHS", "90;100", "9.0", "90"),
        ("SM", "80;90;100", "10.0", "100"),
        ("SM", "80;90;100", "9.0", "90"),
        ("TORCH_CUDA_ARCH_LIST", "7.0 8.0 8.6 9.0+PTX", "9.0", "9.0"),
    ],
)
def test_an_arch_list_is_narrowed_to_the_gpu_in_its_own_spelling(
    kb: KnowledgeBase, name: str, value: str, capability: str, narrowed: str
) -> None:
    # the spelling the recipes declare for the variable (a v5.1 recipe's build.arch_list_env, or
    # recipes/gpus.yaml's for PyTorch's list)
    declared = dict(kb.arch_list_env.variables)
    for bench in kb.benchmarks.values():
        declared.update(bench.build.arch_list_env if bench.build else ())
    assert spell_target(declared[name], capability, value) == narrowed


def _image_env(cli, tmp_path: Path, benchmark: str, gpu: Optional[str], name: str) -> str:  # type: ignore[no-untyped-def]
    args = ["gen", benchmark, "--round", "v5.1", "-o", str(tmp_path / "gen"), "--only", "dockerfile"]
    result = cli(*args, *(["--gpu", gpu] if gpu else []))
    assert result.code == 0, result.err
    [dockerfile] = (tmp_path / "gen").rglob("Dockerfile")
    values = set(re.findall(rf'\b{name}="([^"]*)"', dockerfile.read_text()))
    assert len(values) == 1, values
    return values.pop()


def test_flux1_builds_rapidyaml_at_nvidias_tag_with_its_submodule_and_pinned_build_tools(
    cli, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    result = cli("gen", "flux1", "--round", "v5.1", "-o", str(tmp_path), "--only", "dockerfile")
    assert result.code == 0, result.err
    scripts = {p.read_text() for p in tmp_path.rglob("git-pip.sh")}
    assert len(scripts) == 1  # one file, COPY'd before each of its steps
    dockerfile = next(tmp_path.rglob("Dockerfile")).read_text()
    assert "swig==4.3.1.post0" in dockerfile and "cmake-build-extension==0.6.1" in dockerfile
    recipe = (V51 / "flux1.yaml").read_text()
    assert 'commit: ["47ec2fa184209687c20fd5bc05621e1cb1200311"]' in recipe
    assert 'pip_args: ["--no-build-isolation ."]' in recipe
    assert "submodule update --init --recursive" in scripts.pop()


@pytest.mark.parametrize(
    ("benchmark", "gpu", "name", "value"),
    [
        ("llama31_405b", None, "NVTE_CUDA_ARCHS", "100a;103a"),
        ("llama31_405b", "gb200", "NVTE_CUDA_ARCHS", "100a"),
        ("llama31_405b", "gb300", "NVTE_CUDA_ARCHS", "103a"),
        ("llama31_405b", "h100", "NVTE_CUDA_ARCHS", "90"),
        ("llama2_70b_lora", "h200", "NVTE_CUDA_ARCHS", "90"),
        ("flux1", None, "NVTE_CUDA_ARCHS", "100"),
        ("flux1", "gb300", "NVTE_CUDA_ARCHS", "103"),
        ("dlrm_dcnv2", None, "SM", "80;90;100"),
        ("dlrm_dcnv2", "h100", "SM", "90"),
    ],
)
def test_the_image_builds_te_and_hugectr_for_the_gpu_asked(
    cli, tmp_path: Path, benchmark: str, gpu: Optional[str], name: str, value: str
) -> None:  # type: ignore[no-untyped-def]
    assert _image_env(cli, tmp_path, benchmark, gpu, name) == value


# ============================================================================= source builds


def _gb200_image(cli, tmp_path: Path, benchmark: str) -> Tuple[str, Path]:  # type: ignore[no-untyped-def]
    """The generated Dockerfile's text and its folder (the scripts it COPYs are beside it)."""
    args = ["gen", benchmark, "--round", "v5.1", "--gpu", "gb200", "-o", str(tmp_path / "gen")]
    result = cli(*args, "--only", "dockerfile")
    assert result.code == 0, result.err
    [dockerfile] = (tmp_path / "gen").rglob("Dockerfile")
    return dockerfile.read_text(), dockerfile.parent


def _stand_in(folder: Path, name: str) -> None:
    """A tool that only logs how it was called."""
    tool = folder / name
    tool.write_text(f'#!/bin/bash\necho {name} "$@" >> "$LOG"\n')
    tool.chmod(0o755)


def test_retinanet_builds_nvidias_dali_operators_into_usr_local_lib_before_any_other_step(
    cli, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """NVIDIA's two builder stages build FROM the base: here the operators' step comes first,
    right after the source, and the script, run by a real bash beside stand-ins for cmake, make
    and install, builds each csrc/ folder outside the work directory and installs only the
    library dali.py loads from /usr/local/lib."""
    dockerfile, folder = _gb200_image(cli, tmp_path, "retinanet")
    source = dockerfile.index("cp -a /tmp/mlcc-source/")
    run = dockerfile.index("RUN bash /opt/mlcc/scripts/dali-ops-build.sh")
    assert source < run < dockerfile.index(": pip install Cython") < dockerfile.index("nccl-build.sh")
    tools, work = tmp_path / "tools", tmp_path / "work"
    tools.mkdir()
    (work / "csrc").mkdir(parents=True)
    _stand_in(tools, "cmake")
    _stand_in(tools, "make")
    _stand_in(tools, "install")
    log = tmp_path / "log"
    subprocess.run(
        ["bash", str(folder / "scripts" / "dali-ops-build.sh")],
        cwd=work,
        env={"PATH": f"{tools}:/usr/bin:/bin", "LOG": str(log), "TMPDIR": str(tmp_path)},
        check=True,
    )
    calls = [line.split() for line in log.read_text().splitlines()]
    assert [c[:3] for c in calls] == [
        ["cmake", "-S", "csrc/dali_box_iou"],
        ["make", "-C", calls[0][4]],
        ["install", "-m", "0755"],
        ["cmake", "-S", "csrc/dali_proposal_matcher"],
        ["make", "-C", calls[3][4]],
        ["install", "-m", "0755"],
    ]
    assert calls[2][3:] == [f"{calls[0][4]}/lib_box_iou.so", "/usr/local/lib/lib_box_iou.so"]
    assert calls[5][3:] == [
        f"{calls[3][4]}/lib_proposal_matcher.so",
        "/usr/local/lib/lib_proposal_matcher.so",
    ]
    assert not Path(calls[0][4]).exists() and not Path(calls[3][4]).exists()  # the build folders go
    assert sorted(p.name for p in work.rglob("*")) == ["csrc"]  # nothing left in the work directory


# NVIDIA's Dockerfile (hugectr/): its apt-get install for HugeCTR's build, its hwloc configure
# line and its SHARP environment
HUGECTR_APT = (
    "clang-format libboost-serialization-dev libtbb-dev libaio-dev libgflags-dev zlib1g-dev"
    " libbz2-dev libsnappy-dev liblz4-dev libzstd-dev libssl-dev libsasl2-dev"
)
HWLOC_CONFIGURE = (
    './configure CPPFLAGS="-I/usr/local/cuda/include/ -L/usr/local/cuda/lib64/"'
    ' LDFLAGS="-L/usr/local/cuda/lib64" --enable-cuda\n'
)
SHARP_ENV = {
    "SHARP_COLL_NUM_COLL_GROUP_RESOURCE_ALLOC_THRESHOLD": "0",
    "SHARP_COLL_LOCK_ON_COMM_INIT": "1",
    "SHARP_COLL_LOG_LEVEL": "3",
    "HCOLL_ENABLE_MCAST": "0",
}


def test_dlrm_builds_nvidias_cuda_aware_hwloc_from_the_checked_release_tarball_before_hugectr(
    cli, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    dockerfile, folder = _gb200_image(cli, tmp_path, "dlrm_dcnv2")
    packages = next(line for line in dockerfile.splitlines() if "apt-get install" in line)
    assert HUGECTR_APT in packages
    for name, value in SHARP_ENV.items():
        assert f'{name}="{value}"' in dockerfile
    run = dockerfile.index("RUN bash /opt/mlcc/scripts/hwloc-build.sh")
    assert dockerfile.index("cp -a /tmp/mlcc-source/") < run < dockerfile.index("hugectr-build.sh")
    script = (folder / "scripts" / "hwloc-build.sh").read_text()
    subprocess.run(["bash", "-n", str(folder / "scripts" / "hwloc-build.sh")], check=True)
    assert "version=2.4.1\n" in script and HWLOC_CONFIGURE in script
    hpcx = "/opt/hpcx/ompi/include/openmpi/opal/mca/hwloc/hwloc201"
    assert f"cd {hpcx}\nrm -rfv hwloc201.h hwloc/include/hwloc.h\n" in script
    # the sha256 checked is the one the recipe cites Spack for
    [sha256] = re.findall(r"^sha256=([0-9a-f]{64})$", script, re.M)
    recipe = yaml.safe_load((V51 / "dlrm_dcnv2.yaml").read_text())
    assert f"sha256='{sha256}'" in recipe["sources"]["spack-hwloc-sha256"]
    assert "sha256sum -c -" in script and "--no-check-certificate" not in script
    hugectr = (folder / "scripts" / "hugectr-build.sh").read_text()
    assert hugectr.index("\n/usr/bin/python3.12 -m pip uninstall -y tbb\n") < hugectr.index("\ncmake -D")


# ============================================================================= the entrypoint


def test_the_wrapper_exports_the_mounted_configuration_before_nvidias_script(tmp_path: Path) -> None:
    """run-with-config.sh writes run_with_config.sh into the work directory; run there by a
    real bash beside a stand-in run_and_time.sh, the script sees every value of config_MLCC.sh
    in its environment, as Slurm hands it the submitting shell's exports."""
    subprocess.run(["bash", str(V51 / "scripts" / "run-with-config.sh")], cwd=tmp_path, check=True)
    (tmp_path / "config_MLCC.sh").write_text("MINIBS=144\nexport NCCL_NVLS_ENABLE='0'\n")
    stand_in = tmp_path / "run_and_time.sh"
    stand_in.write_text(
        '#!/bin/bash\necho "MINIBS=$(printenv MINIBS) NVLS=$(printenv NCCL_NVLS_ENABLE) ARGS=$*"\n'
    )
    stand_in.chmod(0o755)
    out = subprocess.run(
        [str(tmp_path / "run_with_config.sh"), "one"],
        env={"PATH": "/usr/bin:/bin", "DGXSYSTEM": "MLCC"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "MINIBS=144 NVLS=0 ARGS=one"


@pytest.mark.parametrize("round_", ["v5.1", "v5.0"])
def test_a_process_per_gpu_gets_the_task_variables_slurm_would_give_it(tmp_path: Path, round_: str) -> None:
    """Rank 7 of 8, local rank 3 of 4 (as torch.distributed.run or mlcc's MPI rank script set
    them): NVIDIA's script sees Slurm's task 7 on node 1, local id 3, and so takes its per-task
    path (rgat's run_and_time.sh starts torchrun itself when SLURM_LOCALID is unset)."""
    script = REPO / "recipes" / "benchmarks" / round_ / "scripts" / "run-with-config.sh"
    subprocess.run(["bash", str(script)], cwd=tmp_path, check=True)
    stand_in = tmp_path / "run_and_time.sh"
    stand_in.write_text("#!/bin/bash\necho $SLURM_LOCALID $SLURM_PROCID $SLURM_NODEID $SLURM_NTASKS\n")
    stand_in.chmod(0o755)
    ranks = {"LOCAL_RANK": "3", "RANK": "7", "LOCAL_WORLD_SIZE": "4", "WORLD_SIZE": "8"}
    out = subprocess.run(
        [str(tmp_path / "run_with_config.sh")],
        env={"PATH": "/usr/bin:/bin", **ranks},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.split() == ["3", "7", "1", "8"]


def test_a_folder_without_a_slash_is_installed_as_a_path(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """llama31_405b's embedding_lib: pip takes a bare word for a name on the index."""
    result = cli("gen", "llama31_405b", "--round", "v5.1", "-o", str(tmp_path), "--only", "dockerfile")
    assert result.code == 0, result.err
    [dockerfile] = tmp_path.rglob("Dockerfile")
    assert "pip install --no-cache-dir --no-deps ./embedding_lib\n" in dockerfile.read_text()


# rgat's, dlrm_dcnv2's and v5.0 llama2_70b_lora's images are NVIDIA's Dockerfiles whole (every
# revision pinned to a full commit); v5.0 llama31_405b's too, with NeMo-Run (NVIDIA's unpinned
# main) pinned by an inference its recipe states; the others stand on revisions no reachable
# source ties to a commit, and each says which
COMPLETE = ("rgat-v5.1", "dlrm_dcnv2-v5.1", "llama2_70b_lora-v5.0", "llama31_405b-v5.0")


@pytest.mark.parametrize("benchmark", [b for b in BENCHMARKS if b not in COMPLETE])
def test_every_other_v5_x_recipe_says_what_is_incomplete(kb: KnowledgeBase, benchmark: str) -> None:
    assert kb.benchmarks[benchmark].incomplete


def test_the_complete_v5_1_recipe_is_published_on_its_ngc_base_and_the_others_are_not(
    kb: KnowledgeBase,
) -> None:
    from mlcc.app.published_set import generate_all

    folders = {g.folder for g in generate_all(kb)}
    assert {f for f in folders if f.startswith("rgat-v5.1/")} == {
        "rgat-v5.1/cuda12.8-cudnn9-ngc-dgl-25.03-aarch64",
        "rgat-v5.1/cuda12.8-cudnn9-ngc-dgl-25.03-x86_64",
    }
    assert {f for f in folders if f.startswith("dlrm_dcnv2-v5.1/")} == {
        "dlrm_dcnv2-v5.1/cuda12.8-cudnn9-ngc-pytorch-25.03-aarch64",
        "dlrm_dcnv2-v5.1/cuda12.8-cudnn9-ngc-pytorch-25.03-x86_64",
    }
    assert {f for f in folders if f.startswith("llama2_70b_lora-v5.0/")} == {
        "llama2_70b_lora-v5.0/cuda12.9-cudnn9-ngc-pytorch-25.04-aarch64-sm100",
        "llama2_70b_lora-v5.0/cuda12.9-cudnn9-ngc-pytorch-25.04-x86_64-sm100",
    }
    assert {f for f in folders if f.startswith("llama31_405b-v5.0/")} == {
        "llama31_405b-v5.0/cuda12.8-cudnn9-ngc-pytorch-25.01-x86_64-sm90",
    }
    for complete in COMPLETE:
        assert kb.benchmarks[complete].incomplete is None
    for incomplete in [b for b in BENCHMARKS if b not in COMPLETE]:
        assert not any(f.startswith(f"{incomplete}/") for f in folders)
