"""The resolver's picks: once the framework build, CUDA release and base are fixed, the one
Python, cuDNN, NCCL and GCC that fit them (each the preferred of what the rules of
:mod:`mlcc.resolve.rules` allow), or the rejection that says why none does.

Each pick is memoised on the objects and pins it depends on (knowledge-base objects by
identity: they live as long as the resolver).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, NamedTuple, Optional, Tuple

from mlcc.kb.model import UNCONFIRMED, Base, Benchmark, CudaRelease, FrameworkBuild, KnowledgeBase, LibBuild
from mlcc.resolve.candidates import Candidates, nearness
from mlcc.resolve.request import Request
from mlcc.resolve.rules import Rules
from mlcc.resolve.stack import Compiler
from mlcc.resolve.stages import Failure, Rejection, rejection
from mlcc.versions import parse_version
from mlcc.versions import satisfies as _satisfies


class _Pick(NamedTuple):
    """A stage's choice; ``value`` None with ok True means "not needed here"."""

    value: Any
    ok: bool = True
    rejected: Tuple[Rejection, ...] = ()


class Picks:
    """Python, cuDNN, NCCL and the host compiler for a chosen build, CUDA release and base."""

    def __init__(self, kb: KnowledgeBase, rules: Rules, candidates: Candidates) -> None:
        self.kb = kb
        self.rules = rules
        self.candidates = candidates
        self._picks: Dict[Tuple[object, ...], _Pick] = {}

    def _memo(self, key: Tuple[object, ...], compute: Callable[[], _Pick]) -> _Pick:
        pick = self._picks.get(key)
        if pick is None:
            pick = self._picks[key] = compute()
        return pick

    def python(self, bench: Benchmark, req: Request, build: Optional[FrameworkBuild], base: Base) -> _Pick:
        """The newest Python the base offers that the build, benchmark and pin accept."""

        def compute() -> _Pick:
            if not bench.needs_python:
                return _Pick(None)
            options = self.rules.python_options(bench, req, build, base)
            if options:
                return _Pick(max(options, key=lambda o: parse_version(o.version)))
            failures = self.rules.python_failures(bench, req, build, base)
            return _Pick(None, False, (rejection("python", f"Python on {base.name}", failures),))

        return self._memo(("python", bench.name, id(build), base.name, req.python), compute)

    @staticmethod
    def _bundled(library: str, build: Optional[FrameworkBuild], base: Base, arch: str) -> Optional[LibBuild]:
        """The library as the framework build brings it, when it does (a conda channel's
        cudnn, a wheel's bundled NCCL): the stack names what the framework loads."""
        version = build.bundled(library) if build is not None else None
        if build is None or version is None:
            return None
        evidence = f"brought by {build.label} ({build.install.method})"
        if version == UNCONFIRMED:
            evidence += "; no source names its version, so the stack claims none"
        return LibBuild(
            library=library,
            version=version,
            cuda=build.cuda[0] if build.cuda else "",
            repo_distro=base.repo_distro,
            arches=(arch,),
            method="bundled",
            prov=build.prov,
            evidence=evidence,
        )

    def library(
        self,
        library: str,
        bench: Benchmark,
        req: Request,
        build: Optional[FrameworkBuild],
        cuda: Optional[CudaRelease],
        base: Base,
        arch: str,
    ) -> _Pick:
        """The cuDNN or NCCL of the stack: the framework's own copy, or the preferred
        system build for the CUDA release, distro and arch (none when nothing needs it)."""
        pin = getattr(req, library)

        def compute() -> _Pick:
            if cuda is None:
                return _Pick(None)
            # a benchmark step linking the library itself (horovod) needs the system copy
            bundled = None if library in bench.links else self._bundled(library, build, base, arch)
            if bundled is None and not self.rules.lib_needed(library, bench, req, build, cuda):
                return _Pick(None)
            if bundled is not None:
                # the framework's own copy is the stack's whether or not the benchmark asks for
                # the library: it is what the framework loads, so the stack must name it
                if pin is None or (bundled.confirmed and pin.matches(bundled.version)):
                    return _Pick(bundled)
                assert build is not None
                title = "cuDNN" if library == "cudnn" else "NCCL"
                own = f"{title} {bundled.version}" if bundled.confirmed else f"{title} (version unconfirmed)"
                failure = Failure(
                    f"{library}-pin",
                    f"--{library} {pin}: {build.label} brings and loads its own {own}",
                    build.prov.origin,
                    pin=True,
                )
                return _Pick(None, False, (rejection(library, f"{library} of {build.label}", [failure]),))
            spec = build.cudnn if (library == "cudnn" and build is not None) else None
            candidates = self.candidates.lib_candidates(library, cuda, base.repo_distro, arch)
            reference = self.rules.reference_version(bench, req, library)
            if reference is not None:
                candidates = tuple(sorted(candidates, key=lambda b: nearness(b.version, reference)))
            for candidate in candidates:
                if _satisfies(candidate.version, spec) and (pin is None or pin.matches(candidate.version)):
                    return _Pick(candidate)
            failures = self.rules.lib_failures(library, cuda, base, arch, build, spec, pin, candidates)
            subject = f"{library} for CUDA {cuda.version} on {base.name}/{arch}"
            return _Pick(None, False, (rejection(library, subject, failures),))

        key = ("lib", library, bench.name, id(build), id(cuda), base.repo_distro, arch, pin, req.newest)
        return self._memo(key, compute)

    def compiler(
        self,
        bench: Benchmark,
        req: Request,
        build: Optional[FrameworkBuild],
        cuda: Optional[CudaRelease],
        base: Base,
        arch: str,
    ) -> _Pick:
        """The base's system GCC when every bound accepts it, else its newest fitting toolset."""

        def compute() -> _Pick:
            bounds = self.rules.gcc_bounds(bench, build, cuda, arch)
            options = [Compiler(base.gcc_system)] + [
                Compiler(ts.gcc, ts)
                for ts in sorted(base.toolsets, key=lambda ts: parse_version(ts.gcc), reverse=True)
            ]
            for option in options:
                if all(_satisfies(option.version, spec) for spec, _, _ in bounds) and (
                    req.gcc is None or req.gcc.matches(option.version)
                ):
                    return _Pick(option)
            offered = ", ".join(
                [f"system {base.gcc_system}"] + [f"{ts.name} ({ts.gcc})" for ts in base.toolsets]
            )
            failures = [
                Failure("gcc-bound", f"{who} accepts GCC {spec}; {base.name} offers {offered}", origin)
                for spec, who, origin in bounds
            ]
            if req.gcc is not None:
                failures.append(
                    Failure("gcc-pin", f"--gcc {req.gcc} on {base.name} ({offered})", "", pin=True)
                )
            return _Pick(None, False, (rejection("gcc", f"GCC on {base.name}", failures),))

        return self._memo(("gcc", bench.name, id(build), id(cuda), base.name, arch, req.gcc), compute)
