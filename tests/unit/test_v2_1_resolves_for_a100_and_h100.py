"""MLPerf v2.1 recipes (maskrcnn, bert, ssd as RetinaNet): NGC 22.09's stack, resolved for A100
and H100 (issue 27), beside v0.6's stacks, which keep their meaning."""

from __future__ import annotations

from typing import List, Optional, Tuple

import pytest

from mlcc.errors import ConflictError
from mlcc.kb.model import KnowledgeBase
from mlcc.resolve.request import build_request

NGC_22_09_TORCH = "1.13.0a0+d0d6b1f"
# (benchmark, --round, --gpu): bert exists in v2.1 only, so it needs no --round; maskrcnn and
# ssd have a v0.6 recipe too and are asked with --round v2.1.
CASES: List[Tuple[str, Optional[str], str]] = [
    (benchmark, round_, gpu)
    for benchmark, round_ in [("maskrcnn", "v2.1"), ("bert", None), ("bert", "v2.1"), ("ssd", "v2.1")]
    for gpu in ("a100", "h100")
]


@pytest.mark.parametrize(("benchmark", "round_", "gpu"), CASES)
def test_v2_1_resolves_to_ngc_22_09_with_cuda_for_the_gpu(
    kb: KnowledgeBase, resolver, benchmark: str, round_: Optional[str], gpu: str
) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(build_request(kb, benchmark, round_=round_, gpu=gpu))
    assert stack.benchmark.name == f"{benchmark}-v2.1" and stack.benchmark.round == "v2.1"
    assert stack.cuda is not None and stack.cuda.version == "11.8.0"
    assert stack.framework is not None and stack.framework.version == NGC_22_09_TORCH
    assert stack.python is not None and stack.python.version == "3.8"
    assert stack.gpu_capability == kb.gpus[gpu].compute_capability


def test_the_ngc_22_09_build_targets_a100_and_h100(kb: KnowledgeBase) -> None:
    """Its TORCH_CUDA_ARCH_LIST names both GPUs' own compute capabilities (+PTX only adds JIT
    code for newer GPUs, so 9.0+PTX counts as 9.0)."""
    build = next(b for b in kb.frameworks["pytorch"].builds if b.version == NGC_22_09_TORCH)
    arch_list = dict(build.install.build_env)["TORCH_CUDA_ARCH_LIST"].split()
    native = {entry.split("+")[0] for entry in arch_list}
    assert {kb.gpus["a100"].compute_capability, kb.gpus["h100"].compute_capability} <= native
    assert arch_list[-1].endswith("+PTX")


@pytest.mark.parametrize(("benchmark", "minutes", "runs"), [("maskrcnn", 40.13, 5), ("bert", 16.88, 10)])
def test_the_reference_minutes_are_what_mlcc_scores_on_nvidias_a100_runs(
    kb: KnowledgeBase, benchmark: str, minutes: float, runs: int
) -> None:
    bench = kb.benchmarks[f"{benchmark}-v2.1"]
    assert bench.build is not None and bench.build.reference is not None
    assert (bench.build.reference.minutes, bench.build.reference.runs) == (minutes, runs)


def test_the_h100_stack_is_marked_an_inference(kb: KnowledgeBase) -> None:
    bench = kb.benchmarks["bert-v2.1"]
    assert "by inference" in str(bench.prov.note)


def test_mlperf_logging_and_mlperf_common_are_at_full_commits(kb: KnowledgeBase) -> None:
    bench = kb.benchmarks["bert-v2.1"]
    text = str(bench.build)
    assert "logging.git@62cb0761014922532ff1a4d35d8c2c4021f2e123" in text
    assert "mlperf-common.git@7112e7b73951dcde8e89934e8b5392348bcad198" in text


@pytest.mark.parametrize(("benchmark", "cuda"), [("maskrcnn", "10.1"), ("ssd", None)])
def test_without_a_round_the_v0_6_benchmarks_stay_v0_6(
    kb: KnowledgeBase, resolver, benchmark: str, cuda: Optional[str]
) -> None:  # type: ignore[no-untyped-def]
    """The seed command (maskrcnn --cuda 10.1) keeps its meaning."""
    stack = resolver.resolve(build_request(kb, benchmark, cuda=cuda))
    assert stack.benchmark.name == benchmark and stack.benchmark.round == "v0.6"


def test_v0_6_on_h100_points_at_round_v2_1(kb: KnowledgeBase, resolver) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConflictError) as caught:
        resolver.resolve(build_request(kb, "maskrcnn", gpu="h100"))
    assert "--round v2.1 resolves maskrcnn for it (CUDA 11.8.0)" in str(caught.value)


def test_an_appended_release_cites_its_own_sources(kb: KnowledgeBase) -> None:
    """Its sources sit in the release, so no line above older releases moved (their origins
    are in published stack.json files)."""
    build = next(b for b in kb.frameworks["pytorch"].builds if b.version == NGC_22_09_TORCH)
    assert any("rel-22-09" in source for source in build.prov.source)
    older = next(b for b in kb.frameworks["pytorch"].builds if b.version == "1.1.0a0+828a6a3")
    assert older.prov.origin == "recipes/frameworks/pytorch.yaml:74"
