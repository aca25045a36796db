"""Explaining a conflict: the rule that failed, where it is written, and what would work.

The rules reported are those that rejected candidates the user's pins allowed, taken at
the deepest stage the search reached: those are the facts standing between the request
and a stack. The alternatives change one pin at a time and keep the values that resolve,
nearest first; everything is computed from the knowledge base, offline.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from itertools import islice
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
)

from mlcc.errors import ConflictError
from mlcc.kb.model import CudaRelease
from mlcc.resolve import gpu as gpu_rule
from mlcc.resolve import image_base
from mlcc.resolve.causes import find_causes, ubi_alternative
from mlcc.resolve.request import Request
from mlcc.resolve.stack import Stack
from mlcc.resolve.stages import PICK_STAGES, STAGE_RANK, Failure, Rejection
from mlcc.resolve.view import ResolverView, Tracker
from mlcc.versions import VersionPin, parse_pin, parse_version

_MAX_RULES = 6
_MAX_PER_DIMENSION = 4


class Alternative(NamedTuple):
    change: str  # "--cuda 10.2", "drop --arch"
    stack: Stack

    def to_dict(self) -> Dict[str, Any]:
        return {
            "change": self.change,
            "summary": summarize(self.stack),
            "variant": self.stack.variant,
        }


class StackConflict(ConflictError):
    """No stack fits; carries the failed rules and the alternatives for --json output."""

    def __init__(
        self,
        request: Request,
        failures: Sequence[Failure],
        alternatives: Sequence[Alternative],
        note: Optional[str] = None,
    ) -> None:
        super().__init__(f"no compatible stack for {request.benchmark}")
        self.request = request
        self.failures = tuple(failures)
        self.alternatives = tuple(alternatives)
        self.note = note

    def __str__(self) -> str:
        # Formatted on demand: a matrix explains thousands of conflicts it never prints.
        details = ["why:"]
        details += [f"  {_failure_line(f)}" for f in self.failures]
        if self.note:
            details.append(f"  {self.note}")
        if len(details) == 1:
            details.append("  (no rule recorded)")
        if self.alternatives:
            details.append("nearest valid alternatives:")
            width = max(len(a.change) for a in self.alternatives)
            details += [f"  {a.change.ljust(width)}  -> {summarize(a.stack)}" for a in self.alternatives]
        else:
            details.append("no single change of a pin gives a valid stack")
        pins = self.request.flags()
        headline = self.message + (f" {pins}" if pins else "")
        return "\n".join([headline, *(f"  {d}" for d in details)])

    def to_dict(self) -> Dict[str, Any]:
        return {
            "error": "conflict",
            "benchmark": self.request.benchmark,
            "pins": self.request.pins(),
            "rules": [
                {"rule": f.rule, "message": f.message, "origin": f.origin or None} for f in self.failures
            ],
            "note": self.note,
            "alternatives": [a.to_dict() for a in self.alternatives],
        }


def _failure_line(failure: Failure) -> str:
    where = f" ({failure.origin})" if failure.origin else ""
    return f"[{failure.rule}] {failure.message}{where}"


def summarize(stack: Stack) -> str:
    parts = [f"{stack.base.name}/{stack.arch.name}"]
    parts.append(f"CUDA {stack.cuda.version}" if stack.cuda else "CPU")
    if stack.cudnn:
        parts.append(f"cuDNN {stack.cudnn.version}")
    if stack.nccl:
        parts.append(f"NCCL {stack.nccl.version}")
    if stack.framework:
        parts.append(f"{stack.framework.framework} {stack.framework.version}")
    if stack.python:
        parts.append(f"Python {stack.python.version}")
    parts.append(f"GCC {stack.gcc.version}")
    return ", ".join(parts)


def explain_conflict(resolver: ResolverView, request: Request, tracker: Tracker) -> StackConflict:
    failures, note = _failed_rules(resolver, request, tracker)
    # A benchmark-level rule (its arches, its framework) already is the cause.
    if failures and not any(f.rule.startswith("benchmark-") for f in failures):
        causes = find_causes(resolver, request)
        if causes:
            failures, note = _after_causes(causes, failures, note)
    return StackConflict(request, failures, find_alternatives(resolver, request), note)


_MAX_RULES_AFTER_CAUSES = 3


def _after_causes(
    causes: List[Failure], rules: List[Failure], note: Optional[str]
) -> Tuple[List[Failure], Optional[str]]:
    """The causes first; then, summarised, the knowledge-base rules the search ran into."""
    consequences = _one_line_for_framework_rejections([f for f in rules if not f.pin])
    hidden = len(consequences) - _MAX_RULES_AFTER_CAUSES
    if note and note.startswith("... and "):
        hidden = max(hidden, 0) + int(note.split()[2])
    shown = consequences[:_MAX_RULES_AFTER_CAUSES]
    summary = f"... and {hidden} more rules of the knowledge base the search ran into" if hidden > 0 else None
    return causes + shown, summary


def _one_line_for_framework_rejections(rules: List[Failure]) -> List[Failure]:
    """Framework versions the benchmark or accelerator rule out say nothing about the
    cause: after it, they are one line (how many, by which rules)."""
    framework = [f for f in rules if f.rule.startswith("framework-")]
    if len(framework) <= 1:
        return rules
    said = ", ".join(sorted({f.rule for f in framework}))
    line = Failure("framework", f"no other framework build fits either (rules {said})", framework[0].origin)
    return [line] + [f for f in rules if not f.rule.startswith("framework-")]


def _failed_rules(
    resolver: ResolverView, request: Request, tracker: Tracker
) -> Tuple[List[Failure], Optional[str]]:
    unmatched = _pins_matching_nothing(resolver, request)
    if unmatched:
        return [], "; ".join(unmatched)
    summaries = [_summary(resolver, chunk) for chunk in tracker.chunks]
    by_rules = any(summary.rules_rank >= 0 for summary in summaries)

    def rank(summary: _ChunkSummary) -> int:
        return summary.rules_rank if by_rules else summary.any_rank

    deepest = max((rank(summary) for summary in summaries), default=-1)
    if deepest < 0:
        return [], None

    found: List[Failure] = []
    seen = set()
    for summary in summaries:
        if rank(summary) != deepest:
            continue
        for rejection in summary.chunk:
            if STAGE_RANK[rejection.stage] != deepest or (by_rules and not rejection.by_rules_only):
                continue
            for failure in rejection.failures:
                if failure.pin and by_rules and rejection.stage not in PICK_STAGES:
                    continue
                key = (failure.rule, failure.message)
                if key not in seen:
                    seen.add(key)
                    found.append(failure)
    # Rare rules first: a rule that rejects one candidate (no Miniforge for this arch)
    # says more than the one that rejects two hundred (built for another arch). Counted
    # before alike lines merge, or a common rule's one merged line would pass for rare.
    per_rule = Counter(f.rule for f in found)
    found = merge_alike(found)
    found.sort(key=lambda f: per_rule[f.rule])  # stable: search order within a rule
    hidden = max(0, len(found) - _MAX_RULES)
    note = f"... and {hidden} more of the same kind" if hidden else None
    return found[:_MAX_RULES], note


_MAX_MERGED_SHOWN = 4


def merge_alike(failures: List[Failure]) -> List[Failure]:
    """One line for the failures of one rule, at one place, whose messages differ in one word
    only ("... not 11.8.0", "... not 12.0.1" ...): that word becomes the list of its values."""
    groups: Dict[Tuple[str, str, bool, Tuple[str, ...]], List[Tuple[int, Failure]]] = {}
    order: List[Tuple[str, str, bool, Tuple[str, ...]]] = []
    merged: List[Failure] = []
    for failure in failures:
        words = failure.message.split(" ")
        placed = False
        for key in order:
            rule, origin, pin, template = key
            if (rule, origin, pin) != (failure.rule, failure.origin, failure.pin) or len(template) != len(
                words
            ):
                continue
            differ = [i for i, (a, b) in enumerate(zip(template, words)) if a != b]
            index = groups[key][0][0]
            if differ == [index] or (index < 0 and len(differ) == 1):
                if index < 0:
                    groups[key][0] = (differ[0], groups[key][0][1])
                groups[key].append((differ[0], failure))
                placed = True
                break
        if not placed:
            key = (failure.rule, failure.origin, failure.pin, tuple(words))
            order.append(key)
            groups[key] = [(-1, failure)]
    for key in order:
        members = groups[key]
        index, first = members[0]
        if len(members) == 1:
            merged.append(first)
            continue
        words = list(key[3])
        values = [f.message.split(" ")[index].rstrip(",") for _, f in members]
        trail = "," if words[index].endswith(",") else ""
        words[index] = _value_list(values) + trail
        merged.append(first._replace(message=" ".join(words)))
    return merged


def _value_list(values: List[str]) -> str:
    """``a, b, c`` or, for many, ``a, b ... z (N values)``, sorted as versions where they are."""
    try:
        ordered = sorted(dict.fromkeys(values), key=parse_version)
    except ValueError:
        ordered = list(dict.fromkeys(values))
    if len(ordered) <= _MAX_MERGED_SHOWN:
        return ", ".join(ordered)
    return f"{', '.join(ordered[:2])} ... {ordered[-1]} ({len(ordered)} values)"


class _ChunkSummary(NamedTuple):
    rules_rank: int  # deepest stage of the chunk's rules-only rejections (-1: none)
    any_rank: int  # deepest stage of any of its rejections
    chunk: Tuple[Rejection, ...]  # kept so that its id cannot be reused by another tuple


def _summary(resolver: ResolverView, chunk: Tuple[Rejection, ...]) -> _ChunkSummary:

    cached = resolver.chunk_summaries.get(id(chunk))
    if cached is None or cached.chunk is not chunk:
        rules_rank = max((STAGE_RANK[r.stage] for r in chunk if r.by_rules_only), default=-1)
        any_rank = max((STAGE_RANK[r.stage] for r in chunk), default=-1)
        cached = resolver.chunk_summaries[id(chunk)] = _ChunkSummary(rules_rank, any_rank, chunk)
    return cached


_WHAT = {
    "cuda": "CUDA releases",
    "cudnn": "cuDNN builds",
    "nccl": "NCCL builds",
    "python": "Pythons",
    "gcc": "GCCs",
}


def _pins_matching_nothing(resolver: ResolverView, request: Request) -> List[str]:
    """Pins no value in the whole knowledge base satisfies (e.g. --cuda 13)."""
    problems = []
    for name, what in _WHAT.items():
        pin: Optional[VersionPin] = getattr(request, name)
        if pin is not None and not _matches_any(resolver, f"{name}:full", pin):
            problems.append(
                f"--{name} {pin} matches none of the known {what} "
                f"({_span(_domain(resolver, name + ':full'))})"
            )
    if request.driver is not None:
        oldest = min(resolver.kb.cuda, key=lambda r: parse_version(r.min_driver))
        if parse_version(request.driver) < parse_version(oldest.min_driver):
            problems.append(
                f"--driver {request.driver} is older than every CUDA release's minimum "
                f"(the oldest, CUDA {oldest.version}, needs >= {oldest.min_driver})"
            )
    for name, pin in request.frameworks:
        if not _matches_any(resolver, name, pin):
            problems.append(
                f"--with {name}={pin} matches no known {name} release ({_span(_domain(resolver, name))})"
            )
    return problems


def _matches_any(resolver: ResolverView, dimension: str, pin: VersionPin) -> bool:
    key = f"matches:{dimension}:{pin.kind}:{pin.text}"
    if key not in resolver.domains:
        found = any(pin.matches(v) for v in _domain(resolver, dimension))
        resolver.domains[key] = ("yes",) if found else ()
    return bool(resolver.domains[key])


def _span(values: Sequence[str]) -> str:
    ordered = sorted(values, key=parse_version)
    return f"{ordered[0]} .. {ordered[-1]}" if ordered else "none"


def _gccs(resolver: ResolverView) -> List[str]:
    found = set()
    for base in resolver.kb.bases:
        found.add(base.gcc_system)
        found.update(ts.gcc for ts in base.toolsets)
    return list(found)


# ---------------------------------------------------------------------- alternatives


def find_alternatives(resolver: ResolverView, request: Request) -> List[Alternative]:
    found: List[Alternative] = []
    for dimension, ordered in _dimensions(resolver, request):
        valid = _valid_values(resolver, request, dimension)
        hits = (
            list(
                islice(
                    (Alternative(change, valid[value]) for change, value in ordered if value in valid),
                    _MAX_PER_DIMENSION,
                )
            )
            if valid
            else []
        )
        if not hits:
            stack = resolver.try_resolve(request.without(dimension))
            if stack is not None:
                flag = "--with " + dimension if dimension in resolver.kb.frameworks else f"--{dimension}"
                hits.append(Alternative(f"drop {flag}", stack))
        found.extend(hits)
    found += _nearest_recipe(resolver, request)
    if request.gpu is not None and not found:
        # The GPU is the hardware at hand: another GPU is offered only when no change of a
        # software pin serves the one asked for (then it is the way out, not a contradiction).
        gpus = ((f"--gpu {g}", g) for g in gpu_rule.nearest_first(resolver.kb, request.gpu))
        valid = _valid_values(resolver, request, "gpu")
        found += islice(
            (Alternative(change, valid[name]) for change, name in gpus if name in valid), _MAX_PER_DIMENSION
        )
    return found


def _nearest_recipe(resolver: ResolverView, request: Request) -> List[Alternative]:
    """A benchmark on NGC images only asked for on a plain base (UBI): the recipe of the nearest
    stack there, as the recipe names it (constraints.ubi_alternative), with the other pins."""
    alternative = ubi_alternative(resolver, request, resolver.kb.benchmarks[request.benchmark])
    if alternative is None or alternative.nearest is None:
        return []
    stack = resolver.try_resolve(request._replace(benchmark=alternative.nearest))
    return [Alternative(f"recipe {alternative.nearest}", stack)] if stack is not None else []


def _valid_values(resolver: ResolverView, request: Request, dimension: str) -> Dict[str, Stack]:
    """Every value of ``dimension`` that resolves with the request's other pins.

    Cached on the request without that pin, so the cells of one row of a matrix (which
    differ only in that pin) share the probing.
    """
    key = (request.without(dimension), dimension)
    cache = resolver.alternatives
    if key not in cache:
        valid: Dict[str, Stack] = {}
        for value, changed in _probes(resolver, request, dimension):
            stack = resolver.try_resolve(changed)
            if stack is not None:
                valid[value] = stack
        cache[key] = valid
    return cache[key]


def _probes(resolver: ResolverView, request: Request, dimension: str) -> Iterator[Tuple[str, Request]]:
    kb = resolver.kb
    if dimension in ("cuda", "python", "gcc", "cudnn", "nccl"):
        for value in _domain(resolver, dimension):
            yield value, request.with_pin(dimension, _pin(value))
    elif dimension == "base":
        for base in kb.bases:
            yield base.name, request._replace(base=base.name)
    elif dimension == "arch":
        for arch in kb.arches:
            yield arch, request._replace(arch=arch)
    elif dimension == "driver":
        unpinned = request.without("driver")
        for minor in _domain(resolver, "cuda"):
            yield (
                minor,
                unpinned if request.cuda is not None else unpinned._replace(cuda=_pin(minor)),
            )
    elif dimension == "gpu":
        for name in kb.gpus:
            yield name, request._replace(gpu=name)
    elif dimension in kb.frameworks:
        for value in _domain(resolver, dimension):
            yield value, request._replace(frameworks=((dimension, _pin(value)),))


if TYPE_CHECKING:
    Ordered = Iterable[Tuple[str, str]]  # (how to say the change, the value it sets)


def _dimensions(resolver: ResolverView, request: Request) -> Iterator[Tuple[str, Ordered]]:
    """Each pinned dimension with its other values, nearest first."""
    kb = resolver.kb
    for name in ("cuda", "python", "gcc", "cudnn", "nccl"):
        pin: Optional[VersionPin] = getattr(request, name)
        if pin is not None:
            yield name, ((f"--{name} {v}", v) for v in _nearest(_domain(resolver, name), pin))
    if request.base is not None:
        yield "base", ((f"--base {b.name}", b.name) for b in kb.bases if b.name != request.base)
    # An unpinned arch is still a choice (the host's): another arch is an alternative.
    current = request.arch or resolver.default_arch(kb.benchmarks[request.benchmark], request.gpu)
    yield "arch", ((f"--arch {a}", a) for a in kb.arches if a != current)
    if request.driver is not None:
        yield "driver", _driver_order(resolver, request)
    if request.cpu:
        yield "cpu", ()
    for framework, pin in request.frameworks:
        yield (
            framework,
            ((f"--with {framework}={v}", v) for v in _nearest(_domain(resolver, framework), pin)),
        )


def _domain(resolver: ResolverView, dimension: str) -> Tuple[str, ...]:
    """The values a pinned dimension can take, as pins: CUDA lines, cuDNN majors ..."""
    domains = resolver.domains
    if dimension not in domains:
        kb = resolver.kb
        if dimension == "cuda:full":
            values = {r.version for r in kb.cuda}
        elif dimension in ("cudnn:full", "nccl:full"):
            values = {b.version for b in (kb.cudnn if dimension.startswith("cudnn") else kb.nccl)}
        elif dimension in ("python:full", "gcc:full"):
            values = set(
                _domain(resolver, dimension.split(":")[0]) if dimension == "python:full" else _gccs(resolver)
            )
        elif dimension == "cuda":
            values = {r.minor for r in kb.cuda}
        elif dimension == "python":
            values = {p.version for b in kb.bases for p in b.pythons}
        elif dimension == "gcc":
            values = {str(parse_version(v).release[0]) for v in _gccs(resolver)}
        elif dimension == "cudnn":
            values = {b.version.split(".")[0] for b in kb.cudnn}
        elif dimension == "nccl":
            values = {".".join(b.version.split(".")[:2]) for b in kb.nccl}
        else:
            values = {b.version for b in kb.frameworks[dimension].builds}
        domains[dimension] = tuple(sorted(values, key=parse_version))
    return domains[dimension]


def _driver_order(resolver: ResolverView, request: Request) -> Ordered:
    """CUDA lines by the driver they need, least demanding first: the releases of the NGC
    images a benchmark on them names (their CUDA is what they hold), else every release."""
    needs: Dict[str, str] = {}
    for release in sorted(_driver_releases(resolver, request), key=lambda r: parse_version(r.min_driver)):
        if request.cuda is None or request.cuda.matches(release.version):
            needs.setdefault(release.minor, release.min_driver)
    return ((f"driver >= {driver} (CUDA {minor})", minor) for minor, driver in needs.items())


def _driver_releases(resolver: ResolverView, request: Request) -> Sequence[CudaRelease]:
    """The CUDA releases the benchmark's stacks can hold: its NGC images' own, each with the
    driver the image's release needs, or every release the knowledge base knows."""
    named = image_base.named_bases(resolver.kb, resolver.kb.benchmarks[request.benchmark])
    if named and all(base.contents is not None for base in named):
        return [image_base.base_cuda(base) for base in named]
    return resolver.kb.cuda


@lru_cache(maxsize=1024)
def _pin(text: str) -> VersionPin:
    return parse_pin(text, flag="(alternative)")


@lru_cache(maxsize=4096)
def _nearest(values: Tuple[str, ...], pin: VersionPin) -> Tuple[str, ...]:
    return tuple(sorted(values, key=_distance_to(pin)))


def _distance_to(pin: VersionPin) -> Callable[[str], Tuple[float, ...]]:
    """Sort key: versions nearest the pin first (newest first for specifier pins)."""
    anchor = pin.prefix if pin.kind == "prefix" else (pin.exact.release if pin.exact is not None else ())

    def key(version: str) -> Tuple[float, ...]:
        release = parse_version(version).release
        if not anchor:
            return (0.0, *(-float(p) for p in release))
        width = max(len(anchor), 2)
        a = _as_number(anchor, width)
        v = _as_number(release, width)
        return (abs(a - v), -v)

    return key


def _as_number(release: Sequence[int], width: int) -> float:
    padded = list(release[:width]) + [0] * (width - len(release[:width]))
    value = 0.0
    for part in padded:
        value = value * 1000 + part
    return value
