"""At every size NVIDIA ran a benchmark, mlcc's config_MLCC.sh holds NVIDIA's values.

NVIDIA's v0.6 configuration files (tests/data/mlperf-v0.6/NVIDIA/benchmarks, byte for byte)
and the file mlcc writes for the same size are both sourced by a real bash, and every variable
NVIDIA's file sets must come out the same from mlcc's. Between the sizes NVIDIA ran, mlcc starts
from the nearest file, scales only what the recipe marks as linear, and says so in the file.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
import yaml

from mlcc.kb.model import Launch
from mlcc.render.openshift.launch import Size, bind_file, config_file
from tests.nvidia_configs import IMPLEMENTATIONS, NVIDIA, Variable, sourced

COMMIT = "f312518c2d6107eec983750eed23950f1f0c8a0e"
# What mlcc writes differently on purpose: DGXSYSTEM names mlcc's file (MLCC), WALLTIME and
# DGXIBDEVICES are Slurm's and docker's (an OpenShift run has neither: the pod spec asks for the
# devices), NVIDIA_VISIBLE_DEVICES is set by the GPU operator for the GPUs the pod was given.
NOT_COMPARED = {"DGXSYSTEM", "WALLTIME", "DGXIBDEVICES", "NVIDIA_VISIBLE_DEVICES"}
# Set by mlcc where NVIDIA's file leaves the script's default: DGXNSOCKET (resnet's files omit
# it; its launch binds with ompi_bind, which mlcc writes for the node) and BIND_LAUNCH=1.
MLCC_ONLY = NOT_COMPARED | {"DGXNSOCKET", "BIND_LAUNCH"}
# run_and_time.sh passes these unquoted ($EXTRA_OPTS), so the words count, not the spaces
# NVIDIA's line continuations leave between them.
WORD_LISTS = {("gnmt", "EXTRA_OPTS")}
# NVIDIA ran 240 SSD GPUs as 30 x 8 twice: on DGX-1s (config_DGX1_multi.sh) and on 8 of each
# DGX-2's 16 GPUs (config_DGX2_multi_even.sh), with the same DL parameters; mlcc starts from
# the recipe's first, so only the DGX-2's cores per socket differ.
SAME_SIZE = {("ssd", "config_DGX2_multi_even.sh"): ("config_DGX1_multi.sh", {"DGXSOCKETCORES"})}


def _launch(kb, benchmark: str) -> Launch:  # type: ignore[no-untyped-def]
    launch = kb.benchmarks[benchmark].build.launch
    assert launch is not None
    return launch  # type: ignore[no-any-return]


def _nvidia_files() -> List[Tuple[str, str]]:
    return [
        (benchmark, path.name)
        for benchmark, folder in IMPLEMENTATIONS.items()
        for path in sorted(folder.glob("config_DGX*.sh"))
    ]


def _written(tmp_path: Path, text: str) -> Dict[str, Variable]:
    path = tmp_path / "config_MLCC.sh"
    path.write_text(text)
    return sourced(path)


def _started_from(text: str) -> str:
    match = re.search(r"^# Started from NVIDIA's (config_\w+\.sh) ", text, re.M)
    assert match, text
    return match.group(1)


def _comparable(benchmark: str, name: str, variable: Variable) -> Variable:
    if (benchmark, name) in WORD_LISTS and isinstance(variable.value, str):
        return Variable(" ".join(variable.value.split()), variable.exported)
    return variable


def test_the_recipes_carry_every_file_nvidia_has_with_its_source(kb) -> None:  # type: ignore[no-untyped-def]
    """Each benchmark's launch lists exactly NVIDIA's config files, and each names where it is."""
    for benchmark, folder in IMPLEMENTATIONS.items():
        launch = _launch(kb, benchmark)
        assert sorted(c.file for c in launch.configs) == sorted(p.name for p in folder.glob("config_DGX*.sh"))
        for config in launch.configs:
            upstream = (folder / config.file).relative_to(NVIDIA.parent.parent)
            assert config.source == f"github:mlcommons/training_results_v0.6 @{COMMIT} {upstream}"
            nvidia = sourced(folder / config.file)
            assert (config.nodes, config.gpus_per_node) == (
                int(str(nvidia["DGXNNODES"].value)),
                int(str(nvidia["DGXNGPU"].value)),
            )
            assert launch.shape(config.node_shape).socket_cores == int(str(nvidia["DGXSOCKETCORES"].value))
        assert launch.max_gpus == 16  # NVIDIA ran each of them on DGX-2 nodes too


@pytest.mark.parametrize(("benchmark", "file"), _nvidia_files())
def test_at_every_size_nvidia_ran_mlcc_writes_nvidias_values(
    kb, tmp_path: Path, benchmark: str, file: str
) -> None:  # type: ignore[no-untyped-def]
    nvidia = sourced(IMPLEMENTATIONS[benchmark] / file)
    size = Size(nodes=int(str(nvidia["DGXNNODES"].value)), gpus=int(str(nvidia["DGXNGPU"].value)))
    text = config_file(_launch(kb, benchmark), size, benchmark)
    started, differing = SAME_SIZE.get((benchmark, file), (file, set()))
    assert _started_from(text) == started
    if started == file:
        assert "# Changed from it: nothing (DGXSYSTEM aside): NVIDIA's values." in text
    ours = _written(tmp_path, text)
    compared = set(nvidia) - NOT_COMPARED - differing
    assert compared <= set(ours), sorted(compared - set(ours))
    for name in sorted(compared):
        assert _comparable(benchmark, name, ours[name]) == _comparable(benchmark, name, nvidia[name]), name
    assert set(ours) - set(nvidia) <= MLCC_ONLY, sorted(set(ours) - set(nvidia))


def test_a_node_shape_nvidia_did_not_use_still_starts_from_the_file_for_the_total(kb, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """16 GPUs as 2 DGX-1-like nodes of 8: NVIDIA's 16-GPU file, with only the system changed."""
    text = config_file(_launch(kb, "gnmt"), Size(nodes=2, gpus=8), "gnmt")
    assert _started_from(text) == "config_DGX2.sh"
    assert "# Changed from it: DGXNNODES 1 -> 2, DGXNGPU 16 -> 8, DGXSOCKETCORES 24 -> 20\n" in text
    ours = _written(tmp_path, text)
    assert ours["TRAIN_BATCH_SIZE"].value == "128" and ours["DGXSOCKETCORES"].value == "20"


def test_between_nvidias_sizes_mlcc_scales_from_the_nearest_and_says_what_it_changed(
    kb, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    text = config_file(_launch(kb, "maskrcnn"), Size(nodes=2, gpus=16), "maskrcnn")
    assert _started_from(text) == "config_DGX2.sh"  # 16 and 64 are as near to 32: the smaller
    assert "# NVIDIA ran no 32-GPU configuration (8, 16, 64, 192 GPUs); this is the nearest.\n" in text
    assert "EXTRA_CONFIG SOLVER.BASE_LR 0.12 -> 0.24" in text
    extra = _written(tmp_path, text)["EXTRA_CONFIG"].value
    solver = dict(zip(extra[::2], extra[1::2]))
    assert solver["SOLVER.IMS_PER_BATCH"] == "192" and solver["SOLVER.BASE_LR"] == "0.24"
    assert solver["SOLVER.MAX_ITER"] == "42000"  # the schedule stays NVIDIA's 16-GPU one
    text = config_file(_launch(kb, "gnmt"), Size(nodes=1, gpus=4), "gnmt")
    assert _started_from(text) == "config_DGX1.sh"
    assert "# Scaled by 4/8: nothing (the recipe marks no setting linear in the GPU count).\n" in text
    assert "# Changed from it: DGXNGPU 8 -> 4, DGXSOCKETCORES 20 -> 20" not in text
    assert "# Changed from it: DGXNGPU 8 -> 4\n" in text


def test_gnmt_runs_on_one_dgx2_node(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`mlcc gen gnmt --gpus 16` was refused ("a gnmt node runs at most 8 GPUs")."""
    out = tmp_path / "bc"
    result = cli(
        "gen", "gnmt", "--gpus", "16", "--nodes", "1", "--only", "openshift", "--openshift-output", str(out)
    )
    assert result.code == 0, result.err
    [launch] = out.rglob("launch-1x16.yaml")
    text = yaml.safe_load(launch.read_text())["data"]["config_MLCC.sh"]
    assert _started_from(text) == "config_DGX2.sh"
    ours = _written(tmp_path, text)
    assert ours["TRAIN_BATCH_SIZE"].value == "128" and ours["DGXNGPU"].value == "16"


def _bindings(script: Path, ranks: int, tmp_path: Path) -> List[str]:
    """The numactl arguments the script gives each local rank (numactl is a stub here)."""
    stub = tmp_path / "stub"
    stub.mkdir(exist_ok=True)
    (stub / "numactl").write_text('#!/bin/bash\necho "$1 $2"\n')
    (stub / "numactl").chmod(0o755)
    found = []
    for rank in range(ranks):
        env = {**os.environ, "OMPI_COMM_WORLD_LOCAL_RANK": str(rank), "PATH": f"{stub}:{os.environ['PATH']}"}
        out = subprocess.run(
            ["bash", str(script), "true"], env=env, capture_output=True, text=True, check=True
        )
        found.append(out.stdout.strip())
    return found


def test_resnet50_on_a_dgx2_binds_each_rank_as_nvidias_ompi_bind_does(kb, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ours = tmp_path / "ompi_bind_MLCC.sh"
    ours.write_text(bind_file(_launch(kb, "resnet50"), Size(nodes=1, gpus=16), "resnet50"))
    nvidia = IMPLEMENTATIONS["resnet50"] / "ompi_bind_DGX2.sh"
    theirs = _bindings(nvidia, 16, tmp_path)
    assert theirs[0] == "--physcpubind=0-2,48-50 --membind=0"  # the stub really ran NVIDIA's file
    assert _bindings(ours, 16, tmp_path) == theirs
