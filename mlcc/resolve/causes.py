"""The cause of a conflict, said first: the user's pin, the host, or the arch.

A pin (or the host's driver, or the arch) is a *cause* when the request resolves without
it. Causes are reported before the knowledge-base rules the search ran into, in a fixed
order of categories -- user pins, then the host, then arch / GPU -- so that a constraint
added later (a GPU generation) only has to say which category it belongs to.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple

from mlcc.kb.model import Base, Benchmark, FrameworkBuild, UbiAlternative
from mlcc.resolve import forward_compat, image_base
from mlcc.resolve.request import Request
from mlcc.resolve.stages import Failure
from mlcc.resolve.view import ResolverView
from mlcc.versions import VersionPin, parse_version, satisfies

# (dimension, category); categories order the causes: 0 user pin, 1 host, 2 arch / GPU
CAUSE_DIMENSIONS: Tuple[Tuple[str, int], ...] = (
    ("framework", 0),
    ("cuda", 0),
    ("cudnn", 0),
    ("nccl", 0),
    ("python", 0),
    ("gcc", 0),
    ("base", 0),
    ("cpu", 0),
    ("driver", 1),
    ("arch", 2),
)


def find_causes(resolver: ResolverView, request: Request) -> List[Failure]:
    """One line per pin (or host fact) without which the request would resolve."""
    bench = resolver.kb.benchmarks[request.benchmark]
    found: List[Failure] = []
    for dimension, _ in CAUSE_DIMENSIONS:
        for name in _pinned(resolver, request, dimension):
            if _resolves_without(resolver, request, bench, name):
                found.append(_describe(resolver, request, bench, name))
    return found


def _pinned(resolver: ResolverView, request: Request, dimension: str) -> Tuple[str, ...]:
    if dimension == "framework":
        return tuple(name for name, _ in request.frameworks)
    if dimension == "arch":
        return ("arch",)  # pinned or the host's: either way a choice that may be the cause
    if dimension == "cpu":
        return ("cpu",) if request.cpu else ()
    return (dimension,) if getattr(request, dimension) is not None else ()


def _resolves_without(resolver: ResolverView, request: Request, bench: Benchmark, name: str) -> bool:
    if name == "arch":
        here = request.arch or resolver.default_arch(bench, request.gpu)
        return any(
            resolver.try_resolve(request._replace(arch=arch)) is not None
            for arch in bench.arches
            if arch != here
        )
    return resolver.try_resolve(request.without(name)) is not None


def _describe(resolver: ResolverView, request: Request, bench: Benchmark, name: str) -> Failure:
    describe: Optional[Callable[[ResolverView, Request, Benchmark], Optional[str]]] = _DESCRIBERS.get(name)
    text = describe(resolver, request, bench) if describe is not None else None
    if name in resolver.kb.frameworks:
        text = _framework_text(resolver, request, bench, name)
    flag = _flag(request, name)
    rule = {"driver": "host-driver", "arch": "arch"}.get(name, f"{name}-pin")
    alternative = ubi_alternative(resolver, request, bench) if name == "base" else None
    return Failure(
        rule,
        f"{flag}: {text or 'no stack fits with it; every other pin fits without it'}",
        alternative.prov.origin if alternative is not None else "",
        pin=True,
    )


def ubi_alternative(resolver: ResolverView, request: Request, bench: Benchmark) -> Optional[UbiAlternative]:
    """The recipe's reason no stack on the pinned plain base (UBI) can be built, when the
    benchmark builds on NGC's images only and the pin asks for a base without contents."""
    if request.base is None or bench.ubi_alternative is None or request.base in bench.bases:
        return None
    if resolver.kb.base(request.base).contents is not None:
        return None
    return bench.ubi_alternative


def _ubi_text(resolver: ResolverView, request: Request, bench: Benchmark) -> Optional[str]:
    """The refusal of ``--base ubi9`` for a benchmark on NGC images: the recipe's reason, and
    the recipe of the nearest stack on that base, if it names one."""
    alternative = ubi_alternative(resolver, request, bench)
    if alternative is None:
        return None
    text = (
        f"{bench.name} builds on NVIDIA's NGC image{'s' if len(bench.bases) > 1 else ''} "
        f"{', '.join(bench.bases)} only; no stack on {request.base} from public packages: "
        f"{alternative.unavailable}"
    )
    nearest = alternative.nearest
    if nearest is None:
        return text
    if resolver.try_resolve(request._replace(benchmark=nearest)) is None:
        # offered only where it resolves with these pins: else named without the base
        return (
            f"{text.rstrip('.')}; the nearest stack on a plain base is the recipe {nearest},"
            f" which has none on {request.base} with these pins either"
            f" (mlcc resolve {nearest})"
        )
    return (
        f"{text.rstrip('.')}; the nearest stack on {request.base} is the recipe {nearest}"
        f" (mlcc resolve {nearest} --base {request.base})"
    )


def _flag(request: Request, name: str) -> str:
    if name == "arch":
        return f"--arch {request.arch}" if request.arch else "this machine's arch"
    if name == "cpu":
        return "--cpu"
    if name in _VERSION_FLAGS:
        return f"--{name} {getattr(request, name)}"
    if name == "base":
        return f"--base {request.base}"
    return f"--with {name}={request.framework_pin(name)}"


_VERSION_FLAGS = ("cuda", "cudnn", "nccl", "python", "gcc", "driver")


# ---------------------------------------------------------------------- per dimension


def _arch_of(resolver: ResolverView, request: Request, bench: Benchmark) -> str:
    return request.arch or resolver.default_arch(bench, request.gpu)


def _builds(resolver: ResolverView, request: Request, bench: Benchmark) -> List[FrameworkBuild]:
    """Framework builds the benchmark and the framework pin accept on the arch."""
    if bench.framework is None:
        return []
    arch = _arch_of(resolver, request, bench)
    accelerator = "cpu" if request.cpu else "cuda"
    pin = request.framework_pin(bench.framework.name)
    return [
        build
        for build in resolver.candidates.ordered_builds(bench.name, request.newest)
        if not resolver.rules.framework_rule_failures(bench, build, arch, accelerator)
        and (pin is None or pin.matches(build.version))
    ]


def _versions(values: Sequence[str]) -> str:
    ordered = sorted(set(values), key=parse_version)
    if len(ordered) > 4:
        return f"{ordered[0]} .. {ordered[-1]}"
    return ", ".join(ordered)


def _who(request: Request, bench: Benchmark) -> str:
    assert bench.framework is not None
    pin = request.framework_pin(bench.framework.name)
    if pin is not None:
        return f"the {bench.framework.name} {pin} builds"
    return f"the {bench.framework.name} builds {bench.name} accepts"


def _python_text(resolver: ResolverView, request: Request, bench: Benchmark) -> Optional[str]:
    pin = request.python
    assert pin is not None
    builds = _builds(resolver, request, bench)
    arch = _arch_of(resolver, request, bench)
    supported = sorted({v for b in builds for v in b.python}, key=parse_version)
    if builds and not any(pin.matches(v) for v in supported):
        return f"{_who(request, bench)} on {arch} support Python {', '.join(supported)} only"
    offering = [
        b.name
        for b in resolver.kb.bases
        if arch in b.arches and any(pin.matches(p.version) for p in b.pythons)
    ]
    if not offering:
        return f"no base offers it on {arch}"
    return f"offered by {', '.join(offering)}, where no CUDA, library or compiler fits the rest"


def _lib_text(library: str) -> Callable[[ResolverView, Request, Benchmark], Optional[str]]:
    title = "cuDNN" if library == "cudnn" else "NCCL"

    def text(resolver: ResolverView, request: Request, bench: Benchmark) -> Optional[str]:
        pin: VersionPin = getattr(request, library)
        arch = _arch_of(resolver, request, bench)
        known = resolver.kb.cudnn if library == "cudnn" else resolver.kb.nccl
        selected = [b.version for b in known if arch in b.arches and pin.matches(b.version)]
        if not selected:
            return f"no {title} build matches it on {arch}"
        said = f"selects {title} {_versions(selected)} on {arch}"
        builds = _builds(resolver, request, bench)
        brought = sorted({v for b in builds for v in b.bundled_versions(library)}, key=parse_version)
        own = bool(builds) and all(b.bundled(library) for b in builds)
        if own and not any(pin.matches(v) for v in brought):
            who = _who(request, bench)
            which = ", ".join(brought) if brought else "(version unconfirmed)"
            return f"{said}, but {who} on {arch} bring and load their own {title} {which}"
        if library == "cudnn":
            needs = sorted({b.cudnn for b in _builds(resolver, request, bench) if b.cudnn})
            if needs and not any(any(_ok(v, spec) for v in selected) for spec in needs):
                return f"{said}, but {_who(request, bench)} need cuDNN {' or '.join(needs)}"
        return f"{said}, for CUDA releases no stack of {bench.name} can use with the other pins"

    return text


def _ok(version: str, spec: str) -> bool:
    return satisfies(version, spec)


def _cuda_text(resolver: ResolverView, request: Request, bench: Benchmark) -> Optional[str]:
    pin = request.cuda
    assert pin is not None
    arch = _arch_of(resolver, request, bench)
    selected = [r for r in resolver.kb.cuda if pin.matches(r.version)]
    parts = [f"selects CUDA {_versions([r.version for r in selected])}"]
    lines = sorted({line for b in _builds(resolver, request, bench) for line in b.cuda}, key=parse_version)
    if lines and not any(r.minor in lines for r in selected):
        parts.append(f"{_who(request, bench)} on {arch} are built for CUDA {', '.join(lines)}")
    if not any(arch in a for r in selected for _, a in r.repos):
        parts.append(_last_release_note(resolver, arch))
    if request.driver is not None and all(
        parse_version(request.driver) < parse_version(r.min_driver) for r in selected
    ):
        parts.append(f"none of them runs on --driver {request.driver}")
    return "; ".join(parts)


def _line_of(version: str) -> str:
    release = parse_version(version).release
    return f"{release[0]}.{release[1]}"


def _last_release_note(resolver: ResolverView, arch: str) -> str:
    last = resolver.rules.last_cuda_on(arch)
    if last is None:
        return f"NVIDIA publishes no {arch} CUDA packages"
    return f"NVIDIA publishes {arch} packages up to CUDA {last} only"


def _driver_text(resolver: ResolverView, request: Request, bench: Benchmark) -> Optional[str]:
    assert request.driver is not None
    named = image_base.named_bases(resolver.kb, bench)
    if named and all(base.contents is not None for base in named):
        return _image_driver_text(resolver, request, named)
    driver = parse_version(request.driver)
    candidates = [r for r in resolver.kb.cuda if request.cuda is None or request.cuda.matches(r.version)]
    if not candidates:
        return None
    runs = [r for r in candidates if driver >= parse_version(r.min_driver)]
    least = min(candidates, key=lambda r: parse_version(r.min_driver))
    if not runs:
        scope = f"--cuda {request.cuda} selects" if request.cuda is not None else "mlcc knows"
        return (
            f"the host's driver is older than every CUDA release {scope} "
            f"(the least demanding, CUDA {least.version}, needs >= {least.min_driver})"
        )
    newest = max(runs, key=lambda r: parse_version(r.version))
    return (
        f"the host's driver runs CUDA up to {newest.version}, "
        f"which no stack of {bench.name} can use with the other pins"
    )


def _image_driver_text(resolver: ResolverView, request: Request, named: Sequence[Base]) -> Optional[str]:
    """Why the host's driver runs none of the NGC images the recipe names: for each, the CUDA
    it holds and both ways out (the release's minimum driver, or on a data-center GPU a branch
    its forward-compatibility package serves); None when the driver runs each of them."""
    assert request.driver is not None
    refusals = [forward_compat.fit(resolver.kb, base, request.driver, request.gpu) for base in named]
    said = [refusal.why for refusal in refusals if not refusal.runs]
    return "; ".join(said) or None


def _arch_text(resolver: ResolverView, request: Request, bench: Benchmark) -> Optional[str]:
    arch = _arch_of(resolver, request, bench)
    if request.cuda is not None:
        on_arch = [
            r
            for r in resolver.kb.cuda
            if request.cuda.matches(r.version) and any(arch in a for _, a in r.repos)
        ]
        if not on_arch:
            return _last_release_note(resolver, arch)
    others = [
        a for a in bench.arches if a != arch and resolver.try_resolve(request._replace(arch=a)) is not None
    ]
    return f"{arch} has no stack for these pins; {', '.join(others)} has"


def _framework_text(resolver: ResolverView, request: Request, bench: Benchmark, name: str) -> str:
    builds = _builds(resolver, request, bench)
    arch = _arch_of(resolver, request, bench)
    if not builds:
        return f"no {name} build of that version is built for {arch} and accepted by {bench.name}"
    lines = sorted({line for b in builds for line in b.cuda}, key=parse_version)
    pythons = sorted({v for b in builds for v in b.python}, key=parse_version)
    where = f"CUDA {', '.join(lines)}" if lines else "CPU"
    return (
        f"its builds for {arch} are for {where} and Python {', '.join(pythons)}, which the other pins exclude"
    )


def _base_text(resolver: ResolverView, request: Request, bench: Benchmark) -> Optional[str]:
    assert request.base is not None
    base = resolver.kb.base(request.base)
    arch = _arch_of(resolver, request, bench)
    ubi = _ubi_text(resolver, request, bench)
    if ubi is not None:
        return ubi
    if arch not in base.arches:
        return f"{base.name} has no {arch} image"
    if base.contents is not None:
        return _image_base_text(resolver, request, bench, arch)
    if request.cpu:
        return None
    carried = [r for r in resolver.kb.cuda if r.carried(base.repo_distro, arch)]
    if not carried:
        return f"NVIDIA's {base.repo_distro} repositories carry no {arch} CUDA"
    lines = sorted({line for b in _builds(resolver, request, bench) for line in b.cuda}, key=parse_version)
    if lines and not any(r.minor in lines for r in carried):
        return (
            f"NVIDIA's {base.repo_distro} repositories carry CUDA {_versions([r.version for r in carried])} "
            f"for {arch}; {_who(request, bench)} are built for CUDA {', '.join(lines)}"
        )
    return None


def _image_base_text(resolver: ResolverView, request: Request, bench: Benchmark, arch: str) -> Optional[str]:
    """Why an image base (NGC) pinned with --base cannot serve: the recipe does not name it,
    or what it holds does not fit the other pins (its CUDA for the GPU asked ...)."""
    assert request.base is not None
    base = resolver.kb.base(request.base)
    if base.name not in bench.bases:
        named = f"names {', '.join(bench.bases)}" if bench.bases else "names none (constraints.bases)"
        return f"{base.name} holds its own CUDA and framework and {bench.name}'s recipe {named}"
    reasons = [
        f.message
        for f in image_base.failures(resolver.kb, bench, base, arch, request)
        if f.rule != "base-pin"
    ]
    return "; ".join(reasons) or None


_DESCRIBERS: Dict[str, Callable[[ResolverView, Request, Benchmark], Optional[str]]] = {
    "python": _python_text,
    "cudnn": _lib_text("cudnn"),
    "nccl": _lib_text("nccl"),
    "cuda": _cuda_text,
    "driver": _driver_text,
    "arch": _arch_text,
    "base": _base_text,
}
