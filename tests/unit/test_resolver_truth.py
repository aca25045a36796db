"""Issue 11: pins that name no pre-release, the host's arch, default stacks near the
reference run, explanations that lead with the cause, sources per framework version."""

from __future__ import annotations

import pytest

from mlcc.resolve import Resolver, build_request
from mlcc.resolve.explain import StackConflict


def resolve(kb, resolver, benchmark, **pins):  # type: ignore[no-untyped-def]
    return resolver.resolve(build_request(kb, benchmark, **pins))


def conflict(kb, resolver, benchmark, **pins) -> StackConflict:  # type: ignore[no-untyped-def]
    with pytest.raises(StackConflict) as caught:
        resolve(kb, resolver, benchmark, **pins)
    return caught.value


# ------------------------------------------------------------------ pre-releases


def test_release_pin_does_not_select_the_prerelease(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolve(kb, resolver, "maskrcnn", with_=["pytorch=1.1.0"])
    assert stack.framework.version == "1.1.0"


def test_pip_spelling_of_an_exact_pin_is_accepted(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    request = build_request(kb, "maskrcnn", with_=["pytorch==1.1.0"])
    assert str(request.framework_pin("pytorch")) == "==1.1.0"
    assert resolver.resolve(request).framework.version == "1.1.0"
    assert str(build_request(kb, "tf_cnn_benchmarks", with_=["tensorflow>=2.0"]).frameworks[0][1]) == ">=2.0"


def test_prerelease_named_exactly_is_selected(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolve(kb, resolver, "maskrcnn", with_=["pytorch=1.1.0a0+828a6a3"])
    assert stack.framework.version == "1.1.0a0+828a6a3"


# ------------------------------------------------------------------ host arch


def test_no_arch_pin_takes_the_hosts_arch(kb) -> None:  # type: ignore[no-untyped-def]
    on_power = Resolver(kb, host_arch="ppc64le")
    stack = resolve(kb, on_power, "ssd")
    assert stack.arch.name == "ppc64le"
    assert "generating machine's arch" in dict((c.component, c.reason) for c in stack.choices)["arch"]
    # the same stack as an --arch ppc64le request, reasons included
    assert stack == resolve(kb, Resolver(kb, host_arch="x86_64"), "ssd", arch="ppc64le")


def test_host_arch_the_benchmark_lacks_falls_back_to_its_first(kb) -> None:  # type: ignore[no-untyped-def]
    on_arm = Resolver(kb, host_arch="aarch64")
    stack = resolve(kb, on_arm, "maskrcnn")
    assert stack.arch.name == kb.benchmarks["maskrcnn"].arches[0]
    on_x86 = resolve(kb, Resolver(kb, host_arch="x86_64"), "maskrcnn")
    # the same stack gets the same reason (and digest) whichever machine generated it
    assert stack.choices == on_x86.choices


def test_a_pin_that_only_resolves_on_another_arch_fails_and_names_it(kb) -> None:  # type: ignore[no-untyped-def]
    on_x86 = Resolver(kb, host_arch="x86_64")
    found = conflict(kb, on_x86, "ssd", cuda="10.1", base="ubi7", with_=["pytorch=1.1.0"])
    changes = [a.change for a in found.alternatives]
    assert "--arch ppc64le" in changes
    on_power = Resolver(kb, host_arch="ppc64le")
    assert resolve(kb, on_power, "ssd", cuda="10.1", base="ubi7", with_=["pytorch=1.1.0"])


# ------------------------------------------------------------------ causes first


def _lines(found: StackConflict) -> list:  # type: ignore[type-arg]
    return [f"[{f.rule}] {f.message}" for f in found.failures]


def test_cudnn_pin_is_named_as_the_cause_and_never_said_to_match_nothing(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    found = conflict(kb, resolver, "ssd", cudnn="8")
    lines = _lines(found)
    assert lines[0].startswith("[cudnn-pin] --cudnn 8: selects cuDNN 8.")
    assert "need cuDNN >=7.5,<8" in lines[0]
    assert not any("matches none of" in line and "8.3.1.22" in line for line in lines)
    # ppc64le's WML CE builds load their own cuDNN 7: no arch fits, so none is offered
    assert not any(line.startswith("[arch]") for line in lines)
    assert "--arch ppc64le" not in [a.change for a in found.alternatives]


def test_pick_stage_pin_says_what_it_selected(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    found = conflict(kb, resolver, "maskrcnn", cudnn="8", base="ubi8", cuda="10.2")
    text = str(found)
    assert "--cudnn 8 matches none of 7.6.5.32, 8.3.1.22" not in text
    assert "[cudnn-pin] --cudnn 8: selects" in text


def test_driver_comes_before_framework_lines(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    found = conflict(kb, resolver, "tf_cnn_benchmarks", driver="410.48", cuda="10.1")
    lines = _lines(found)
    driver = next(i for i, line in enumerate(lines) if line.startswith("[host-driver]"))
    assert "needs >= 418.39" in lines[driver]
    framework = [i for i, line in enumerate(lines) if line.startswith("[framework")]
    assert framework and min(framework) > driver
    assert len(framework) == 1  # summarised in one line
    assert len(lines) <= 6


def test_python_limit_of_the_framework_comes_first(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    found = conflict(kb, resolver, "tf_cnn_benchmarks", python="3.8", with_=["tensorflow=2.1"])
    first = _lines(found)[0]
    assert first.startswith("[python-pin] --python 3.8:")
    assert "Python 3.6, 3.7 only" in first


def test_arch_without_packages_names_its_last_release(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    found = conflict(kb, resolver, "nccl-tests", arch="ppc64le", cuda="12.6")
    last = resolver.rules.last_cuda_on("ppc64le")
    assert last == "12.4.1"
    assert f"up to CUDA {last}" in _lines(found)[0]
    assert any(f"packages end at CUDA {last}" in line for line in _lines(found))


def test_causes_are_ordered_pin_then_host_then_arch(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    from mlcc.resolve.causes import CAUSE_DIMENSIONS

    categories = [category for _, category in CAUSE_DIMENSIONS]
    assert categories == sorted(categories)
    found = conflict(kb, resolver, "tf_cnn_benchmarks", driver="410.48", cuda="10.1")
    rules = [f.rule for f in found.failures]
    assert rules.index("cuda-pin") < rules.index("host-driver")


# ------------------------------------------------------------------ default stack


def _submission_libraries(benchmark_log: str) -> dict:  # type: ignore[type-arg]
    """cuda/cudnn/nccl versions from an MLPerf v0.6 result log's submission_entry."""
    import ast
    import re

    from tests.conftest import mlperf_v06

    text = (mlperf_v06(*benchmark_log.split("/")) / "result_0.txt").read_text(encoding="utf-8")
    entry = re.search(r"submission_entry: (\{.*\})", text)
    assert entry is not None
    value = ast.literal_eval(json_loads(entry.group(1))["value"])
    return dict(ast.literal_eval(value["libraries"]))


def json_loads(text: str) -> dict:  # type: ignore[type-arg]
    import json

    return dict(json.loads(text))


@pytest.mark.parametrize(
    "benchmark, log",
    [
        ("maskrcnn", "NVIDIA/dgx1_ngc19.05_pytorch/maskrcnn"),
        ("ssd", "NVIDIA/dgx1_ngc19.05_pytorch/ssd"),
        ("gnmt", "NVIDIA/dgx1_ngc19.05_pytorch/gnmt"),
        ("transformer", "NVIDIA/dgx1_ngc19.05_pytorch/transformer"),
        ("resnet50", "NVIDIA/dgx1_ngc19.05_mxnet/resnet"),
        ("minigo", "NVIDIA/dgx1_ngc19.05_tensorflow/minigo"),
    ],
)
def test_reference_stack_facts_match_the_result_logs(kb, benchmark, log) -> None:  # type: ignore[no-untyped-def]
    reference = kb.benchmarks[benchmark].reference_stack
    libraries = _submission_libraries(log)
    assert (reference.cuda, reference.cudnn, reference.nccl) == (
        libraries["cuda_version"],
        libraries["cudnn_version"],
        libraries["nccl_version"],
    )


def test_default_is_the_stack_nearest_the_reference_run(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolve(kb, resolver, "maskrcnn")
    # NGC 19.05 ran CUDA 10.1.163, cuDNN 7.6.0.64, NCCL 2.4.6
    assert stack.cuda.minor == "10.1" and stack.cudnn.version.startswith("7.6.")
    reasons = dict((c.component, c.reason) for c in stack.choices)
    assert "nearest maskrcnn's reference run" in reasons["cuda"] and "10.1.163" in reasons["cuda"]
    assert "--newest" in reasons["cuda"]
    assert "nearest maskrcnn's reference run" in reasons["cudnn"]
    # NVIDIA's images give CUDA 10.1 NCCL 2.8.4 only: the nearest to 2.4.6 there is
    assert stack.nccl.version == "2.8.4"


def test_nearness_prefers_the_reference_line_then_the_nearest_newer() -> None:
    from mlcc.resolve.candidates import nearness

    versions = ["10.0.130", "10.1.105", "10.1.243", "10.2.89", "11.0.3", "9.2.148"]
    ordered = sorted(versions, key=lambda v: nearness(v, "10.1.163"))
    assert ordered[:4] == ["10.1.243", "10.1.105", "10.2.89", "10.0.130"]  # equally near: the newer first
    # a reference naming only the major ("cuDNN 7") takes the newest of that major
    assert sorted(["7.0.5", "7.6.5.32", "8.0.5"], key=lambda v: nearness(v, "7"))[0] == "7.6.5.32"


def test_newest_flag_asks_for_the_newest_compatible_stack(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    default = resolve(kb, resolver, "maskrcnn")
    newest = resolve(kb, resolver, "maskrcnn", newest=True)
    assert newest.cuda.version == "10.2.89" and default.cuda.version == "10.1.243"
    assert "newest CUDA release" in dict((c.component, c.reason) for c in newest.choices)["cuda"]
    assert not hasattr(newest, "request")  # the stack holds facts, not how it was asked for


def test_benchmarks_without_a_reference_run_take_the_newest(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    for benchmark in ("nccl-tests", "tf_cnn_benchmarks"):
        assert kb.benchmarks[benchmark].reference_stack is None
        default = resolve(kb, resolver, benchmark)
        newest = resolve(kb, resolver, benchmark, newest=True)
        assert default.variant == newest.variant and default.nccl == newest.nccl


def test_newest_flag_on_the_command_line(cli) -> None:  # type: ignore[no-untyped-def]
    import json

    data = json.loads(cli("resolve", "maskrcnn", "--newest", "--json").out)
    assert data["cuda"] == "10.2.89" and data["request"]["pins"]["newest"] == "true"
    assert json.loads(cli("resolve", "maskrcnn", "--json").out)["cuda"] == "10.1.243"


# ------------------------------------------------------------------ source per framework version

TF_113_BRANCH = "4828965154c424bc61a7ec361edb67bb267869f4"  # cnn_tf_v1.13_compatible
TF_114_21_BRANCHES = "aef6daa90a467a1fc7ce8395cd0067e5fda1ecff"  # cnn_tf_v1.14 .. v2.1_compatible


@pytest.mark.parametrize(
    "version, commit",
    [("1.13", TF_113_BRANCH), ("1.14", TF_114_21_BRANCHES), ("2.1", TF_114_21_BRANCHES)],
)
def test_tf_cnn_benchmarks_source_follows_the_tensorflow_release(kb, resolver, version, commit) -> None:  # type: ignore[no-untyped-def]
    stack = resolve(kb, resolver, "tf_cnn_benchmarks", with_=[f"tensorflow={version}"])
    assert stack.framework.version.startswith(version)
    assert stack.benchmark.build.source.commit == commit


def test_tf_1_13_image_checks_out_its_branch(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    from mlcc.render import render

    stack = resolve(kb, resolver, "tf_cnn_benchmarks", with_=["tensorflow=1.13"])
    dockerfile = dict(render(stack).files)["Dockerfile"]
    assert f"git checkout -q --detach {TF_113_BRANCH}" in dockerfile
    assert TF_114_21_BRANCHES not in dockerfile


def test_a_framework_version_no_source_serves_is_a_recipe_error(recipes_copy) -> None:  # type: ignore[no-untyped-def]
    from mlcc.errors import RecipeError
    from mlcc.kb import load

    recipe = recipes_copy / "benchmarks" / "tf_cnn_benchmarks.yaml"
    text = recipe.read_text(encoding="utf-8")
    recipe.write_text(
        text.replace('framework: ">=1.13,<1.14"', 'framework: ">=1.12,<1.13"'), encoding="utf-8"
    )
    with pytest.raises(RecipeError) as caught:
        load(str(recipes_copy), use_cache=False)
    assert "no source serves tensorflow 1.13" in str(caught.value)
    assert "tf_cnn_benchmarks.yaml" in str(caught.value)


# ------------------------------------------------------------------ framework-bundled libraries


def test_wmlce_stacks_name_the_cudnn_the_framework_loads(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    from mlcc.render import render

    stack = resolve(kb, resolver, "gnmt", arch="ppc64le")
    assert stack.framework.variant.startswith("wmlce")
    assert stack.cudnn.method == "bundled" and stack.cudnn.major == 7  # the channel's cuDNN 7
    rendered = dict(render(stack).files)
    assert "libcudnn" not in rendered["Dockerfile"]  # no system cuDNN nothing would load
    assert 'io.mlcc.cudnn="7.6"' in rendered["Dockerfile"]
    loads = json_loads(rendered["stack.json"])["components"]["framework"]["loads"]
    assert loads == {
        "cuda_runtime": "10.1.168",
        "cudnn": "7.6",
        "nccl": "2.4.7",
    }  # WML CE 1.6.1: horovod/horovod#1165 (secondary)


def test_wmlce_1_7_facts_follow_the_channel(kb) -> None:  # type: ignore[no-untyped-def]
    # IBM/powerai#261 (the WML CE 1.7.0 channel): WML CE 1.7.0 ships cudatoolkit 10.2.89 and cudnn 7.6.5_10.2
    for framework in ("pytorch", "tensorflow"):
        [build] = [b for b in kb.frameworks[framework].builds if b.variant == "wmlce1.7.0"]
        assert dict(build.bundles) == {"cuda_runtime": "10.2.89", "cudnn": "7.6.5", "nccl": "2.5.6"}


def test_a_cudnn_pin_against_a_bundled_cudnn_names_the_framework(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    found = conflict(kb, resolver, "tf_cnn_benchmarks", arch="ppc64le", cudnn="8")
    assert "bring and load their own cuDNN" in _lines(found)[0] and "7.6.5" in _lines(found)[0]
