"""The knowledge base as a use case: load it, list what it knows, resolve a stack.

>>> from mlcc.app.kb import knowledge_base, resolve
>>> from mlcc.resolve.pins import Pins
>>> resolve(knowledge_base(), "maskrcnn", Pins(cuda="10.1")).variant
'cuda10.1-cudnn7-ubi8-x86_64'
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence

from mlcc.errors import IncompleteRecipe
from mlcc.flags import flag
from mlcc.kb import KnowledgeBase, load, recipes_root
from mlcc.kb.model import Base, Benchmark, LibBuild, Provenance, UbiAlternative
from mlcc.resolve import Resolver, Stack, forward_compat
from mlcc.resolve import gpu as gpu_rule
from mlcc.resolve.pins import Pins
from mlcc.resolve.request import Request
from mlcc.resolve.stack import pinned
from mlcc.versions import parse_version

LISTABLE = ("benchmarks", "bases", "cuda", "cudnn", "nccl", "frameworks", "arches", "gpus", "rounds")


@dataclass(frozen=True)
class ResolveView:
    """How ``mlcc resolve`` shows its stack; the click command reads these flags."""

    json: bool = flag(
        "--json", "Print the stack (or the conflict) as one JSON object.", default=False, is_flag=True
    )
    verbose: bool = flag(
        "--verbose", "Show where each fact comes from.", default=False, is_flag=True, short="-v"
    )


def knowledge_base(recipes: Optional[str] = None) -> KnowledgeBase:
    """Load and validate the knowledge base (from the per-user cache when it is current).

    Args:
        recipes: The recipes folder; None: ``$MLCC_RECIPES``, the installed copy, or the
            checkout's ``recipes/``.

    Returns:
        The validated, cross-checked model.

    Raises:
        UsageError: The folder does not exist or cannot be found.
        RecipeError: A recipe file is malformed, violates its schema, or contradicts
            another (the error names ``file:line``).
    """
    return load(recipes_root(recipes) if recipes else None)


def resolve(kb: KnowledgeBase, benchmark: str, pins: Optional[Pins] = None) -> Stack:
    """The stack for ``benchmark`` and the pins.

    Args:
        kb: The knowledge base.
        benchmark: The benchmark's name, e.g. ``maskrcnn``.
        pins: The user's pins (default: none).

    Returns:
        The immutable stack, each component with the reason it was chosen.

    Warns:
        IncompleteRecipe: The benchmark's recipe says INCOMPLETE (an error where warnings
            of that kind are errors: ``mlcc --strict``, or ``CI=true``).

    Raises:
        UsageError: An unknown benchmark or component, or a malformed pin.
        ConflictError: No stack fits; the error says why and names the nearest changes that
            would work.
    """
    stack = Resolver(kb).resolve((pins or Pins()).request(kb, benchmark))
    warn_if_incomplete(stack.benchmark)
    return stack


def incomplete_message(benchmark: Benchmark) -> Optional[str]:
    """What mlcc says of a benchmark whose recipe says INCOMPLETE (None for any other).

    Args:
        benchmark: A benchmark of the knowledge base.

    Returns:
        One line: the benchmark, where its recipe says so, and the recipe's reason.
    """
    reason = benchmark.incomplete
    if reason is None or benchmark.build is None:
        return None
    return f"{benchmark.name}'s recipe is INCOMPLETE ({benchmark.build.prov.origin}): {reason}"


def warn_if_incomplete(benchmark: Benchmark) -> None:
    """Warn (:class:`~mlcc.errors.IncompleteRecipe`) when the benchmark's recipe says INCOMPLETE.

    Every use case that resolves one stack for a user calls it (resolve, gen, build), so the
    mark reaches the user wherever the stack does.

    Args:
        benchmark: The benchmark of the stack about to be shown, written or built.

    Raises:
        IncompleteRecipe: Only where the warning filter makes it an error (``--strict``, CI).
    """
    message = incomplete_message(benchmark)
    if message is not None:
        warnings.warn(IncompleteRecipe(message), stacklevel=2)


def request_notes(kb: KnowledgeBase, request: Request, stack: Stack) -> List[str]:
    """What the request decided that it did not say, for the user: a ``--gpu`` whose hosts
    are of one arch (GB200: aarch64) chose the arch; a ``--driver`` older than the NGC image's
    CUDA needs runs it through the image's forward-compatibility package, on conditions.

    Args:
        kb: The knowledge base the stack was resolved from.
        request: The request that resolved it.
        stack: The resolved stack.

    Returns:
        One sentence per note, each naming the recipe that says it; printed beside the stack,
        never part of it.
    """
    notes = [gpu_rule.default_arch_note(kb, request, stack.arch.name)]
    if request.driver is not None:
        notes.append(forward_compat.note(kb, stack.base, request.driver, request.gpu))
    return [note for note in notes if note is not None]


def resolved_json(stack: Stack, request: Optional[Request] = None, notes: Sequence[str] = ()) -> str:
    """What ``mlcc resolve --json`` prints for a stack.

    Args:
        stack: A resolved stack.
        request: The request that resolved it, printed beside the stack (``pins`` as typed,
            ``chose``: the version each pinned component got); never part of the stack.
        notes: What the request decided that it did not say (:func:`request_notes`).

    Returns:
        The stack as one JSON object, indented.
    """
    document = stack.to_dict()
    if request is not None:
        document["request"] = {"pins": request.pins(), "chose": pinned(request, stack)}
        if notes:
            document["request"]["notes"] = list(notes)
    return json.dumps(document, indent=2)


def _provenance(prov: Provenance) -> Dict[str, Any]:
    return {"origin": prov.origin, "verified": prov.verified}


def _round_rows(kb: KnowledgeBase) -> List[Dict[str, Any]]:
    """One row per MLPerf round recipes/rounds/ records, oldest first, with the benchmarks
    filed under it by name (its ids: the default round's plain, others with the round)."""
    return [
        {
            "name": r.name,
            "title": r.title,
            "year": r.year,
            "default": r.default,  # the round a benchmark name in several rounds means
            "benchmarks": sorted(b.base_name for b in kb.benchmarks.values() if b.round == r.name),
            "systems": [s.name for s in r.systems],
            "log_formats": list(r.scoring.log_formats),
            "rules": r.scoring.rules,
            "scaling_json": r.scoring.scaling_json,
            **_provenance(r.prov),
        }
        for r in kb.round_records
    ]


def list_rows(kb: KnowledgeBase, what: str) -> List[Dict[str, Any]]:
    """The facts behind ``mlcc list WHAT`` as JSON-ready rows.

    Args:
        kb: The knowledge base.
        what: One of :data:`LISTABLE`: ``benchmarks``, ``bases``, ``cuda``, ``cudnn``,
            ``nccl``, ``frameworks``, ``arches``, ``gpus``, ``rounds``.

    Returns:
        One dict per fact, with its origin and whether it is verified.

    Raises:
        ValueError: ``what`` is not one of them (the CLI offers only those).
    """
    rows = _ROWS.get(what)
    if rows is None:
        raise ValueError(what)
    return rows(kb)


def _benchmarks_rows(kb: KnowledgeBase) -> List[Dict[str, Any]]:
    """The benchmarks, by name and round."""
    return [
        {
            "name": b.base_name,
            "round": b.round,
            "id": b.name,  # what stack files, images and tags carry (maskrcnn-v2.1)
            "title": b.title,
            "suite": b.suite,
            "framework": (f"{b.framework.name} {b.framework.versions}" if b.framework else None),
            "arches": list(b.arches),
            "accelerators": list(b.accelerators),
            "requires": list(b.requires),
            "gpus": {"min": b.gpus_min, "reference": b.gpus_reference},
            "unavailable": b.unavailable,  # why no stack can be built (None: one can)
            "incomplete": b.incomplete,  # why its image does not yet run it (None: it does)
            "bases": list(b.bases),  # the NGC images it builds on (empty: the resolver chooses)
            "ubi_alternative": _ubi_alternative_row(b.ubi_alternative),
            **_provenance(b.prov),
        }
        for b in sorted(kb.benchmarks.values(), key=lambda b: (b.base_name, b.name))
    ]


def _ubi_alternative_row(alternative: Optional[UbiAlternative]) -> Optional[Dict[str, Any]]:
    """Why a benchmark on NGC images only has no stack on UBI, and the nearest recipe there."""
    if alternative is None:
        return None
    return {
        "unavailable": alternative.unavailable,
        "nearest": alternative.nearest,
        **_provenance(alternative.prov),
    }


def _bases_rows(kb: KnowledgeBase) -> List[Dict[str, Any]]:
    """The base images, in order of preference."""
    return [
        {
            "name": b.name,
            "image": b.ref,
            "family": b.family,
            "package_manager": b.package_manager,
            "repo_distro": b.repo_distro,
            "arches": list(b.arches),
            "isa_baseline": dict(b.isa_baseline),
            "python_default": b.python_default,
            "pythons": [p.version for p in b.pythons],
            "gcc": b.gcc_system,
            "toolsets": [f"{t.name} ({t.gcc})" for t in b.toolsets],
            "preference": b.preference,
            "requires_subscription": b.requires_subscription,
            "end_of_life": b.end_of_life,
            "contents": _base_contents(b),
            **_provenance(b.prov),
        }
        for b in kb.bases
    ]


def _base_contents(base: Base) -> Optional[Dict[str, Any]]:
    """What an image base holds (NGC), as its record says; None for a plain OS base."""
    contents = base.contents
    if contents is None:
        return None
    return {
        "release": contents.release,
        "os": contents.os,
        "python": contents.python,
        "cuda": contents.cuda,
        "cuda_min_driver": contents.cuda_min_driver,
        "cublas": contents.cublas,
        "cudnn": contents.cudnn,
        "nccl": contents.nccl,
        "dali": contents.dali,
        "tensorrt": contents.tensorrt,
        "frameworks": {f.name: f.version for f in contents.frameworks},
        "driver_ran": dict(contents.driver_ran),
        # the older driver branches its forward-compatibility package serves (data-center GPUs)
        "forward_compat": list(contents.forward_compat),
    }


def _cuda_rows(kb: KnowledgeBase) -> List[Dict[str, Any]]:
    """The CUDA releases, newest first."""
    return [
        {
            "version": r.version,
            "label": r.label,
            "min_driver": r.min_driver,
            "host_gcc": dict(r.host_gcc),
            "repos": {d: list(a) for d, a in r.repos},
            **_provenance(r.prov),
            "unverified_fields": list(r.prov.unverified_fields),
        }
        for r in kb.cuda
    ]


def _frameworks_rows(kb: KnowledgeBase) -> List[Dict[str, Any]]:
    """Every framework build, newest first per framework."""
    return [
        {
            "framework": f.framework,
            "version": f.version,
            "variant": f.variant,
            "cuda": list(f.cuda),
            "python": list(f.python),
            "arches": list(f.arches),
            "install": f.install.method,
            **_provenance(f.prov),
        }
        for framework in kb.frameworks.values()
        for f in sorted(framework.builds, key=lambda b: parse_version(b.version), reverse=True)
    ]


def _arches_rows(kb: KnowledgeBase) -> List[Dict[str, Any]]:
    """The CPU architectures."""
    return [
        {
            "name": a.name,
            "aliases": list(a.aliases),
            "oci": a.oci,
            "nvidia_repo": dict(a.nvidia_repos),
            "debian": a.debian,
            "kubernetes": a.kubernetes,
        }
        for a in kb.arches.values()
    ]


def _gpus_rows(kb: KnowledgeBase) -> List[Dict[str, Any]]:
    """The GPU generations."""
    return [
        {
            "name": g.name,
            "title": g.title,
            "architecture": g.architecture,
            "compute_capability": g.compute_capability,
            "sm": g.sm,
            "min_cuda": g.min_cuda,
            "max_cuda": g.max_cuda,  # the last CUDA line that targets it (None: current ones do)
            "min_driver": g.min_driver,
            "product_labels": list(g.product_labels),
            "gpus_per_node": g.gpus_per_node,
            "host_arch": g.host_arch,
            "data_center": g.data_center,  # forward compatibility works on it
            **_provenance(g.prov),
            "unverified_fields": list(g.prov.unverified_fields),
        }
        for g in kb.gpus.values()
    ]


def _library_rows(kb: KnowledgeBase, builds: Sequence[LibBuild]) -> List[Dict[str, Any]]:
    """cuDNN or NCCL builds, newest CUDA and version first."""
    return [
        {
            "version": b.version,
            "cuda": b.cuda,
            "repo_distro": b.repo_distro,
            "arches": list(b.arches),
            "method": b.method,
            "packages": [kb.packaging(b.method).pin(p) for p in b.packages],
            "url": b.url,
            **_provenance(b.prov),
        }
        for b in sorted(
            builds,
            key=lambda b: (parse_version(b.cuda), parse_version(b.version)),
            reverse=True,
        )
    ]


# What `mlcc list WHAT` lists, one row builder per kind (LISTABLE names them in its order).
_ROWS: Dict[str, Callable[[KnowledgeBase], List[Dict[str, Any]]]] = {
    "benchmarks": _benchmarks_rows,
    "bases": _bases_rows,
    "cuda": _cuda_rows,
    "cudnn": lambda kb: _library_rows(kb, kb.cudnn),
    "nccl": lambda kb: _library_rows(kb, kb.nccl),
    "frameworks": _frameworks_rows,
    "arches": _arches_rows,
    "gpus": _gpus_rows,
    "rounds": _round_rows,
}
