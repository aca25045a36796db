"""Stacks on an image base that already holds CUDA, its libraries, Python and a framework
(NVIDIA's NGC framework images, recipes/bases-ngc.yaml).

A benchmark builds on such a base only where its recipe names it (``constraints.bases``, the
reference first). The base's record is the stack: its CUDA, cuDNN, NCCL, Python and framework
are the facts its ``contents`` state, each with the base's sources, and nothing of them is
installed (no CUDA packages, no NVIDIA repositories, no framework stage). What the user may
pin (``--cuda``, ``--gpu``, ``--driver``, ``--python``, ``--with pytorch=...``) chooses among
the named bases and never changes one: a pin no named base satisfies is refused with the
base that would.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from mlcc.kb.model import (
    BUILT_FROM_SOURCE,
    FROM_PACKAGES,
    UNCONFIRMED,
    Base,
    BaseContents,
    Benchmark,
    BuildStep,
    CudaRelease,
    FrameworkBuild,
    Install,
    KnowledgeBase,
    LibBuild,
    Provenance,
    Replacement,
)
from mlcc.resolve import forward_compat
from mlcc.resolve.request import Request
from mlcc.resolve.stack import Choice, Stack
from mlcc.resolve.stages import Failure
from mlcc.versions import parse_version
from mlcc.versions import satisfies as _satisfies

# How a component that comes with an image base is installed: it is not (the base holds it).
FROM_BASE = "base"
# How a library a build step builds over the base's is installed (recipes: a step's replaces);
# one it installs from packages is the base's package format's (deb).
BUILT = BUILT_FROM_SOURCE


def contents_of(base: Base) -> BaseContents:
    """The base's contents (a base the resolver builds on as an image base has them)."""
    assert base.contents is not None, base.name
    return base.contents


def base_cuda(base: Base) -> CudaRelease:
    """The CUDA release the image holds, as the stack names it: no packages, no repositories."""
    contents = contents_of(base)
    return CudaRelease(
        version=contents.cuda_release,
        label=f"NGC {contents.release}, CUDA {contents.cuda}",
        min_driver=contents.cuda_min_driver,
        host_gcc=(),
        repos=(),
        packages=(),
        prov=base.prov,
    )


def base_library(base: Base, library: str, bench: Optional[Benchmark] = None, arch: str = "") -> LibBuild:
    """The cuDNN or NCCL of a stack on the image: the base's (method ``base``: nothing to
    install), or the one a step of ``bench``'s build installs over it on ``arch``: its
    version, the base's recorded as the one it replaced, and method ``source`` (built from
    source) or the base's package format (``deb``: from the base's package manager)."""
    contents = contents_of(base)
    held = LibBuild(
        library=library,
        version=contents.cudnn if library == "cudnn" else contents.nccl,
        cuda=contents.cuda_release,
        repo_distro=base.repo_distro,
        arches=base.arches,
        method=FROM_BASE,
        prov=base.prov,
        evidence=f"comes with {base.ref}",
    )
    found = replacing(bench, base, library, arch)
    if bench is None or found is None:
        return held
    step, replacement = found
    replaced = _confirmed(base, library)
    packages = replacement.method == FROM_PACKAGES
    how = f"installed from {base.packaging.package_format} packages" if packages else "built from source"
    return held._replace(
        version=replacement.version,
        method=base.packaging.package_format if packages else BUILT,
        prov=bench.prov._replace(origin=step.replaces_origin or bench.prov.origin, unverified_fields=()),
        evidence=f"{how} by the build step {step.script} over the base's own, {_own(replaced)}",
        replaced=replaced,
    )


def _own(version: str) -> str:
    """The base's own copy's version as far as a source confirms it."""
    return "whose version no source confirms" if version == UNCONFIRMED else version


def replacing(
    bench: Optional[Benchmark], base: Base, library: str, arch: str
) -> Optional[Tuple[BuildStep, Replacement]]:
    """The step of ``bench``'s build that installs its own ``library`` over the base's, and
    how, if one does."""
    if bench is None or bench.build is None:
        return None
    return bench.build.replacing(library, arch, base.family)


def held_version(bench: Optional[Benchmark], base: Base, library: str, arch: str) -> str:
    """The version of cuDNN or NCCL a stack of ``bench`` on the image holds on ``arch``."""
    return base_library(base, library, bench, arch).version


def base_framework(base: Base, bench: Optional[Benchmark] = None, arch: str = "") -> FrameworkBuild:
    """The framework the image is named for, as a build installed by the base itself; the
    cuDNN and NCCL it loads are the base's, or the ones ``bench``'s build makes over them
    (the step takes the base's copy away: nccl-build.sh removes the base's libnccl2)."""
    contents = contents_of(base)
    framework = contents.framework
    return FrameworkBuild(
        framework=framework.name,
        version=framework.version,
        variant=f"ngc-{contents.release}",
        cuda=(base_cuda(base).minor,),
        python=(contents.python,),
        arches=base.arches,
        install=Install(method=FROM_BASE),
        prov=base.prov,
        bundles=tuple((name, _loaded(base, name, bench, arch)) for name in ("cudnn", "nccl")),
    )


def _loaded(base: Base, library: str, bench: Optional[Benchmark], arch: str) -> str:
    """The version of ``library`` the framework loads: the one a build step made over the
    base's, else the base's as far as a source confirms it."""
    lib = base_library(base, library, bench, arch)
    return lib.version if lib.replaced is not None else _confirmed(base, library)


def _confirmed(base: Base, library: str) -> str:
    """The version of ``library`` the framework loads, as far as a source confirms it: a value
    the record marks unverified (25.09's cuDNN, which NVIDIA's benchmark image replaced) is
    UNCONFIRMED, so that ``mlcc verify`` records what the framework reports instead of failing."""
    contents = contents_of(base)
    if f"contents.{library}" in base.prov.unverified_fields:
        return UNCONFIRMED
    return contents.cudnn if library == "cudnn" else contents.nccl


def named_bases(kb: KnowledgeBase, bench: Benchmark) -> Tuple[Base, ...]:
    """The bases the benchmark's recipe names, in its order (the reference first)."""
    return tuple(kb.base(name) for name in bench.bases)


def failures(kb: KnowledgeBase, bench: Benchmark, base: Base, arch: str, req: Request) -> List[Failure]:
    """Why the image base cannot serve the request: the knowledge base's rules, then the pins."""
    cuda = base_cuda(base)
    origin = base.prov.origin
    found: List[Failure] = []
    if arch not in base.arches:
        found.append(Failure("base-arch", f"{base.ref} has no {arch} image", origin))
    if not _satisfies(cuda.version, bench.cuda):
        found.append(
            Failure("cuda-benchmark", f"{bench.name} needs CUDA {bench.cuda}", bench.origin_of("cuda"))
        )
    if req.base is not None and req.base != base.name:
        found.append(Failure("base-pin", f"--base {req.base} excludes {base.name}", "", pin=True))
    if req.cuda is not None and not req.cuda.matches(cuda.version):
        found.append(
            Failure("cuda-pin", f"--cuda {req.cuda} excludes {base.name}'s CUDA {cuda.version}", "", True)
        )
    if req.driver is not None:
        # the release's minimum, or a branch the image's forward-compatibility package serves
        driver = forward_compat.fit(kb, base, req.driver, req.gpu)
        if not driver.runs:
            found.append(Failure("cuda-driver", driver.why, origin, pin=True))
    found += _gpu_failures(kb, bench, base, req)
    found += _component_pin_failures(bench, base, arch, req)
    return found


def _gpu_failures(kb: KnowledgeBase, bench: Benchmark, base: Base, req: Request) -> List[Failure]:
    """The GPU asked needs a newer CUDA than the image holds: name the NGC releases that can."""
    if req.gpu is None:
        return []
    gpu = kb.gpus[req.gpu]
    cuda = base_cuda(base)
    if parse_version(cuda.version) >= parse_version(gpu.min_cuda):
        return []
    able = [
        f"{other.name} (NGC {contents_of(other).release}, CUDA {base_cuda(other).version})"
        for other in named_bases(kb, bench)
        if other.contents is not None
        and parse_version(base_cuda(other).version) >= parse_version(gpu.min_cuda)
    ]
    others = [
        other.name
        for other in kb.bases
        if other.contents is not None
        and other.name not in bench.bases
        and parse_version(base_cuda(other).version) >= parse_version(gpu.min_cuda)
    ]
    message = (
        f"{base.name} (NGC {contents_of(base).release}) holds CUDA {contents_of(base).cuda}, which has no"
        f" {gpu.sm} kernels: {gpu.title} needs CUDA >= {gpu.min_cuda}"
    )
    if able:
        message += f"; {bench.name} also builds on {', '.join(able)}"
    elif others:
        message += f"; NGC bases that can: {', '.join(others)} ({bench.name}'s recipe names none of them)"
    return [Failure("cuda-gpu", message, base.prov.origin, pin=True)]


def _component_pin_failures(bench: Benchmark, base: Base, arch: str, req: Request) -> List[Failure]:
    """Pins of what the image holds (or the benchmark's build makes over it): they can only
    choose the base that holds it."""
    contents = contents_of(base)
    held = (
        ("python", req.python, contents.python, "--python"),
        ("cudnn", req.cudnn, held_version(bench, base, "cudnn", arch), "--cudnn"),
        ("nccl", req.nccl, held_version(bench, base, "nccl", arch), "--nccl"),
        ("gcc", req.gcc, base.gcc_system, "--gcc"),
    )
    found: List[Failure] = []
    for name, pin, version, flag in held:
        if pin is not None and not pin.matches(version):
            found.append(
                Failure(
                    f"{name}-pin",
                    f"{flag} {pin} excludes {base.name}, which holds {name} {version}",
                    "",
                    True,
                )
            )
    for name, pin in req.frameworks:
        carried = contents.carries(name)
        if carried is None:
            found.append(Failure("framework-pin", f"{base.name} carries no {name}", base.prov.origin, True))
        elif not pin.matches(carried.version):
            found.append(
                Failure(
                    "framework-pin",
                    f"--with {name}={pin} excludes {base.name}, which holds {name} {carried.version}",
                    "",
                    True,
                )
            )
    return found


def choices(stack: Stack) -> Tuple[Choice, ...]:
    """Why each component of a stack on an image base is what it is: the base's record."""
    base = stack.base
    contents = contents_of(base)
    bench = stack.benchmark
    prov = base.prov
    reference = bench.bases[0] if bench.bases else base.name
    if base.name == reference:
        base_why = f"the base {bench.name}'s recipe names first (its reference): {base.ref}"
    else:
        base_why = (
            f"a base {bench.name}'s recipe names ({', '.join(bench.bases)}); the reference is {reference}"
        )
    held = f"comes with the base {base.name} ({base.ref}, NGC {contents.release}); nothing is installed"
    found = [
        _choice("arch", stack.arch.name, f"an arch {bench.name} and {base.ref} support", stack.arch.prov),
        _choice("base", base.name, base_why, prov, origin=bench.origin_of("bases")),
    ]
    fw = stack.framework
    if fw is not None:
        found.append(_choice(f"framework:{fw.framework}", fw.version, held, prov))
    found += [
        _choice("cuda", contents.cuda, f"{held}; needs {forward_compat.ways_out(contents)}", prov),
        _choice("python", contents.python, f"the image's own interpreter; {held}", prov),
        _library_choice(stack.cudnn, "cudnn", held, prov),
        _library_choice(stack.nccl, "nccl", held, prov),
        _choice("gcc", stack.gcc.version, f"the system compiler of {base.name} ({contents.os})", prov),
    ]
    return tuple(found)


def _library_choice(lib: Optional[LibBuild], library: str, held: str, prov: Provenance) -> Choice:
    """The base's cuDNN or NCCL, or the one a build step makes over it (the step's recipe line)."""
    if lib is None or lib.replaced is None:
        return _choice(library, lib.version if lib else None, held, prov)
    return _choice(
        library,
        lib.version,
        lib.evidence or held,
        lib.prov,
    )


def _choice(
    component: str, version: Optional[str], reason: str, prov: Provenance, origin: Optional[str] = None
) -> Choice:
    return Choice(
        component,
        version,
        reason,
        origin or prov.origin,
        prov.source,
        prov.verified,
        _fields_of(component, prov.unverified_fields),
    )


# Which of a base's unverified fields (recipes/bases-ngc.yaml) weaken which component.
_FIELDS = {
    "cuda": ("contents.cuda", "contents.cuda_min_driver", "contents.forward_compat"),
    "python": ("contents.python", "python.versions"),
    "cudnn": ("contents.cudnn",),
    "nccl": ("contents.nccl",),
    "gcc": ("gcc.system",),
    "base": ("tag", "arches", "glibc", "contents.os"),
    "arch": ("arches",),
}


def _fields_of(component: str, unverified: Tuple[str, ...]) -> Tuple[str, ...]:
    wanted = ("contents.frameworks",) if component.startswith("framework:") else _FIELDS.get(component, ())
    return tuple(field for field in unverified if field in wanted)
