"""The results use cases called as a script calls them (mlcc.app.results), without the CLI:
score, add, compare, collect and the HTML view return data and raise MlccErrors."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlcc.app.results import (
    ResultFilters,
    StackSource,
    add_results,
    compare_results,
    score_logs,
    write_results_page,
)
from mlcc.app.results_collect import CollectTarget, collect_results
from mlcc.errors import UsageError
from mlcc.results.collect import Cluster
from mlcc.results.store import Placement
from tests.conftest import mlperf_v06

from .test_results_store import JOBS, _job, _pod, _stack, api

__all__ = ["api"]  # the fixture

STACK = "cuda10.1-cudnn7-ubi8-x86_64"


@pytest.fixture(scope="module")
def maskrcnn_logs() -> Path:
    return mlperf_v06("NVIDIA", "dgx1_ngc19.05_pytorch", "maskrcnn")


def test_score_logs_returns_the_scores(kb, maskrcnn_logs: Path) -> None:  # type: ignore[no-untyped-def]
    scored = score_logs(kb, [str(maskrcnn_logs)])
    [found] = scored.scores
    assert found.benchmark == "maskrcnn" and found.runs == 5 and found.state == "complete"
    assert found.score_minutes is not None and 150 < found.score_minutes < 250
    assert len(scored.logs) == 5
    with pytest.raises(UsageError, match="no such file or folder"):
        score_logs(kb, [str(maskrcnn_logs / "nope")])


def test_add_then_compare_through_the_api(kb, tmp_path: Path, maskrcnn_logs: Path) -> None:  # type: ignore[no-untyped-def]
    history = str(tmp_path / "h.sqlite")
    source = StackSource(stack_file=str(_stack("maskrcnn", STACK)))
    stored = add_results(kb, [str(maskrcnn_logs)], source, Placement(system="lab", gpus=8), history)
    assert len(stored.added.stored) == 5 and stored.added.already == []
    assert stored.stack.variant == STACK and stored.stack.benchmark == "maskrcnn"
    again = add_results(kb, [str(maskrcnn_logs / "result_0.txt")], source, history_file=history)
    assert again.added.stored == [] and len(again.added.already) == 1

    compared = compare_results(kb, ResultFilters(benchmarks=("maskrcnn",)), history)
    [comparison] = compared.comparisons
    [stack] = comparison.stacks
    assert STACK in stack.stack and stack.runs == 5 and tuple(stack.systems) == ("lab",)
    assert comparison.reference is not None  # the recipe's published NVIDIA result
    assert compare_results(kb, ResultFilters(systems=("elsewhere",)), history).comparisons == []

    page = tmp_path / "out" / "results.html"
    write_results_page(str(page), compared.comparisons, "lab results")
    assert "lab results" in page.read_text()


def test_add_refuses_two_or_no_stack_sources(kb, maskrcnn_logs: Path) -> None:  # type: ignore[no-untyped-def]
    log = [str(maskrcnn_logs / "result_0.txt")]
    with pytest.raises(UsageError, match="--image REF or --stack"):
        add_results(kb, log, StackSource())
    with pytest.raises(UsageError, match="one of them"):
        add_results(kb, log, StackSource(image="oci:x", stack_file="stack.json"))


def test_collect_takes_nodes_and_gpus_from_the_pods(kb, api, tmp_path: Path, maskrcnn_logs: Path) -> None:  # type: ignore[no-untyped-def]
    state, kubeconfig = api
    state.objects[f"{JOBS}/mrcnn"] = _job("mrcnn", "Complete")
    state.pods["job-name=mrcnn"] = [_pod("mrcnn-a", "node1", 4, {"job-name": "mrcnn"})]
    state.logs["mrcnn-a"] = (maskrcnn_logs / "result_0.txt").read_bytes()
    collected = collect_results(
        kb,
        CollectTarget("job", "mrcnn"),
        Cluster(kubeconfig=str(kubeconfig)),
        StackSource(stack_file=str(_stack("maskrcnn", STACK))),
        history_file=str(tmp_path / "h.sqlite"),
    )
    assert (collected.found.outcome, collected.runs) == ("Complete", 1)
    [run] = collected.stored.added.stored
    assert run.benchmark == "maskrcnn" and (collected.found.nodes, collected.found.gpus) == (1, 4)
    with pytest.raises(UsageError, match="cannot collect from"):
        collect_results(kb, CollectTarget("pod", "x"), Cluster(), StackSource(stack_file="s"))
