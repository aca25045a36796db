"""results compare: maskrcnn v0.6 on DGX-1 beside v2.1 on A100 and H100, each against its
own round's reference line."""

from __future__ import annotations

from typing import Any, Dict, List

from mlcc.kb.model import KnowledgeBase
from mlcc.results.compare import compare
from mlcc.results.reference import published_by_round, published_results
from mlcc.results.rules import scoring_rules


def _rows(stack: str, round_: str, minutes: float, runs: int, system: str) -> List[Dict[str, Any]]:
    return [
        {
            "stack": stack,
            "round": round_,
            "benchmark": "maskrcnn",
            "status": "success",
            "minutes": minutes + i * 0.1,
            "log": f"{stack}-{i}.txt",
            "run_id": f"{stack}-{i}",
            "system": system,
        }
        for i in range(runs)
    ]


def test_each_round_has_its_reference_line(kb: KnowledgeBase) -> None:
    by_round = published_by_round(kb)
    assert by_round[("maskrcnn", "v0.6")].minutes == 207.48
    assert by_round[("maskrcnn", "v2.1")].minutes == 40.13
    assert by_round[("maskrcnn", "v2.1")].recipe == "maskrcnn-v2.1"


def test_a_name_in_two_rounds_keeps_v0_6_as_its_default_reference(kb: KnowledgeBase) -> None:
    assert published_results(kb)["maskrcnn"].minutes == 207.48


def test_compare_puts_v0_6_and_v2_1_side_by_side(kb: KnowledgeBase) -> None:
    rows = (
        _rows("maskrcnn-dgx1", "v0.6", 210.0, 5, "DGX-1")
        + _rows("maskrcnn-v2.1-a100", "v2.1", 41.0, 5, "DGXA100")
        + _rows("maskrcnn-v2.1-h100", "v2.1", 21.0, 5, "DGXH100")
    )
    (found,) = compare(rows, published_results(kb), scoring_rules(), published_by_round(kb))
    scores = {s.stack: s for s in found.stacks}
    assert [s.stack for s in found.stacks] == ["maskrcnn-v2.1-h100", "maskrcnn-v2.1-a100", "maskrcnn-dgx1"]
    assert scores["maskrcnn-dgx1"].reference is not None
    assert scores["maskrcnn-dgx1"].reference.minutes == 207.48
    assert scores["maskrcnn-v2.1-a100"].reference is not None
    assert scores["maskrcnn-v2.1-a100"].reference.minutes == 40.13
    shown = found.as_json()
    rounds = {s["stack"]: s["reference"]["round"] for s in shown["stacks"]}
    assert rounds == {"maskrcnn-v2.1-h100": "v2.1", "maskrcnn-v2.1-a100": "v2.1", "maskrcnn-dgx1": "v0.6"}
    ratios = {s["stack"]: s["vs_reference"] for s in shown["stacks"]}
    assert ratios["maskrcnn-v2.1-a100"] is not None and 1.0 < ratios["maskrcnn-v2.1-a100"] < 1.1
