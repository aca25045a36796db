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

Every rule is a small predicate that returns the reasons a candidate fails; the search
uses them to filter, and :mod:`mlcc.resolve.explain` uses the same reasons to say why
nothing fits.
"""

from __future__ import annotations

import platform
from functools import lru_cache
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from mlcc.errors import ConflictError, RecipeError, UsageError
from mlcc.kb import pip_locks
from mlcc.kb.model import (
    UNCONFIRMED,
    Base,
    Benchmark,
    CudaRelease,
    FrameworkBuild,
    KnowledgeBase,
    LibBuild,
    NvidiaRepo,
    PythonOption,
    PythonTooling,
    System,
)
from mlcc.kb.pip_locks import PipLocks
from mlcc.resolve import gpu as gpu_rule
from mlcc.resolve.explain import explain_conflict
from mlcc.resolve.flavour import flavoured
from mlcc.resolve.reasons import Defaults, departures, explain_choices
from mlcc.resolve.request import Request
from mlcc.resolve.stack import Compiler, Installer, Stack
from mlcc.resolve.stages import Failure, Rejection, rejection
from mlcc.resolve.view import Tracker
from mlcc.versions import parse_pin, parse_version
from mlcc.versions import satisfies as _satisfies

_METHOD_RANK = {"pip": 0, "source": 1, "conda": 2}
# The downloads entry (recipes/tools.yaml) that installs conda framework builds.
CONDA_INSTALLER = "miniforge"


class _Filtered(NamedTuple):
    """Candidates a stage's knowledge-base rules accept, and (candidate, why not) pairs."""

    stage: str
    accepted: Tuple[Any, ...]
    rejected: Tuple[Tuple[Any, Rejection], ...]
    rejections: Tuple[Rejection, ...]


class _Pick(NamedTuple):
    """A stage's choice; ``value`` None with ok True means "not needed here"."""

    value: Any
    ok: bool = True
    rejected: Tuple[Rejection, ...] = ()


def _filter(
    stage: str,
    candidates: Sequence[Any],
    subject: Callable[[Any], str],
    failures_of: Callable[[Any], List[Failure]],
) -> _Filtered:
    accepted: List[Any] = []
    rejected: List[Tuple[Any, Rejection]] = []
    for candidate in candidates:
        failures = failures_of(candidate)
        if failures:
            rejected.append((candidate, rejection(stage, subject(candidate), failures)))
        else:
            accepted.append(candidate)
    return _Filtered(stage, tuple(accepted), tuple(rejected), tuple(r for _, r in rejected))


def _unpinned(ruled: _Filtered, tracker: Optional[Tracker]) -> Tuple[Any, ...]:
    if tracker is not None:
        tracker.extend(ruled.rejections)
    return ruled.accepted


def _record(tracker: Optional[Tracker], rejections: Tuple[Rejection, ...]) -> None:
    if tracker is not None:
        tracker.extend(rejections)


def _carried_note(release: CudaRelease, distro: str) -> str:
    arches = release.arches_on(distro)
    if not arches:
        return f" (NVIDIA's {distro} repositories do not carry it)"
    return f" (NVIDIA's {distro} repositories carry it for {', '.join(arches)})"


def detect_host_arch(kb: KnowledgeBase) -> Optional[str]:
    """The knowledge base's name for this machine's arch (None when it has none)."""
    return kb.arch_aliases.get(platform.machine().strip().lower())


class Resolver:
    """Resolves requests against one knowledge base; cheap to reuse, memoises results."""

    def __init__(self, kb: KnowledgeBase, host_arch: Optional[str] = None) -> None:
        self.kb = kb
        # The machine mlcc runs on: the arch a request without --arch resolves for.
        self.host_arch = host_arch if host_arch is not None else detect_host_arch(kb)
        self._libs: Dict[Tuple[str, str, str], Tuple[LibBuild, ...]] = {}
        for library, builds in (("cudnn", kb.cudnn), ("nccl", kb.nccl)):
            for build in builds:
                for arch in build.arches:
                    key = (library, build.repo_distro, arch)
                    self._libs[key] = (*self._libs.get(key, ()), build)
        for key, builds in self._libs.items():
            self._libs[key] = tuple(
                sorted(
                    builds,
                    key=lambda b: (parse_version(b.version), b.method != "tarball"),
                    reverse=True,
                )
            )
        self._newest_in_line: Dict[str, str] = {}
        for release in kb.cuda:  # newest first
            self._newest_in_line.setdefault(release.minor, release.version)
        self._results: Dict[Request, Optional[Stack]] = {}
        self._bare: Dict[Request, Optional[Stack]] = {}
        self._filtered: Dict[Tuple[object, ...], _Filtered] = {}
        self._narrowed: Dict[Tuple[object, ...], Tuple[Any, ...]] = {}
        self._why: Dict[Tuple[object, ...], Tuple[Rejection, ...]] = {}
        self._picks: Dict[Tuple[object, ...], _Pick] = {}
        # For conflict explanations (mlcc.resolve.explain): per-dimension value lists,
        # and the values of a dimension that resolve given the other pins.
        self.domains: Dict[str, Tuple[str, ...]] = {}
        self.alternatives: Dict[Tuple[Request, str], Dict[str, Stack]] = {}
        self.chunk_summaries: Dict[int, Any] = {}

    # ------------------------------------------------------------------ public

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
        )
        stack = bare._replace(departures=departures(bare, defaults.core))
        return stack._replace(choices=explain_choices(self, stack, defaults))

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
        if request.gpu is not None:  # the GPU is the cause: it leads, before what it led to
            conflict.failures = (gpu_rule.cause(self, request), *conflict.failures)
        return conflict

    def last_cuda_on(self, arch: str) -> Optional[str]:
        """The newest CUDA release NVIDIA publishes packages of for ``arch``."""
        for release in self.kb.cuda:  # newest first
            if any(arch in arches for _, arches in release.repos):
                return release.version
        return None

    def default_arch(self, bench: Benchmark) -> str:
        """The arch a request without ``--arch`` resolves for: the host's, if supported."""
        if self.host_arch is not None and self.host_arch in bench.arches:
            return self.host_arch
        return bench.arches[0]

    # ------------------------------------------------------------------ search

    def _search(self, req: Request, t: Optional[Tracker]) -> Optional[Stack]:
        bench = self.kb.benchmarks[req.benchmark]
        failures = self.benchmark_failures(bench, req)
        if failures:
            if t is not None:
                t.add("benchmark", bench.name, failures)
            return None
        accelerator = "cpu" if req.cpu else "cuda"
        for arch in (req.arch or self.default_arch(bench),):
            for build in self._framework_builds(bench, arch, accelerator, req, t):
                for cuda in self._cuda_releases(bench, build, arch, accelerator, req, t):
                    for base in self._bases(arch, cuda, req, t):
                        stack = self._complete(bench, req, arch, build, cuda, base, t)
                        if stack is not None:
                            return stack
        return None

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
            self._python(bench, req, build, base),
            self._lib("cudnn", bench, req, build, cuda, base, arch),
            self._lib("nccl", bench, req, build, cuda, base, arch),
            self._compiler(bench, req, build, cuda, base, arch),
        )
        for pick in picks:
            if not pick.ok:
                _record(t, pick.rejected)
                return None
        python, cudnn, nccl, compiler = (p.value for p in picks)
        return self._stack(bench, req, arch, build, cuda, base, python, cudnn, nccl, compiler)

    # ------------------------------------------------------------------ rules

    def benchmark_failures(self, bench: Benchmark, req: Request) -> List[Failure]:
        failures: List[Failure] = []
        if bench.unavailable is not None:
            failures.append(
                Failure(
                    "benchmark-unavailable",
                    f"mlcc can build no stack for {bench.name}: {bench.unavailable}",
                    bench.origin_of("unavailable"),
                )
            )
        accelerator = "cpu" if req.cpu else "cuda"
        if accelerator not in bench.accelerators:
            failures.append(
                Failure(
                    "benchmark-accelerator",
                    f"{bench.name} runs on {' or '.join(bench.accelerators)}, not {accelerator}",
                    bench.origin_of("accelerators"),
                )
            )
        if req.arch is not None and req.arch not in bench.arches:
            cause = bench.why_not_on(req.arch)
            failures.append(
                Failure(
                    "benchmark-arch",
                    f"{bench.name} supports {', '.join(bench.arches)}, not {req.arch}"
                    + (f": {cause}" if cause else ""),
                    bench.origin_of("arches_missing" if cause else "arches"),
                )
            )
        for name, _ in req.frameworks:
            if bench.framework is None or bench.framework.name != name:
                uses = bench.framework.name if bench.framework else "no framework"
                failures.append(
                    Failure(
                        "benchmark-framework",
                        f"{bench.name} uses {uses}, not {name}",
                        bench.origin_of("framework"),
                    )
                )
        if req.python is not None and not bench.needs_python:
            failures.append(
                Failure("benchmark-python", f"{bench.name} uses no Python", bench.origin_of("python"))
            )
        return failures

    def framework_failures(
        self, bench: Benchmark, build: FrameworkBuild, arch: str, accelerator: str, req: Request
    ) -> List[Failure]:
        return self.framework_rule_failures(bench, build, arch, accelerator) + self.framework_pin_failures(
            bench, build, req
        )

    def framework_rule_failures(
        self, bench: Benchmark, build: FrameworkBuild, arch: str, accelerator: str
    ) -> List[Failure]:
        rule = bench.framework
        assert rule is not None
        failures: List[Failure] = []
        if not _satisfies(build.version, rule.versions):
            failures.append(
                Failure(
                    "framework-version",
                    f"{bench.name} accepts {rule.name} {rule.versions}, not {build.version}",
                    rule.origin,
                )
            )
        if arch not in build.arches:
            failures.append(
                Failure(
                    "framework-arch",
                    f"{build.label} is built for {', '.join(build.arches)}, not {arch}",
                    build.prov.origin,
                )
            )
        if build.install.method == "conda" and self.installer(arch) is None:
            tools = self.kb.downloads.get(CONDA_INSTALLER)
            failures.append(
                Failure(
                    "framework-installer",
                    f"{build.label} installs with conda, and no Miniforge installer for {arch} is known",
                    tools.prov.origin if tools else "recipes/tools.yaml",
                )
            )
        if (accelerator == "cpu") != build.is_cpu:
            kind = "a CPU" if build.is_cpu else "a CUDA"
            failures.append(
                Failure(
                    "framework-accelerator",
                    f"{build.label} is {kind} build",
                    build.prov.origin,
                    pin=accelerator == "cpu",
                )
            )
        return failures

    def installer(self, arch: str) -> Optional[Installer]:
        """The Miniforge installer for ``arch`` (conda builds), if the tools recipe has one."""
        download = self.kb.downloads.get(CONDA_INSTALLER)
        url = download.url(arch) if download else None
        if download is None or url is None:
            return None
        return Installer(
            download.name,
            download.version,
            url,
            download.checksum_suffix,
            download.sha256_for(arch),
            download.sha256_unavailable,
        )

    def framework_pin_failures(self, bench: Benchmark, build: FrameworkBuild, req: Request) -> List[Failure]:
        assert bench.framework is not None
        name = bench.framework.name
        pin = req.framework_pin(name)
        if pin is not None and not pin.matches(build.version):
            return [Failure("framework-pin", f"--with {name}={pin} excludes {build.version}", "", pin=True)]
        return []

    def cuda_failures(
        self,
        bench: Benchmark,
        build: Optional[FrameworkBuild],
        release: CudaRelease,
        arch: str,
        req: Request,
    ) -> List[Failure]:
        return self.cuda_rule_failures(bench, build, release, arch) + self.cuda_pin_failures(release, req)

    def cuda_rule_failures(
        self, bench: Benchmark, build: Optional[FrameworkBuild], release: CudaRelease, arch: str
    ) -> List[Failure]:
        failures: List[Failure] = []
        if build is not None and release.minor not in build.cuda:
            failures.append(
                Failure(
                    "cuda-framework",
                    f"{build.label} is built for CUDA {', '.join(build.cuda)}, not {release.version}",
                    build.prov.origin,
                )
            )
        if not _satisfies(release.version, bench.cuda):
            failures.append(
                Failure(
                    "cuda-benchmark",
                    f"{bench.name} needs CUDA {bench.cuda}",
                    bench.origin_of("cuda"),
                )
            )
        if not any(arch in arches for _, arches in release.repos):
            last = self.last_cuda_on(arch)
            failures.append(
                Failure(
                    "cuda-arch",
                    f"NVIDIA publishes no {arch} packages of CUDA {release.version}"
                    + (f" ({arch} packages end at CUDA {last})" if last else ""),
                    release.prov.origin,
                )
            )
        return failures

    def cuda_pin_failures(self, release: CudaRelease, req: Request) -> List[Failure]:
        failures: List[Failure] = []
        if req.cuda is not None and not req.cuda.matches(release.version):
            failures.append(
                Failure("cuda-pin", f"--cuda {req.cuda} excludes {release.version}", "", pin=True)
            )
        if req.driver is not None and parse_version(req.driver) < parse_version(release.min_driver):
            failures.append(
                Failure(
                    "cuda-driver",
                    f"CUDA {release.version} needs driver >= {release.min_driver}, --driver is {req.driver}",
                    release.prov.origin,
                    pin=True,
                )
            )
        problem = gpu_rule.gpu_problem(self.kb, req.gpu, release)
        if problem is not None:
            failures.append(Failure("cuda-gpu", problem[0], problem[1], pin=True))
        return failures

    def base_failures(
        self, base: Base, release: Optional[CudaRelease], arch: str, req: Request
    ) -> List[Failure]:
        return self.base_pin_failures(base, req) + self.base_rule_failures(base, release, arch)

    def base_rule_failures(self, base: Base, release: Optional[CudaRelease], arch: str) -> List[Failure]:
        failures: List[Failure] = []
        if arch not in base.arches:
            failures.append(
                Failure(
                    "base-arch",
                    f"{base.name} has no {arch} image",
                    base.prov.origin,
                )
            )
        if release is not None and not release.carried(base.repo_distro, arch):
            failures.append(
                Failure(
                    "cuda-repo",
                    f"CUDA {release.version} has no {base.repo_distro}/{arch} packages"
                    + _carried_note(release, base.repo_distro),
                    release.prov.origin,
                )
            )
        return failures

    def base_pin_failures(self, base: Base, req: Request) -> List[Failure]:
        if req.base is not None and base.name != req.base:
            return [Failure("base-pin", f"--base {req.base} excludes {base.name}", "", pin=True)]
        return []

    # ------------------------------------------------------------------ stages
    #
    # Each stage is memoised on the objects and pins it depends on (knowledge-base
    # objects by identity: they live as long as the resolver), and returns what it
    # accepted together with the rejections, so that a search that must explain itself
    # costs no more than one that need not.

    def _memo(self, key: Tuple[object, ...], compute: Callable[[], _Pick]) -> _Pick:
        pick = self._picks.get(key)
        if pick is None:
            pick = self._picks[key] = compute()
        return pick

    def _framework_builds(
        self, bench: Benchmark, arch: str, accelerator: str, req: Request, t: Optional[Tracker]
    ) -> Tuple[Any, ...]:
        if bench.framework is None:
            return (None,)
        key = ("framework", bench.name, arch, accelerator, req.newest)
        ruled = self._filtered.get(key)
        if ruled is None:
            ruled = self._filtered[key] = _filter(
                "framework",
                self.ordered_builds(bench.name, req.newest),
                lambda build: build.label,
                lambda build: self.framework_rule_failures(bench, build, arch, accelerator),
            )
        pin = req.framework_pin(bench.framework.name)
        if pin is None:
            return _unpinned(ruled, t)
        return self._narrow(
            ruled,
            t,
            (pin,),
            lambda build: build.version,
            lambda build: pin.matches(build.version),
            lambda build: self.framework_pin_failures(bench, build, req),
        )

    @lru_cache(maxsize=64)  # noqa: B019 - the resolver lives as long as its knowledge base
    def ordered_builds(self, benchmark: str, newest: bool = False) -> Tuple[FrameworkBuild, ...]:
        bench = self.kb.benchmarks[benchmark]
        assert bench.framework is not None
        prefer = bench.framework.prefer
        builds = self.kb.frameworks[bench.framework.name].builds
        reference = None if newest or bench.reference_stack is None else bench.reference_stack.cuda

        def key(build: FrameworkBuild) -> Tuple[object, ...]:
            rank = prefer.index(build.version) if build.version in prefer else len(prefer)
            newest_cuda = max((parse_version(c) for c in build.cuda), default=parse_version("0"))
            # nearest the reference run's CUDA line first, else newest CUDA line first
            cuda_rank: object = _Desc(newest_cuda)
            if reference is not None:
                cuda_rank = min((nearness(c, reference) for c in build.cuda), default=(1 << 30, _Desc(0)))
            return (
                rank,
                _Desc(parse_version(build.version)),
                _METHOD_RANK.get(build.install.method, 9),
                cuda_rank,
                build.variant,
            )

        return tuple(sorted(builds, key=key))

    def _cuda_releases(
        self,
        bench: Benchmark,
        build: Optional[FrameworkBuild],
        arch: str,
        accelerator: str,
        req: Request,
        t: Optional[Tracker],
    ) -> Tuple[Any, ...]:
        if accelerator == "cpu":
            return (None,)
        key = ("cuda", bench.name, id(build), arch, req.newest)
        ruled = self._filtered.get(key)
        if ruled is None:
            ruled = self._filtered[key] = _filter(
                "cuda",
                self._cuda_order(bench, req.newest),
                lambda release: f"CUDA {release.version}",
                lambda release: self.cuda_rule_failures(bench, build, release, arch),
            )
        if req.cuda is None and req.driver is None and req.gpu is None:
            return _unpinned(ruled, t)
        driver = parse_version(req.driver) if req.driver is not None else None

        def pin_ok(release: CudaRelease) -> bool:
            return (
                (req.cuda is None or req.cuda.matches(release.version))
                and (driver is None or driver >= parse_version(release.min_driver))
                and gpu_rule.cuda_supports(self.kb, req.gpu, release)
            )

        return self._narrow(
            ruled,
            t,
            (req.cuda, req.driver, req.gpu),
            lambda release: release.version,
            pin_ok,
            lambda release: self.cuda_pin_failures(release, req),
        )

    def _bases(
        self, arch: str, release: Optional[CudaRelease], req: Request, t: Optional[Tracker]
    ) -> Tuple[Any, ...]:
        key = ("base", arch, id(release))
        ruled = self._filtered.get(key)
        if ruled is None:
            ruled = self._filtered[key] = _filter(
                "base",
                self.kb.bases,
                lambda base: base.name,
                lambda base: self.base_rule_failures(base, release, arch),
            )
        if req.base is None:
            return _unpinned(ruled, t)
        return self._narrow(
            ruled,
            t,
            (req.base,),
            lambda base: base.name,
            lambda base: base.name == req.base,
            lambda base: self.base_pin_failures(base, req),
        )

    def _narrow(
        self,
        ruled: _Filtered,
        tracker: Optional[Tracker],
        pins: Tuple[object, ...],
        name_of: Callable[[Any], str],
        pin_ok: Callable[[Any], bool],
        pin_failures: Callable[[Any], List[Failure]],
    ) -> Tuple[Any, ...]:
        """Narrow a stage's rule-accepted candidates by the user's pins.

        When explaining, record the rule rejections of candidates the pins allow (the
        facts in the way) and a pin rejection for each rule-accepted candidate the pins
        exclude; candidates both rules and pins exclude say nothing useful. Both results
        depend only on (stage result, pins) and are cached on that.
        """
        key = (id(ruled), *pins)
        accepted = self._narrowed.get(key)
        if accepted is None:
            accepted = self._narrowed[key] = tuple(c for c in ruled.accepted if pin_ok(c))
        if tracker is not None:
            why = self._why.get(key)
            if why is None:
                excluded = tuple(
                    rejection(ruled.stage, name_of(c), pin_failures(c))
                    for c in ruled.accepted
                    if not pin_ok(c)
                )
                why = self._why[key] = excluded + tuple(r for c, r in ruled.rejected if pin_ok(c))
            tracker.extend(why)
        return accepted

    def python_options(
        self, bench: Benchmark, req: Request, build: Optional[FrameworkBuild], base: Base
    ) -> List[PythonOption]:
        return [
            option
            for option in base.pythons
            if (build is None or option.version in build.python)
            and _satisfies(option.version, bench.python)
            and (req.python is None or req.python.matches(option.version))
        ]

    def _python(self, bench: Benchmark, req: Request, build: Optional[FrameworkBuild], base: Base) -> _Pick:
        def compute() -> _Pick:
            if not bench.needs_python:
                return _Pick(None)
            options = self.python_options(bench, req, build, base)
            if options:
                return _Pick(max(options, key=lambda o: parse_version(o.version)))
            failures = self._python_failures(bench, req, build, base)
            return _Pick(None, False, (rejection("python", f"Python on {base.name}", failures),))

        return self._memo(("python", bench.name, id(build), base.name, req.python), compute)

    def _python_failures(
        self, bench: Benchmark, req: Request, build: Optional[FrameworkBuild], base: Base
    ) -> List[Failure]:
        offered = [o.version for o in base.pythons]
        wanted = [v for v in offered if _satisfies(v, bench.python)]
        failures: List[Failure] = []
        if build is not None:
            fitting = [v for v in wanted if v in build.python]
            if not fitting:
                failures.append(
                    Failure(
                        "python-framework",
                        f"{base.name} offers Python {', '.join(offered)}; {build.label} supports "
                        f"{', '.join(build.python)}",
                        build.prov.origin,
                    )
                )
            wanted = fitting
        if not wanted and bench.python and not failures:
            failures.append(
                Failure(
                    "python-benchmark",
                    f"{base.name} offers Python {', '.join(offered)}; {bench.name} needs {bench.python}",
                    bench.origin_of("python"),
                )
            )
        if req.python is not None:
            failures.append(
                Failure(
                    "python-pin",
                    f"--python {req.python} matches none of "
                    f"{', '.join(wanted) or 'the remaining versions'} on {base.name}",
                    base.prov.origin,
                    pin=True,
                )
            )
        return failures

    def lib_needed(
        self,
        library: str,
        bench: Benchmark,
        req: Request,
        build: Optional[FrameworkBuild],
        cuda: Optional[CudaRelease],
    ) -> bool:
        if cuda is None:
            return False
        if getattr(req, library) is not None or library in bench.requires or library in bench.links:
            return True
        return library == "cudnn" and build is not None and build.cudnn is not None

    def reference_version(self, bench: Benchmark, req: Request, component: str) -> Optional[str]:
        """The reference run's version of ``component``, when the default policy uses it."""
        if req.newest or bench.reference_stack is None:
            return None
        return bench.reference_stack.version_of(component)

    def _cuda_order(self, bench: Benchmark, newest: bool) -> Tuple[CudaRelease, ...]:
        """CUDA releases newest first, or nearest the reference run's line first."""
        reference = None if newest or bench.reference_stack is None else bench.reference_stack.cuda
        if reference is None:
            return self.kb.cuda
        key = ("cuda-order", reference)
        cached = self._narrowed.get(key)
        if cached is None:
            cached = self._narrowed[key] = tuple(
                sorted(self.kb.cuda, key=lambda r: nearness(r.version, reference))
            )
        return cached

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

    def lib_candidates(self, library: str, cuda: CudaRelease, distro: str, arch: str) -> Tuple[LibBuild, ...]:
        return tuple(b for b in self._libs.get((library, distro, arch), ()) if b.fits_cuda(cuda.version))

    def _lib(
        self,
        library: str,
        bench: Benchmark,
        req: Request,
        build: Optional[FrameworkBuild],
        cuda: Optional[CudaRelease],
        base: Base,
        arch: str,
    ) -> _Pick:
        pin = getattr(req, library)

        def compute() -> _Pick:
            if cuda is None:
                return _Pick(None)
            # a benchmark step linking the library itself (horovod) needs the system copy
            bundled = None if library in bench.links else self._bundled(library, build, base, arch)
            if bundled is None and not self.lib_needed(library, bench, req, build, cuda):
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
            candidates = self.lib_candidates(library, cuda, base.repo_distro, arch)
            reference = self.reference_version(bench, req, library)
            if reference is not None:
                candidates = tuple(sorted(candidates, key=lambda b: nearness(b.version, reference)))
            for candidate in candidates:
                if _satisfies(candidate.version, spec) and (pin is None or pin.matches(candidate.version)):
                    return _Pick(candidate)
            failures = self._lib_failures(library, cuda, base, arch, build, spec, pin, candidates)
            subject = f"{library} for CUDA {cuda.version} on {base.name}/{arch}"
            return _Pick(None, False, (rejection(library, subject, failures),))

        key = ("lib", library, bench.name, id(build), id(cuda), base.repo_distro, arch, pin, req.newest)
        return self._memo(key, compute)

    def _lib_failures(
        self,
        library: str,
        cuda: CudaRelease,
        base: Base,
        arch: str,
        build: Optional[FrameworkBuild],
        spec: Optional[str],
        pin: object,
        candidates: Sequence[LibBuild],
    ) -> List[Failure]:
        title = "cuDNN" if library == "cudnn" else "NCCL"
        if not candidates:
            return [
                Failure(
                    f"{library}-availability",
                    f"no {title} build is known for CUDA {cuda.version} on {base.repo_distro}/{arch}",
                    f"recipes/{library}.yaml",
                )
            ]
        versions = ", ".join(sorted({c.version for c in candidates}, key=parse_version))
        failures: List[Failure] = []
        if spec is not None and build is not None:
            failures.append(
                Failure(
                    f"{library}-framework",
                    f"{build.label} needs {title} {spec}; CUDA {cuda.version} on "
                    f"{base.repo_distro}/{arch} has {versions}",
                    build.prov.origin,
                )
            )
        if pin is not None:
            where = f"CUDA {cuda.version} on {base.repo_distro}/{arch}"
            matched = [c.version for c in candidates if pin.matches(c.version)]  # type: ignore[attr-defined]
            if matched and spec is not None and build is not None:
                said = f"selects {', '.join(matched)} for {where}, outside {build.label}'s range {spec}"
            elif matched:
                said = f"selects {', '.join(matched)} for {where}"
            else:
                said = f"matches none of {versions} ({where})"
            failures.append(Failure(f"{library}-pin", f"--{library} {pin} {said}", "", pin=True))
        return failures

    def gcc_bounds(
        self,
        bench: Benchmark,
        build: Optional[FrameworkBuild],
        cuda: Optional[CudaRelease],
        arch: str,
    ) -> List[Tuple[str, str, str]]:
        """(specifier, who imposes it, origin) for every bound on the host compiler."""
        bounds: List[Tuple[str, str, str]] = []
        if cuda is not None:
            spec = cuda.host_gcc_spec(arch)
            if spec:
                bounds.append((spec, f"CUDA {cuda.version} on {arch}", cuda.prov.origin))
        if bench.gcc:
            bounds.append((bench.gcc, bench.name, bench.origin_of("gcc")))
        if build is not None and build.gcc:
            bounds.append((build.gcc, build.label, build.prov.origin))
        return bounds

    def _compiler(
        self,
        bench: Benchmark,
        req: Request,
        build: Optional[FrameworkBuild],
        cuda: Optional[CudaRelease],
        base: Base,
        arch: str,
    ) -> _Pick:
        def compute() -> _Pick:
            bounds = self.gcc_bounds(bench, build, cuda, arch)
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

    # ------------------------------------------------------------------ result

    def _stack(
        self,
        bench: Benchmark,
        req: Request,
        arch: str,
        build: Optional[FrameworkBuild],
        cuda: Optional[CudaRelease],
        base: Base,
        python: Optional[PythonOption],
        cudnn: Optional[LibBuild],
        nccl: Optional[LibBuild],
        compiler: Compiler,
    ) -> Stack:
        bench = _with_source_for(bench, build)
        stack = Stack(
            benchmark=bench,
            arch=self.kb.arches[arch],
            base=base,
            python=python,
            gcc=compiler,
            cuda=cuda,
            cudnn=cudnn,
            nccl=nccl,
            framework=build,
            choices=(),
            hosts=tuple(self.kb.hosts.values()),
            cuda_newest_in_line=cuda is None or self._newest_in_line[cuda.minor] == cuda.version,
            download_host=self.kb.download_host,
            repositories=self._repositories(cuda, cudnn, nccl),
            python_tooling=self._tooling(python),
            installer=self.installer(arch) if build and build.install.method == "conda" else None,
            framework_module=self.kb.frameworks[build.framework].import_name if build else None,
            gpu_capability=self.kb.gpus[req.gpu].compute_capability if req.gpu else None,
            pip_locks=self._pip_locks(python, arch, base),
            nccl_profiles=self.kb.nccl_profiles,
            systems=self._systems(bench),
        )
        return stack

    def _systems(self, bench: Benchmark) -> Tuple[System, ...]:
        launch = bench.build.launch if bench.build else None
        shapes = launch.node_shapes if launch else ()
        return tuple(self.kb.systems[s.name] for s in shapes if s.name in self.kb.systems)

    def _pip_locks(self, python: Optional[PythonOption], arch: str, base: Base) -> Optional[PipLocks]:
        if python is None:
            return None
        return self.kb.pip_locks.for_target(pip_locks.LockTarget(python.version, arch, base.glibc))

    def _repositories(
        self, cuda: Optional[CudaRelease], cudnn: Optional[LibBuild], nccl: Optional[LibBuild]
    ) -> Tuple[NvidiaRepo, ...]:
        if cuda is None:
            return ()
        names = {"cuda"} | {lib.repo for lib in (cudnn, nccl) if lib is not None and lib.repo}
        missing = sorted(names - set(self.kb.repositories))
        if missing:
            raise RecipeError(
                "recipes/cuda.yaml",
                None,
                f"no NVIDIA repository named {', '.join(missing)} under repositories",
                hint="add it under repositories, or fix the repo: of the cuDNN/NCCL build",
            )
        return tuple(self.kb.repositories[name] for name in sorted(names))

    def _tooling(self, python: Optional[PythonOption]) -> Optional[PythonTooling]:
        if python is None:
            return None
        tooling = self.kb.python_tooling.get(python.version)
        if tooling is None:
            raise RecipeError(
                "recipes/tools.yaml",
                None,
                f"no python_tooling entry for Python {python.version}",
                hint="add its pip, setuptools and wheel versions under python_tooling",
            )
        return tooling


def _with_source_for(bench: Benchmark, build: Optional[FrameworkBuild]) -> Benchmark:
    """The benchmark with the source commit that serves the stack's framework version
    (tensorflow/benchmarks keeps a branch per TensorFlow release)."""
    if bench.build is None or len(bench.build.sources) < 2:
        return bench
    source = bench.build.source_for(build.version if build is not None else None)
    if source is None or source == bench.build.source:
        return bench
    return bench._replace(build=bench.build._replace(source=source))


def nearness(version: str, reference: str) -> Tuple[int, _Desc]:
    """Sort key: versions of the reference's line first (newest of it first), then the
    nearest lines, the newer of two equally near. The line is major.minor, or the major
    when the reference names only that ("7")."""
    ref = parse_version(reference).release
    parts = min(len(ref), 2)
    return (
        abs(_line_number(parse_version(version).release, parts) - _line_number(ref, parts)),
        _Desc(parse_version(version)),
    )


def _line_number(release: Tuple[int, ...], parts: int) -> int:
    major = release[0]
    minor = release[1] if parts > 1 and len(release) > 1 else 0
    return major * 1000 + minor


class _Desc:
    """Wraps a comparable so that ``sorted`` puts larger values first."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __lt__(self, other: _Desc) -> bool:
        return self.value > other.value  # type: ignore[operator,no-any-return]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.value == other.value

    __hash__ = None  # type: ignore[assignment]
