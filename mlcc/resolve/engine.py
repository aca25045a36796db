"""The resolver: the first stack, in preference order, that every rule accepts.

Preference (documented in README "How mlcc chooses"):

1. arch: ``--arch``, else the host's arch when the benchmark supports it, else the first
   arch the benchmark's recipe lists; never another arch (a pin that only resolves
   elsewhere fails, with that arch among the alternatives);
2. framework build: the benchmark's reference versions (``prefer``) first, then newest
   version; within a version pip wheels, then source builds, then conda builds, newest
   CUDA line first;
3. CUDA: newest release the framework build was made for;
4. base: lowest ``preference`` in recipes/bases.yaml (UBI 9, UBI 8, UBI 7, RHEL 7,
   CentOS 7, then Ubuntu 22.04, 20.04, 18.04);
5. Python: newest the base offers that the framework build and benchmark accept;
6. cuDNN / NCCL: newest build for the CUDA release, repository distro and arch;
   distribution packages before tarballs;
7. GCC: the base's system compiler if every bound accepts it, else its newest toolset
   that does.

The search is in parts, each a module:

- :mod:`mlcc.resolve.rules`: every rule, a small predicate that returns the reasons a
  candidate fails (:mod:`mlcc.resolve.explain` uses the same reasons to say why nothing
  fits);
- :mod:`mlcc.resolve.candidates`: framework builds, CUDA releases and bases in the order
  above, filtered by the rules and narrowed by the pins;
- :mod:`mlcc.resolve.picks`: the Python, cuDNN, NCCL and GCC that fit a chosen core;
- :mod:`mlcc.resolve.assemble`: the chosen components as a Stack;

and this module runs them in turn, remembers what it found, and finishes a stack with its
departures and the reasons for its choices.
"""

from __future__ import annotations

import platform
from typing import Any, Dict, Optional, Sequence, Tuple

from mlcc.errors import ConflictError, UsageError
from mlcc.kb.model import Base, Benchmark, CudaRelease, FrameworkBuild, KnowledgeBase
from mlcc.resolve import gpu as gpu_rule
from mlcc.resolve import image_base
from mlcc.resolve.assemble import Assembler
from mlcc.resolve.candidates import Candidates
from mlcc.resolve.explain import explain_conflict
from mlcc.resolve.flavour import flavoured
from mlcc.resolve.picks import Picks
from mlcc.resolve.reasons import Defaults, departures, explain_choices
from mlcc.resolve.request import Request
from mlcc.resolve.rules import Rules
from mlcc.resolve.stack import Compiler, Stack
from mlcc.resolve.stages import Rejection
from mlcc.resolve.view import Tracker
from mlcc.versions import parse_pin


def _record(tracker: Optional[Tracker], rejections: Tuple[Rejection, ...]) -> None:
    if tracker is not None:
        tracker.extend(rejections)


def detect_host_arch(kb: KnowledgeBase) -> Optional[str]:
    """The knowledge base's name for this machine's arch (None when it has none)."""
    return kb.arch_aliases.get(platform.machine().strip().lower())


class Resolver:
    """Resolves requests against one knowledge base; cheap to reuse, memoises results."""

    def __init__(self, kb: KnowledgeBase, host_arch: Optional[str] = None) -> None:
        self.kb = kb
        # The machine mlcc runs on: the arch a request without --arch resolves for.
        self.host_arch = host_arch if host_arch is not None else detect_host_arch(kb)
        self.rules = Rules(kb)
        self.candidates = Candidates(kb, self.rules)
        self.picks = Picks(kb, self.rules, self.candidates)
        self.assembler = Assembler(kb, self.rules)
        self._results: Dict[Request, Optional[Stack]] = {}
        self._bare: Dict[Request, Optional[Stack]] = {}
        # For conflict explanations (mlcc.resolve.explain): per-dimension value lists,
        # and the values of a dimension that resolve given the other pins.
        self.domains: Dict[str, Tuple[str, ...]] = {}
        self.alternatives: Dict[Tuple[Request, str], Dict[str, Stack]] = {}
        self.chunk_summaries: Dict[int, Any] = {}

    def resolve(self, request: Request) -> Stack:
        """The preferred stack, or :class:`ConflictError` explaining why there is none."""
        known = self._results.get(request, False)
        if known:
            return known  # type: ignore[return-value]
        tracker = Tracker()
        bare = self._search(request, tracker)
        self._bare[request] = bare
        finished = self._finished(bare)
        if finished is not None:
            stack = self._results[request] = flavoured(finished, request.flavour)
            return stack
        self._results[request] = None
        raise self._conflict(request, tracker)

    def try_resolve(self, request: Request) -> Optional[Stack]:
        """Like :meth:`resolve` without the explanation; memoised."""
        if request not in self._results:
            finished = self._finished(self._bare_stack(request))
            try:
                self._results[request] = None if finished is None else flavoured(finished, request.flavour)
            except UsageError:
                self._results[request] = None  # runtime asked for, and this stack has none
        return self._results[request]

    def _bare_stack(self, request: Request) -> Optional[Stack]:
        """The stack the search finds, before its departures and choices are known."""
        if request not in self._bare:
            self._bare[request] = self._search(request, None)
        return self._bare[request]

    def _finished(self, bare: Optional[Stack]) -> Optional[Stack]:
        """The stack with what the request cannot change: its departures from the default
        stack of its core (the variant name) and the reasons for its components. Both are
        computed from the stack and the knowledge base alone, by comparing it with default
        stacks resolved from requests made of its own facts, so that every request that
        resolves to these components gets the same stack, byte for byte."""
        if bare is None:
            return None
        defaults = Defaults(
            cuda=self._bare_stack(self.default_request(bare, ("base",))),
            base=self._bare_stack(self.default_request(bare, ("cuda",))),
            core=self._bare_stack(self.default_request(bare, ("cuda", "base"))),
            newest=self._bare_stack(self.default_request(bare, ("base",))._replace(newest=True)),
            gpu=self._gpu_default(bare),
        )
        stack = bare._replace(departures=departures(bare, defaults.core))
        if stack.base.contents is not None:  # the base's record is the reason of every part
            return stack._replace(choices=image_base.choices(stack))
        return stack._replace(choices=explain_choices(self, stack, defaults))

    def _gpu_default(self, bare: Stack) -> Optional[Stack]:
        """The stack of the default request on the stack's base with --gpu of its compute
        capability (a GPU a later CUDA dropped resolves to an older one), or None."""
        gpu = next(
            (g.name for g in self.kb.gpus.values() if g.compute_capability == bare.gpu_capability), None
        )
        if gpu is None:
            return None
        return self._bare_stack(self.default_request(bare, ("base",))._replace(gpu=gpu))

    def default_request(self, stack: Stack, fixed: Sequence[str]) -> Request:
        """The request for the stack's benchmark on its arch (and accelerator) that fixes
        only ``fixed`` of its facts ("cuda": its exact release, "base": its base): what the
        resolver prefers when nothing else is asked."""
        cuda = stack.cuda
        return Request(
            benchmark=stack.benchmark.name,
            arch=stack.arch.name,
            cpu=cuda is None,
            cuda=parse_pin(f"=={cuda.version}", flag="--cuda")
            if cuda is not None and "cuda" in fixed
            else None,
            base=stack.base.name if "base" in fixed else None,
        )

    def explain(self, request: Request) -> ConflictError:
        """The explanation for a request that does not resolve."""
        tracker = Tracker()
        self._search(request, tracker)
        return self._conflict(request, tracker)

    def _conflict(self, request: Request, tracker: Tracker) -> ConflictError:
        conflict = explain_conflict(self, request, tracker)
        if request.gpu is not None and not self._driver_alone(request):
            # the GPU is the cause: it leads, before what it led to
            conflict.failures = (gpu_rule.cause(self, request), *conflict.failures)
        return conflict

    def _driver_alone(self, request: Request) -> bool:
        """True when the host's driver alone stands in the way: the GPU asked has a stack
        without ``--driver``, so its CUDA is no cause (the driver's line says what it needs)."""
        return request.driver is not None and self.try_resolve(request.without("driver")) is not None

    def default_arch(self, bench: Benchmark, gpu: Optional[str] = None) -> str:
        """The arch a request without ``--arch`` resolves for: the arch of every host the GPU
        asked comes in (GB200: aarch64, recipes/gpus.yaml ``host_arch``), else the generating
        machine's, if the benchmark supports it, else the benchmark's first."""
        host_of_gpu = gpu_rule.host_arch(self.kb, gpu)
        if host_of_gpu is not None and host_of_gpu in bench.arches:
            return host_of_gpu
        if self.host_arch is not None and self.host_arch in bench.arches:
            return self.host_arch
        return bench.arches[0]

    def _search(self, req: Request, t: Optional[Tracker]) -> Optional[Stack]:
        bench = self.kb.benchmarks[req.benchmark]
        failures = self.rules.benchmark_failures(bench, req)
        if failures:
            if t is not None:
                t.add("benchmark", bench.name, failures)
            return None
        accelerator = "cpu" if req.cpu else "cuda"
        arch = req.arch or self.default_arch(bench, req.gpu)
        if bench.bases:
            return self._on_named_bases(bench, req, arch, accelerator, t)
        return self._on_plain_bases(bench, req, arch, accelerator, t)

    def _on_plain_bases(
        self, bench: Benchmark, req: Request, arch: str, accelerator: str, t: Optional[Tracker]
    ) -> Optional[Stack]:
        """The first stack, in preference order, on the bases the resolver chooses among."""
        for build in self.candidates.framework_builds(bench, arch, accelerator, req, t):
            for cuda in self.candidates.cuda_releases(bench, build, arch, accelerator, req, t):
                for base in self.candidates.bases(arch, cuda, req, t):
                    stack = self._complete(bench, req, arch, build, cuda, base, t)
                    if stack is not None:
                        return stack
        return None

    def _on_named_bases(
        self, bench: Benchmark, req: Request, arch: str, accelerator: str, t: Optional[Tracker]
    ) -> Optional[Stack]:
        """The first stack on the bases the benchmark's recipe names, in its order: an image
        base (NGC) is the stack its record states; a plain one is searched as any base is."""
        for base in image_base.named_bases(self.kb, bench):
            if base.contents is None:
                if req.base is None or req.base == base.name:
                    plain = self._on_plain_bases(bench, req._replace(base=base.name), arch, accelerator, t)
                    if plain is not None:
                        return plain
                continue
            failures = image_base.failures(self.kb, bench, base, arch, req)
            if failures:
                if t is not None:
                    t.add("base", base.name, failures)
                continue
            return self._on_image_base(bench, req, arch, base)
        return None

    def _on_image_base(self, bench: Benchmark, req: Request, arch: str, base: Base) -> Stack:
        """The stack an image base holds: its CUDA, cuDNN, NCCL, Python and framework."""
        contents = image_base.contents_of(base)
        python = next(option for option in base.pythons if option.version == contents.python)
        framework = image_base.base_framework(base, bench, arch)
        known = self.kb.frameworks.get(framework.framework)
        stack = self.assembler.stack(
            bench,
            req,
            arch,
            None,
            image_base.base_cuda(base),
            base,
            python if bench.needs_python else None,
            image_base.base_library(base, "cudnn", bench, arch),
            image_base.base_library(base, "nccl", bench, arch),
            Compiler(base.gcc_system),
        )
        return stack._replace(
            framework=framework,
            framework_module=known.import_name if known is not None else framework.framework,
            repositories=(),  # nothing comes from NVIDIA's package repositories
            cuda_newest_in_line=True,  # the base's name tells its CUDA from any other's
        )

    def _complete(
        self,
        bench: Benchmark,
        req: Request,
        arch: str,
        build: Optional[FrameworkBuild],
        cuda: Optional[CudaRelease],
        base: Base,
        t: Optional[Tracker],
    ) -> Optional[Stack]:
        picks = (
            self.picks.python(bench, req, build, base),
            self.picks.library("cudnn", bench, req, build, cuda, base, arch),
            self.picks.library("nccl", bench, req, build, cuda, base, arch),
            self.picks.compiler(bench, req, build, cuda, base, arch),
        )
        for pick in picks:
            if not pick.ok:
                _record(t, pick.rejected)
                return None
        python, cudnn, nccl, compiler = (p.value for p in picks)
        return self.assembler.stack(bench, req, arch, build, cuda, base, python, cudnn, nccl, compiler)
