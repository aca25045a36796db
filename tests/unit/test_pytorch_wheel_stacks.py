"""PyTorch 2.x from PyPI's wheels (issue 36): which stack each GPU and CUDA pin gets, what the
stack names as its cuDNN and NCCL (the nvidia-* wheels the torch wheel requires), and what an
image of it installs. One table per behaviour, one row per case."""

from __future__ import annotations

from typing import Optional, Tuple

import pytest

from mlcc.errors import ConflictError
from mlcc.kb.model import KnowledgeBase
from mlcc.render import render
from mlcc.resolve import Resolver
from mlcc.resolve.request import build_request

BENCHMARK = "retinanet-reference"

# (pins) -> (arch, torch, CUDA, cuDNN, NCCL, variant)
RESOLVED = [
    (
        {"gpu": "b200", "base": "ubi9"},
        ("x86_64", "2.11.0", "13.0.2", "9.19.0.56", "2.28.9", "cuda13.0-cudnn9-ubi9-x86_64-sm100"),
    ),
    (
        {"gpu": "gb200", "base": "ubi9"},  # Grace: aarch64 without --arch
        ("aarch64", "2.11.0", "13.0.2", "9.19.0.56", "2.28.9", "cuda13.0-cudnn9-ubi9-aarch64-sm100"),
    ),
    (
        {"cuda": "12.8", "arch": "x86_64", "base": "ubi9"},  # PyPI's 2.8.0 x86_64 wheel is cu128
        ("x86_64", "2.8.0", "12.8.1", "9.10.2.21", "2.27.3", "cuda12.8-cudnn9-ubi9-x86_64"),
    ),
]


@pytest.mark.parametrize("pins, expected", RESOLVED, ids=[str(p) for p, _ in RESOLVED])
def test_each_gpu_and_cuda_gets_the_pypi_wheel_built_for_it(
    kb: KnowledgeBase, pins: dict, expected: Tuple[str, ...]
) -> None:
    stack = Resolver(kb).resolve(build_request(kb, BENCHMARK, **pins))
    assert stack.framework is not None and stack.cuda is not None
    assert stack.cudnn is not None and stack.nccl is not None and stack.python is not None
    found = (
        stack.arch.name,
        stack.framework.version,
        stack.cuda.version,
        stack.cudnn.version,
        stack.nccl.version,
        stack.variant,
    )
    assert found == expected
    # the framework's nvidia-* wheels are the stack's cuDNN and NCCL: no system copy
    assert stack.cudnn.method == stack.nccl.method == "bundled"
    assert stack.python.version == "3.12"


# (pins) -> words the refusal must say
REFUSED = [
    # PyPI's 2.8.0 aarch64 wheel is a CPU build: a CUDA 12.8 Grace stack from PyPI does not exist
    ({"gpu": "gb200", "cuda": "12.8"}, ("pytorch 2.11.0 (cu130) is built for CUDA 13.0", "--cuda 13.0")),
    # B300 (sm_103) on CUDA 12.8, which cannot target it
    ({"gpu": "b300", "cuda": "12.8", "arch": "x86_64"}, ("CUDA >= 12.9",)),
]


@pytest.mark.parametrize("pins, words", REFUSED, ids=[str(p) for p, _ in REFUSED])
def test_a_stack_pypi_cannot_give_is_refused_with_the_reason(
    kb: KnowledgeBase, pins: dict, words: Tuple[str, ...]
) -> None:
    with pytest.raises(ConflictError) as refused:
        Resolver(kb).resolve(build_request(kb, BENCHMARK, **pins))
    text = str(refused.value)
    for word in words:
        assert word in text, text


# (pins) -> what the Dockerfile installs with pip, and the system cuDNN/NCCL it must not install
INSTALLS = [
    ({"gpu": "b200", "base": "ubi9"}, "torch==2.11.0", "torchvision==0.26.0"),
    ({"gpu": "gb200", "base": "ubi9"}, "torch==2.11.0", "torchvision==0.26.0"),
]


@pytest.mark.parametrize("pins, torch, vision", INSTALLS, ids=[str(p) for p, *_ in INSTALLS])
def test_the_image_installs_the_wheels_hash_locked_and_no_system_cudnn_or_nccl(
    kb: KnowledgeBase, pins: dict, torch: str, vision: str
) -> None:
    stack = Resolver(kb).resolve(build_request(kb, BENCHMARK, **pins))
    dockerfile = dict(render(stack).files)["Dockerfile"]
    assert f"{torch} --hash=sha256:" in dockerfile and f"{vision} --hash=sha256:" in dockerfile
    # the nvidia-* wheels torch requires are locked with it, for this arch
    assert "nvidia-cudnn-cu13==9.19.0.56 --hash=sha256:" in dockerfile
    assert "nvidia-nccl-cu13==2.28.9 --hash=sha256:" in dockerfile
    assert "libcudnn" not in dockerfile and "libnccl" not in dockerfile
    assert "python3.12" in dockerfile


def _bundles(kb: KnowledgeBase, version: str, variant: str) -> Optional[dict]:
    [build] = [b for b in kb.frameworks["pytorch"].builds if (b.version, b.variant) == (version, variant)]
    return dict(build.bundles) if build.bundles else None


def test_the_pypi_builds_claim_what_their_wheels_require(kb: KnowledgeBase) -> None:
    """What the recipes claim, as PyPI's metadata says (kb check proves it online and from
    recipes/wheel-files.json offline; this pins the claim itself)."""
    assert _bundles(kb, "2.11.0", "cu130") == {
        "cuda_runtime": "13.0.2",
        "cudnn": "9.19.0.56",
        "nccl": "2.28.9",
    }
    assert _bundles(kb, "2.8.0", "cu128") == {
        "cuda_runtime": "12.8.90",
        "cudnn": "9.10.2.21",
        "nccl": "2.27.3",
    }
    assert _bundles(kb, "2.8.0", "cpu") is None  # PyPI's aarch64 wheel of 2.8.0
