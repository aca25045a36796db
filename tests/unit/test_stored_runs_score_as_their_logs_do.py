"""A stored result scores as its logs do: NVIDIA's v2.1 ResNet-50 folder holds a scaling.json
(the RCP normalization v2.1's rules apply), which `results add` stores with each run, so
`results compare` and `mlcc advise` give 28.81 minutes, the score `results score` gives and
the recipe records, not the unscaled 28.69. A history from before the column reads as
unscaled, and gains the column on the next add."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path
from typing import Any

from mlcc.history import History
from mlcc.results.parse import parse_file
from mlcc.results.store import Placement, StackInfo, add_runs, stored_runs

V21 = Path(__file__).resolve().parents[1] / "data" / "mlperf-v2.1" / "NVIDIA" / "results"
RESNET_A100 = V21 / "dgxa100_ngc22.04_mxnet" / "resnet"
FACTOR = json.loads((RESNET_A100 / "scaling.json").read_text())["scaling_factor"]


def _stack(cli: Any) -> Path:
    assert cli("gen", "resnet50", "--round", "v2.1", "--only", "dockerfile").code == 0
    (stack,) = Path.cwd().rglob("stack.json")
    return stack


def test_compare_and_advise_apply_the_stored_scaling_factor(cli: Any, tmp_path: Path) -> None:
    history = tmp_path / "h.sqlite"
    result = cli("results", "add", str(RESNET_A100), "--stack", str(_stack(cli)), "--history", str(history))
    assert result.code == 0, result.err
    (scored,) = json.loads(cli("results", "score", str(RESNET_A100), "--json").out)
    (compared,) = json.loads(cli("results", "compare", "--json", "--history", str(history)).out)
    (stack,) = compared["stacks"]
    assert round(stack["score_minutes"], 2) == round(scored["score_minutes"], 2) == 28.81
    assert "scaled by 1.0044 (scaling.json: the RCP normalization of the review)" in stack["notes"]
    assert stack["reference"]["gpu"] == "a100" and round(stack["vs_reference"], 2) == 1.0

    advice = json.loads(cli("advise", "resnet", "--gpu", "a100", "--history", str(history), "--json").out)
    assert sorted((k["evidence"]["kind"], round(k["score_minutes"], 2)) for k in advice["known"]) == [
        ("reference result", 28.81),
        ("stored runs", 28.81),
    ]


def test_a_history_from_before_the_scaling_column_reads_as_unscaled(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite")
    runs = [run for log in sorted(RESNET_A100.glob("result_*.txt")) for run in parse_file(log).runs]
    stack = StackInfo("old", "resnet50-v2.1", None, None, None, None, None)
    add_runs(history, runs[:2], stack, Placement(), "test")
    assert {row["scaling_factor"] for row in stored_runs(history)} == {FACTOR}
    with contextlib.closing(sqlite3.connect(history.path)) as connection:
        connection.execute("ALTER TABLE results DROP COLUMN scaling_factor")
        connection.commit()
    assert {row["scaling_factor"] for row in stored_runs(history)} == {None}
    add_runs(history, runs[2:], stack, Placement(), "test")
    assert [row["scaling_factor"] for row in stored_runs(history)] == [None, None, FACTOR, FACTOR, FACTOR]
