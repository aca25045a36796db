"""The content digest says what is built, never how the request was written.

``--cuda 10.1``, ``--cuda 10.1.243`` and ``--cuda '>=10.1,<10.2'`` resolve to the same
stack, so they must render the same build inputs (the same ``io.mlcc.digest``); only the
header comment, which records the request, may differ.
"""

from __future__ import annotations

import json
import shlex
from typing import Any, Dict, List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlcc.api import Pins, request_for
from mlcc.render import FORMATS, Rendered, render
from mlcc.render import digest as digests
from mlcc.resolve import Stack
from mlcc.resolve.stack import pinned

SPELLINGS_OF_CUDA_10_1_243 = ["10.1", "10.1.243", ">=10.1,<10.2", "==10.1.243", "10.1.*", ">10.1.168,<10.2"]


def _render(kb: Any, resolver: Any, benchmark: str, fmt: str = "dockerfile", **pins: Any) -> Rendered:
    request = request_for(kb, benchmark, Pins(**pins))
    return render(resolver.resolve(request), fmt=fmt, request=request)


def _without_header(rendered: Rendered) -> Dict[str, str]:
    """The files with the header's request line taken out: everything that is built."""
    line = f"#   {rendered.command}\n"
    return {n: c.replace(line, "", 1) if n == rendered.main_file else c for n, c in rendered.files}


def _facts(stack: Stack) -> Any:
    """The stack: immutable facts, with no trace of the request that produced it."""
    return stack


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_three_spellings_of_one_cuda_pin_give_one_digest(kb, resolver, fmt: str) -> None:  # type: ignore[no-untyped-def]
    renders = [_render(kb, resolver, "maskrcnn", fmt, cuda=s) for s in SPELLINGS_OF_CUDA_10_1_243]
    first = renders[0]
    assert first.stack.cuda is not None and first.stack.cuda.version == "10.1.243"
    for other in renders[1:]:
        assert other.variant == first.variant
        assert other.digest == first.digest
        assert _without_header(other) == _without_header(first)
        assert other.content("stack.json") == first.content("stack.json")
    # the request itself is still recorded in the header, each as it was written
    for rendered in renders:
        header = [
            line
            for line in rendered.content(rendered.main_file).splitlines()
            if line.startswith("#   mlcc gen")
        ]
        assert header == [f"#   {rendered.command}"]
        # quoted for a shell: copied from the header, it runs as the same request
        assert shlex.split(rendered.command)[:4] == ["mlcc", "gen", "maskrcnn", "--cuda"]
        assert shlex.split(rendered.command)[4] in {
            str(request_for(kb, "maskrcnn", Pins(cuda=s)).cuda) for s in SPELLINGS_OF_CUDA_10_1_243
        }
    assert len({r.command for r in renders}) > 3  # the spellings stay recorded


def test_stack_json_holds_no_trace_of_the_request(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    document = json.loads(_render(kb, resolver, "maskrcnn", cuda=">=10.1,<10.2").content("stack.json"))
    assert "pins" not in document
    assert "<10.2" not in json.dumps(document) and "--cuda" not in json.dumps(document)
    aliased = _render(kb, resolver, "maskrcnn", arch="amd64", cuda="10.1").content("stack.json")
    assert aliased == _render(kb, resolver, "maskrcnn", cuda="10.1").content("stack.json")


def test_the_request_records_what_each_pin_chose(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    request = request_for(kb, "maskrcnn", Pins(cuda=">=10.1,<10.2"))
    assert pinned(request, resolver.resolve(request)) == {"cuda": "10.1.243"}
    aliased = request_for(kb, "maskrcnn", Pins(arch="amd64"))
    assert pinned(aliased, resolver.resolve(aliased)) == {"arch": "x86_64"}


def test_mlcc_resolve_shows_the_request_beside_the_stack(cli) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(cli("resolve", "ssd", "--cuda", "10.1", "--json").out)
    assert data["request"] == {"pins": {"cuda": "10.1"}, "chose": {"cuda": "10.1.243"}}
    assert "pins" not in data
    table = cli("resolve", "ssd", "--cuda", "10.1").out
    assert "request: --cuda 10.1 (chose cuda 10.1.243)" in table


def test_an_arch_alias_builds_the_same_image(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    digests_seen = {_render(kb, resolver, "ssd", arch=a).digest for a in ("x86_64", "amd64", "x86-64", "x64")}
    assert len(digests_seen) == 1


def test_the_digest_still_tells_different_stacks_apart(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    a = _render(kb, resolver, "maskrcnn", cuda="10.1")
    b = _render(kb, resolver, "maskrcnn", cuda="10.2")
    assert a.stack.cuda != b.stack.cuda and a.digest != b.digest


def test_recompute_checks_a_rendered_variant(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    rendered = _render(kb, resolver, "maskrcnn", cuda=">=10.1,<10.2")
    args = (rendered.build_args, rendered.platform, rendered.digest, rendered.command)
    assert digests.recompute(rendered.files, *args) == rendered.digest
    edited = [(n, c.replace("dnf clean all", "dnf clean packages", 1)) for n, c in rendered.files]
    assert digests.recompute(edited, *args) != rendered.digest


_VERSION_PINS: List[str] = [
    "10.0",
    "10.1",
    "10.2",
    "10.1.243",
    "10.1.168",
    "10.2.89",
    ">=10.0",
    "<10.2",
    ">=10.1,<11",
]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    cuda=st.sampled_from(_VERSION_PINS),
    other=st.sampled_from(_VERSION_PINS),
    python=st.sampled_from([None, "3", "3.6", ">=3.6"]),
)
def test_equal_stacks_have_equal_digests_and_only_those(
    kb, resolver, cuda: str, other: str, python: Any
) -> None:  # type: ignore[no-untyped-def]
    """Any two requests: the same stack (request aside) <=> the same digest."""
    from mlcc.errors import MlccError

    found = []
    for spelling in (cuda, other):
        pins: Dict[str, Any] = {"cuda": spelling}
        if python is not None:
            pins["python"] = python
        try:
            found.append(_render(kb, resolver, "maskrcnn", **pins))
        except MlccError:
            return  # no stack for this pin: nothing to compare
    a, b = found
    same_stack = _facts(a.stack) == _facts(b.stack) and a.variant == b.variant
    assert (a.digest == b.digest) == same_stack
