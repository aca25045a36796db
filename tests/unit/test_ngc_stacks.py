"""A benchmark on an NGC base: the stack is the base's record (no CUDA install, no framework
stage), the files build FROM the NGC image, the manifest says what came with the base, and a
GPU the base's CUDA cannot target is refused naming the NGC release that can."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Dict

import pytest
import yaml

from mlcc.errors import ConflictError, UsageError
from mlcc.kb import load
from mlcc.kb.model import KnowledgeBase
from mlcc.resolve import Resolver, Stack
from mlcc.resolve.request import build_request

from .test_ngc_bases import NGC_PROBE, write_probe

VARIANT = "cuda13.0-cudnn9-ngc-pytorch-25.09-x86_64"


@pytest.fixture
def ngc_kb(recipes_copy: Path) -> KnowledgeBase:
    write_probe(recipes_copy)
    return load(str(recipes_copy), use_cache=False)


def _resolve(kb: KnowledgeBase, benchmark: str = "ngc-probe", **pins: Any) -> Stack:
    return Resolver(kb, host_arch="x86_64").resolve(build_request(kb, benchmark, **pins))


def _gen(cli: Callable[..., Any], recipes: Path, *args: str) -> Path:
    result = cli("--recipes", str(recipes), "gen", "ngc-probe", "--arch", "x86_64", "-o", "out", *args)
    assert result.code == 0, result.err
    return Path("out")


def test_an_ngc_stack_takes_cuda_libraries_and_framework_from_the_base_record(ngc_kb: KnowledgeBase) -> None:
    stack = _resolve(ngc_kb)
    base = ngc_kb.base("ngc-pytorch-25.09")
    assert stack.base == base and stack.variant == VARIANT
    assert stack.cuda is not None and stack.cuda.version == "13.0.1" and stack.cuda.packages == ()
    assert stack.cuda.min_driver == "580.82.07"
    assert stack.cudnn is not None and (stack.cudnn.version, stack.cudnn.method) == ("9.13.1.26", "base")
    assert stack.nccl is not None and (stack.nccl.version, stack.nccl.method) == ("2.28.3", "base")
    assert stack.framework is not None and stack.framework.install.method == "base"
    assert (stack.framework.framework, stack.framework.version) == ("pytorch", "2.9.0a0+50eac811a6")
    assert stack.framework_module == "torch"
    assert stack.python is not None and stack.python.version == "3.12"
    assert stack.repositories == ()  # nothing from NVIDIA's package repositories
    assert stack.from_base == ("cuda", "cudnn", "nccl", "python", "framework")
    assert stack.reference  # the first base the recipe names
    assert stack.flavour == "devel"


def test_an_ngc_stack_is_the_same_however_it_was_asked_for(ngc_kb: KnowledgeBase) -> None:
    plain = _resolve(ngc_kb, arch="x86_64")
    pinned = _resolve(ngc_kb, arch="x86_64", cuda="13.0", python="3.12", with_=["pytorch=2.9.0a0+50eac811a6"])
    assert pinned.to_dict() == plain.to_dict()
    assert all("--" not in choice.reason for choice in plain.choices)


def test_pins_choose_among_the_named_ngc_bases(ngc_kb: KnowledgeBase) -> None:
    assert _resolve(ngc_kb, cuda="12.9").base.name == "ngc-pytorch-25.04"
    other = _resolve(ngc_kb, base="ngc-pytorch-25.04")
    assert other.base.name == "ngc-pytorch-25.04" and not other.reference
    assert other.variant == "cuda12.9-cudnn9-ngc-pytorch-25.04-x86_64"


def test_a_gpu_the_ngc_cuda_cannot_target_is_refused_naming_the_release_that_can(recipes_copy: Path) -> None:
    write_probe(
        recipes_copy, NGC_PROBE.replace("[ngc-pytorch-25.09, ngc-pytorch-25.04]", "[ngc-pytorch-25.03]")
    )
    kb = load(str(recipes_copy), use_cache=False)
    assert _resolve(kb, gpu="b200").base.name == "ngc-pytorch-25.03"  # CUDA 12.8 targets sm_100
    with pytest.raises(ConflictError) as caught:
        _resolve(kb, gpu="gb300")
    text = str(caught.value)
    assert "ngc-pytorch-25.03 (NGC 25.03) holds CUDA 12.8.1.012, which has no sm_103 kernels" in text
    assert "NGC bases that can: ngc-pytorch-25.09, ngc-pytorch-25.04" in text


def test_a_gpu_refusal_names_the_benchmarks_own_base_that_can(recipes_copy: Path) -> None:
    write_probe(recipes_copy, NGC_PROBE.replace("ngc-pytorch-25.04]", "ngc-pytorch-25.03]"))
    kb = load(str(recipes_copy), use_cache=False)
    with pytest.raises(ConflictError) as caught:
        _resolve(kb, gpu="gb300", base="ngc-pytorch-25.03")
    assert "ngc-probe also builds on ngc-pytorch-25.09 (NGC 25.09, CUDA 13.0.1)" in str(caught.value)
    stack = _resolve(kb, gpu="gb300")  # the reference base can: GB300 trays are Grace hosts
    assert (stack.base.name, stack.arch.name, stack.gpu_capability) == (
        "ngc-pytorch-25.09",
        "aarch64",
        "10.3",
    )


def test_a_runtime_flavour_is_refused_on_an_image_base(ngc_kb: KnowledgeBase) -> None:
    with pytest.raises(UsageError, match="already holds CUDA, its libraries and pytorch"):
        _resolve(ngc_kb, flavour="runtime")


def test_a_plain_benchmark_never_builds_on_an_ngc_base(kb: KnowledgeBase, resolver: Resolver) -> None:
    stack = resolver.resolve(build_request(kb, "nccl-tests"))
    assert stack.base.contents is None
    with pytest.raises(ConflictError) as caught:
        resolver.resolve(build_request(kb, "nccl-tests", base="ngc-pytorch-25.09"))
    assert "ngc-pytorch-25.09 holds its own CUDA and framework and nccl-tests's recipe names none" in str(
        caught.value
    )


def test_the_dockerfile_builds_from_the_ngc_image_and_installs_no_cuda_or_framework(
    ngc_kb: KnowledgeBase, recipes_copy: Path, cli: Callable[..., Any]
) -> None:
    out = _gen(cli, recipes_copy)
    dockerfile = (out / "ngc-probe" / VARIANT / "Dockerfile").read_text()
    assert "ARG BASE_IMAGE=nvcr.io/nvidia/pytorch:25.09-py3\nFROM ${BASE_IMAGE}\n" in dockerfile
    assert "apt-get install" in dockerfile  # the base is Ubuntu: the ubuntu family's commands
    assert "NVIDIA package repositories" not in dockerfile and "cuda-cudart" not in dockerfile
    assert "developer.download.nvidia.com/compute" not in dockerfile
    assert (
        "# CUDA 13.0.1, cuDNN 9.13.1.26, NCCL 2.28.3, pytorch 2.9.0a0+50eac811a6 come with the base image"
        in dockerfile
    )
    assert "-m venv --system-site-packages /opt/mlcc/venv" in dockerfile
    assert "(ngc-25.09, base)" not in dockerfile and "install --no-cache-dir torch" not in dockerfile
    assert "--module torch" in dockerfile


def test_the_stack_manifest_says_cuda_and_the_framework_come_with_the_base(
    ngc_kb: KnowledgeBase, recipes_copy: Path, cli: Callable[..., Any]
) -> None:
    out = _gen(cli, recipes_copy)
    document: Dict[str, Any] = json.loads((out / "ngc-probe" / VARIANT / "stack.json").read_text())
    assert document["base"]["provides"] == ["cuda", "cudnn", "nccl", "python", "framework"]
    assert document["base"]["contents"]["cuda"] == "13.0.1.012"
    assert document["base"]["contents"]["pytorch"] == "2.9.0a0+50eac811a6"
    assert document["components"]["framework"]["install"] == "base"
    assert document["components"]["cuda"]["packages"] == []
    assert document["components"]["cudnn"]["method"] == "base"
    dockerfile = (out / "ngc-probe" / VARIANT / "Dockerfile").read_text()
    assert 'io.mlcc.base.provides="cuda,cudnn,nccl,python,framework"' in dockerfile


def test_a_plain_stack_manifest_names_nothing_as_coming_with_the_base(cli: Callable[..., Any]) -> None:
    result = cli("gen", "nccl-tests", "--arch", "x86_64", "-o", "out")
    assert result.code == 0, result.err
    found = next(Path("out").glob("nccl-tests/*/stack.json"))
    document = json.loads(found.read_text())
    assert "provides" not in document["base"] and "contents" not in document["base"]
    assert "io.mlcc.base.provides" not in (found.parent / "Dockerfile").read_text()


def test_openshift_pulls_the_ngc_base_as_a_docker_image(
    ngc_kb: KnowledgeBase, recipes_copy: Path, cli: Callable[..., Any]
) -> None:
    out = _gen(cli, recipes_copy)
    documents = list(
        yaml.safe_load_all((out / "openshift" / "ngc-probe" / VARIANT / "build.yaml").read_text())
    )
    items = [item for doc in documents if doc for item in doc.get("items", [doc])]
    streams = [item for item in items if item["kind"] == "ImageStream"]
    tags = [tag for stream in streams for tag in stream["spec"].get("tags", [])]
    assert {"kind": "DockerImage", "name": "nvcr.io/nvidia/pytorch:25.09-py3"} in [
        tag["from"] for tag in tags
    ]


def test_list_bases_shows_what_each_ngc_image_holds(cli: Callable[..., Any]) -> None:
    table = cli("list", "bases")
    assert table.code == 0
    assert (
        "ngc-pytorch-25.09: NGC 25.09, CUDA 13.0.1.012, cuDNN 9.13.1.26, NCCL 2.28.3, cuBLAS 13.0.2.14,"
        " DALI 1.51.2, Python 3.12, pytorch 2.9.0a0+50eac811a6, Ubuntu 24.04.3 LTS"
    ) in table.out
    rows = {row["name"]: row for row in json.loads(cli("list", "bases", "--json").out)}
    assert rows["ngc-dgl-25.03"]["contents"]["frameworks"] == {
        "dgl": "unconfirmed",
        "pytorch": "2.7.0a0+7c8ec84dab",
    }
    assert rows["ngc-pytorch-25.04"]["contents"]["driver_ran"] == {
        "kernel": "570.133.20",
        "user_mode": "575.51.02",
    }
    assert rows["ubi9"]["contents"] is None
