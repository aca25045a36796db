"""`mlcc results add` keeps a round's runs with that round's stack: NVIDIA's real v2.1 logs
store against the v2.1 stacks (whose benchmark ids name the round, maskrcnn-v2.1 and
resnet50-v2.1, while the logs say maskrcnn and resnet), and are refused on the v0.6 stacks
with both rounds named; v0.6 logs are refused on the v2.1 stack likewise."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, List

from tests.conftest import mlperf_v06

REPO = Path(__file__).resolve().parents[2]
V21 = REPO / "tests" / "data" / "mlperf-v2.1" / "NVIDIA" / "results"
MASKRCNN_A100 = V21 / "dgxa100_ngc22.09_pytorch" / "maskrcnn"
RESNET_A100 = V21 / "dgxa100_ngc22.04_mxnet" / "resnet"
MASKRCNN_V21_STACK = REPO / "dockerfiles" / "maskrcnn-v2.1" / "cuda11.8-cudnn8-ubi8-x86_64" / "stack.json"
MASKRCNN_V06_STACK = REPO / "dockerfiles" / "maskrcnn" / "cuda10.1-cudnn7-ubi8-x86_64" / "stack.json"


def _stored(history: Path) -> List[Any]:
    if not history.exists():
        return []
    with sqlite3.connect(history) as db:
        return db.execute("SELECT benchmark, round, stack FROM results ORDER BY id").fetchall()


def _generated_stack(cli: Any, *args: str) -> Path:
    result = cli("gen", *args, "--only", "dockerfile")
    assert result.code == 0, result.err
    (stack,) = Path.cwd().rglob("stack.json")
    return stack


def test_v21_maskrcnn_logs_store_against_the_maskrcnn_v21_stack(cli: Any, tmp_path: Path) -> None:
    history = tmp_path / "h.sqlite"
    for extra in ((), ("--round", "v2.1")):
        result = cli(
            "results",
            "add",
            str(MASKRCNN_A100),
            "--stack",
            str(MASKRCNN_V21_STACK),
            "--history",
            str(history),
            *extra,
        )
        assert result.code == 0, result.err
    rows = _stored(history)
    assert len(rows) == 5  # the second add found them stored
    assert {(benchmark, round_) for benchmark, round_, _ in rows} == {("maskrcnn", "v2.1")}
    assert all(stack.startswith("cuda11.8-cudnn8-ubi8-x86_64 · pytorch") for _, _, stack in rows)


def test_v21_logs_are_refused_on_the_v06_stack_naming_both_rounds(cli: Any, tmp_path: Path) -> None:
    history = tmp_path / "h.sqlite"
    for extra in ((), ("--round", "v2.1")):
        result = cli(
            "results",
            "add",
            str(MASKRCNN_A100),
            "--stack",
            str(MASKRCNN_V06_STACK),
            "--history",
            str(history),
            *extra,
        )
        assert result.code == 2  # a usage error (docs/exit-codes.md)
        assert "is a maskrcnn run of MLPerf v2.1" in result.err
        assert "the stack was built for maskrcnn of MLPerf v0.6" in result.err
        assert "mlcc gen maskrcnn --round v2.1" in result.err and "nothing was stored" in result.err
    assert "(its :::MLLOG lines say so)" in cli(
        "results", "add", str(MASKRCNN_A100 / "result_0.txt"), "--stack", str(MASKRCNN_V06_STACK),
        "--history", str(history),
    ).err  # fmt: skip
    assert _stored(history) == []


def test_v06_logs_are_refused_on_the_v21_stack(cli: Any, tmp_path: Path) -> None:
    history = tmp_path / "h.sqlite"
    logs = mlperf_v06("NVIDIA", "dgx1_ngc19.05_pytorch", "maskrcnn")
    result = cli("results", "add", str(logs), "--stack", str(MASKRCNN_V21_STACK), "--history", str(history))
    assert result.code == 2
    assert "is a maskrcnn run of MLPerf v0.6 (its :::MLL lines say so)" in result.err
    assert "built for maskrcnn-v2.1 of MLPerf v2.1" in result.err
    assert _stored(history) == []


def test_v21_resnet_logs_store_on_resnet50_v21_and_not_on_v06(cli: Any, tmp_path: Path) -> None:
    history = tmp_path / "h.sqlite"
    v21 = _generated_stack(cli, "resnet50", "--round", "v2.1")
    result = cli("results", "add", str(RESNET_A100), "--stack", str(v21), "--history", str(history))
    assert result.code == 0, result.err
    assert {(b, r) for b, r, _ in _stored(history)} == {("resnet", "v2.1")}

    v06 = REPO / "dockerfiles" / "resnet50"
    v06_stack = next(v06.glob("*/stack.json"))
    other = tmp_path / "other.sqlite"
    result = cli("results", "add", str(RESNET_A100), "--stack", str(v06_stack), "--history", str(other))
    assert result.code == 2
    assert (
        "is a resnet run of MLPerf v2.1" in result.err and "built for resnet50 of MLPerf v0.6" in result.err
    )
    assert _stored(other) == []
