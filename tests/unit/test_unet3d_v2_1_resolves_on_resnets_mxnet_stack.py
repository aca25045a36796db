"""3D U-Net's MLPerf v2.1 recipe: NGC 22.04's MXNet stack (as ResNet-50's), and why its image
does not run NVIDIA's model (the operators only NGC's MXNet has)."""

from __future__ import annotations

import pytest

from mlcc.errors import ConflictError
from mlcc.kb.model import KnowledgeBase
from mlcc.resolve.request import build_request


def test_unet3d_needs_no_round_flag_and_gets_ngc_22_04s_stack_on_a100(kb: KnowledgeBase, resolver) -> None:  # type: ignore[no-untyped-def]
    """unet3d exists in v2.1 only (v0.6 had no 3D U-Net)."""
    stack = resolver.resolve(build_request(kb, "unet3d", gpu="a100"))
    assert stack.benchmark.name == "unet3d-v2.1" and stack.benchmark.round == "v2.1"
    assert (stack.cuda.version, stack.cudnn.version, stack.nccl.version) == ("11.6.2", "8.4.0.27", "2.12.10")
    assert stack.framework is not None and stack.framework.version == "1.9.1"
    assert stack.python is not None and stack.python.version == "3.8"
    resnet = resolver.resolve(build_request(kb, "resnet50", round_="v2.1", gpu="a100"))
    assert stack.framework == resnet.framework and stack.cuda == resnet.cuda


def test_on_h100_the_refusal_names_the_cuda_sm_90_needs(kb: KnowledgeBase, resolver) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConflictError) as caught:
        resolver.resolve(build_request(kb, "unet3d", gpu="h100"))
    assert "sm_90" in str(caught.value) and "CUDA >= 11.8" in str(caught.value)


def test_the_recipe_says_the_image_does_not_run_nvidias_model_and_why(kb: KnowledgeBase) -> None:
    bench = kb.benchmarks["unet3d-v2.1"]
    assert bench.build is not None
    assert "INCOMPLETE" in str(bench.build.prov.note)
    for operator in ("InstanceNormV2", "SpatialParallelConv3D"):
        assert operator in str(bench.prov.note) and operator in str(bench.build.prov.note)


def test_the_reference_is_nvidias_one_node_a100_score_over_40_runs(kb: KnowledgeBase) -> None:
    build = kb.benchmarks["unet3d-v2.1"].build
    assert build is not None and build.reference is not None
    assert (build.reference.minutes, build.reference.runs) == (23.82, 40)


def test_the_pip_steps_pin_every_package_and_git_ref(kb: KnowledgeBase) -> None:
    build = kb.benchmarks["unet3d-v2.1"].build
    assert build is not None
    for step in build.steps:
        for requirement in step.packages:
            assert "==" in requirement or "@" in requirement, requirement
            if "@" in requirement:
                assert len(requirement.rsplit("@", 1)[1]) == 40, requirement
