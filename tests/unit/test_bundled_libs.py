"""Issue 11 item 2: libraries a framework build brings itself (WML CE's NCCL; pip wheels that
bundle cuDNN/NCCL) are what the stack names, and the image installs no system copy."""

from __future__ import annotations

import io
import json
from typing import Any, Dict

import pytest

from mlcc.image.content import INSTALLED_FILE, STACK_FILE, ImageContent
from mlcc.image.stack import verify
from mlcc.kb.model import UNCONFIRMED
from mlcc.resolve import build_request
from mlcc.resolve.explain import StackConflict


def _wmlce(kb, framework: str, release: str):  # type: ignore[no-untyped-def]
    [build] = [b for b in kb.frameworks[framework].builds if b.variant == f"wmlce{release}"]
    return build


@pytest.mark.parametrize("framework", ["pytorch", "tensorflow"])
def test_wmlce_1_7_loads_the_channels_nccl_2_5_6(kb, framework: str) -> None:  # type: ignore[no-untyped-def]
    # IBM/powerai#267: a WML CE 1.7.0 environment holds the channel's nccl-2.5.6-645.g51c2e94
    build = _wmlce(kb, framework, "1.7.0")
    assert build.bundled("nccl") == "2.5.6"
    assert "bundles.nccl" not in build.prov.unverified_fields


@pytest.mark.parametrize("framework", ["pytorch", "tensorflow"])
@pytest.mark.parametrize("release", ["1.6.0", "1.6.2"])
def test_wmlce_1_6_nccl_is_bundled_but_unconfirmed(kb, framework: str, release: str) -> None:  # type: ignore[no-untyped-def]
    # no source names the 1.6.0 / 1.6.2 channel's nccl version: the data says so rather than guess
    build = _wmlce(kb, framework, release)
    assert build.bundled("nccl") == UNCONFIRMED
    assert "bundles.nccl" in build.prov.unverified_fields
    assert not build.prov.verified


@pytest.mark.parametrize("framework", ["pytorch", "tensorflow"])
def test_wmlce_1_6_1_nccl_is_2_4_7_on_secondary_evidence(kb, framework: str) -> None:  # type: ignore[no-untyped-def]
    # horovod/horovod#1165: one user's PowerAI 1.6.1 environment (CUDA 10.1.168, NCCL 2.4.7);
    # a user's report, not IBM's channel listing: the value stays unverified
    build = _wmlce(kb, framework, "1.6.1")
    assert build.bundled("nccl") == "2.4.7"
    assert "bundles.nccl" in build.prov.unverified_fields and not build.prov.verified
    assert any(
        s.startswith("github:horovod/horovod issue 1165") and "secondary" in s for s in build.prov.source
    )
    assert "secondary evidence" in (build.prov.note or "")


@pytest.mark.parametrize("benchmark", ["ssd", "gnmt", "transformer"])
def test_wmlce_1_6_1_stacks_name_the_channels_nccl(kb, resolver, benchmark: str) -> None:  # type: ignore[no-untyped-def]
    from mlcc.render import render

    stack = resolver.resolve(build_request(kb, benchmark, arch="ppc64le"))
    assert stack.framework.variant == "wmlce1.6.1"
    assert (stack.nccl.method, stack.nccl.version) == ("bundled", "2.4.7")
    rendered = dict(render(stack).files)
    dockerfile = rendered["Dockerfile"]
    assert "nccl_2." not in dockerfile and "/opt/nccl" not in dockerfile  # no system tarball
    assert 'io.mlcc.nccl="2.4.7"' in dockerfile
    assert "--header nccl=" not in dockerfile  # mlcc-record reads the framework's own report
    document = json.loads(rendered["stack.json"])
    assert document["components"]["nccl"]["version"] == "2.4.7"
    [choice] = [c for c in document["choices"] if c["component"] == "nccl"]
    assert "bundles.nccl" in choice["unverified_fields"] and choice["verified"] is False


def test_an_unconfirmed_nccl_has_no_label_and_stack_json_says_why(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    from mlcc.render import render

    stack = resolver.resolve(build_request(kb, "ncf", arch="ppc64le"))
    assert stack.framework.variant == "wmlce1.6.0"
    assert stack.nccl.method == "bundled" and not stack.nccl.confirmed
    rendered = dict(render(stack).files)
    dockerfile = rendered["Dockerfile"]
    assert "nccl_2." not in dockerfile and "/opt/nccl" not in dockerfile  # no system tarball
    assert "io.mlcc.nccl=" not in dockerfile  # a label is read as a fact: no version nobody confirmed
    assert "unconfirmed" not in "".join(line for line in dockerfile.splitlines() if "io.mlcc." in line)
    document = json.loads(rendered["stack.json"])
    assert document["components"]["nccl"]["method"] == "bundled"
    assert document["components"]["nccl"]["version"] == UNCONFIRMED
    assert document["components"]["framework"]["loads"]["nccl"] == UNCONFIRMED
    [choice] = [c for c in document["choices"] if c["component"] == "nccl"]
    assert "no source names its version" in choice["reason"]
    assert "bundles.nccl" in choice["unverified_fields"] and choice["verified"] is False


@pytest.mark.parametrize(("framework", "release"), [("tensorflow", "2.1"), ("tensorflow", "1.14")])
def test_a_frameworks_nccl_is_the_stacks_where_the_benchmark_needs_none(  # type: ignore[no-untyped-def]
    kb, resolver, framework: str, release: str
) -> None:
    from mlcc.render import render

    # tf_cnn_benchmarks requires no NCCL, but WML CE's TensorFlow loads the channel's own
    bench = kb.benchmarks["tf_cnn_benchmarks"]
    assert "nccl" not in bench.requires and "nccl" not in bench.links
    stack = resolver.resolve(
        build_request(kb, "tf_cnn_benchmarks", arch="ppc64le", with_=[f"{framework}={release}"])
    )
    expected = stack.framework.bundled("nccl")
    assert expected in ("2.5.6", "2.4.7")
    assert stack.to_dict()["nccl"] == expected  # what `mlcc resolve --json` prints
    rendered = dict(render(stack).files)
    assert f'io.mlcc.nccl="{expected}"' in rendered["Dockerfile"]
    assert json.loads(rendered["stack.json"])["components"]["nccl"]["version"] == expected


def test_nccl_tests_still_builds_against_the_system_nccl(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(build_request(kb, "nccl-tests", arch="ppc64le"))
    assert stack.framework is None and stack.nccl.method in ("rpm", "tarball")


def test_an_nccl_pin_against_an_unconfirmed_bundle_says_so(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(StackConflict) as caught:
        resolver.resolve(
            build_request(kb, "tf_cnn_benchmarks", arch="ppc64le", nccl="2.8", with_=["tensorflow=1.15"])
        )
    first = str(caught.value).splitlines()
    assert any("bring and load their own NCCL (version unconfirmed)" in line for line in first)


def _wmlce_image(
    kb, resolver, benchmark: str = "ssd", torch: str = "1.1.0", **libraries: Any
) -> ImageContent:  # type: ignore[no-untyped-def]
    from mlcc.render import render

    rendered = render(resolver.resolve(build_request(kb, benchmark, arch="ppc64le")))
    stack = json.loads(rendered.content("stack.json"))
    labels = dict(
        __import__("dockerfile_parse")
        .DockerfileParser(fileobj=io.BytesIO(rendered.content("Dockerfile").encode()))
        .labels
    )
    packages: Dict[str, str] = {}
    for pin in stack["components"]["cuda"]["packages"]:
        name, _, rest = pin.partition("-10.1.243") if "-10.1.243" in pin else pin.partition("-10.2.1.243")
        packages[name] = ("10.1.243" if "10.1.243" in pin else "10.2.1.243") + rest
    installed = {
        "format": 1,
        "arch": "ppc64le",
        "os": {"id": "rhel", "version_id": "7.9"},
        "packages": packages,
        "headers": {},
        "nvcc": None,  # a runtime image: no compiler
        "compilers": [],
        "gcc": None,
        "python": "3.6.8",
        "modules": {"torch": {"version": torch, "cuda": rendered_runtime(stack), **libraries}},
    }
    files = {STACK_FILE: json.dumps(stack).encode(), INSTALLED_FILE: json.dumps(installed).encode()}
    return ImageContent("test", None, "linux", "ppc64le", labels, files)


def rendered_runtime(stack: Dict[str, Any]) -> str:
    return str(stack["components"]["framework"]["loads"]["cuda_runtime"])


def test_verify_reports_what_an_unconfirmed_bundle_turned_out_to_be(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    found = verify(_wmlce_image(kb, resolver, "ncf", "1.0.1", cudnn="7.6.3", nccl="2.4.7"))
    # the framework's own report is the first evidence of the version: a note, not drift
    assert [(m.component, m.found, m.severity) for m in found] == [
        ("NCCL the framework loads", "2.4.7", "note")
    ]
    # no io.mlcc.nccl label is expected, so its absence is no drift either
    assert not any(m.component == "label io.mlcc.nccl" for m in found)
    drift = verify(_wmlce_image(kb, resolver, "ncf", "1.0.1", cudnn="8.0.5", nccl="2.4.7"))
    assert ("cuDNN the framework loads", "drift") in [(m.component, m.severity) for m in drift]


def test_verify_compares_the_cuda_runtime_the_framework_reports(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    # WML CE 1.6.1's channel brings cudatoolkit 10.1.168 while the image's toolkit is 10.1.243
    assert verify(_wmlce_image(kb, resolver, cudnn="7.6.3")) == []
    image = _wmlce_image(kb, resolver, cudnn="7.6.3")
    recorded = json.loads(image.files[INSTALLED_FILE])
    recorded["modules"]["torch"]["cuda"] = "10.1.243"  # the system toolkit, not the channel's runtime
    drift = verify(image._replace(files={**image.files, INSTALLED_FILE: json.dumps(recorded).encode()}))
    assert [(m.component, m.expected, m.found) for m in drift] == [
        ("CUDA runtime the framework loads", "10.1.168", "10.1.243")
    ]


# ------------------------------------------------------------------ pip wheels


def _pip(kb, version: str, variant: str):  # type: ignore[no-untyped-def]
    [build] = [b for b in kb.frameworks["pytorch"].builds if b.version == version and b.variant == variant]
    return build


def test_pypi_torch_wheels_bring_what_their_contents_say(kb) -> None:  # type: ignore[no-untyped-def]
    # read from the wheels themselves (mlcc kb check; test_kb_bundles reads them live)
    assert _pip(kb, "1.1.0", "cu90").bundled("cuda_runtime") == "9.0.176"  # torch/version.py
    assert dict(_pip(kb, "1.2.0", "cu100").bundles) == {"cuda_runtime": "10.0.130"}
    assert dict(_pip(kb, "1.13.1", "cu117").bundles) == {"cuda_runtime": "11.7", "cudnn": "8.5.0.96"}
    assert dict(_pip(kb, "2.0.1", "cu117").bundles) == {
        "cuda_runtime": "11.7",
        "cudnn": "8.5.0.96",  # Requires-Dist nvidia-cudnn-cu11==8.5.0.96
        "nccl": "2.14.3",  # Requires-Dist nvidia-nccl-cu11==2.14.3
    }


def test_download_pytorch_org_wheels_are_marked_unchecked(kb) -> None:  # type: ignore[no-untyped-def]
    for version in ("1.0.0", "1.0.1", "1.1.0"):
        build = _pip(kb, version, "cu100")
        assert build.bundled("cuda_runtime") == "10.0" and "bundles" in build.prov.unverified_fields


def test_a_pip_build_that_brings_cudnn_and_nccl_installs_neither(recipes_copy) -> None:  # type: ignore[no-untyped-def]
    from mlcc.kb import load
    from mlcc.render import render
    from mlcc.resolve import Resolver

    recipe = recipes_copy / "benchmarks" / "ncf.yaml"
    text = recipe.read_text(encoding="utf-8")
    recipe.write_text(text.replace('versions: ">=1.0,<1.2"', 'versions: ">=2.0,<2.1"'), encoding="utf-8")
    kb = load(str(recipes_copy), use_cache=False)
    stack = Resolver(kb, host_arch="x86_64").resolve(build_request(kb, "ncf", with_=["pytorch=2.0.1"]))
    assert stack.framework.variant == "cu117"
    assert (stack.cudnn.method, stack.cudnn.version) == ("bundled", "8.5.0.96")
    assert (stack.nccl.method, stack.nccl.version) == ("bundled", "2.14.3")
    dockerfile = dict(render(stack).files)["Dockerfile"]
    assert "libcudnn" not in dockerfile and "libnccl" not in dockerfile and "nccl_2." not in dockerfile
    assert 'io.mlcc.cudnn="8.5.0.96"' in dockerfile and 'io.mlcc.nccl="2.14.3"' in dockerfile


# ------------------------------------------------ libraries linked statically


@pytest.mark.parametrize("version", ["1.0.0", "1.0.1"])
@pytest.mark.parametrize("variant", ["cu90", "cu100"])
def test_torch_1_0_links_cudnn_7_4_and_nccl_2_3_7(kb, version: str, variant: str) -> None:  # type: ignore[no-untyped-def]
    # pytorch/builder manywheel/build.sh: USE_STATIC_CUDNN=1, USE_STATIC_NCCL=1; its build images
    # held cuDNN 7.4.1.5 then 7.4.2.24 and NCCL 2.3.7-1 (which patch, and that the wheels came from
    # these images, is unconfirmed: the recipe says so)
    build = _pip(kb, version, variant)
    assert (build.bundled("cudnn"), build.bundled("nccl")) == ("7.4", "2.3.7")
    unverified = build.prov.unverified_fields
    assert "bundles" in unverified or {"bundles.cudnn", "bundles.nccl"} <= set(unverified)
    assert any(s.startswith("github:pytorch/builder") for s in build.prov.source)


def test_torch_1_1_0_cu90_links_cudnn_7_5_and_nccl_2_4_2(kb) -> None:  # type: ignore[no-untyped-def]
    # the PyPI wheel's libcaffe2_gpu.so: 'NCCL version 2.4.2+cuda9.0', source paths under
    # cudnn_v7.5, and no DT_NEEDED libcudnn or libnccl (statically linked)
    build = _pip(kb, "1.1.0", "cu90")
    assert (build.bundled("cudnn"), build.bundled("nccl")) == ("7.5", "2.4.2")
    assert not {"bundles", "bundles.cudnn", "bundles.nccl"} & set(build.prov.unverified_fields)
    assert any("libcaffe2_gpu.so holds the string 'NCCL version 2.4.2" in s for s in build.prov.source)


def test_torch_1_1_0_cu100_static_libraries_are_unconfirmed(kb) -> None:  # type: ignore[no-untyped-def]
    # its wheel is on download.pytorch.org only, which is not read: the build images moved to
    # cuDNN 7.5.1 and a source-built NCCL two days before 1.1.0, no more is known
    build = _pip(kb, "1.1.0", "cu100")
    assert (build.bundled("cudnn"), build.bundled("nccl")) == (UNCONFIRMED, UNCONFIRMED)


@pytest.mark.parametrize("variant", ["cu90", "cu92", "cu100", "cu101"])
def test_mxnet_1_5_1_links_cudnn_7_6_0_64_and_nccl_2_4_7(kb, variant: str) -> None:  # type: ignore[no-untyped-def]
    # apache/mxnet 1.5.1 tools/setup_gpu_build_tools.sh: the static archives of
    # libcudnn7-dev 7.6.0.64 and libnccl-dev 2.4.7
    [build] = [b for b in kb.frameworks["mxnet"].builds if b.version == "1.5.1" and b.variant == variant]
    assert dict(build.bundles) == {"cudnn": "7.6.0.64", "nccl": "2.4.7"}
    assert any("tools/setup_gpu_build_tools.sh" in s for s in build.prov.source)


def test_ncf_cuda10_0_installs_no_system_cudnn_or_nccl(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    from mlcc.render import render

    stack = resolver.resolve(build_request(kb, "ncf"))
    assert (stack.framework.version, stack.framework.variant) == ("1.0.1", "cu100")
    assert (stack.cudnn.method, stack.cudnn.version) == ("bundled", "7.4")
    assert (stack.nccl.method, stack.nccl.version) == ("bundled", "2.3.7")
    dockerfile = dict(render(stack).files)["Dockerfile"]
    assert "libcudnn7" not in dockerfile and "libnccl" not in dockerfile
    assert "machine-learning" not in dockerfile  # NVIDIA's cuDNN/NCCL repository is not even configured
    assert 'io.mlcc.cudnn="7.4"' in dockerfile and 'io.mlcc.nccl="2.3.7"' in dockerfile


def test_resnet50_keeps_the_system_nccl_horovod_links(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    from mlcc.render import render

    stack = resolver.resolve(build_request(kb, "resnet50"))
    assert (stack.framework.version, stack.framework.variant) == ("1.5.1", "cu101")
    assert (stack.cudnn.method, stack.cudnn.version) == ("bundled", "7.6.0.64")
    assert stack.nccl.method in ("rpm", "tarball")  # horovod's NCCL allreduce is built against it
    dockerfile = dict(render(stack).files)["Dockerfile"]
    assert "# cuDNN" not in dockerfile and "CUDNN_VERSION=" not in dockerfile  # no system cuDNN step
    assert "# NCCL " in dockerfile and "NCCL_HOME=" in dockerfile  # horovod's build reads NCCL_HOME
    assert 'io.mlcc.cudnn="7.6.0.64"' in dockerfile and f'io.mlcc.nccl="{stack.nccl.version}"' in dockerfile


def test_without_links_resnet50_would_take_the_frameworks_nccl(recipes_copy) -> None:  # type: ignore[no-untyped-def]
    from mlcc.kb import load
    from mlcc.resolve import Resolver

    recipe = recipes_copy / "benchmarks" / "resnet50.yaml"
    text = recipe.read_text(encoding="utf-8")
    assert "  links: [nccl]" in text
    recipe.write_text(text.replace("  links: [nccl]", "  links: []"), encoding="utf-8")
    kb = load(str(recipes_copy), use_cache=False)
    stack = Resolver(kb, host_arch="x86_64").resolve(build_request(kb, "resnet50"))
    assert (stack.nccl.method, stack.nccl.version) == ("bundled", "2.4.7")


def test_a_static_claim_the_wheel_cannot_show_is_a_note(kb) -> None:  # type: ignore[no-untyped-def]
    from mlcc.kbtools.bundles import NOTE, Evidence, judge

    [build] = [b for b in kb.frameworks["mxnet"].builds if b.version == "1.5.1" and b.variant == "cu101"]
    # what the PyPI mxnet-cu101 1.5.1 wheel shows: no libcudnn / libnccl file of its own
    findings = judge(build, "here", Evidence("mxnet_cu101-1.5.1-py2.py3-none-manylinux1_x86_64.whl", ()))
    assert sorted((f.severity, f.message.split(":")[0]) for f in findings) == [
        (NOTE, "cudnn 7.6.0.64"),
        (NOTE, "nccl 2.4.7"),
    ]
