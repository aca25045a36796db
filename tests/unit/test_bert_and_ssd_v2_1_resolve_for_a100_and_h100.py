"""bert and ssd (RetinaNet) MLPerf v2.1 recipes: NGC 22.09's stack, resolved for A100 and H100 (issue 27)."""

from __future__ import annotations

import pytest

from mlcc.kb.model import KnowledgeBase
from mlcc.resolve.request import build_request


@pytest.mark.parametrize("gpu", ["a100", "h100"])
def test_bert_needs_no_round_flag_and_gets_cuda_for_the_gpu(kb: KnowledgeBase, resolver, gpu: str) -> None:  # type: ignore[no-untyped-def]
    """bert exists in v2.1 only, so no --round is needed."""
    stack = resolver.resolve(build_request(kb, "bert", gpu=gpu))
    assert stack.benchmark.name == "bert-v2.1" and stack.benchmark.round == "v2.1"
    assert stack.cuda is not None and stack.cuda.version == "11.8.0"
    assert stack.framework is not None and stack.framework.version == "1.13.0a0+d0d6b1f"
    assert stack.python is not None and stack.python.version == "3.8"


def test_the_reference_minutes_are_what_mlcc_scores_on_nvidias_a100_runs(kb: KnowledgeBase) -> None:
    bench = kb.benchmarks["bert-v2.1"]
    assert bench.build is not None and bench.build.reference is not None
    assert bench.build.reference.minutes == 16.88
    assert bench.build.reference.runs == 10


def test_the_h100_stack_is_marked_an_inference(kb: KnowledgeBase) -> None:
    bench = kb.benchmarks["bert-v2.1"]
    assert "by inference" in str(bench.prov.note)


def test_mlperf_logging_and_mlperf_common_are_at_full_commits(kb: KnowledgeBase) -> None:
    bench = kb.benchmarks["bert-v2.1"]
    text = str(bench.build)
    assert "logging.git@62cb0761014922532ff1a4d35d8c2c4021f2e123" in text
    assert "mlperf-common.git@7112e7b73951dcde8e89934e8b5392348bcad198" in text


@pytest.mark.parametrize("gpu", ["a100", "h100"])
def test_ssd_v2_1_is_retinanet_on_cuda_for_the_gpu(kb: KnowledgeBase, resolver, gpu: str) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(build_request(kb, "ssd", round_="v2.1", gpu=gpu))
    assert stack.benchmark.name == "ssd-v2.1" and stack.benchmark.round == "v2.1"
    assert stack.cuda is not None and stack.cuda.version == "11.8.0"
    assert stack.framework is not None and stack.framework.version == "1.13.0a0+d0d6b1f"


def test_ssd_without_a_round_stays_v0_6(kb: KnowledgeBase, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(build_request(kb, "ssd"))
    assert stack.benchmark.name == "ssd" and stack.benchmark.round == "v0.6"
