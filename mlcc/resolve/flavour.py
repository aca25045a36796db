"""Which flavour a stack's image is: ``runtime`` (multi-stage) or ``devel`` (one stage).

A benchmark's images are runtime: a build stage on the devel stack compiles and installs,
and a final stage on the runtime stack (recipes/cuda.yaml's runtime packages, cuDNN and
NCCL without -devel, the interpreter) gets what it made. They are devel where the recipe
says the benchmark needs its build at run time (``build.flavour: devel`` with the
reason), and where the stack has no runtime to stand on: a CUDA release NVIDIA published
no runtime image of has no sourced runtime package list, and a stack without a Python of its
own installs its packages where the final stage copies nothing. ``--flavour`` asks for the other
one; the variant name then spells it (``-devel``, ``-runtime``), so the two images of one
stack never share a name.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

from mlcc.errors import UsageError
from mlcc.resolve.stack import Choice, Stack

# Build steps that install Python packages (into the stack's environment, when it has one).
PYTHON_STEPS = ("pip", "git", "install")


class Flavour(NamedTuple):
    name: str
    reason: str


def runtime_unavailable(stack: Stack) -> Optional[str]:
    """Why the stack cannot make a runtime image, or None when it can."""
    build = stack.benchmark.build
    if build is None:
        return f"{stack.benchmark.name} builds nothing of its own to carry into a runtime stage"
    if stack.python is None and any(step.kind in PYTHON_STEPS for step in build.steps):
        return (
            f"{stack.benchmark.name} has no Python of its own (python: none): its build steps install"
            " into the base's interpreter, which a runtime image does not copy"
        )
    if stack.base.contents is not None:
        return (
            f"{stack.base.ref} already holds CUDA, its libraries and {stack.base.contents.framework.name}:"
            " a final stage on it would carry the same image, compilers included"
        )
    cuda = stack.cuda
    if cuda is not None and cuda.runtime_packages_for(stack.base.packaging, stack.arch.name) is None:
        return (
            f"NVIDIA published no runtime image of CUDA {cuda.version} for {stack.base.packaging.name}"
            " bases, so no runtime package list of it is known (recipes/cuda.yaml)"
        )
    return None


def runtime_refused(stack: Stack) -> Optional[str]:
    """Why the stack's image cannot be runtime: the recipe's reason, or the stack's lack of
    a runtime; None when it can."""
    build = stack.benchmark.build
    if build is not None and build.flavour == "devel":
        return f"{stack.benchmark.name} keeps its build at run time: {build.flavour_reason}"
    return runtime_unavailable(stack)


def default_flavour(stack: Stack) -> Flavour:
    """The flavour a request that names none gets, and why."""
    refused = runtime_refused(stack)
    if refused is not None:
        return Flavour("devel", refused)
    return Flavour(
        "runtime",
        "the benchmark's images carry what it runs: a final stage on the runtime stack gets what"
        " the build stage made, without compilers, headers or sources",
    )


def flavoured(stack: Stack, asked: Optional[str]) -> Stack:
    """``stack`` with its flavour: the one asked for, else the default, and why.

    Raises:
        UsageError: runtime was asked for and the stack cannot make one.
    """
    default = default_flavour(stack)
    chosen = default
    if asked is not None and asked != default.name:
        refused = runtime_refused(stack) if asked == "runtime" else None
        if refused is not None:
            raise UsageError(
                f"--flavour runtime: {refused}",
                hint="use --flavour devel, or pin a CUDA release that has a runtime image (--cuda)",
            )
        chosen = Flavour(asked, f"asked for (--flavour {asked}); by default: {default.name}")
    choice = Choice(
        "flavour",
        chosen.name,
        chosen.reason,
        stack.benchmark.origin_of("build"),
        stack.benchmark.prov.source,
        True,
    )
    departures = stack.departures
    if chosen.name != default.name:
        departures = (*departures, ("flavour", chosen.name))
    return stack._replace(flavour=chosen.name, departures=departures, choices=(*stack.choices, choice))


def as_devel(stack: Stack) -> Stack:
    """The devel stack of ``stack`` (a host install, an Apptainer file: one stage)."""
    if not stack.runtime:
        return stack
    without = stack._replace(
        departures=tuple(d for d in stack.departures if d[0] != "flavour"),
        choices=tuple(c for c in stack.choices if c.component != "flavour"),
    )
    devel = flavoured(without, "devel")
    # nobody asked for devel: the format builds in one stage, and the stamp says so
    reason = (
        "an install script or an Apptainer file builds in one stage and keeps the build;"
        f" the Dockerfile's default: {default_flavour(stack).name}"
    )
    return devel._replace(
        choices=tuple(c._replace(reason=reason) if c.component == "flavour" else c for c in devel.choices)
    )
