"""At every size NVIDIA ran its v2.1 MXNet benchmarks, mlcc's config_MLCC.sh holds NVIDIA's values.

NVIDIA's v2.1 files (tests/data/mlperf-v2.1/NVIDIA/benchmarks/{resnet,unet3d}, byte for byte):
ResNet-50 on DGX A100 at 1, 8, 128 and 527 nodes and DGX H100 at 1 and 4 (with the
config_DGXA100_common.sh each sources), 3D U-Net on DGX A100 at 1, 9 and 96 nodes and DGX H100 at
1 and 3. They and the file mlcc writes for the same size are both sourced by a real bash; every
variable NVIDIA's file sets must come out with the same value and the same export.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import List, Tuple

import pytest

from mlcc.kb.model import KnowledgeBase, Launch
from mlcc.render.openshift.launch import Size, bind_file, config_file
from tests.conftest import REPO
from tests.nvidia_configs import sourced

COMMIT = "158189d4cbfbee366c10da1f0f086c85d8f15b5f"
DATA = REPO / "tests" / "data" / "mlperf-v2.1"
# recipe id -> NVIDIA's folder
FOLDERS = {
    "resnet50-v2.1": Path("NVIDIA/benchmarks/resnet/implementations"),
    "unet3d-v2.1": Path("NVIDIA/benchmarks/unet3d/implementations"),
}
# (recipe id, implementation folder, file)
FILES: List[Tuple[str, str, str]] = [
    ("resnet50-v2.1", "mxnet-22.04", "config_DGXA100.sh"),
    ("resnet50-v2.1", "mxnet-22.04", "config_DGXA100_multi_8x8x51.sh"),
    ("resnet50-v2.1", "mxnet-22.04", "config_DGXA100_multi_128x8x35.sh"),
    ("resnet50-v2.1", "mxnet-22.04", "config_DGXA100_multi_527x8x16xgbn2_larsv2.sh"),
    ("resnet50-v2.1", "mxnet-preview", "config_DGXH100.sh"),
    ("resnet50-v2.1", "mxnet-preview", "config_DGXH100_multi_4x8x100.sh"),
    ("unet3d-v2.1", "mxnet-22.04", "config_DGXA100_1x8x7.sh"),
    ("unet3d-v2.1", "mxnet-22.04", "config_DGXA100_9x8x1.sh"),
    ("unet3d-v2.1", "mxnet-22.04", "config_DGXA100_96x8x1.sh"),
    ("unet3d-v2.1", "mxnet-preview", "config_DGXH100_1x8x7.sh"),
    ("unet3d-v2.1", "mxnet-preview", "config_DGXH100_3x8x1.sh"),
]
# Slurm's (WALLTIME and the minutes it is made of) and the file's own name (DGXSYSTEM): an
# OpenShift run has no wall-time limit from the file, and mlcc's file is config_MLCC.sh.
NOT_COMPARED = {"DGXSYSTEM", "WALLTIME", "WALLTIME_MINUTES"}
# NVIDIA's files export the system shape (config_DGXA100_common.sh), mlcc's file sets it for
# run_and_time.sh, which sources it in the same shell: the value counts, not the export.
VALUE_ONLY = {"DGXNNODES", "DGXNGPU", "DGXSOCKETCORES", "DGXNSOCKET", "DGXHT"}
MLCC_ONLY = {"DGXIBDEVICES", "BIND_LAUNCH"}
# One DGX H100 and one DGX A100 are the same size (1 x 8): mlcc starts from a file by size, so
# 1 x 8 starts from the DGX A100 file when no GPU is asked (a launch picks by GPU only for a
# stack resolved with --gpu). The DGX H100 files' values are still checked in the recipe (the test below it).
BY_SIZE = [entry for entry in FILES if entry[2] not in ("config_DGXH100.sh", "config_DGXH100_1x8x7.sh")]


def _launch(kb: KnowledgeBase, benchmark: str) -> Launch:
    launch = kb.benchmarks[benchmark].build.launch
    assert launch is not None
    return launch


@pytest.mark.parametrize("benchmark", sorted(FOLDERS))
def test_the_v2_1_recipe_carries_nvidias_files_with_their_sources(kb: KnowledgeBase, benchmark: str) -> None:
    launch = _launch(kb, benchmark)
    by_file = {config.file: config for config in launch.configs}
    ours = [(implementation, name) for bench, implementation, name in FILES if bench == benchmark]
    assert sorted(by_file) == sorted(name for _, name in ours)
    for implementation, name in ours:
        config = by_file[name]
        upstream = FOLDERS[benchmark] / implementation / name
        assert config.source == f"github:mlcommons/training_results_v2.1 @{COMMIT} {upstream}"
        nvidia = sourced(DATA / upstream)
        assert (config.nodes, config.gpus_per_node) == (
            int(str(nvidia["DGXNNODES"].value)),
            int(str(nvidia["DGXNGPU"].value)),
        )
        shape = launch.shape(config.node_shape)
        assert shape.name == ("DGXH100" if "H100" in name else "DGXA100")
        assert shape.socket_cores == int(str(nvidia["DGXSOCKETCORES"].value))
        assert shape.sockets == int(str(nvidia["DGXNSOCKET"].value))
    assert (
        max(c.nodes * c.gpus_per_node for c in launch.configs)
        == {"resnet50-v2.1": 4216, "unet3d-v2.1": 768}[benchmark]
    )


@pytest.mark.parametrize(("benchmark", "implementation", "file"), FILES)
def test_each_config_in_the_recipe_exports_what_nvidias_file_exports(
    kb: KnowledgeBase, benchmark: str, implementation: str, file: str
) -> None:
    nvidia = sourced(DATA / FOLDERS[benchmark] / implementation / file)
    config = next(c for c in _launch(kb, benchmark).configs if c.file == file)
    assert dict(config.settings) == {}
    expected = {
        name: variable.value
        for name, variable in nvidia.items()
        if variable.exported and name not in NOT_COMPARED | VALUE_ONLY
    }
    assert dict(config.exports) == expected


@pytest.mark.parametrize(("benchmark", "implementation", "file"), BY_SIZE)
def test_at_every_v2_1_size_nvidia_ran_mlcc_writes_nvidias_values(
    kb: KnowledgeBase, tmp_path: Path, benchmark: str, implementation: str, file: str
) -> None:
    nvidia = sourced(DATA / FOLDERS[benchmark] / implementation / file)
    size = Size(nodes=int(str(nvidia["DGXNNODES"].value)), gpus=int(str(nvidia["DGXNGPU"].value)))
    text = config_file(_launch(kb, benchmark), size, benchmark)
    assert re.search(rf"^# Started from NVIDIA's {re.escape(file)} ", text, re.M), text
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


def test_one_rank_per_gpu_binds_to_its_socket_of_a_dgx_a100(kb: KnowledgeBase) -> None:
    """run.sub starts DGXNGPU tasks per node: mlcc binds each to a quarter of its socket's cores
    (64 per socket, SMT on), GPUs 0-3 on socket 0 and 4-7 on socket 1."""
    text = bind_file(_launch(kb, "resnet50-v2.1"), Size(nodes=1, gpus=8), "resnet50-v2.1")
    assert "0) exec numactl --physcpubind=0-15,128-143 --membind=0" in text
    assert "4) exec numactl --physcpubind=64-79,192-207 --membind=1" in text
