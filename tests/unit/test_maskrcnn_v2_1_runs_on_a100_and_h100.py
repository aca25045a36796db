"""maskrcnn's MLPerf v2.1 recipe: NGC 22.09's stack, resolved for A100 and H100."""

from __future__ import annotations

import pytest

from mlcc.errors import ConflictError
from mlcc.kb.model import KnowledgeBase
from mlcc.resolve.request import build_request


@pytest.mark.parametrize("gpu", ["a100", "h100"])
def test_v2_1_resolves_with_cuda_that_targets_the_gpu(kb: KnowledgeBase, resolver, gpu: str) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(build_request(kb, "maskrcnn", round_="v2.1", gpu=gpu))
    assert stack.benchmark.name == "maskrcnn-v2.1" and stack.benchmark.round == "v2.1"
    assert stack.cuda is not None and stack.cuda.version == "11.8.0"
    assert stack.framework is not None and stack.framework.version == "1.13.0a0+d0d6b1f"
    assert stack.python is not None and stack.python.version == "3.8"


def test_the_ngc_22_09_build_targets_a100_and_h100(kb: KnowledgeBase) -> None:
    release = kb.frameworks["pytorch"]
    text = str(release)
    assert "1.13.0a0+d0d6b1f" in text
    assert "8.0" in text and "9.0+PTX" in text


def test_the_seed_benchmark_stays_v0_6(kb: KnowledgeBase, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(build_request(kb, "maskrcnn", cuda="10.1"))
    assert stack.benchmark.name == "maskrcnn" and stack.benchmark.round == "v0.6"


def test_v0_6_on_h100_points_at_round_v2_1(kb: KnowledgeBase, resolver) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConflictError) as caught:
        resolver.resolve(build_request(kb, "maskrcnn", gpu="h100"))
    assert "--round v2.1 resolves maskrcnn for it (CUDA 11.8.0)" in str(caught.value)


def test_the_reference_minutes_are_nvidias(kb: KnowledgeBase) -> None:
    bench = kb.benchmarks["maskrcnn-v2.1"]
    assert bench.build is not None and bench.build.reference is not None
    assert bench.build.reference.minutes == 40.13


def test_an_appended_release_cites_its_own_sources(kb: KnowledgeBase) -> None:
    """Its sources sit in the release, so no line above older releases moved (their origins
    are in published stack.json files)."""
    build = next(b for b in kb.frameworks["pytorch"].builds if b.version == "1.13.0a0+d0d6b1f")
    assert any("rel-22-09" in source for source in build.prov.source)
    older = next(b for b in kb.frameworks["pytorch"].builds if b.version == "1.1.0a0+828a6a3")
    assert older.prov.origin == "recipes/frameworks/pytorch.yaml:74"
