"""`mlcc advise BENCHMARK --gpu GPU`: the stacks known for a benchmark on a GPU, ranked by
score, from the runs stored in a history (NVIDIA's real v2.1 Mask R-CNN logs, stored with
the maskrcnn-v2.1 stack through `mlcc results add`) and the rounds' reference results;
a GPU without runs is "unknown", never an estimate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest

from mlcc.app.advise import advise
from mlcc.errors import UsageError

REPO = Path(__file__).resolve().parents[2]
V21 = REPO / "tests" / "data" / "mlperf-v2.1" / "NVIDIA" / "results"
V21_STACK = REPO / "dockerfiles" / "maskrcnn-v2.1" / "cuda11.8-cudnn8-ubi8-x86_64" / "stack.json"
V21_LABEL = "cuda11.8-cudnn8-ubi8-x86_64 · pytorch 1.13.0a0+d0d6b1f · Python 3.8"


@pytest.fixture
def history(cli: Any, tmp_path: Path) -> Path:
    """NVIDIA's v2.1 Mask R-CNN runs on a DGX A100 and on a DGX H100, each with the v2.1 stack."""
    path = tmp_path / "h.sqlite"
    for system in ("dgxa100_ngc22.09_pytorch", "dgxh100_preview"):
        result = cli(
            "results",
            "add",
            str(V21 / system / "maskrcnn"),
            "--stack",
            str(V21_STACK),
            "--history",
            str(path),
        )
        assert result.code == 0, result.err
    return path


def _strict(text: str) -> Dict[str, Any]:
    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in the JSON")

    return json.loads(text, parse_constant=refuse)  # type: ignore[no-any-return]


def test_advise_maskrcnn_on_a100_ranks_stored_runs_and_the_reference(cli: Any, history: Path) -> None:
    result = cli("advise", "maskrcnn", "--gpu", "a100", "--history", str(history), "--json")
    assert result.code == 0, result.err
    found = _strict(result.out)
    assert (found["benchmark"], found["gpu"]) == ("maskrcnn", "a100")
    known = found["known"]
    # the A100 runs only (the H100 ones are another GPU's), and v2.1's A100 reference
    assert [(k["evidence"]["kind"], k["round"]) for k in known] == [
        ("reference result", "v2.1"),
        ("stored runs", "v2.1"),
    ]
    reference, stored = known
    assert reference["score_minutes"] == 40.13 and reference["evidence"]["runs"] == 5
    assert reference["evidence"]["spread_percent"] is None  # the recipe does not record it
    assert reference["evidence"]["source"].startswith("recipes/benchmarks/v2.1/maskrcnn.yaml")
    assert stored["stack"] == V21_LABEL and stored["evidence"]["runs"] == 5
    assert stored["score_minutes"] == pytest.approx(40.13, abs=0.01)
    assert stored["evidence"]["spread_percent"] == pytest.approx(14.81, abs=0.01)
    assert stored["evidence"]["systems"] == ["1xNVIDIA DGX A100"]
    builds = {b["benchmark"]: b for b in found["builds"]}
    assert builds["maskrcnn-v2.1"]["variant"] == "cuda11.8-cudnn8-ubi8-x86_64-sm80"
    assert builds["maskrcnn"]["variant"] is None and "CUDA >= 11.0" in builds["maskrcnn"]["summary"]
    assert found["unknown"] == ["maskrcnn: its recipe records no reference result on a100"]


def test_h100_runs_rank_beside_the_h100_reference(cli: Any, history: Path) -> None:
    found = _strict(cli("advise", "maskrcnn", "--gpu", "h100", "--history", str(history), "--json").out)
    scores = [(k["evidence"]["kind"], round(k["score_minutes"], 2)) for k in found["known"]]
    assert sorted(scores) == [("reference result", 20.35), ("stored runs", 20.35)]


def test_a_gpu_without_runs_is_unknown_not_estimated(cli: Any, history: Path) -> None:
    result = cli("advise", "maskrcnn", "--gpu", "t4", "--history", str(history), "--json")
    assert result.code == 0, result.err
    found = _strict(result.out)
    assert found["known"] == []  # no score is made up from the A100 or H100 runs
    assert f"no runs of maskrcnn on t4 are stored in {history}: its time there is unknown" in found["unknown"]
    assert [b["variant"] for b in found["builds"]] == [
        "cuda10.1-cudnn7-ubi8-x86_64-sm75",
        "cuda11.8-cudnn8-ubi8-x86_64-sm75",
    ]
    text = cli("advise", "maskrcnn", "--gpu", "t4", "--history", str(history))
    assert "none: no stored runs and no reference result on this GPU" in text.out
    assert "unknown:" in text.out and "its time there is unknown" in text.out


def test_the_terminal_table_ranks_with_evidence(cli: Any, history: Path) -> None:
    result = cli("advise", "maskrcnn", "--gpu", "a100", "--history", str(history))
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == "maskrcnn on a100: known stacks, fastest first"
    assert lines[1].split() == ["#", "stack", "round", "score", "(min)", "runs", "spread", "evidence"]
    assert lines[3].split()[0] == "1" and lines[3].split()[-2:] == ["reference", "result"]
    assert lines[4].startswith("2  " + V21_LABEL) and "14.8 %" in lines[4]
    assert "  1: from recipes/benchmarks/v2.1/maskrcnn.yaml (reference of maskrcnn-v2.1)" in lines
    assert f"  2: from {history}" in lines


def test_bad_names_are_usage_errors(cli: Any, kb: Any, tmp_path: Path) -> None:
    assert cli("advise", "nope", "--gpu", "a100").code == 2
    result = cli("advise", "maskrcnn", "--gpu", "x100", "--history", str(tmp_path / "h.sqlite"))
    assert result.code == 2 and "--gpu x100: no such GPU generation" in result.err and "a100" in result.err
    with pytest.raises(UsageError, match=r"--round v9\.9: maskrcnn has no recipe of that round"):
        advise(kb, "maskrcnn", "a100", round_name="v9.9", history_file=str(tmp_path / "h.sqlite"))
