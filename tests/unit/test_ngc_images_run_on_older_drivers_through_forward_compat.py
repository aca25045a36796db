"""An NGC image runs its CUDA on an older kernel-driver branch through its forward-compatibility
package, on data-center GPUs: ``--driver`` accepts the branches the base's record names (the
brand windows of NVIDIA's CUDA images of that release), says so beside the stack, keeps the
GPU's own minimum driver, and refuses other branches and other GPUs naming both ways out.
mlcc's UBI images carry no compat package: their rule is the CUDA release's minimum, as before."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, List

import pytest
import yaml

from mlcc.app.kb import request_notes
from mlcc.errors import ConflictError
from mlcc.kb import load
from mlcc.kb.model import KnowledgeBase
from mlcc.resolve import Resolver, Stack
from mlcc.resolve.pins import Pins
from mlcc.resolve.request import build_request
from mlcc.versions import parse_version
from tests.conftest import REPO

FACTS = REPO / "tests" / "data" / "facts" / "nvidia_cuda.yaml"
# The benchmarks of NVIDIA's two runs on an older kernel module (recipes/bases-ngc.yaml
# driver_ran): v5.0's Llama 2 70B LoRA on NGC 25.04 (DGX B200), Llama 3.1 405B on NGC 25.01 (H100)
LORA = "llama2_70b_lora-v5.0"
LLAMA405 = "llama31_405b-v5.0"


def _resolve(kb: KnowledgeBase, benchmark: str, **pins: Any) -> Stack:
    return Resolver(kb, host_arch="x86_64").resolve(build_request(kb, benchmark, **pins))


def _refusal(kb: KnowledgeBase, benchmark: str, **pins: Any) -> Dict[str, Any]:
    with pytest.raises(ConflictError) as caught:
        _resolve(kb, benchmark, **pins)
    document: Dict[str, Any] = caught.value.to_dict()  # type: ignore[attr-defined]
    return document


def _messages(document: Dict[str, Any], rule: str) -> List[str]:
    return [r["message"] for r in document["rules"] if r["rule"] == rule]


@pytest.mark.parametrize(
    ("benchmark", "gpu", "driver", "base"),
    [
        (LORA, "b200", "570.133.20", "ngc-pytorch-25.04"),
        (LLAMA405, "h100", "535.216.03", "ngc-pytorch-25.01"),
    ],
)
def test_the_drivers_nvidia_ran_its_ngc_images_on_resolve(
    kb: KnowledgeBase, benchmark: str, gpu: str, driver: str, base: str
) -> None:
    stack = _resolve(kb, benchmark, gpu=gpu, driver=driver)
    assert stack.base.name == base
    assert stack.cuda is not None and parse_version(driver) < parse_version(stack.cuda.min_driver)
    kernel = dict(stack.base.contents.driver_ran)["kernel"]  # type: ignore[union-attr]
    assert kernel == driver  # NVIDIA's own run, on the same kernel module


def test_every_older_kernel_module_nvidia_ran_is_one_of_the_bases_forward_compatible_branches(
    kb: KnowledgeBase,
) -> None:
    older = [
        base
        for base in kb.bases
        if base.contents is not None
        and parse_version(dict(base.contents.driver_ran)["kernel"])
        < parse_version(base.contents.cuda_min_driver)
    ]
    assert {base.name for base in older} == {"ngc-pytorch-25.04", "ngc-pytorch-25.01"}
    for base in older:
        assert base.contents is not None
        kernel = dict(base.contents.driver_ran)["kernel"]
        assert int(kernel.split(".")[0]) in base.contents.forward_compat, base.name


def test_forward_compatibility_is_said_beside_the_stack_and_never_changes_it(kb: KnowledgeBase) -> None:
    asked = build_request(kb, LORA, gpu="b200", driver="570.133.20")
    stack = _resolve(kb, LORA, gpu="b200", driver="570.133.20")
    assert stack.to_dict() == _resolve(kb, LORA, gpu="b200").to_dict()  # no trace of the driver
    (note,) = request_notes(kb, asked, stack)
    assert note.startswith("driver 570.133.20 runs NGC 25.04's CUDA 12.9.0 through the image's forward")
    assert "data-center GPUs only, as B200 is" in note
    assert "enable-cuda-compat hook" in note
    assert "R535, R550, R560, R565 or R570 accepted" in note
    assert "needs >= 575.51.03" in note
    # a driver that meets the CUDA release's minimum needs no note
    plain = build_request(kb, LORA, gpu="b200", driver="575.51.03")
    assert request_notes(kb, plain, _resolve(kb, LORA, gpu="b200", driver="575.51.03")) == []


def test_resolve_json_carries_the_forward_compatibility_note(cli: Any) -> None:
    result = cli(
        "resolve", "llama2_70b_lora", "--round", "v5.0", "--gpu", "b200", "--driver", "570.133.20", "--json"
    )
    assert result.code == 0, result.err
    document = json.loads(result.out)
    assert "driver_min" in document and document["driver_min"] == "575.51.03"  # the stack's fact
    (note,) = document["request"]["notes"]
    assert "forward-compatibility package" in note


def test_without_gpu_a_forward_compatible_branch_resolves_and_names_the_data_center_condition(
    kb: KnowledgeBase,
) -> None:
    asked = build_request(kb, LLAMA405, driver="535.216.03")
    stack = _resolve(kb, LLAMA405, driver="535.216.03")
    (note,) = request_notes(kb, asked, stack)
    assert "data-center GPUs only (--gpu names none)" in note


@pytest.mark.parametrize(
    ("benchmark", "driver", "branches", "minimum"),
    [
        ("llama2_70b_lora-v5.1", "560.35.03", "R535, R550, R565, R570 or R575", "580.82.07"),
        (LORA, "545.29.06", "R535, R550, R560, R565 or R570", "575.51.03"),
    ],
)
def test_a_branch_outside_the_window_is_refused_with_both_ways_out(
    kb: KnowledgeBase, benchmark: str, driver: str, branches: str, minimum: str
) -> None:
    document = _refusal(kb, benchmark, gpu="b200", driver=driver)
    (message,) = _messages(document, "host-driver")
    assert f"needs driver >= {minimum}, or on a data-center GPU a driver of branch {branches}" in message
    assert f"(branch R{driver.split('.')[0]})" in message
    # the GPU has stacks: the driver alone stands in the way, so the GPU's CUDA is no cause
    assert _messages(document, "cuda-gpu") == []
    # the way out offered: the driver the image's own CUDA release needs (not its line's oldest)
    assert document["alternatives"][0]["change"].startswith(f"driver >= {minimum} (CUDA ")


def test_forward_compatibility_is_refused_on_a_gpu_not_known_to_be_a_data_center_gpu(
    kb: KnowledgeBase,
) -> None:
    document = _refusal(kb, LORA, gpu="rtxpro6000", driver="570.133.20")
    (message,) = _messages(document, "host-driver")
    assert "works on data-center GPUs only, and RTX PRO 6000 Blackwell is not known to be one" in message
    assert "needs driver >= 575.51.03" in message
    assert _resolve(kb, LORA, gpu="rtxpro6000", driver="575.51.03").base.name == "ngc-pytorch-25.04"


def test_a_gpu_recorded_as_a_data_center_gpu_gets_forward_compatibility(recipes_copy: Path) -> None:
    gpus = recipes_copy / "gpus.yaml"
    text = gpus.read_text()
    rtx = text.index("  - name: rtxpro6000")
    gpus.write_text(text[:rtx] + text[rtx:].replace("data_center: false", "data_center: true", 1))
    edited = load(str(recipes_copy), use_cache=False)
    assert _resolve(edited, LORA, gpu="rtxpro6000", driver="570.133.20").base.name == "ngc-pytorch-25.04"


def test_the_gpus_own_minimum_driver_still_holds_on_a_forward_compatible_branch(kb: KnowledgeBase) -> None:
    document = _refusal(kb, LORA, gpu="b200", driver="535.216.03")
    (message,) = _messages(document, "host-driver")
    assert "a forward-compatible branch, but B200 needs a kernel driver >= 570.26" in message
    assert _resolve(kb, LLAMA405, gpu="h100", driver="535.216.03").base.name == "ngc-pytorch-25.01"


def test_pins_read_the_driver_as_the_resolver_does(kb: KnowledgeBase) -> None:
    stack = _resolve(kb, LORA, gpu="b200")
    assert Pins(driver="570.133.20", gpu="b200").matches(kb, stack)
    assert not Pins(driver="570.133.20", gpu="rtxpro6000").matches(kb, stack)
    assert not Pins(driver="545.29.06").matches(kb, stack)
    assert Pins(driver="575.51.03").matches(kb, stack)


def test_ubi_stacks_keep_the_cuda_releases_minimum_driver(kb: KnowledgeBase) -> None:
    document = _refusal(kb, "nccl-tests", cuda="12.8", driver="535.216.03", gpu="b200")
    (message,) = _messages(document, "host-driver")
    assert "older than every CUDA release --cuda 12.8 selects" in message
    ubi = _resolve(kb, "nccl-tests", cuda="12.8")
    assert ubi.base.contents is None
    assert not Pins(driver="535.216.03").matches(kb, ubi)
    assert not Pins(driver="570.86.10").matches(kb, ubi)  # 12.8.1 needs 570.124.06, even on R570


def test_the_bases_forward_compatible_branches_are_those_of_nvidias_cuda_images(kb: KnowledgeBase) -> None:
    facts = yaml.safe_load(FACTS.read_text())["forward_compat_branches_per_cuda_release"]["per_release"]
    for base in kb.bases:
        contents = base.contents
        if contents is None:
            continue
        release = contents.cuda_release
        if release in facts:
            assert list(contents.forward_compat) == facts[release], base.name
        else:  # 13.0.1: the snapshot read has none; its line's 13.0.0 windows, marked unverified
            line = [r for r in facts if r.rsplit(".", 1)[0] == release.rsplit(".", 1)[0]]
            assert list(contents.forward_compat) == facts[max(line, key=parse_version)], base.name
            assert "contents.forward_compat" in base.prov.unverified_fields, base.name
        top = int(contents.cuda_min_driver.split(".")[0])
        assert all(number < top for number in contents.forward_compat), base.name


def test_every_gpu_says_whether_it_is_a_data_center_gpu_and_the_rtx_pro_is_not_counted(
    kb: KnowledgeBase,
) -> None:
    text = (REPO / "recipes" / "gpus.yaml").read_text()
    assert text.count("    data_center: ") == len(kb.gpus)
    assert [g.name for g in kb.gpus.values() if not g.data_center] == ["rtxpro6000"]


def test_the_listings_show_the_forward_compatible_branches_and_data_center_gpus(cli: Any) -> None:
    bases = json.loads(cli("list", "bases", "--json").out)
    ngc = {b["name"]: b["contents"] for b in bases if b.get("contents")}
    assert ngc["ngc-pytorch-25.04"]["forward_compat"] == [535, 550, 560, 565, 570]
    gpus = {g["name"]: g["data_center"] for g in json.loads(cli("list", "gpus", "--json").out)}
    assert gpus["b200"] is True and gpus["rtxpro6000"] is False


def test_an_ngc_stacks_cuda_reason_names_both_drivers_it_runs_on(kb: KnowledgeBase) -> None:
    stack = _resolve(kb, LORA)
    (cuda,) = [choice for choice in stack.choices if choice.component == "cuda"]
    assert cuda.reason.endswith(
        "needs driver >= 575.51.03, or on a data-center GPU a driver of branch R535, R550, R560, R565"
        " or R570 (the image's forward-compatibility package)"
    )
    assert cuda.unverified_fields == ()  # corroborated by NVIDIA's run on R570
    newest = _resolve(kb, "llama2_70b_lora-v5.1")
    (cuda,) = [choice for choice in newest.choices if choice.component == "cuda"]
    assert "contents.forward_compat" in cuda.unverified_fields  # 13.0.1: 13.0.0's windows


def test_ngc_images_keep_the_bases_own_driver_requirement_and_ubi_images_set_theirs() -> None:
    """An NGC image's NVIDIA_REQUIRE_CUDA (with the brand windows of its forward-compatible
    branches) is inherited from the base: a Dockerfile of mlcc's that set its own "cuda>=12.9"
    would make the container toolkit refuse an R570 driver the image runs on. mlcc's UBI
    images set "cuda>=X.Y", with no windows: they carry no compat package."""
    published = sorted((REPO / "dockerfiles").glob("*/*/Dockerfile"))
    ngc = [path for path in published if "-ngc-" in path.parent.name]
    assert len(ngc) >= 5
    for path in ngc:
        assert "NVIDIA_REQUIRE_CUDA" not in path.read_text(), path
    ubi = [
        line.strip()
        for path in published
        if "-ubi" in path.parent.name
        for line in path.read_text().splitlines()
        if "NVIDIA_REQUIRE_CUDA" in line
    ]
    plain = re.compile(r'NVIDIA_REQUIRE_CUDA="cuda>=[0-9]+\.[0-9]+"( \\)?')
    assert ubi and all(plain.fullmatch(line) for line in ubi)
