"""Why each component of a resolved stack is what it is, in words a user can check.

The reasons are written into stack.json, inside the content digest, so they say what the
knowledge base says about the stack and never how it was asked for: ``mlcc gen ssd``,
``--base ubi8 --arch x86_64`` and every pin of its own versions build one image. A
component the default stack (the one a request without that pin resolves to) also has
gets the default policy's reason ("the newest Python on ubi8 that ..."); another one says
what it is and which default it differs from, never "you asked for it".
"""

from __future__ import annotations

from typing import List, NamedTuple, Optional, Set, Tuple

from mlcc.kb.model import FrameworkBuild, Provenance
from mlcc.resolve.request import Request
from mlcc.resolve.stack import Choice, Stack
from mlcc.resolve.view import ResolverView
from mlcc.versions import parse_version

_MAX_SKIPPED = 3


class Defaults(NamedTuple):
    """The default stacks a stack is compared with, each on the stack's arch and accelerator
    (None when no stack resolves): ``cuda`` fixes the stack's base, ``base`` its CUDA
    release, ``core`` its CUDA release and base (what the variant's core name says)."""

    cuda: Optional[Stack]
    base: Optional[Stack]
    core: Optional[Stack]
    newest: Optional[Stack] = None  # ``cuda``'s request with --newest
    # ``cuda``'s request with --gpu of the stack's compute capability (None without one)
    gpu: Optional[Stack] = None


def _same_build(a: Optional[FrameworkBuild], b: Optional[FrameworkBuild]) -> bool:
    if a is None or b is None:
        return a is b
    return (a.framework, a.version, a.variant, a.install.method) == (
        b.framework,
        b.version,
        b.variant,
        b.install.method,
    )


def departures(stack: Stack, core: Optional[Stack]) -> Tuple[Tuple[str, str], ...]:
    """The components in which ``stack`` differs from ``core``, the default stack of its
    CUDA release, base and arch (every component, when that has none), in the order the
    variant name spells them."""
    found: List[Tuple[str, str]] = []
    for library in ("cudnn", "nccl"):
        build = getattr(stack, library)
        default = getattr(core, library) if core is not None else None
        if build is not None and (default is None or default.version != build.version):
            found.append((library, build.version))
    python = stack.python
    if python is not None and (core is None or core.python is None or core.python.version != python.version):
        found.append(("python", python.version))
    if core is None or core.gcc != stack.gcc:
        found.append(("gcc", stack.gcc.version))
    fw = stack.framework
    if fw is not None and (core is None or not _same_build(core.framework, fw)):
        found.append((fw.framework, fw.version.split("+")[0]))
    if stack.gpu_capability is not None:  # source builds compile for that GPU only
        found.append(("gpu", "sm" + stack.gpu_capability.replace(".", "")))
    return tuple(found)


def explain_choices(resolver: ResolverView, stack: Stack, defaults: Defaults) -> Tuple[Choice, ...]:
    """The reasons of every component, from the stack, its defaults and the knowledge base."""
    other_arches = set(resolver.kb.arch_aliases) - {stack.arch.name, *stack.arch.aliases}
    core = defaults.core
    choices = [
        _arch(stack),
        *_framework(stack, core),
        *_cuda(resolver, stack, defaults),
        _base(resolver, stack, defaults.base),
        *_python(stack, core),
        *_lib(stack, "cudnn", core),
        *_lib(stack, "nccl", core),
        _gcc(resolver, stack, core),
    ]
    # the CUDA package lists other base families install (recipes/families.yaml)
    other_lists = {f.cuda_packages for f in resolver.kb.families.values()} - {
        stack.base.packaging.cuda_packages
    }
    return tuple(_drop_irrelevant(c, stack, other_arches, other_lists) for c in choices)


def _arch(stack: Stack) -> Choice:
    supported = ", ".join(stack.benchmark.arches)
    # The same words on every host and for every request that resolves to the stack: without
    # --arch a request resolves for the generating machine's arch (or the arch of every host
    # of the --gpu asked), and the text is inside the digest.
    reason = (
        f"an arch {stack.benchmark.name} supports ({supported}); mlcc resolves for the"
        " generating machine's arch where it is supported, else the first, or for the hosts'"
        " arch of a GPU built with its host CPU (Grace: aarch64), and --arch for another"
    )
    return Choice(
        "arch",
        stack.arch.name,
        reason,
        stack.arch.prov.origin,
        stack.arch.prov.source,
        stack.arch.prov.verified,
    )


def _framework(stack: Stack, core: Optional[Stack]) -> List[Choice]:
    build = stack.framework
    rule = stack.benchmark.framework
    if build is None or rule is None:
        return []
    if build.version in rule.prefer:
        why = f"the build {stack.benchmark.name}'s reference run used ({rule.name} {build.version})"
    elif core is not None and _same_build(core.framework, build):
        why = f"newest {rule.name} that {stack.benchmark.name} accepts ({rule.versions})"
    else:
        why = f"a {rule.name} that {stack.benchmark.name} accepts ({rule.versions})"
        why += _not_default(core.framework.version if core and core.framework else None)
    why += f"; {build.variant} build ({build.install.method}) for {stack.arch.name}"
    return [_from_prov(f"framework:{build.framework}", build.version, why, build.prov)]


def _not_default(version: Optional[str]) -> str:
    """The clause a component other than the default stack's ends with."""
    if version is None:
        return ", not the default stack's"
    return f", not the default stack's ({version})"


def _reference_note(stack: Stack, component: str) -> Optional[str]:
    """ "nearest maskrcnn's reference run (...: CUDA 10.1.163)": the default policy's words."""
    reference = stack.benchmark.reference_stack
    version = reference.version_of(component) if reference is not None else None
    if version is None:
        return None
    reference = stack.benchmark.reference_stack
    assert reference is not None
    return f"nearest {stack.benchmark.name}'s reference run ({reference.run}: {component} {version})"


def _newer_without_libs(resolver: ResolverView, stack: Stack) -> str:
    """ " (13.1.0, 13.0.2 have no NCCL build known)": the newer releases NVIDIA publishes
    for the stack's distro and arch that the stack passed over because no build of a
    library it installs is recorded for them, or "" when there are none."""
    cuda = stack.cuda
    assert cuda is not None
    distro, arch = stack.base.repo_distro, stack.arch.name
    newer = [
        r
        for r in resolver.kb.cuda
        if parse_version(r.version) > parse_version(cuda.version) and r.carried(distro, arch)
    ]
    lacking = [
        title
        for library, title, build in (("cudnn", "cuDNN", stack.cudnn), ("nccl", "NCCL", stack.nccl))
        if build is not None
        and build.method != "bundled"
        and all(not resolver.candidates.lib_candidates(library, r, distro, arch) for r in newer)
    ]
    if not newer or not lacking:
        return ""
    verb = "has" if len(newer) == 1 else "have"
    return f" ({', '.join(r.version for r in newer)} {verb} no {' or '.join(lacking)} build known)"


def _cuda(resolver: ResolverView, stack: Stack, defaults: Defaults) -> List[Choice]:
    default, newest, gpu_default = defaults.cuda, defaults.newest, defaults.gpu
    cuda = stack.cuda
    if cuda is None:
        reason = "a CPU-only stack: no CUDA"
        return [Choice("cuda", None, reason, stack.benchmark.origin_of("accelerators"), (), True)]
    lines = stack.framework.cuda if stack.framework else ()
    if default is not None and default.cuda == cuda:
        near = _reference_note(stack, "cuda")
        why = f"CUDA release {near} (--newest for the newest)," if near else "newest CUDA release"
    elif newest is not None and newest.cuda == cuda:
        why = "newest CUDA release"
    elif gpu_default is not None and gpu_default.cuda == cuda:
        why = f"newest CUDA release that targets compute capability {stack.gpu_capability}"
    else:
        why = "a CUDA release"
    if lines:
        label = stack.framework.label if stack.framework else ""
        why += f" of the lines {label} was built for ({', '.join(lines)})"
    why += f" with {stack.arch.name} packages for {stack.base.repo_distro}"
    if why.startswith("newest"):
        why += _newer_without_libs(resolver, stack)
    if (default is None or default.cuda != cuda) and (newest is None or newest.cuda != cuda):
        why += _not_default(default.cuda.version if default and default.cuda else None)
    driver = Choice(
        "driver",
        cuda.min_driver,
        f"CUDA {cuda.version} needs a host driver >= {cuda.min_driver} (NVIDIA's toolkit/driver table)",
        cuda.prov.origin,
        cuda.prov.source,
        "min_driver" not in cuda.prov.unverified_fields,
    )
    return [_from_prov("cuda", cuda.version, why, cuda.prov), driver]


def _base(resolver: ResolverView, stack: Stack, default: Optional[Stack]) -> Choice:
    base = stack.base
    if default is not None and default.base.name == base.name:
        skipped = []
        policy = Request(benchmark=stack.benchmark.name)  # no pin: the rules alone
        for other in resolver.kb.bases:
            if other.name == base.name:
                break
            failures = resolver.rules.base_failures(other, stack.cuda, stack.arch.name, policy)
            message = failures[0].message if failures else "a later component did not fit on it"
            skipped.append(f"{other.name}: {message}")
        why = "first base by preference that fits"
        if skipped:
            why += " (skipped " + "; ".join(skipped[:_MAX_SKIPPED])
            why += "; ..." if len(skipped) > _MAX_SKIPPED else ""
            why += ")"
    else:
        why = "a base that carries this stack" + _not_default(default.base.name if default else None)
    if base.requires_subscription:
        why += "; its package repositories need a RHEL subscription"
    if base.end_of_life:
        why += f"; end of life since {base.end_of_life}"
    return _from_prov("base", base.ref, why, base.prov)


def _python(stack: Stack, core: Optional[Stack]) -> List[Choice]:
    python = stack.python
    if python is None:
        return []
    default = core.python.version if core is not None and core.python is not None else None
    why = "newest Python" if default == python.version else "a Python"
    why += f" on {stack.base.name}"
    if stack.framework is not None:
        why += f" that {stack.framework.label} supports ({', '.join(stack.framework.python)})"
    if stack.benchmark.python:
        why += f" and {stack.benchmark.name} accepts ({stack.benchmark.python})"
    if default != python.version:
        why += _not_default(default)
    verified = python.verified and stack.base.prov.verified
    return [
        Choice(
            "python",
            python.version,
            why,
            stack.base.prov.origin,
            stack.base.prov.source,
            verified,
            ("python",) if not python.verified else (),
        )
    ]


def _lib(stack: Stack, library: str, core: Optional[Stack]) -> List[Choice]:
    build = stack.cudnn if library == "cudnn" else stack.nccl
    if build is None:
        return []
    assert stack.cuda is not None
    if build.method == "bundled":
        why = f"the {library} the framework loads: {build.evidence}; no system copy is installed"
        return [_from_prov(library, build.version, why, build.prov)]
    found = getattr(core, library) if core is not None else None
    default = found.version if found is not None else None
    if default == build.version:
        near = _reference_note(stack, library)
        why = f"{library} {near}, of those" if near else f"newest {library}"
    else:
        why = f"a {library}"
    why += f" for CUDA {stack.cuda.version} on {stack.base.repo_distro}/{stack.arch.name}"
    if library == "cudnn" and stack.framework is not None and stack.framework.cudnn:
        why += f" within {stack.framework.label}'s {stack.framework.cudnn}"
    if default != build.version:
        why += _not_default(default)
    why += f" ({build.method}"
    if build.evidence:
        why += f"; {build.evidence}"
    why += ")"
    return [_from_prov(library, build.version, why, build.prov)]


def _gcc(resolver: ResolverView, stack: Stack, core: Optional[Stack]) -> Choice:
    bounds = resolver.rules.gcc_bounds(stack.benchmark, stack.framework, stack.cuda, stack.arch.name)
    limits = "; ".join(f"{who} accepts {spec}" for spec, who, _ in bounds) or "no bound applies"
    toolset = stack.gcc.toolset
    if toolset is None:
        why = f"the system GCC of {stack.base.name} ({limits})"
        verified = True
    else:
        verified = toolset.verified
        if core is not None and core.gcc == stack.gcc:
            why = f"{toolset.name}: the system GCC {stack.base.gcc_system} is outside the bounds ({limits})"
        else:
            why = f"{toolset.name}: a toolset of {stack.base.name} ({limits})"
    if core is None or core.gcc != stack.gcc:
        why += _not_default(core.gcc.version if core is not None else None)
    origin = bounds[0][2] if bounds else stack.base.prov.origin
    return Choice(
        "gcc",
        stack.gcc.version,
        why,
        origin,
        stack.base.prov.source,
        verified,
        () if verified else ("gcc.toolsets",),
    )


def _from_prov(component: str, version: Optional[str], why: str, prov: Provenance) -> Choice:
    return Choice(
        component=component,
        version=version,
        reason=why,
        origin=prov.origin,
        sources=prov.source,
        verified=prov.verified,
        unverified_fields=prov.unverified_fields,
    )


# Fields other choices report for themselves (the base's Pythons and toolsets).
_REPORTED_ELSEWHERE = {"base": ("python", "gcc")}


def _drop_irrelevant(choice: Choice, stack: Stack, other_arches: Set[str], other_lists: Set[str]) -> Choice:
    """Forget unverified fields that cannot affect this stack (other arches, other family)."""
    kept = []
    for name in choice.unverified_fields:
        parts = name.split(".")
        if len(parts) > 1 and parts[-1] in other_arches:
            continue
        if parts[0] in _REPORTED_ELSEWHERE.get(choice.component, ()):
            continue
        if choice.component == "cuda" and parts[0] in other_lists:
            continue
        kept.append(name)
    return choice._replace(unverified_fields=tuple(kept))
