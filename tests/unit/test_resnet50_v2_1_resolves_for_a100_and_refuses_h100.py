"""ResNet-50's MLPerf v2.1 recipe (NVIDIA's MXNet, NGC 22.04): the stack for A100 and why not H100.

`mlcc resolve resnet50 --round v2.1 --gpu a100` is one of issue 27's done-when commands. NGC 22.04
ran CUDA 11.6.2, cuDNN 8.4.0.27 and NCCL 2.12.10 (NVIDIA/systems/dgxa100_ngc22.04_mxnet.json);
the nearest public MXNet is PyPI's mxnet-cu112 1.9.1, whose device code stops at sm_86 with no PTX,
so H100 is refused with the CUDA it needs named.
"""

from __future__ import annotations

import pytest

from mlcc.errors import ConflictError
from mlcc.kb.model import KnowledgeBase
from mlcc.resolve.request import build_request
from tests.conftest import REPO


def test_resnet50_round_v2_1_on_a100_is_ngc_22_04s_cuda_cudnn_and_nccl(kb: KnowledgeBase, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(build_request(kb, "resnet50", round_="v2.1", gpu="a100"))
    assert stack.benchmark.name == "resnet50-v2.1" and stack.benchmark.round == "v2.1"
    assert stack.cuda is not None and stack.cuda.version == "11.6.2"
    assert stack.cudnn is not None and stack.cudnn.version == "8.4.0.27"
    assert stack.nccl is not None and stack.nccl.version == "2.12.10"
    assert stack.framework is not None and stack.framework.version == "1.9.1"
    assert stack.python is not None and stack.python.version == "3.8"
    assert stack.base.name == "ubi8"
    assert stack.gpu_capability == "8.0"


def test_the_mxnet_build_on_cuda_11_6_is_an_inference_that_says_which_gpus_it_runs_on(
    kb: KnowledgeBase,
) -> None:
    build = next(
        b for b in kb.frameworks["mxnet"].builds if b.version == "1.9.1" and b.variant == "cu112-cuda11.6"
    )
    assert build.cuda == ("11.6",)
    assert build.install.packages == ("mxnet-cu112==1.9.1",)
    assert build.prov.verified is False
    note = str(build.prov.note)
    assert "An inference" in note and "sm_80" in note and "H100 (9.0) cannot" in note


def test_the_v0_6_resnet50_is_unchanged_without_a_round(kb: KnowledgeBase, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(build_request(kb, "resnet50"))
    assert stack.benchmark.name == "resnet50" and stack.benchmark.round == "v0.6"
    assert stack.framework is not None and stack.framework.version == "1.5.1"


def test_on_h100_the_refusal_names_the_cuda_sm_90_needs(kb: KnowledgeBase, resolver) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConflictError) as caught:
        resolver.resolve(build_request(kb, "resnet50", round_="v2.1", gpu="h100"))
    message = str(caught.value)
    assert "sm_90" in message and "CUDA >= 11.8" in message


def test_the_recipe_says_why_h100_is_refused_and_what_is_inferred(kb: KnowledgeBase) -> None:
    bench = kb.benchmarks["resnet50-v2.1"]
    note = str(bench.prov.note)
    assert "no public MXNet" in note and "CUDA >= 11.8" in note and "an inference" in note


def test_the_reference_minutes_are_what_mlcc_scores_on_nvidias_a100_runs(kb: KnowledgeBase) -> None:
    from mlcc.app.results import score_logs

    bench = kb.benchmarks["resnet50-v2.1"]
    assert bench.build is not None and bench.build.reference is not None
    reference = bench.build.reference
    folder = (
        REPO / "tests" / "data" / "mlperf-v2.1" / "NVIDIA" / "results" / "dgxa100_ngc22.04_mxnet" / "resnet"
    )
    scored = score_logs(kb, [str(folder)])
    assert len(scored.scores) == 1
    score = scored.scores[0].as_json()
    assert score["benchmark"] == reference.log_name == "resnet"
    assert round(float(score["score_minutes"]), 2) == reference.minutes == 28.81
    assert reference.runs == score["required_runs"] == 5


def test_mlperf_logging_is_installed_at_the_full_commit_of_nvidias_tag(kb: KnowledgeBase) -> None:
    build = kb.benchmarks["resnet50-v2.1"].build
    assert "logging.git@4272f73c952d9b22c735aef88640699700d5a0b8" in str(build)


def test_the_recorded_wheel_links_what_the_cuda_11_6_build_claims(kb: KnowledgeBase) -> None:
    """mlcc kb check's own rule on the wheel kb check read (recipes/wheel-files.json): CUDA 11
    keeps one runtime soname, libcudart.so.11.0, so a claim of CUDA 11.6 agrees with the cu112
    wheel; and the cuDNN range admits only the cuDNN 8 it links."""
    from mlcc.kbtools.bundles import ERROR
    from mlcc.kbtools.offline import load_wheel_record
    from mlcc.kbtools.wheels import linked_findings

    record = load_wheel_record(str(REPO / "recipes"))
    assert record is not None
    facts = record["mxnet_cu112-1.9.1-py3-none-manylinux2014_x86_64.whl"]
    assert "libcudart.so.11.0" in facts["needed"]["mxnet/libmxnet.so"]
    build = next(
        b for b in kb.frameworks["mxnet"].builds if b.version == "1.9.1" and b.variant == "cu112-cuda11.6"
    )
    assert [f for f in linked_findings(build, kb, facts, set()) if f.severity == ERROR] == []
    wrong = build._replace(cuda=("10.2",))
    assert [f for f in linked_findings(wrong, kb, facts, set()) if f.severity == ERROR]
