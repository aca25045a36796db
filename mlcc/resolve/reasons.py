"""Why each component of a resolved stack was chosen, in words a user can check."""

from __future__ import annotations

from typing import List, Optional, Set, Tuple

from mlcc.kb.model import Provenance
from mlcc.resolve.stack import Choice, Stack
from mlcc.resolve.view import ResolverView

_MAX_SKIPPED = 3


def explain_choices(resolver: ResolverView, stack: Stack) -> Tuple[Choice, ...]:
    """The reasons name which components a pin decided, never the pin's spelling: they
    are written into stack.json, and ``--cuda 10.1`` and ``--cuda 10.1.243`` build the
    same image (the content digest must not tell them apart)."""
    other_arches = set(resolver.kb.arch_aliases) - {stack.arch.name, *stack.arch.aliases}
    choices = [
        _arch(stack),
        *_framework(resolver, stack),
        *_cuda(resolver, stack),
        _base(resolver, stack),
        *_python(stack),
        *_lib(resolver, stack, "cudnn"),
        *_lib(resolver, stack, "nccl"),
        _gcc(resolver, stack),
    ]
    # the CUDA package lists other base families install (recipes/families.yaml)
    other_lists = {f.cuda_packages for f in resolver.kb.families.values()} - {
        stack.base.packaging.cuda_packages
    }
    return tuple(_drop_irrelevant(c, stack, other_arches, other_lists) for c in choices)


def _arch(stack: Stack) -> Choice:
    pin = stack.request.arch
    supported = ", ".join(stack.benchmark.arches)
    if pin:
        reason = f"--arch {stack.arch.name}"  # the arch's own name, not an alias the request used
    else:
        # The same words on every host: this text is stamped into stack.json and so into the
        # content digest, which must not depend on the machine that generated the files.
        reason = (
            f"no --arch: the generating machine's arch where {stack.benchmark.name} supports it,"
            f" else its first ({supported}); --arch for another"
        )
    return Choice(
        "arch",
        stack.arch.name,
        reason,
        stack.arch.prov.origin,
        stack.arch.prov.source,
        stack.arch.prov.verified,
    )


def _framework(resolver: ResolverView, stack: Stack) -> List[Choice]:
    build = stack.framework
    rule = stack.benchmark.framework
    if build is None or rule is None:
        return []
    if build.version in rule.prefer:
        why = f"the build {stack.benchmark.name}'s reference run used ({rule.name} {build.version})"
    else:
        why = f"newest {rule.name} that {stack.benchmark.name} accepts ({rule.versions})"
    if stack.request.framework_pin(rule.name) is not None:
        why += f", matching the --with {rule.name}=... pin"
    why += f"; {build.variant} build ({build.install.method}) for {stack.arch.name}"
    return [_from_prov(f"framework:{build.framework}", build.version, why, build.prov)]


def _reference_note(resolver: ResolverView, stack: Stack, component: str) -> Optional[str]:
    """ "nearest maskrcnn's reference run (...: CUDA 10.1.163)" when the default policy chose."""
    version = resolver.reference_version(stack.benchmark, stack.request, component)
    if version is None:
        return None
    reference = stack.benchmark.reference_stack
    assert reference is not None
    return f"nearest {stack.benchmark.name}'s reference run ({reference.run}: {component} {version})"


def _cuda(resolver: ResolverView, stack: Stack) -> List[Choice]:
    cuda = stack.cuda
    if cuda is None:
        return [Choice("cuda", None, "--cpu: no CUDA", stack.benchmark.origin_of("accelerators"), (), True)]
    lines = stack.framework.cuda if stack.framework else ()
    near = _reference_note(resolver, stack, "cuda")
    why = f"CUDA release {near} (--newest for the newest)," if near else "newest CUDA release"
    if lines:
        label = stack.framework.label if stack.framework else ""
        why += f" of the lines {label} was built for ({', '.join(lines)})"
    if stack.request.cuda is not None:
        why += " matching the --cuda pin"
    if stack.request.driver is not None:
        why += f" whose minimum driver ({cuda.min_driver}) the --driver pin meets"
    why += f" with {stack.arch.name} packages for {stack.base.repo_distro}"
    driver = Choice(
        "driver",
        cuda.min_driver,
        f"CUDA {cuda.version} needs a host driver >= {cuda.min_driver} (NVIDIA's toolkit/driver table)",
        cuda.prov.origin,
        cuda.prov.source,
        "min_driver" not in cuda.prov.unverified_fields,
    )
    return [_from_prov("cuda", cuda.version, why, cuda.prov), driver]


def _base(resolver: ResolverView, stack: Stack) -> Choice:
    base = stack.base
    if stack.request.base:
        why = f"--base {base.name}"
    else:
        skipped = []
        for other in resolver.kb.bases:
            if other.name == base.name:
                break
            failures = resolver.base_failures(other, stack.cuda, stack.arch.name, stack.request)
            message = failures[0].message if failures else "a later component did not fit on it"
            skipped.append(f"{other.name}: {message}")
        why = "first base by preference that fits"
        if skipped:
            why += " (skipped " + "; ".join(skipped[:_MAX_SKIPPED])
            why += "; ..." if len(skipped) > _MAX_SKIPPED else ""
            why += ")"
    if base.requires_subscription:
        why += "; its package repositories need a RHEL subscription"
    if base.end_of_life:
        why += f"; end of life since {base.end_of_life}"
    return _from_prov("base", base.ref, why, base.prov)


def _python(stack: Stack) -> List[Choice]:
    python = stack.python
    if python is None:
        return []
    why = f"newest Python on {stack.base.name}"
    if stack.framework is not None:
        why += f" that {stack.framework.label} supports ({', '.join(stack.framework.python)})"
    if stack.benchmark.python:
        why += f" and {stack.benchmark.name} accepts ({stack.benchmark.python})"
    if stack.request.python is not None:
        why += ", matching the --python pin"
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


def _lib(resolver: ResolverView, stack: Stack, library: str) -> List[Choice]:
    build = stack.cudnn if library == "cudnn" else stack.nccl
    if build is None:
        return []
    assert stack.cuda is not None
    if build.method == "bundled":
        why = f"the {library} the framework loads: {build.evidence}; no system copy is installed"
        return [_from_prov(library, build.version, why, build.prov)]
    near = _reference_note(resolver, stack, library)
    why = f"{library} {near}, of those" if near else f"newest {library}"
    why += f" for CUDA {stack.cuda.version} on {stack.base.repo_distro}/{stack.arch.name}"
    if library == "cudnn" and stack.framework is not None and stack.framework.cudnn:
        why += f" within {stack.framework.label}'s {stack.framework.cudnn}"
    if getattr(stack.request, library) is not None:
        why += f", matching the --{library} pin"
    why += f" ({build.method}"
    if build.evidence:
        why += f"; {build.evidence}"
    why += ")"
    return [_from_prov(library, build.version, why, build.prov)]


def _gcc(resolver: ResolverView, stack: Stack) -> Choice:
    bounds = resolver.gcc_bounds(stack.benchmark, stack.framework, stack.cuda, stack.arch.name)
    limits = "; ".join(f"{who} accepts {spec}" for spec, who, _ in bounds) or "no bound applies"
    toolset = stack.gcc.toolset
    if toolset is None:
        why = f"the system GCC of {stack.base.name} ({limits})"
        verified = True
    else:
        why = (
            f"{toolset.name}: the system GCC {stack.base.gcc_system} is outside the bounds "
            f"or --gcc ({limits})"
        )
        verified = toolset.verified
    if stack.request.gcc is not None:
        why += ", matching the --gcc pin"
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
