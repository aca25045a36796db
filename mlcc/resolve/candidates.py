"""The resolver's candidates: every framework build, CUDA release, base and cuDNN/NCCL
build in the order the resolver prefers them, filtered by the knowledge base's rules
(:mod:`mlcc.resolve.rules`) and narrowed by the user's pins.

Each stage is memoised on the objects and pins it depends on (knowledge-base objects by
identity: they live as long as the resolver), and returns what it accepted together with
the rejections, so that a search that must explain itself costs no more than one that
need not.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from mlcc.kb.model import Benchmark, CudaRelease, FrameworkBuild, KnowledgeBase, LibBuild
from mlcc.resolve import gpu as gpu_rule
from mlcc.resolve.request import Request
from mlcc.resolve.rules import Rules
from mlcc.resolve.stages import Failure, Rejection, rejection
from mlcc.resolve.view import Tracker
from mlcc.versions import parse_version

_METHOD_RANK = {"pip": 0, "source": 1, "conda": 2}


class _Filtered(NamedTuple):
    """Candidates a stage's knowledge-base rules accept, and (candidate, why not) pairs."""

    stage: str
    accepted: Tuple[Any, ...]
    rejected: Tuple[Tuple[Any, Rejection], ...]
    rejections: Tuple[Rejection, ...]


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


class Candidates:
    """The candidates of each search stage, in preference order, with why the others fail."""

    def __init__(self, kb: KnowledgeBase, rules: Rules) -> None:
        self.kb = kb
        self.rules = rules
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
        # The bases the resolver chooses among: an image base that brings its framework
        # (NGC) is built on only where a benchmark's recipe names it (constraints.bases).
        self.plain_bases = tuple(base for base in kb.bases if base.contents is None)
        self._filtered: Dict[Tuple[object, ...], _Filtered] = {}
        self._narrowed: Dict[Tuple[object, ...], Tuple[Any, ...]] = {}
        self._why: Dict[Tuple[object, ...], Tuple[Rejection, ...]] = {}

    def framework_builds(
        self, bench: Benchmark, arch: str, accelerator: str, req: Request, t: Optional[Tracker]
    ) -> Tuple[Any, ...]:
        """The benchmark's framework builds the rules and pins allow, in preference order."""
        if bench.framework is None:
            return (None,)
        key = ("framework", bench.name, arch, accelerator, req.newest)
        ruled = self._filtered.get(key)
        if ruled is None:
            ruled = self._filtered[key] = _filter(
                "framework",
                self.ordered_builds(bench.name, req.newest),
                lambda build: build.label,
                lambda build: self.rules.framework_rule_failures(bench, build, arch, accelerator),
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
            lambda build: self.rules.framework_pin_failures(bench, build, req),
        )

    @lru_cache(maxsize=64)  # noqa: B019 - the resolver lives as long as its knowledge base
    def ordered_builds(self, benchmark: str, newest: bool = False) -> Tuple[FrameworkBuild, ...]:
        """The benchmark framework's builds in the order the resolver tries them."""
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

    def cuda_releases(
        self,
        bench: Benchmark,
        build: Optional[FrameworkBuild],
        arch: str,
        accelerator: str,
        req: Request,
        t: Optional[Tracker],
    ) -> Tuple[Any, ...]:
        """The CUDA releases the rules and pins allow for a build, in preference order."""
        if accelerator == "cpu":
            return (None,)
        key = ("cuda", bench.name, id(build), arch, req.newest)
        ruled = self._filtered.get(key)
        if ruled is None:
            ruled = self._filtered[key] = _filter(
                "cuda",
                self.cuda_order(bench, req.newest),
                lambda release: f"CUDA {release.version}",
                lambda release: self.rules.cuda_rule_failures(bench, build, release, arch),
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
            lambda release: self.rules.cuda_pin_failures(release, req),
        )

    def bases(
        self, arch: str, release: Optional[CudaRelease], req: Request, t: Optional[Tracker]
    ) -> Tuple[Any, ...]:
        """The bases the rules and pins allow for a CUDA release, in preference order."""
        key = ("base", arch, id(release))
        ruled = self._filtered.get(key)
        if ruled is None:
            ruled = self._filtered[key] = _filter(
                "base",
                self.plain_bases,
                lambda base: base.name,
                lambda base: self.rules.base_rule_failures(base, release, arch),
            )
        if req.base is None:
            return _unpinned(ruled, t)
        return self._narrow(
            ruled,
            t,
            (req.base,),
            lambda base: base.name,
            lambda base: base.name == req.base,
            lambda base: self.rules.base_pin_failures(base, req),
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

    def cuda_order(self, bench: Benchmark, newest: bool) -> Tuple[CudaRelease, ...]:
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

    def lib_candidates(self, library: str, cuda: CudaRelease, distro: str, arch: str) -> Tuple[LibBuild, ...]:
        """The cuDNN or NCCL builds for a CUDA release on a distro and arch, preferred first."""
        return tuple(b for b in self._libs.get((library, distro, arch), ()) if b.fits_cuda(cuda.version))


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
