"""The resolver against the real stacks the recipes record, its preferences, and conflicts."""

from __future__ import annotations

import pytest

from mlcc.errors import ConflictError, UsageError
from mlcc.resolve import build_request
from mlcc.resolve.explain import StackConflict
from mlcc.versions import parse_version, satisfies


def resolve(kb, resolver, benchmark, **pins):  # type: ignore[no-untyped-def]
    return resolver.resolve(build_request(kb, benchmark, **pins))


def conflict(kb, resolver, benchmark, **pins) -> StackConflict:  # type: ignore[no-untyped-def]
    with pytest.raises(StackConflict) as caught:
        resolve(kb, resolver, benchmark, **pins)
    assert caught.value.exit_code == 3
    return caught.value


# ------------------------------------------------------------- agreement with real stacks


def test_seed_command_gives_the_issue_example(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolve(kb, resolver, "maskrcnn", cuda="10.1")
    assert stack.variant == "cuda10.1-cudnn7-ubi8-x86_64"
    assert stack.cuda.version == "10.1.243"
    assert stack.framework.version == "1.1.0a0+828a6a3"  # what NGC 19.05 shipped
    assert stack.python.version == "3.6"
    assert stack.cudnn.major == 7


def test_newest_maskrcnn_is_the_red_hat_port_stack(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    # openshift-psap/mlperf_v0.6_resources: UBI 8, CUDA 10.2, cuDNN 7.6.5, PyTorch 1.1.0a0+828a6a3, Python 3.6
    stack = resolve(kb, resolver, "maskrcnn", newest=True)
    assert (stack.base.name, stack.cuda.version, stack.python.version) == ("ubi8", "10.2.89", "3.6")
    assert stack.cudnn.version.startswith("7.6.5")
    assert stack.framework.version == "1.1.0a0+828a6a3" and stack.reference


@pytest.mark.parametrize("benchmark", ["maskrcnn", "ssd", "gnmt", "transformer"])
def test_v06_pytorch_benchmarks_default_to_the_reference_build(kb, resolver, benchmark) -> None:  # type: ignore[no-untyped-def]
    stack = resolve(kb, resolver, benchmark)
    assert stack.framework.version == "1.1.0a0+828a6a3"
    assert stack.cuda.minor in ("10.1", "10.2")  # the NGC and the Red Hat port lines


def test_minigo_uses_tensorflow_1_13_1_as_ngc_19_05(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolve(kb, resolver, "minigo")
    assert stack.framework.version == "1.13.1"
    assert stack.cuda.minor == "10.0"  # TensorFlow 1.13's tested configuration
    assert stack.cudnn.major == 7 and parse_version(stack.cudnn.version) >= parse_version("7.4")


def test_tensorflow_pins_follow_the_tested_configurations(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    for version, line in (
        ("1.14", "10.0"),
        ("1.15", "10.0"),
        ("2.0", "10.0"),
        ("2.1", "10.1"),
    ):
        stack = resolve(kb, resolver, "tf_cnn_benchmarks", with_=[f"tensorflow={version}"])
        assert stack.cuda.minor == line, version


def test_ppc64le_resolves_through_ibm_builds_on_rhel7(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolve(kb, resolver, "ssd", arch="ppc64le")
    assert stack.arch.name == "ppc64le"
    assert stack.framework.install.method == "conda"
    assert stack.base.repo_distro == "rhel7"
    assert stack.cudnn is not None, "cuDNN is not silently skipped on ppc64le"


def test_newest_ppc64le_cuda_is_12_4_1_on_ubi8(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolve(kb, resolver, "nccl-tests", arch="ppc64le")
    assert (stack.cuda.version, stack.base.name) == ("12.4.1", "ubi8")


def test_ubi7_ends_with_12_4_0(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    assert resolve(kb, resolver, "nccl-tests", base="ubi7").cuda.version == "12.4.0"


def test_driver_pin_keeps_only_releases_it_can_run(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    for driver, newest in (("418.67", "10.1.243"), ("440.33", "10.2.89"), ("450.80.02", "11.0.3")):
        stack = resolve(kb, resolver, "nccl-tests", driver=driver)
        assert stack.cuda.version == newest
        assert parse_version(stack.driver_min) <= parse_version(driver)


def test_cpu_is_a_first_class_accelerator(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolve(kb, resolver, "tf_cnn_benchmarks", cpu=True)
    assert stack.cuda is None and stack.cudnn is None and stack.nccl is None
    assert stack.framework.is_cpu and stack.variant.startswith("cpu-")
    assert stack.to_dict()["cuda"] is None


# ---------------------------------------------------------------------------- GCC rules


def test_toolset_is_chosen_when_the_system_gcc_is_too_old(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolve(kb, resolver, "ncf")  # needs GCC >= 5; UBI 7's system GCC is 4.8.5
    assert stack.base.gcc_system == "4.8.5"
    assert stack.gcc.toolset is not None and stack.gcc.toolset.name.startswith("devtoolset-")
    assert satisfies(stack.gcc.version, stack.cuda.host_gcc_spec(stack.arch.name))


def test_gcc_pin_selects_a_toolset(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolve(kb, resolver, "nccl-tests", base="ubi8", gcc="11")
    assert stack.gcc.toolset is not None and stack.gcc.toolset.name == "gcc-toolset-11"
    assert stack.variant.endswith("-gcc11.2.1")


def test_system_gcc_newer_than_cuda_allows_is_a_named_conflict(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    # UBI 9 ships GCC 11.4.1; CUDA 11.5 accepts GCC < 11.2 and UBI 9 has no older toolset
    error = conflict(kb, resolver, "nccl-tests", base="ubi9", cuda="11.5")
    rules = {f.rule for f in error.failures}
    assert "cuda-repo" in rules or "gcc-bound" in rules
    assert any(a.change.startswith("--base") for a in error.alternatives)


def test_gcc_bound_conflict_names_the_bound(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    error = conflict(kb, resolver, "nccl-tests", base="ubi8", cuda="10.1", gcc="11")
    gcc = [f for f in error.failures if f.rule == "gcc-bound"]
    assert gcc and "<9" in gcc[0].message and gcc[0].origin.startswith("recipes/cuda.yaml:")


# ---------------------------------------------------------------------------- conflicts


def test_conflict_names_rule_origin_and_alternatives(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    error = conflict(kb, resolver, "maskrcnn", cuda="11.8")
    # the pin is the cause and comes first; then the rules it ran into, with their origin
    assert error.failures[0].rule == "cuda-pin" and "built for CUDA" in error.failures[0].message
    assert {f.rule for f in error.failures[1:]} == {"cuda-framework"}
    assert all(f.origin.startswith("recipes/frameworks/pytorch.yaml:") for f in error.failures[1:])
    changes = [a.change for a in error.alternatives]
    assert changes[:2] == ["--cuda 10.2", "--cuda 10.1"]  # nearest first
    text = str(error)
    assert "why:" in text and "nearest valid alternatives" in text


def test_which_base_carries_cuda_10_1_on_ppc64le(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    error = conflict(kb, resolver, "ssd", arch="ppc64le", base="ubi8")
    assert [f.rule for f in error.failures[:2]] == ["base-pin", "arch"]  # the causes, pins first
    assert {f.rule for f in error.failures if not f.pin} == {"cuda-repo"}
    alternatives = {a.change for a in error.alternatives}
    assert "--base ubi7" in alternatives and "--arch x86_64" in alternatives


def test_ppc64le_after_12_4_is_explained(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    error = conflict(kb, resolver, "nccl-tests", arch="ppc64le", cuda="12.6")
    assert any("ppc64le" in f.message for f in error.failures)
    assert "--cuda 12.4" in {a.change for a in error.alternatives}


def test_pin_matching_nothing_says_so(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    error = conflict(kb, resolver, "maskrcnn", cuda="99")
    assert "matches none of the known CUDA releases" in str(error)


def test_framework_the_benchmark_does_not_use(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    error = conflict(kb, resolver, "maskrcnn", with_=["tensorflow=1.13"])
    assert [f.rule for f in error.failures] == ["benchmark-framework"]
    assert error.alternatives[0].change == "drop --with tensorflow"


def test_driver_too_old_for_everything(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    error = conflict(kb, resolver, "nccl-tests", driver="300")
    assert "older than every CUDA release" in str(error)
    assert error.alternatives[0].change.startswith("driver >= ")


def test_conflict_json_shape(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    data = conflict(kb, resolver, "maskrcnn", cuda="11.8").to_dict()
    assert data["error"] == "conflict" and data["pins"] == {"cuda": "11.8"}
    assert data["rules"][0]["rule"] == "cuda-pin" and data["rules"][0]["origin"] is None
    assert data["rules"][1]["origin"].startswith("recipes/")
    assert data["alternatives"][0]["variant"] == "cuda10.2-cudnn7-ubi8-x86_64"


# ---------------------------------------------------------------------- usage errors


@pytest.mark.parametrize(
    ("pins", "message"),
    [
        ({"cpu": True, "cuda": "10.1"}, "contradictory pins: --cpu and --cuda 10.1"),
        ({"cuda": "10.1", "with_": ["cuda=10.2"]}, "contradictory pins"),
        ({"with_": ["pytorch=1.1", "tensorflow=1.13"]}, "a stack has one framework"),
        ({"with_": ["pytroch=1.1"]}, "did you mean 'pytorch'"),
        ({"with_": ["pytorch"]}, "expected NAME=VERSION"),
        ({"base": "ubi88"}, "did you mean 'ubi8'"),
        ({"arch": "power10"}, "unknown arch"),
        ({"driver": "418.67; reboot"}, "is not a driver version"),
        ({"cuda": "10.1; rm -rf /"}, "is not a version"),
    ],
)
def test_bad_pins_are_usage_errors(kb, pins, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError) as caught:
        build_request(kb, "maskrcnn", **pins)
    assert message in str(caught.value)
    assert caught.value.exit_code == 2


def test_unknown_benchmark(kb) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError, match="did you mean 'nccl-tests'"):
        build_request(kb, "nccl-test")


def test_arch_aliases_normalise(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    assert resolve(kb, resolver, "nccl-tests", arch="ppc64el").arch.name == "ppc64le"
    assert resolve(kb, resolver, "nccl-tests", arch="amd64").arch.name == "x86_64"


# ----------------------------------------------------------------- the cross product


def _cells(kb):  # type: ignore[no-untyped-def]
    for benchmark in kb.benchmarks:
        for base in kb.bases:
            for arch in kb.arches:
                for cuda in [None, *(r.version for r in kb.cuda)]:
                    yield build_request(kb, benchmark, base=base.name, arch=arch, cuda=cuda, cpu=cuda is None)


def test_every_cell_resolves_to_a_consistent_stack_or_explains_why_not(kb) -> None:  # type: ignore[no-untyped-def]
    from mlcc.resolve import Resolver

    resolver = Resolver(kb)
    resolved = 0
    for request in _cells(kb):
        try:
            stack = resolver.resolve(request)
        except ConflictError as error:
            assert isinstance(error, StackConflict)
            assert error.failures or error.note, request
            continue
        resolved += 1
        _check_invariants(stack)
    assert resolved > 300


def _check_invariants(stack) -> None:  # type: ignore[no-untyped-def]
    arch, base = stack.arch.name, stack.base
    assert arch in base.arches
    if stack.framework is not None:
        assert arch in stack.framework.arches
        if stack.python is not None:
            assert stack.python.version in stack.framework.python
    if stack.cuda is not None and base.contents is not None:
        # an NGC image brings its CUDA and libraries: the stack is the base's record
        assert base.contents.cuda.startswith(stack.cuda.version)
        # ... or a build step installs its own over the base's (recipes: a step's replaces)
        for lib in (stack.cudnn, stack.nccl):
            assert lib is None or (lib.method == "base") == (lib.replaced is None)
        assert stack.framework is None or stack.cuda.minor in stack.framework.cuda
    elif stack.cuda is not None:
        assert stack.cuda.carried(base.repo_distro, arch)
        if stack.framework is not None:
            assert stack.cuda.minor in stack.framework.cuda
        assert satisfies(stack.gcc.version, stack.cuda.host_gcc_spec(arch))
        for lib in (stack.cudnn, stack.nccl):
            if lib is not None:
                assert lib.fits_cuda(stack.cuda.version)
                assert lib.repo_distro == base.repo_distro and arch in lib.arches
    else:
        assert stack.cudnn is None and stack.nccl is None
    assert stack.choices and all(c.reason for c in stack.choices)


def test_resolution_is_deterministic(kb) -> None:  # type: ignore[no-untyped-def]
    from mlcc.resolve import Resolver

    first = [s.to_dict() if s else None for s in map(Resolver(kb).try_resolve, _cells(kb))]
    second = [s.to_dict() if s else None for s in map(Resolver(kb).try_resolve, _cells(kb))]
    assert first == second
