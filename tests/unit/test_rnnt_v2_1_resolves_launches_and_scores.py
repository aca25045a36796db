"""RNN-T's MLPerf v2.1 recipe (NVIDIA's PyTorch, NGC 22.04): the stack for A100, why not H100,
NVIDIA's configurations at every size it ran, and the reference minutes its result logs give.

NGC 22.04 ran PyTorch 1.12.0a0+bd13bc6 with CUDA 11.6.2, cuDNN 8.4.0.27 and NCCL 2.12.10
(NVIDIA/systems/dgxa100_ngc22.04_pytorch.json); CUDA 11.6 cannot compile for sm_90, so H100 is
refused with the CUDA it needs named. NVIDIA's files and logs are under tests/data/mlperf-v2.1
(origin, commit and licence in tests/data/README.md).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
import yaml

from mlcc.app.results import score_logs
from mlcc.errors import ConflictError
from mlcc.kb.model import KnowledgeBase, Launch
from mlcc.render.openshift.launch import Size, config_file
from mlcc.resolve.request import build_request
from tests.conftest import REPO
from tests.nvidia_configs import Variable, sourced
from tests.unit.test_results_mllog import _summarizer_score

NGC_22_04_TORCH = "1.12.0a0+bd13bc6"
COMMIT = "158189d4cbfbee366c10da1f0f086c85d8f15b5f"
APEX_22_04_DEV = "9263bc8c6c16555bd55dd759f1a1b8c0cd187d10"
DATA = REPO / "tests" / "data" / "mlperf-v2.1" / "NVIDIA"
IMPLEMENTATIONS = Path("NVIDIA/benchmarks/rnnt/implementations")
RECIPE_DIR = REPO / "recipes" / "benchmarks" / "v2.1" / "rnnt.d"
# (implementation folder, file): NVIDIA's files for the sizes it has result folders of.
FILES: List[Tuple[str, str]] = [
    ("pytorch-22.04", "config_DGXA100_1x8x192x1.sh"),
    ("pytorch-22.04", "config_DGXA100_8x8x32x1.sh"),
    ("pytorch-22.04", "config_DGXA100_192x8x4x1.sh"),
    ("pytorch-preview", "config_DGXH100_1x8x192x1.sh"),
    ("pytorch-preview", "config_DGXH100_4x8x64x1.sh"),
]
# Slurm's walltime and the minutes it is made of, the file's own name (DGXSYSTEM), the host paths
# run.sub mounts (the OpenShift run mounts the dataset volume at /datasets instead), and
# hyperparameters_auto.sh's arithmetic, whose outcome (the hyperparameters file it sources) counts.
NOT_COMPARED = {
    "DGXSYSTEM",
    "WALLTIME",
    "WALLTIME_MINUTES",
    "SINGLE_EXP_WALLTIME",
    "DATADIR",
    "METADATA_DIR",
    "SENTENCEPIECES_DIR",
    "_GBS",
    "_PROXY_GBS",
}
# NVIDIA's files export the system shape, mlcc's file sets it for run_and_time.sh, which sources
# it in the same shell: the value counts, not the export.
VALUE_ONLY = {"DGXNNODES", "DGXNGPU", "DGXSOCKETCORES", "DGXNSOCKET", "DGXHT"}
MLCC_ONLY = {"DGXIBDEVICES", "BIND_LAUNCH"}


def _launch(kb: KnowledgeBase) -> Launch:
    bench = kb.benchmarks["rnnt-v2.1"]
    assert bench.build is not None and bench.build.launch is not None
    return bench.build.launch


def _nvidia(implementation: str, file: str) -> Dict[str, Variable]:
    return sourced(DATA.parent / IMPLEMENTATIONS / implementation / file)


def _started_from(text: str) -> str:
    line = next(x for x in text.splitlines() if x.startswith("# Started from NVIDIA's "))
    return line.split()[4]


def test_rnnt_on_a100_is_ngc_22_04s_stack_without_a_round(kb: KnowledgeBase, resolver) -> None:  # type: ignore[no-untyped-def]
    """rnnt exists in v2.1 only, so it needs no --round."""
    stack = resolver.resolve(build_request(kb, "rnnt", gpu="a100"))
    assert stack.benchmark.name == "rnnt-v2.1" and stack.benchmark.round == "v2.1"
    assert stack.cuda is not None and stack.cuda.version == "11.6.2"
    assert stack.cudnn is not None and stack.cudnn.version == "8.4.0.27"
    assert stack.nccl is not None and stack.nccl.version == "2.12.10"
    assert stack.framework is not None and stack.framework.version == NGC_22_04_TORCH
    assert stack.python is not None and stack.python.version == "3.8"
    assert stack.base.name == "ubi8"
    assert stack.gpu_capability == kb.gpus["a100"].compute_capability


def test_on_h100_the_refusal_names_the_cuda_sm_90_needs(kb: KnowledgeBase, resolver) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConflictError) as caught:
        resolver.resolve(build_request(kb, "rnnt", gpu="h100"))
    message = str(caught.value)
    assert "sm_90" in message and "CUDA >= 11.8" in message and "11.6.2" in message


def test_the_ngc_22_04_build_targets_a100_and_cannot_target_h100(kb: KnowledgeBase) -> None:
    """CUDA 11.6's nvcc stops at compute capability 8.6: the arch list names A100's 8.0 and no
    9.0, and the build claims CUDA 11.6 only."""
    build = next(b for b in kb.frameworks["pytorch"].builds if b.version == NGC_22_04_TORCH)
    assert build.cuda == ("11.6",) and build.variant == "ngc22.04-src"
    arch_list = dict(build.install.build_env)["TORCH_CUDA_ARCH_LIST"].split()
    native = {entry.split("+")[0] for entry in arch_list}
    assert kb.gpus["a100"].compute_capability in native
    assert kb.gpus["h100"].compute_capability not in native
    assert max(float(arch) for arch in native) < 9.0


def test_the_recipe_is_marked_incomplete_and_says_why_h100_is_refused(kb: KnowledgeBase) -> None:
    bench = kb.benchmarks["rnnt-v2.1"]
    assert bench.build is not None and bench.build.prov.note is not None
    assert str(bench.build.prov.note).startswith("INCOMPLETE:")
    note = str(bench.prov.note)
    assert "REDACTED" in note and "sm_90" in note and "CUDA >= 11.8" in note


def test_rnnt_is_not_published_while_incomplete() -> None:
    matrix = yaml.safe_load((REPO / "recipes" / "matrix.yaml").read_text())
    assert "rnnt" not in str(matrix)


def test_apex_is_the_22_04_dev_tip_built_with_every_module_rnnt_imports(kb: KnowledgeBase) -> None:
    """The apex step's setup options, and the check script that fails the build if apex skipped
    one: --cpp_ext gives apex_C; --cuda_ext amp_C, mlp_cuda and fused_dense_cuda; --distributed_lamb
    and --deprecated_fused_adam the two modules DistributedFusedLAMB loads; --transducer the joint
    and loss rnnt/model.py and rnnt/loss.py import."""
    bench = kb.benchmarks["rnnt-v2.1"]
    assert bench.build is not None
    text = str(bench.build)
    assert APEX_22_04_DEV in text
    for option in (
        "--cpp_ext",
        "--cuda_ext",
        "--distributed_lamb",
        "--deprecated_fused_adam",
        "--transducer",
    ):
        assert option in text
    script = dict(kb.benchmarks["rnnt-v2.1"].build.scripts)["apex-extensions.sh"]
    wanted = set(re.findall(r'^\s+"(\w+)",$', script, flags=re.M))
    assert wanted == {
        "apex_C",
        "amp_C",
        "mlp_cuda",
        "fused_dense_cuda",
        "distributed_lamb_cuda",
        "fused_adam_cuda",
        "transducer_joint_cuda",
        "transducer_loss_cuda",
    }


def test_nvidias_requirements_are_installed_at_full_commits(kb: KnowledgeBase) -> None:
    bench = kb.benchmarks["rnnt-v2.1"]
    text = str(bench.build)
    assert "logging.git@4272f73c952d9b22c735aef88640699700d5a0b8" in text
    assert "dllogger.git@26a0f8f1958de2c0c460925ff6102a4d2486d6cc" in text
    for pin in ("librosa==0.8.0", "sentencepiece==0.1.94", "soundfile==0.10.3.post1", "sox==1.4.1"):
        assert pin in text


@pytest.mark.parametrize(
    ("folder", "minutes"), [("dgxa100_ngc22.04_pytorch", 30.81), ("dgxh100_preview", 18.20)]
)
def test_mlcc_scores_nvidias_rnnt_folders_as_mlcommons_summarizer_does(
    kb: KnowledgeBase, folder: str, minutes: float
) -> None:
    """mlperf-logging's result_summarizer (the test extra; its 2.1.0 compliance check passes on
    these logs) and mlcc give the same score, to 0.01 minute: 10 runs, olympic mean."""
    where = DATA / "results" / folder / "rnnt"
    scored = score_logs(kb, [str(where)])
    assert len(scored.scores) == 1
    mine = scored.scores[0].as_json()
    assert mine["benchmark"] == "rnnt" and mine["round"] == "v2.1" and mine["state"] == "complete"
    assert mine["required_runs"] == 10
    assert round(float(mine["score_minutes"]), 2) == minutes
    assert abs(float(mine["score_minutes"]) - _summarizer_score(where, "rnnt")) < 0.01


def test_the_recipes_reference_minutes_are_those_scores(kb: KnowledgeBase) -> None:
    bench = kb.benchmarks["rnnt-v2.1"]
    assert bench.build is not None and bench.build.reference is not None
    reference = bench.build.reference
    assert (reference.minutes, reference.runs, reference.gpu) == (30.81, 10, "a100")
    [h100] = bench.build.gpu_references
    assert (h100.minutes, h100.runs, h100.gpu) == (18.20, 10, "h100")


def test_the_recipe_carries_every_file_nvidia_ran_with_its_source(kb: KnowledgeBase) -> None:
    launch = _launch(kb)
    by_file = {config.file: config for config in launch.configs}
    assert sorted(by_file) == sorted(file for _, file in FILES)
    for implementation, name in FILES:
        config = by_file[name]
        assert (
            config.source
            == f"github:mlcommons/training_results_v2.1 @{COMMIT} {IMPLEMENTATIONS}/{implementation}/{name}"
        )
        nvidia = _nvidia(implementation, name)
        assert (config.nodes, config.gpus_per_node) == (
            int(str(nvidia["DGXNNODES"].value)),
            int(str(nvidia["DGXNGPU"].value)),
        )
        shape = launch.shape(config.node_shape)
        assert shape.name == ("DGXH100" if "H100" in name else "DGXA100")
        assert shape.socket_cores == int(str(nvidia["DGXSOCKETCORES"].value))


@pytest.mark.parametrize(("implementation", "file"), FILES)
def test_at_every_size_nvidia_ran_mlcc_writes_nvidias_values(
    kb: KnowledgeBase, tmp_path: Path, implementation: str, file: str
) -> None:
    """NVIDIA's file (with the hyperparameters_*.sh and config_common_*.sh it sources) and the
    config_MLCC.sh mlcc writes for the same size and GPU, both sourced by a real bash."""
    nvidia = _nvidia(implementation, file)
    size = Size(nodes=int(str(nvidia["DGXNNODES"].value)), gpus=int(str(nvidia["DGXNGPU"].value)))
    capability = kb.gpus["h100" if "H100" in file else "a100"].compute_capability
    launch = _launch(kb)
    text = config_file(launch, size, "rnnt", capability)
    config = next(c for c in launch.configs if c.file == file)
    if config.image_lacks is not None:
        # the DGX H100 files set what the image's pytorch-22.04 scripts never read: kept with
        # NVIDIA's values, but no run starts from them, and the run says so
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
    assert {"BATCHSIZE", "LR", "EPOCH", "APEX_JOINT"} <= set(ours)


@pytest.mark.parametrize(
    ("nodes", "file"),
    [
        (1, "config_DGXA100_1x8x192x1.sh"),
        (8, "config_DGXA100_8x8x32x1.sh"),
        (192, "config_DGXA100_192x8x4x1.sh"),
    ],
)
def test_an_a100_stack_starts_from_nvidias_a100_file_for_the_size(
    kb: KnowledgeBase, nodes: int, file: str
) -> None:
    capability = kb.gpus["a100"].compute_capability
    text = config_file(_launch(kb), Size(nodes=nodes, gpus=8), "rnnt", capability)
    assert _started_from(text) == file


def test_mlcc_gen_run_manifests_for_a100_start_from_nvidias_one_node_file(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "oc"
    result = cli(
        "gen", "rnnt", "--gpu", "a100", "--gpus", "8", "--nodes", "1",
        "--only", "openshift", "--openshift-output", str(out),
    )  # fmt: skip
    assert result.code == 0, result.err
    [launch] = out.rglob("launch-1x8.yaml")
    text = yaml.safe_load(launch.read_text())["data"]["config_MLCC.sh"]
    assert _started_from(text) == "config_DGXA100_1x8x192x1.sh"
    written = tmp_path / "config_MLCC.sh"
    written.write_text(text)
    values = sourced(written)
    assert (values["BATCHSIZE"].value, values["LR"].value) == ("192", "0.0072")
