"""One stack, one image: the request that resolved a stack never reaches what is built.

For every published cell (recipes/matrix.yaml), pinning any subset of the stack's own
resolved components -- prefix, exact, specifier or ``==`` spellings -- resolves to the
same stack, and renders the same variant name, the same build inputs and so the same
``io.mlcc.digest`` (the content tag). Only the header comment, which records the request
outside the digest, may differ.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Dict, List, Sequence, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlcc.app.generate import Generated, generate
from mlcc.app.published_set import published
from mlcc.kb.model import UNCONFIRMED
from mlcc.render import render
from mlcc.render.openshift import ClusterOptions
from mlcc.resolve import Resolver, Stack
from mlcc.resolve.pins import Pins
from mlcc.versions import parse_version

# The header line that records the request, in a file or in a Dockerfile inside YAML.
_REQUEST_LINE = re.compile(r"^ *#   mlcc gen .*\n", re.MULTILINE)


def _cells(kb: Any) -> List[Tuple[str, Pins, Stack]]:
    return [(o.cell.benchmark, o.cell.pins(), o.stack) for o in published(kb) if o.published and o.stack]


@pytest.fixture(scope="module")
def cells(kb: Any) -> List[Tuple[str, Pins, Stack]]:
    return _cells(kb)


def _spellings(version: str) -> List[str]:
    """Ways to pin ``version`` that select it: exact, ``==``, and for a final release its
    major.minor prefix and a specifier over that line."""
    found = [version, f"=={version}"]
    parsed = parse_version(version)
    if not parsed.is_prerelease and not parsed.local and len(parsed.release) > 2:
        major, minor = parsed.release[:2]
        found += [f"{major}.{minor}", f">={major}.{minor},<{major}.{minor + 1}"]
    return found


def _component_pins(stack: Stack) -> Dict[str, List[Dict[str, Any]]]:
    """Each resolved component of ``stack`` with the Pins fields that spell it."""
    found: Dict[str, List[Dict[str, Any]]] = {
        "base": [{"base": stack.base.name}],
        "arch": [{"arch": a} for a in (stack.arch.name, *stack.arch.aliases)],
        "gcc": [{"gcc": s} for s in _spellings(stack.gcc.version)],
    }
    if stack.cuda is None:
        found["cpu"] = [{"cpu": True}]
    else:
        found["cuda"] = [{"cuda": s} for s in _spellings(stack.cuda.version)]
    for library in ("cudnn", "nccl"):
        build = getattr(stack, library)
        if build is not None and build.confirmed:
            found[library] = [{library: s} for s in _spellings(build.version)]
    if stack.python is not None:
        found["python"] = [{"python": s} for s in _spellings(stack.python.version)]
    fw = stack.framework
    if fw is not None and fw.version != UNCONFIRMED:  # an NGC image's DGL no source versions
        found["framework"] = [{"with_": (f"{fw.framework}={s}",)} for s in _spellings(fw.version)]
    return found


def _request_pins(cell_pins: Pins, chosen: Sequence[Dict[str, Any]]) -> Pins:
    pins = cell_pins
    for fields in chosen:
        pins = replace(pins, **fields)
    return pins


def _build_inputs(rendered: Any) -> Dict[str, str]:
    return {name: _REQUEST_LINE.sub("", content) for name, content in rendered.files}


def _generated_files(generated: Generated) -> Dict[str, str]:
    files = dict(generated.files())
    if generated.openshift is not None:
        files.update(generated.openshift.files)
    return {name: _REQUEST_LINE.sub("", content) for name, content in files.items()}


@st.composite
def _pinned_cell(draw: Any, cells: List[Tuple[str, Pins, Stack]]) -> Tuple[str, Pins, Stack, Pins]:
    benchmark, cell_pins, stack = draw(st.sampled_from(cells))
    components = _component_pins(stack)
    names = draw(st.lists(st.sampled_from(sorted(components)), unique=True))
    chosen = [draw(st.sampled_from(components[name])) for name in names]
    return benchmark, cell_pins, stack, _request_pins(cell_pins, chosen)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_pins_of_a_cells_own_components_give_one_digest_and_one_name(kb, resolver, cells, data) -> None:  # type: ignore[no-untyped-def]
    benchmark, cell_pins, stack, pins = data.draw(_pinned_cell(cells))
    request = pins.request(kb, benchmark)
    again = resolver.resolve(request)
    assert again == stack, f"{pins} resolves to {again.variant}, not {stack.variant}"
    published_render = render(stack, request=cell_pins.request(kb, benchmark))
    rendered = render(again, request=request)
    assert rendered.variant == published_render.variant
    assert rendered.digest == published_render.digest
    assert _build_inputs(rendered) == _build_inputs(published_render)


def test_every_cell_has_a_component_of_each_spelling(kb, cells) -> None:  # type: ignore[no-untyped-def]
    """The property test draws from these: each kind of spelling is among them."""
    spelled = [s for _, _, stack in cells for options in _component_pins(stack).values() for s in options]
    values = [str(v) for fields in spelled for v in fields.values()]
    assert any(v.startswith("==") for v in values)
    assert any(v.startswith(">=") for v in values)
    assert any(re.fullmatch(r"\d+\.\d+", v) for v in values)  # a prefix
    assert any(re.fullmatch(r"\d+\.\d+\.\d+(\.\d+)?", v) for v in values)  # exact


def _all_resolved(stack: Stack, cell_pins: Pins) -> Pins:
    """Every resolved version pinned, exactly."""
    components = _component_pins(stack)
    return _request_pins(cell_pins, [options[0] for options in components.values()])


def test_gen_writes_the_same_files_whatever_a_cell_is_asked_with(kb, cells) -> None:  # type: ignore[no-untyped-def]
    """For every published cell: ``mlcc gen`` with no pins (on a machine of the cell's
    arch), with the cell's matrix pins and with all its resolved versions pinned write
    byte-identical files, the header comment aside, under one variant name."""
    cluster = ClusterOptions()
    by_host = {arch: Resolver(kb, host_arch=arch) for arch in kb.arches}
    bare_defaults = 0
    for benchmark, cell_pins, stack in cells:
        resolver = by_host[stack.arch.name]
        requests = [cell_pins, _all_resolved(stack, cell_pins)]
        if resolver.resolve(Pins().request(kb, benchmark)) == stack:
            requests.append(Pins())
            bare_defaults += 1
        outputs = []
        for pins in requests:
            request = pins.request(kb, benchmark)
            generated = generate(kb, resolver.resolve(request), cluster=cluster, request=request)
            outputs.append((generated.folder, generated.rendered.digest, _generated_files(generated)))
        first = outputs[0]
        for other in outputs[1:]:
            assert other[0] == first[0], f"{benchmark} {cell_pins}: {other[0]} != {first[0]}"
            assert other[1] == first[1]
            assert other[2] == first[2]
    assert bare_defaults >= 10  # the defaults of most benchmarks are published cells


def test_a_pin_equal_to_the_default_adds_no_suffix(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    default = resolver.resolve(Pins().request(kb, "ssd"))
    assert default.framework is not None and default.python is not None and default.cudnn is not None
    for pins in (
        Pins(python=default.python.version),
        Pins(cudnn=default.cudnn.version),
        Pins(with_=(f"pytorch=={default.framework.version}",)),
        Pins(gcc=default.gcc.version),
        Pins(cuda=default.cuda.version if default.cuda else None),
    ):
        assert (
            resolver.resolve(pins.request(kb, "ssd")).variant
            == default.variant
            == "cuda10.1-cudnn7-ubi8-x86_64"
        )


def test_a_choice_other_than_the_default_names_itself(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    newest = resolver.resolve(Pins(newest=True).request(kb, "ssd"))
    assert newest.cuda is not None and newest.nccl is not None
    core = resolver.resolve(Pins(cuda=newest.cuda.version, base=newest.base.name).request(kb, "ssd"))
    assert core.nccl is not None and core.nccl.version != newest.nccl.version
    assert newest.variant == f"{core.variant}-nccl{newest.nccl.version}"
    reasons = dict((c.component, c.reason) for c in newest.choices)
    assert f"not the default stack's ({core.nccl.version})" in reasons["nccl"]
    assert "pin" not in reasons["nccl"] and "--newest" not in reasons["nccl"]
    # the same stack asked for by its versions instead of --newest: the same name, the same image
    by_versions = Pins(cuda=newest.cuda.version, nccl=f"=={newest.nccl.version}")
    assert resolver.resolve(by_versions.request(kb, "ssd")) == newest
    assert render(newest).digest == render(resolver.resolve(by_versions.request(kb, "ssd"))).digest
