"""The pins: what a user may fix about a stack, declared once.

:class:`Pins` is the single list. The click options of every stack-producing command
(resolve, gen, build) and the keyword pins of :mod:`mlcc.api` (:meth:`Pins.updated`) derive
from its fields, :meth:`Pins.request` turns it into the resolver's
:class:`~mlcc.resolve.Request`, and :meth:`Pins.matches` tests a resolved stack against it
-- so ``--cuda '>=10.1'`` means the same in ``mlcc resolve``, in ``mlcc build --matrix``
and in ``mlcc.api.resolve(..., cuda=">=10.1")``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional, Tuple

from mlcc.flags import fields_of, flag, given
from mlcc.kb.model import KnowledgeBase
from mlcc.resolve import forward_compat
from mlcc.resolve.request import Request, build_request
from mlcc.resolve.stack import Stack
from mlcc.versions import VersionPin, parse_pin


def round_choices(kb: KnowledgeBase) -> str:
    """The rounds recipes/rounds/ records, for help and errors: ``v0.6, v2.1 (a name in several
    rounds means v0.6)``."""
    names = kb.rounds()
    text = ", ".join(names)
    return f"{text} (a name in several rounds means {kb.default_round})" if len(names) > 1 else text


@dataclass(frozen=True)
class Pins:
    """The pins every stack-producing command accepts."""

    cuda: Optional[str] = flag(
        "--cuda",
        "CUDA release: prefix (10.1), exact (10.1.243) or specifier ('>=10.1,<11').",
        default=None,
        metavar="VERSION",
    )
    cudnn: Optional[str] = flag(
        "--cudnn", "cuDNN version pin, e.g. 7 or 7.6.5.", default=None, metavar="VERSION"
    )
    nccl: Optional[str] = flag("--nccl", "NCCL version pin, e.g. 2.8.", default=None, metavar="VERSION")
    python: Optional[str] = flag("--python", "Python version pin, e.g. 3.6.", default=None, metavar="VERSION")
    gcc: Optional[str] = flag(
        "--gcc",
        "Host GCC pin, e.g. 8; picks a toolset when the system GCC does not match.",
        default=None,
        metavar="VERSION",
    )
    base: Optional[str] = flag("--base", "Base image name (mlcc list bases).", default=None, metavar="NAME")
    arch: Optional[str] = flag(
        "--arch",
        "CPU architecture: x86_64, ppc64le or aarch64 (aliases amd64, ppc64el, arm64).",
        default=None,
        metavar="ARCH",
    )
    driver: Optional[str] = flag(
        "--driver",
        "Host NVIDIA driver; only CUDA releases whose minimum driver it meets.",
        default=None,
        metavar="VERSION",
    )
    cpu: bool = flag("--cpu", "No CUDA: a CPU-only stack.", default=False, is_flag=True)
    with_: Tuple[str, ...] = flag(
        "--with",
        "Pin any other component, e.g. --with tensorflow=1.13 (repeatable).",
        default=(),
        metavar="NAME=VERSION",
        multiple=True,
    )
    newest: bool = flag(
        "--newest",
        "The newest compatible stack, not the one nearest the benchmark's reference run.",
        default=False,
        is_flag=True,
    )
    gpu: Optional[str] = flag(
        "--gpu",
        "GPU generation the stack must run on: v100, t4, a100, h100, ... (recipes/gpus.yaml).",
        default=None,
        metavar="NAME",
    )

    round: Optional[str] = flag(
        "--round",
        "MLPerf round of the benchmark (recipes/rounds/, `mlcc list rounds`).",
        default=None,
        metavar="ROUND",
        describe=lambda kb: f"MLPerf round of the benchmark: {round_choices(kb)}.",
    )

    flavour: Optional[str] = flag(
        "--flavour",
        "Image flavour: runtime (multi-stage, carries what runs) or devel (the build's compilers"
        " stay); default: the benchmark's.",
        default=None,
        metavar="FLAVOUR",
    )

    def __post_init__(self) -> None:
        """Refuse a value of the wrong type (the CLI's values are strings, flags bools, and
        ``--with`` repeated); a list for ``with_`` is taken as the tuple it means."""
        for item in fields_of(self):
            value = getattr(self, item.name)
            spec = item.flag
            if spec is not None and spec.multiple:
                if isinstance(value, str) or not all(isinstance(v, str) for v in value):
                    raise TypeError(
                        f"Pins.{item.name}: a sequence of strings, e.g. ({value!r},)"
                        if isinstance(value, str)
                        else f"Pins.{item.name}: a sequence of strings, not {value!r}"
                    )
                object.__setattr__(self, item.name, tuple(value))
            elif isinstance(item.default, bool):
                if not isinstance(value, bool):
                    raise TypeError(f"Pins.{item.name}: True or False, not {value!r}")
            elif value is not None and not isinstance(value, str):
                shown = spec.name if spec else item.name
                raise TypeError(f"Pins.{item.name}: a string (as {shown} takes it), not {value!r}")

    def __bool__(self) -> bool:
        return bool(given(self))

    def updated(self, **values: Any) -> Pins:
        """These pins with some fields set by name (``round="v2.1"``, ``with_=["pytorch=1.1"]``).

        The names are the fields of :class:`Pins` (the flags without their dashes; ``--with``
        is ``with_``), so a keyword interface never keeps a list of its own.

        Args:
            **values: Field name to value.

        Returns:
            The new pins.

        Raises:
            TypeError: A name that is not a pin, or a value of the wrong type.
        """
        known = [item.name for item in fields_of(self)]
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise TypeError(f"unknown pin(s) {', '.join(unknown)}: the pins are {', '.join(known)}")
        return replace(self, **values)

    def names_given(self) -> Tuple[str, ...]:
        """The flags set, as the user typed them (``--cuda``, ``--with``)."""
        fields = {f.name: f.flag.name for f in fields_of(self) if f.flag}
        return tuple(fields[name] for name in given(self))

    def request(self, kb: KnowledgeBase, benchmark: str) -> Request:
        """The validated request: unknown names and malformed versions are usage errors."""
        return build_request(
            kb,
            benchmark,
            cuda=self.cuda,
            cudnn=self.cudnn,
            nccl=self.nccl,
            python=self.python,
            gcc=self.gcc,
            base=self.base,
            arch=self.arch,
            driver=self.driver,
            cpu=self.cpu,
            with_=self.with_,
            newest=self.newest,
            gpu=self.gpu,
            round_=self.round,
            flavour=self.flavour,
        )

    def matches(self, kb: KnowledgeBase, stack: Stack) -> bool:
        """Does a resolved stack meet every pin, read as the resolver reads it?"""
        return stack_meets(kb, self.request(kb, stack.benchmark.name), stack)


def _meets(pin: Optional[VersionPin], version: Optional[str]) -> bool:
    return pin is None or (version is not None and pin.matches(version))


def stack_meets(kb: KnowledgeBase, request: Request, stack: Stack) -> bool:
    """The request's pins against what the stack holds (the resolver guarantees it for the
    stacks it returns; the matrix asks it of stacks resolved from other requests)."""
    if request.cpu and stack.cuda is not None:
        return False
    checks = (
        _meets(request.cuda, stack.cuda.version if stack.cuda else None),
        _meets(request.cudnn, stack.cudnn.version if stack.cudnn and stack.cudnn.confirmed else None),
        _meets(request.nccl, stack.nccl.version if stack.nccl and stack.nccl.confirmed else None),
        _meets(request.python, stack.python.version if stack.python else None),
        _meets(request.gcc, stack.gcc.version),
        request.base is None or request.base == stack.base.name,
        request.arch is None or request.arch == stack.arch.name,
        request.driver is None or _driver_meets(kb, request, stack),
        # source builds compile for the GPU's compute capability alone
        request.gpu is None or kb.gpus[request.gpu].compute_capability == stack.gpu_capability,
    )
    if not all(checks):
        return False
    framework = stack.framework
    return all(
        framework is not None and framework.framework == name and pin.matches(framework.version)
        for name, pin in request.frameworks
    )


def _driver_meets(kb: KnowledgeBase, request: Request, stack: Stack) -> bool:
    """The host's driver runs the stack's CUDA: its minimum, or on an image base (NGC) a
    branch the image's forward-compatibility package serves (:mod:`mlcc.resolve.forward_compat`)."""
    assert request.driver is not None
    if stack.base.contents is not None and stack.cuda is not None:
        return forward_compat.fit(kb, stack.base, request.driver, request.gpu).runs
    minimum = stack.driver_min
    return minimum is None or parse_pin(f">={minimum}", flag="--driver").matches(request.driver)
