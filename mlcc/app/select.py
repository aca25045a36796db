"""`mlcc gen -i`: pick benchmark, arch, base, CUDA and framework version from menus that
offer only what can still resolve (the original mlcc's -I menus, with the resolver behind
them). The questions go through a callback, so a script or a test can answer them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, List, NamedTuple, Optional, Sequence, Tuple

from mlcc.app.kb import warn_if_incomplete
from mlcc.errors import ConflictError
from mlcc.kb.model import KnowledgeBase
from mlcc.matrix import CPU
from mlcc.resolve import Resolver, Stack
from mlcc.resolve.pins import Pins
from mlcc.versions import parse_version

# ask(question, options, default) -> one of options
Ask = Callable[[str, Sequence[str], str], str]


class Selection(NamedTuple):
    benchmark: str
    pins: Pins
    stack: Stack


def _resolves(resolver: Resolver, kb: KnowledgeBase, benchmark: str, pins: Pins) -> Optional[Stack]:
    try:
        return resolver.resolve(pins.request(kb, benchmark))
    except ConflictError:
        return None


def _keep(
    resolver: Resolver,
    kb: KnowledgeBase,
    benchmark: str,
    pins: Pins,
    key: str,
    values: Sequence[str],
) -> List[str]:
    return [v for v in values if _resolves(resolver, kb, benchmark, _apply(pins, key, v)) is not None]


def _cuda_lines(kb: KnowledgeBase) -> List[str]:
    lines = sorted({".".join(r.version.split(".")[:2]) for r in kb.cuda}, key=parse_version, reverse=True)
    return [CPU, *lines]


def _apply(pins: Pins, key: str, value: str) -> Pins:
    if key == "cuda" and value == CPU:
        return replace(pins, cpu=True)
    if key == "with":
        return replace(pins, with_=(value,))
    if key == "arch":
        return replace(pins, arch=value)
    if key == "base":
        return replace(pins, base=value)
    return replace(pins, cuda=value)


def walk(kb: KnowledgeBase, ask: Ask, *, resolver: Optional[Resolver] = None) -> Selection:
    """Ask for each dimension in turn (``mlcc gen -i``), offering only what can still resolve.

    Benchmark, arch, base, CUDA release, then the framework version; the default of each
    question is what the resolver would pick.

    Args:
        kb: The knowledge base.
        ask: Called with the question, the choices and the default; returns the answer.
        resolver: The resolver to use (default: a new one).

    Returns:
        The answers as pins, and the stack they resolve to.
    """
    resolver = resolver or Resolver(kb)
    # only what resolves with no pins: a recipe no base can build (dlrm, minigo of v2.1) is no choice
    benchmarks = [b for b in sorted(kb.benchmarks) if _resolves(resolver, kb, b, Pins()) is not None]
    benchmark = ask("benchmark", benchmarks, benchmarks[0])
    pins = Pins()
    steps: List[Tuple[str, str, List[str]]] = [
        ("arch", "CPU architecture", list(kb.arches)),
        ("base", "base image", [b.name for b in sorted(kb.bases, key=lambda b: b.preference)]),
        ("cuda", "CUDA release (or cpu)", _cuda_lines(kb)),
    ]
    for key, question, values in steps:
        offered = _keep(resolver, kb, benchmark, pins, key, values)
        stack = _resolves(resolver, kb, benchmark, pins)
        assert stack is not None and offered, "a resolving request offers at least what it resolves to"
        default = _default(stack, key, offered)
        pins = _apply(pins, key, ask(question, offered, default))
    stack = _resolves(resolver, kb, benchmark, pins)
    assert stack is not None
    if stack.framework is not None:
        name = stack.framework.framework
        versions = sorted({b.version for b in kb.frameworks[name].builds}, key=parse_version, reverse=True)
        # an exact specifier ("==1.1.0"): the prefix 1.1.0 would also take 1.1.0a0+828a6a3
        offered = [v for v in versions if _keep(resolver, kb, benchmark, pins, "with", [f"{name}==={v}"])]
        if len(offered) > 1:
            default = stack.framework.version
            picked = ask(f"{name} version", offered, default if default in offered else offered[0])
            pins = _apply(pins, "with", f"{name}==={picked}")
            stack = _resolves(resolver, kb, benchmark, pins)
            assert stack is not None
    warn_if_incomplete(stack.benchmark)
    return Selection(benchmark, pins, stack)


def _default(stack: Stack, key: str, offered: Sequence[str]) -> str:
    value = {
        "arch": stack.arch.name,
        "base": stack.base.name,
        "cuda": ".".join(stack.cuda.version.split(".")[:2]) if stack.cuda else CPU,
    }[key]
    return value if value in offered else offered[0]
