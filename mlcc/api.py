"""The Python API the CLI is a thin layer over.

>>> from mlcc import api
>>> stack = api.resolve("maskrcnn", cuda="10.1")
>>> stack.variant
'cuda10.1-cudnn7-ubi8-x86_64'
"""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Sequence

from mlcc.kb import KnowledgeBase, load, recipes_root
from mlcc.kb.model import Provenance
from mlcc.resolve import Request, Resolver, Stack, build_request
from mlcc.versions import parse_version

LISTABLE = ("benchmarks", "bases", "cuda", "cudnn", "nccl", "frameworks", "arches")


class Pins(NamedTuple):
    """The pins every stack-producing command accepts."""

    cuda: Optional[str] = None
    cudnn: Optional[str] = None
    nccl: Optional[str] = None
    python: Optional[str] = None
    gcc: Optional[str] = None
    base: Optional[str] = None
    arch: Optional[str] = None
    driver: Optional[str] = None
    cpu: bool = False
    with_: Sequence[str] = ()


def knowledge_base(recipes: Optional[str] = None) -> KnowledgeBase:
    return load(recipes_root(recipes) if recipes else None)


def request_for(kb: KnowledgeBase, benchmark: str, pins: Pins) -> Request:
    return build_request(
        kb,
        benchmark,
        cuda=pins.cuda,
        cudnn=pins.cudnn,
        nccl=pins.nccl,
        python=pins.python,
        gcc=pins.gcc,
        base=pins.base,
        arch=pins.arch,
        driver=pins.driver,
        cpu=pins.cpu,
        with_=pins.with_,
    )


def resolve(
    benchmark: str,
    *,
    kb: Optional[KnowledgeBase] = None,
    recipes: Optional[str] = None,
    **pins: Any,
) -> Stack:
    """Resolve ``benchmark`` with pins given as keyword arguments (``with_=[...]``)."""
    kb = kb or knowledge_base(recipes)
    return Resolver(kb).resolve(request_for(kb, benchmark, Pins(**pins)))


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
                "packages": [p.rpm() if b.method == "rpm" else p.deb() for p in b.packages],
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
