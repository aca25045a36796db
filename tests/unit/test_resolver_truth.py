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
    stack = resolve(kb, on_power, "maskrcnn")
    assert stack.arch.name == "ppc64le"
    assert "this machine's arch" in dict((c.component, c.reason) for c in stack.choices)["arch"]


def test_host_arch_the_benchmark_lacks_falls_back_to_its_first(kb) -> None:  # type: ignore[no-untyped-def]
    on_arm = Resolver(kb, host_arch="aarch64")
    stack = resolve(kb, on_arm, "maskrcnn")
    assert stack.arch.name == kb.benchmarks["maskrcnn"].arches[0]
    assert "this machine is aarch64" in dict((c.component, c.reason) for c in stack.choices)["arch"]


def test_a_pin_that_only_resolves_on_another_arch_fails_and_names_it(kb) -> None:  # type: ignore[no-untyped-def]
    on_x86 = Resolver(kb, host_arch="x86_64")
    found = conflict(kb, on_x86, "maskrcnn", cuda="10.1", base="ubi7", with_=["pytorch=1.1.0"])
    changes = [a.change for a in found.alternatives]
    assert "--arch ppc64le" in changes
    on_power = Resolver(kb, host_arch="ppc64le")
    assert resolve(kb, on_power, "maskrcnn", cuda="10.1", base="ubi7", with_=["pytorch=1.1.0"])
