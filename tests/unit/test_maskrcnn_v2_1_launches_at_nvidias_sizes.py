"""At every size NVIDIA ran Mask R-CNN in v2.1, mlcc's config_MLCC.sh holds NVIDIA's values.

NVIDIA's v2.1 files (tests/data/mlperf-v2.1/NVIDIA/benchmarks/maskrcnn, byte for byte: DGX A100
at 1 and 48 nodes, DGX H100 at 1 and 4 nodes) and the file mlcc writes for the same size are both
sourced by a real bash; every variable NVIDIA's file sets must come out with the same value.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

import pytest

from mlcc.kb.model import KnowledgeBase, Launch
from mlcc.render.openshift.launch import Size, config_file
from tests.conftest import REPO
from tests.nvidia_configs import sourced

COMMIT = "158189d4cbfbee366c10da1f0f086c85d8f15b5f"
DATA = REPO / "tests" / "data" / "mlperf-v2.1"
FOLDER = Path("NVIDIA/benchmarks/maskrcnn/implementations")
FILES: List[Tuple[str, str]] = [
    ("pytorch-22.09", "config_DGXA100.sh"),
    ("pytorch-22.09", "config_DGXA100_multi.sh"),
    ("pytorch-preview", "config_DGXH100.sh"),
    ("pytorch-preview", "config_DGXH100_multi_4x8x4.sh"),
]
# Slurm's (WALLTIME and the minutes it is made of) and the file's own name (DGXSYSTEM): an
# OpenShift run has no wall-time limit from the file, and mlcc's file is config_MLCC.sh.
NOT_COMPARED = {"DGXSYSTEM", "WALLTIME", "WALLTIME_MINUTES"}
# NVIDIA's v2.1 files export the system shape, mlcc's file sets it for run_and_time.sh, which
# sources it in the same shell: the value counts, not the export.
VALUE_ONLY = {"DGXNNODES", "DGXNGPU", "DGXSOCKETCORES", "DGXNSOCKET", "DGXHT"}
MLCC_ONLY = {"DGXIBDEVICES", "BIND_LAUNCH"}


def _launch(kb: KnowledgeBase) -> Launch:
    launch = kb.benchmarks["maskrcnn-v2.1"].build.launch
    assert launch is not None
    return launch


def test_the_v2_1_recipe_carries_nvidias_four_files_with_their_sources(kb: KnowledgeBase) -> None:
    launch = _launch(kb)
    by_file = {config.file: config for config in launch.configs}
    assert sorted(by_file) == sorted(name for _, name in FILES)
    for implementation, name in FILES:
        config = by_file[name]
        upstream = FOLDER / implementation / name
        assert config.source == f"github:mlcommons/training_results_v2.1 @{COMMIT} {upstream}"
        nvidia = sourced(DATA / FOLDER / implementation / name)
        assert (config.nodes, config.gpus_per_node) == (
            int(str(nvidia["DGXNNODES"].value)),
            int(str(nvidia["DGXNGPU"].value)),
        )
        shape = launch.shape(config.node_shape)
        assert shape.name == ("DGXH100" if "H100" in name else "DGXA100")
        assert shape.socket_cores == int(str(nvidia["DGXSOCKETCORES"].value))
        assert shape.sockets == int(str(nvidia["DGXNSOCKET"].value))
    assert {(c.file, c.nodes * c.gpus_per_node) for c in launch.configs} >= {
        ("config_DGXA100_multi.sh", 384),
        ("config_DGXH100_multi_4x8x4.sh", 32),
    }


@pytest.mark.parametrize(("implementation", "file"), FILES)
def test_at_every_v2_1_size_nvidia_ran_mlcc_writes_nvidias_values(
    kb: KnowledgeBase, tmp_path: Path, implementation: str, file: str
) -> None:
    nvidia = sourced(DATA / FOLDER / implementation / file)
    size = Size(nodes=int(str(nvidia["DGXNNODES"].value)), gpus=int(str(nvidia["DGXNGPU"].value)))
    written = tmp_path / "config_MLCC.sh"
    written.write_text(config_file(_launch(kb), size, "maskrcnn"))
    ours = sourced(written)
    compared = set(nvidia) - NOT_COMPARED
    assert compared <= set(ours), sorted(compared - set(ours))
    for name in sorted(compared):
        if name in VALUE_ONLY:
            assert ours[name].value == nvidia[name].value, name
        else:
            assert ours[name] == nvidia[name], name
    assert set(ours) - set(nvidia) <= MLCC_ONLY, sorted(set(ours) - set(nvidia))
    assert "SOLVER.BASE_LR" in str(ours["EXTRA_CONFIG"].value)
