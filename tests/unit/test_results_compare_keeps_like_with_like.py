"""results compare across rounds and GPUs compares like with like: one table holds one
benchmark (a log name whose rounds' rules name one model, recipes/rounds/ ``model``), so
v0.6's ssd (SSD) and v2.1's ssd (SSD (RetinaNet)) are two tables, each beside a reference of
its own model; maskrcnn v0.6 on V100 and retinanet v5.1 on GB200 are two benchmarks, and the
CLI says so instead of comparing them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

from mlcc.kb.model import KnowledgeBase
from mlcc.results.compare import compare, different_benchmarks
from mlcc.results.reference import published_by_round, published_results
from mlcc.results.rules import scoring_rules
from tests.conftest import REPO, mlperf_v06

MASKRCNN_V06_STACK = REPO / "dockerfiles" / "maskrcnn" / "cuda10.1-cudnn7-ubi8-x86_64" / "stack.json"
RETINANET_GB200 = (
    REPO / "tests" / "data" / "mlperf-v5.1" / "NVIDIA" / "results" / "tyche_ngpu72_ngc25.04_pytorch"
)


def _rows(benchmark: str, stack: str, round_: str, minutes: float, system: str) -> List[Dict[str, Any]]:
    return [
        {
            "stack": stack,
            "round": round_,
            "benchmark": benchmark,
            "status": "success",
            "minutes": minutes + i * 0.1,
            "log": f"{stack}-{i}.txt",
            "run_id": f"{stack}-{i}",
            "system": system,
        }
        for i in range(5)
    ]


def test_the_rounds_name_ssd_two_models() -> None:
    rules = scoring_rules()
    assert rules.model("v0.6", "ssd") == "SSD"
    assert rules.model("v2.1", "ssd") == "SSD (RetinaNet)"
    assert rules.model("v5.1", "retinanet") == rules.model("v5.0", "retinanet") == "SSD (RetinaNet)"
    assert rules.model("v0.6", "maskrcnn") == rules.model("v2.1", "maskrcnn") == "Mask R-CNN"


def test_ssd_of_v06_and_of_v21_are_two_tables_each_beside_its_own_models_reference(kb: KnowledgeBase) -> None:
    rows = _rows("ssd", "ssd-dgx1", "v0.6", 23.0, "DGX-1") + _rows(
        "ssd", "ssd-v2.1-a100", "v2.1", 13.0, "DGXA100"
    )
    found = compare(rows, published_results(kb), scoring_rules(), published_by_round(kb))
    assert [(c.benchmark, c.model, [s.stack for s in c.stacks]) for c in found] == [
        ("ssd", "SSD", ["ssd-dgx1"]),
        ("ssd", "SSD (RetinaNet)", ["ssd-v2.1-a100"]),
    ]
    ssd, retinanet = found
    assert ssd.reference is not None and ssd.reference.round == "v0.6"
    assert retinanet.reference is not None and retinanet.reference.round == "v2.1"
    assert retinanet.stacks[0].reference == retinanet.reference
    assert retinanet.title == "ssd (SSD (RetinaNet))"
    assert retinanet.notes == (
        "ssd runs of v0.6 train SSD, not SSD (RetinaNet): another benchmark under the same log name,"
        " compared in its own table",
    )
    assert retinanet.as_json()["model"] == "SSD (RetinaNet)"


def test_maskrcnn_of_v06_and_v21_stay_one_table(kb: KnowledgeBase) -> None:
    rows = _rows("maskrcnn", "m-dgx1", "v0.6", 210.0, "DGX-1") + _rows(
        "maskrcnn", "m-a100", "v2.1", 41.0, "DGXA100"
    )
    (found,) = compare(rows, published_results(kb), scoring_rules(), published_by_round(kb))
    assert found.model == "Mask R-CNN" and found.notes == () and found.title == "maskrcnn"
    assert {s.stack for s in found.stacks} == {"m-dgx1", "m-a100"}


def test_maskrcnn_and_retinanet_are_said_to_be_different_benchmarks(kb: KnowledgeBase) -> None:
    rows = _rows("maskrcnn", "m-dgx1", "v0.6", 210.0, "DGX-1") + _rows(
        "retinanet", "r-gb200", "v5.1", 3.8, "18xNVIDIA GB200"
    )
    found = compare(rows, published_results(kb), scoring_rules(), published_by_round(kb))
    assert [c.benchmark for c in found] == ["maskrcnn", "retinanet"]
    assert different_benchmarks(found) == (
        "maskrcnn (Mask R-CNN) and retinanet (SSD (RetinaNet)) are different benchmarks: each table"
        " compares runs of one benchmark only, and no ratio is drawn between them"
    )
    assert different_benchmarks(found[:1]) is None


def test_the_cli_says_maskrcnn_v06_v100_and_retinanet_v51_gb200_are_not_compared(
    cli: Any, tmp_path: Path
) -> None:
    history = str(tmp_path / "h.sqlite")
    retinanet_stack = tmp_path / "stack.json"
    document = json.loads(MASKRCNN_V06_STACK.read_text())
    document["benchmark"]["name"] = "retinanet"  # a stack of retinanet's, whatever its recipe
    retinanet_stack.write_text(json.dumps(document))
    maskrcnn = mlperf_v06("NVIDIA", "dgx1_ngc19.05_pytorch", "maskrcnn")
    for logs, stack in ((maskrcnn, MASKRCNN_V06_STACK), (RETINANET_GB200 / "retinanet", retinanet_stack)):
        added = cli("results", "add", str(logs), "--stack", str(stack), "--history", history)
        assert added.code == 0, added.err
    shown = cli("results", "compare", "-b", "maskrcnn", "-b", "retinanet", "--history", history)
    assert shown.code == 0, shown.err
    first = shown.out.splitlines()[0]
    assert first.startswith("maskrcnn (Mask R-CNN) and retinanet (SSD (RetinaNet)) are different benchmarks")
    assert "\nmaskrcnn  reference 207.48 min" in shown.out
    assert "\nretinanet\n" in shown.out  # its own table, with no maskrcnn reference or ratio
    retinanet_table = shown.out.split("\nretinanet\n", 1)[1]
    assert "v5.1   3.77" in retinanet_table and "207.48" not in retinanet_table
