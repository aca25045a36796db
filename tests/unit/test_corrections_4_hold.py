"""The corrections of a check of 142 recipe facts against their sources (issue 38), each as
a machine can see it: the v2.1 stacks get NGC 22.09's cuDNN 8.6.0.163 (NVIDIA's first CUDA
11.8.0 cudnn8 images on UBI), NVIDIA's runtime images of CUDA 11.1.0, 11.0.2, 10.1.168 (rhel)
and 10.0.130, 10.1.105 (ubuntu) make runtime flavours of them resolve with those images'
packages, and the recipes say what PyPI has of DALI and of bert's requirements on ppc64le."""

from __future__ import annotations

from pathlib import Path
from typing import Tuple

import pytest

from mlcc.errors import UsageError
from mlcc.kb.model import KnowledgeBase
from mlcc.resolve import Resolver
from mlcc.resolve.pins import Pins
from tests.conftest import RECIPES


@pytest.mark.parametrize("benchmark", ["maskrcnn", "bert", "ssd"])
@pytest.mark.parametrize("gpu", [None, "a100", "h100"])
def test_the_v2_1_stacks_get_ngc_22_09s_cudnn(
    kb: KnowledgeBase, resolver: Resolver, benchmark: str, gpu: str
) -> None:
    stack = resolver.resolve(Pins(round="v2.1", gpu=gpu).request(kb, benchmark))
    assert stack.cuda is not None and stack.cuda.version == "11.8.0"
    assert stack.cudnn is not None and stack.cudnn.version == "8.6.0.163"
    assert stack.cudnn.version == stack.benchmark.reference_stack.cudnn  # type: ignore[union-attr]
    packages = dict(stack.cudnn.packages)
    assert packages["libcudnn8"] == "8.6.0.163-1.cuda11.8"


def test_ppc64le_ubi8_gets_nvidias_11_8_0_cudnn_too(kb: KnowledgeBase) -> None:
    found = {(b.version, b.repo_distro, a) for b in kb.cudnn if b.cuda == "11.8.0" for a in b.arches}
    assert {("8.6.0.163", "rhel8", "ppc64le"), ("8.6.0.163", "rhel7", "x86_64")} <= found
    assert ("8.7.0.84", "rhel8", "x86_64") in found


@pytest.mark.parametrize(
    ("cuda", "base", "installed"),
    [
        # NVIDIA's 'CUDA 11.1' ubi8 images (6ae241db): base cuda-cudart, runtime libraries, nvtx, npp, cuBLAS
        (
            "11.1.0",
            "ubi8",
            ("cuda-cudart-11-1-11.1.74-1", "cuda-libraries-11-1-11.1.0-1", "libnpp-11-1-11.1.1.269-1",
             "libcublas-11-1-11.2.1.74-1", "cuda-nvtx-11-1-11.1.74-1"),
        ),
        # NVIDIA's 'Cuda 11.0 GA' images (b0725ff4)
        ("11.0.2", "ubi8", ("cuda-cudart-11-0-11.0.194-1", "libcublas-11-0-11.1.0.229-1")),
        # NVIDIA's centos7/ubi8 10.1 images at ece0c5b3: no separate npp or cuBLAS package
        ("10.1.168", "ubi7",
         ("cuda-cudart-10-1-10.1.168-1", "cuda-libraries-10-1-10.1.168-1", "cuda-nvtx-10-1-10.1.168-1")),
        # NVIDIA's ubuntu18.04 10.0 images
        ("10.0", "ubuntu1804",
         ("cuda-cudart-10-0=10.0.130-1", "cuda-cusparse-10-0=10.0.130-1", "cuda-cublas-10-0=10.0.130-1")),
        # NVIDIA's first 10.1 images (e4bb39bc), ubuntu18.04
        ("10.1.105", "ubuntu1804",
         ("cuda-cudart-10-1=10.1.105-1", "cuda-libraries-10-1=10.1.105-1", "cuda-nvtx-10-1=10.1.105-1")),
    ],
)  # fmt: skip
def test_a_runtime_flavour_of_the_release_resolves_with_nvidias_runtime_packages(
    cli, cuda: str, base: str, installed: Tuple[str, ...]
) -> None:  # type: ignore[no-untyped-def]
    result = cli(
        "gen", "nccl-tests", "--cuda", cuda, "--base", base, "--flavour", "runtime", "--only", "dockerfile"
    )
    assert result.code == 0, result.err
    [dockerfile] = Path("dockerfiles/nccl-tests").glob("*/Dockerfile")
    text = dockerfile.read_text()
    runtime_stage = text.rsplit("\nFROM ", 1)[1]  # the last stage: what the image keeps
    for package in installed:
        assert package in runtime_stage, package


def test_centos_images_of_10_1_105_stay_unconfirmed(kb: KnowledgeBase, resolver: Resolver) -> None:
    """The mirror's history before mid-2019 holds the ubuntu tree only: no rhel runtime claim."""
    with pytest.raises(UsageError, match=r"no runtime image of CUDA 10\.1\.105 for rhel bases"):
        resolver.resolve(Pins(cuda="10.1.105", base="ubi7", flavour="runtime").request(kb, "nccl-tests"))


def test_bert_says_pypi_has_no_ppc64le_wheel_not_that_it_is_x86_64_only(kb: KnowledgeBase) -> None:
    why = kb.benchmarks["bert-v2.1"].why_not_on("ppc64le")
    assert why is not None and "no ppc64le\n" not in why and "no ppc64le wheel" in why
    assert "manylinux2014_aarch64" in why and "x86_64\n      only" not in why


def test_no_recipe_says_pypis_dali_starts_at_1_26_0() -> None:
    for path in (RECIPES / "benchmarks" / "v2.1").glob("*.yaml"):
        text = " ".join(path.read_text().split())
        assert "starts at 1.26.0" not in text, path.name
        if "nvidia-dali-cuda110" in text:
            assert "1.16.0" in text, path.name
