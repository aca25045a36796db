"""The knowledge base as a use case: load it, list what it knows, resolve a stack.

>>> from mlcc.app.kb import knowledge_base, resolve
>>> from mlcc.resolve.pins import Pins
>>> resolve(knowledge_base(), "maskrcnn", Pins(cuda="10.1")).variant
'cuda10.1-cudnn7-ubi8-x86_64'
"""

from __future__ import annotations

import json

from mlcc.flags import flag, options_type
from mlcc.kb import KnowledgeBase, load, recipes_root
from mlcc.kb.model import Provenance
from mlcc.resolve import Resolver, Stack
from mlcc.resolve.pins import Pins
from mlcc.resolve.request import Request
from mlcc.resolve.stack import pinned
from mlcc.versions import parse_version

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional

LISTABLE = ("benchmarks", "bases", "cuda", "cudnn", "nccl", "frameworks", "arches")


@options_type
class ResolveView:
    """How ``mlcc resolve`` shows its stack; the click command and mlcc.fastpath read these flags."""

    json: bool = flag(
        "--json", "Print the stack (or the conflict) as one JSON object.", default=False, is_flag=True
    )
    verbose: bool = flag(
        "--verbose", "Show where each fact comes from.", default=False, is_flag=True, short="-v"
    )


def knowledge_base(recipes: Optional[str] = None) -> KnowledgeBase:
    return load(recipes_root(recipes) if recipes else None)


def resolve(kb: KnowledgeBase, benchmark: str, pins: Optional[Pins] = None) -> Stack:
    """The stack for ``benchmark`` and the pins, or ConflictError saying why there is none."""
    return Resolver(kb).resolve((pins or Pins()).request(kb, benchmark))


def resolved_json(stack: Stack, request: Optional[Request] = None) -> str:
    """What ``mlcc resolve --json`` prints for a stack: the stack, and beside it the
    request (``pins`` as typed, ``chose``: the version each pinned component got)."""
    document = stack.to_dict()
    if request is not None:
        document["request"] = {"pins": request.pins(), "chose": pinned(request, stack)}
    return json.dumps(document, indent=2)


def _provenance(prov: Provenance) -> Dict[str, Any]:
    return {"origin": prov.origin, "verified": prov.verified}


def list_rows(kb: KnowledgeBase, what: str) -> List[Dict[str, Any]]:
    """The facts behind ``mlcc list WHAT`` as JSON-ready rows."""
    if what == "benchmarks":
        return [
            {
                "name": b.name,
                "title": b.title,
                "suite": b.suite,
                "framework": (f"{b.framework.name} {b.framework.versions}" if b.framework else None),
                "arches": list(b.arches),
                "accelerators": list(b.accelerators),
                "requires": list(b.requires),
                "gpus": {"min": b.gpus_min, "reference": b.gpus_reference},
                **_provenance(b.prov),
            }
            for b in kb.benchmarks.values()
        ]
    if what == "bases":
        return [
            {
                "name": b.name,
                "image": b.ref,
                "family": b.family,
                "package_manager": b.package_manager,
                "repo_distro": b.repo_distro,
                "arches": list(b.arches),
                "python_default": b.python_default,
                "pythons": [p.version for p in b.pythons],
                "gcc": b.gcc_system,
                "toolsets": [f"{t.name} ({t.gcc})" for t in b.toolsets],
                "preference": b.preference,
                "requires_subscription": b.requires_subscription,
                "end_of_life": b.end_of_life,
                **_provenance(b.prov),
            }
            for b in kb.bases
        ]
    if what == "cuda":
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
    if what in ("cudnn", "nccl"):
        builds = kb.cudnn if what == "cudnn" else kb.nccl
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
    if what == "frameworks":
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
    if what == "arches":
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
    raise ValueError(what)
