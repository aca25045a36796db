"""A build step that installs its own NCCL or cuDNN over an NGC base's (recipes: a script
step's ``replaces``: built from source, or from the base's packages): the stack, stack.json,
the labels, the SBOM and ``mlcc resolve`` name the installed version and how it came, with the
base's own beside it as the one replaced, and ``mlcc verify`` expects the installed one."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, Callable, Dict

import dockerfile_parse
import pytest

from mlcc.image.content import INSTALLED_FILE, STACK_FILE, ImageContent
from mlcc.image.sbom import ImageName, cyclonedx
from mlcc.image.stack import verify
from mlcc.kb.model import KnowledgeBase
from mlcc.render import render
from mlcc.resolve import Resolver, Stack, build_request
from mlcc.resolve.explain import StackConflict
from mlcc.stackfile.document import problem_of
from tests.ngc_reports import TORCH, ngc_report
from tests.recipe_edits import edit, line_of

RETINANET = Path("benchmarks") / "v5.1" / "retinanet.yaml"
REPLACES = 'replaces: {nccl: "2.25.1"}'
LLAMA_8B = Path("benchmarks") / "v5.1" / "llama31_8b.yaml"
CUDNN_REPLACES = 'replaces: {cudnn: {version: "9.13.1.26", method: package}}'


def _stack(kb: KnowledgeBase, benchmark: str, **pins: Any) -> Stack:
    return Resolver(kb, host_arch="x86_64").resolve(build_request(kb, benchmark, **pins))


def test_the_stack_names_the_nccl_the_build_makes_and_the_base_s_it_replaced(kb: KnowledgeBase) -> None:
    stack = _stack(kb, "retinanet-v5.1", arch="x86_64")
    assert stack.nccl is not None
    assert (stack.nccl.version, stack.nccl.method, stack.nccl.replaced) == ("2.25.1", "source", "2.26.3")
    assert stack.replaced == {"nccl": "2.26.3"}
    # the build installs NCCL, so the base no longer provides it; cuDNN stays the base's
    assert stack.from_base == ("cuda", "cudnn", "python", "framework")
    assert stack.cudnn is not None and stack.cudnn.method == "base"
    assert stack.framework is not None and dict(stack.framework.bundles)["nccl"] == "2.25.1"
    [choice] = [c for c in stack.choices if c.component == "nccl"]
    assert choice.origin.startswith("recipes/benchmarks/v5.1/retinanet.yaml:")
    assert "built from source by the build step nccl-build.sh over the base's own, 2.26.3" in choice.reason


def test_an_nccl_pin_chooses_by_the_built_version(kb: KnowledgeBase) -> None:
    assert _stack(kb, "retinanet-v5.1", arch="x86_64", nccl="2.25").base.name == "ngc-pytorch-25.04"
    with pytest.raises(StackConflict) as caught:
        _stack(kb, "retinanet-v5.1", arch="x86_64", nccl="2.26")  # the base's own 2.26.3 is gone
    assert "--nccl 2.25  -> ngc-pytorch-25.04/x86_64, CUDA 12.9.0, cuDNN 9.9.0.52, NCCL 2.25.1," in str(
        caught.value
    )


def test_resolve_json_names_the_installed_cudnn_and_nccl_and_the_base_s_own(cli: Callable[..., Any]) -> None:
    result = cli("resolve", "llama31_8b", "--round", "v5.1", "--gpu", "gb200", "--json")
    assert result.code == 0, result.err
    stack = json.loads(result.out)
    assert (stack["cudnn"], stack["nccl"]) == ("9.13.1.26", "2.28.3")
    # NGC 25.09's record carries the benchmark image's cuDNN and NCCL, unverified: the base's
    # own are unknown
    assert stack["replaced"] == {"cudnn": "unconfirmed", "nccl": "unconfirmed"}
    assert stack["from_base"] == ["cuda", "python", "framework"]
    reasons = {c["name"]: c["reason"] for c in stack["components"]}
    assert reasons["nccl"].startswith("built from source by the build step nccl-build.sh over the base's own")
    assert reasons["cudnn"] == (
        "installed from deb packages by the build step cudnn-apt.sh over the base's own,"
        " whose version no source confirms"
    )
    [cudnn] = [c for c in stack["components"] if c["name"] == "cudnn"]
    assert cudnn["origin"].startswith("recipes/benchmarks/v5.1/llama31_8b.yaml:")


def _rendered(kb: KnowledgeBase) -> Dict[str, Any]:
    rendered = render(_stack(kb, "llama31_8b-v5.1", gpu="gb200"))
    labels = dict(
        dockerfile_parse.DockerfileParser(fileobj=io.BytesIO(rendered.content("Dockerfile").encode())).labels
    )
    return {"stack": json.loads(rendered.content("stack.json")), "labels": labels}


def test_stack_json_and_labels_state_the_installed_libraries_and_validate(kb: KnowledgeBase) -> None:
    made = _rendered(kb)
    stack, labels = made["stack"], made["labels"]
    assert problem_of(stack) is None
    nccl, cudnn = stack["components"]["nccl"], stack["components"]["cudnn"]
    assert (nccl["version"], nccl["method"], nccl["replaced"]) == ("2.28.3", "source", "unconfirmed")
    # apt-get install over the base's own: the base's package manager's method
    assert (cudnn["version"], cudnn["method"], cudnn["replaced"]) == ("9.13.1.26", "deb", "unconfirmed")
    assert (labels["io.mlcc.nccl"], labels["io.mlcc.cudnn"]) == ("2.28.3", "9.13.1.26")
    provides = labels["io.mlcc.base.provides"].split(",")
    assert "nccl" not in provides and "cudnn" not in provides and "cuda" in provides


def test_the_sbom_names_each_library_a_build_step_installed_and_how(kb: KnowledgeBase) -> None:
    made = _rendered(kb)
    installed = ngc_report(
        "aarch64", {"cudnn": "9.13.1", "nccl": "2.28.3"}, pip=[{"name": "torch", "version": TORCH}]
    )
    document = cyclonedx(made["stack"], installed, ImageName("registry.example/llama31_8b:v5.1", None))
    found = {c["bom-ref"]: c for c in document["components"]}
    cudnn, nccl = found["replacing:cudnn"], found["replacing:nccl"]
    assert (cudnn["name"], cudnn["version"]) == ("cudnn", "9.13.1.26")
    assert (
        cudnn["description"]
        == "installed from deb packages by the image's build over the base's own (unconfirmed)"
    )
    assert {"name": "mlcc:replaced", "value": "unconfirmed"} in cudnn["properties"]
    assert {"name": "mlcc:framework-loads", "value": "9.13.1"} in cudnn["properties"]
    assert nccl["description"] == "built from source by the image's build over the base's own (unconfirmed)"
    assert not [ref for ref in found if ref.startswith("bundled:")]


@pytest.mark.parametrize(("reported", "drifted"), [("2.28.3", False), ("2.27.7", True)])
def test_verify_expects_the_built_nccl_from_the_framework(
    kb: KnowledgeBase, reported: str, drifted: bool
) -> None:
    made = _rendered(kb)
    installed = {"format": 1, "modules": {"torch": {"version": TORCH, "nccl": reported}}}
    files = {STACK_FILE: json.dumps(made["stack"]).encode(), INSTALLED_FILE: json.dumps(installed).encode()}
    found = verify(ImageContent("test", None, "linux", "arm64", made["labels"], files))
    nccl = [(m.expected, m.found) for m in found if m.component == "NCCL the framework loads"]
    assert nccl == ([("2.28.3", "2.27.7")] if drifted else [])


@pytest.mark.parametrize(("reported", "drifted"), [("9.13.1", False), ("9.10.2", True)])
def test_verify_expects_the_cudnn_the_step_installed_from_the_framework(
    kb: KnowledgeBase, reported: str, drifted: bool
) -> None:
    made = _rendered(kb)
    loads = {"version": TORCH, "cudnn": reported, "nccl": "2.28.3"}
    installed = {"format": 1, "modules": {"torch": loads}}
    files = {STACK_FILE: json.dumps(made["stack"]).encode(), INSTALLED_FILE: json.dumps(installed).encode()}
    found = verify(ImageContent("test", None, "linux", "arm64", made["labels"], files))
    cudnn = [(m.expected, m.found) for m in found if m.component == "cuDNN the framework loads"]
    assert cudnn == ([("9.13.1.26", "9.10.2")] if drifted else [])


@pytest.mark.parametrize(
    ("replaces", "message"),
    [
        (
            'replaces: {nccl: "v2.25.1-1"}',
            "replaces nccl with 'v2.25.1-1', which is not a version in its plain form",
        ),
        ('replaces: {gcc: "13.3"}', "replaces names 'gcc', not a component a build step can replace"),
    ],
)
def test_a_bad_replaces_is_a_recipe_error_at_its_line(
    recipes_copy: Path, cli: Callable[..., Any], replaces: str, message: str
) -> None:
    path = recipes_copy / RETINANET
    assert path.read_text().count(REPLACES) == 1
    line = line_of(path, REPLACES)
    edit(path, REPLACES, replaces)
    result = cli("--recipes", str(recipes_copy), "resolve", "retinanet", "--round", "v5.1")
    assert result.code == 2  # docs/exit-codes.md: a recipe error
    assert f"recipes/benchmarks/v5.1/retinanet.yaml:{line}: {message}" in result.err
    assert "Traceback" not in result.err


def test_replaces_over_a_plain_base_is_refused(recipes_copy: Path, cli: Callable[..., Any]) -> None:
    path = recipes_copy / RETINANET
    text = path.read_text()
    start, end = text.index("  ubi_alternative:\n"), text.index("\nsource: [mlperf-v5.1-nvidia") + 1
    # a stack on UBI installs NCCL from NVIDIA's repositories: no step replaces a base's there
    text = (text[:start] + text[end:]).replace(
        "bases: [ngc-pytorch-25.04]", "bases: [ngc-pytorch-25.04, ubi9]"
    )
    path.write_text(text)
    result = cli("--recipes", str(recipes_copy), "resolve", "retinanet", "--round", "v5.1")
    assert result.code == 2, result.err
    line = line_of(path, REPLACES)
    assert (
        f"retinanet.yaml:{line}: replaces nccl, but constraints.bases names the plain base ubi9" in result.err
    )


def test_two_steps_replacing_one_component_are_refused(recipes_copy: Path, cli: Callable[..., Any]) -> None:
    path = recipes_copy / RETINANET
    text = path.read_text()
    start, end = text.index("    - script: nccl-build.sh\n"), text.index("    - script: run-with-config.sh")
    path.write_text(text[:end] + text[start:end] + text[end:])
    result = cli("--recipes", str(recipes_copy), "resolve", "retinanet", "--round", "v5.1")
    assert result.code == 2, result.err
    assert "nccl is replaced twice" in result.err and "build step" in result.err


@pytest.mark.parametrize(
    ("replaces", "message"),
    [
        (
            'replaces: {cudnn: {version: "9.13.1.26-1", method: package}}',
            "replaces cudnn with '9.13.1.26-1', which is not a version in its plain form",
        ),
        ('replaces: {cudnn: {version: "9.13.1.26", method: apt}}', "does not match the benchmark schema"),
        ('replaces: {cudnn: {version: "9.13.1.26"}}', "does not match the benchmark schema"),
    ],
)
def test_a_bad_replaces_with_its_method_is_a_recipe_error_at_its_line(
    recipes_copy: Path, cli: Callable[..., Any], replaces: str, message: str
) -> None:
    path = recipes_copy / LLAMA_8B
    assert path.read_text().count(CUDNN_REPLACES) == 1
    line = line_of(path, CUDNN_REPLACES)
    edit(path, CUDNN_REPLACES, replaces)
    result = cli("--recipes", str(recipes_copy), "resolve", "llama31_8b", "--round", "v5.1", "--gpu", "gb200")
    assert result.code == 2  # docs/exit-codes.md: a recipe error
    assert f"recipes/benchmarks/v5.1/llama31_8b.yaml:{line}: {message}" in result.err
    assert "Traceback" not in result.err


def test_the_short_and_the_long_form_with_method_source_are_one(
    recipes_copy: Path, cli: Callable[..., Any]
) -> None:
    path = recipes_copy / RETINANET
    path.write_text(
        path.read_text().replace(REPLACES, 'replaces: {nccl: {version: "2.25.1", method: source}}')
    )
    long = cli("--recipes", str(recipes_copy), "resolve", "retinanet", "--round", "v5.1", "--json")
    short = cli("resolve", "retinanet", "--round", "v5.1", "--json")
    assert long.code == short.code == 0, long.err + short.err
    assert json.loads(long.out) == json.loads(short.out)
