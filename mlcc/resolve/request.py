"""What the user asked for: a benchmark and pins, checked against the knowledge base.

Everything here is validated before the resolver runs: unknown names get a "did you
mean", malformed versions are rejected, contradictory pins are usage errors (exit 2).
"""

from __future__ import annotations

import re
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from mlcc.errors import UsageError
from mlcc.kb.model import FLAVOURS, KnowledgeBase
from mlcc.validate import choice
from mlcc.versions import VersionPin, is_valid_version, parse_pin

# Components `--with NAME=VERSION` may name besides the frameworks.
VERSION_COMPONENTS = ("cuda", "cudnn", "nccl", "python", "gcc")
OTHER_COMPONENTS = ("driver", "base", "arch")


class Request(NamedTuple):
    """A benchmark plus the user's pins; every field already validated."""

    benchmark: str
    cuda: Optional[VersionPin] = None
    cudnn: Optional[VersionPin] = None
    nccl: Optional[VersionPin] = None
    python: Optional[VersionPin] = None
    gcc: Optional[VersionPin] = None
    base: Optional[str] = None
    arch: Optional[str] = None
    driver: Optional[str] = None
    cpu: bool = False
    frameworks: Tuple[Tuple[str, VersionPin], ...] = ()
    # the newest compatible stack instead of the one nearest the benchmark's reference run
    newest: bool = False
    gpu: Optional[str] = None  # a recipes/gpus.yaml name: the stack must run on it
    flavour: Optional[str] = None  # "devel" | "runtime"; None: the benchmark's default

    def framework_pin(self, name: str) -> Optional[VersionPin]:
        return dict(self.frameworks).get(name)

    def pins(self) -> Dict[str, str]:
        """The pins as the user would write them, for messages and manifests."""
        shown: Dict[str, str] = {}
        for name in VERSION_COMPONENTS:
            pin = getattr(self, name)
            if pin is not None:
                shown[name] = str(pin)
        for name in ("base", "arch", "driver", "gpu", "flavour"):
            value = getattr(self, name)
            if value is not None:
                shown[name] = value
        if self.cpu:
            shown["cpu"] = "true"
        for name, pin in self.frameworks:
            shown[name] = str(pin)
        if self.newest:
            shown["newest"] = "true"
        return shown

    def flags(self, quote: Callable[[str], str] = str) -> str:
        """``--cuda 10.1 --arch ppc64le`` for messages; ``quote`` each value for a shell."""
        parts: List[str] = []
        for name, raw in self.pins().items():
            value = quote(raw)
            if name in ("cpu", "newest"):
                parts.append(f"--{name}")
            elif name in VERSION_COMPONENTS or name in OTHER_COMPONENTS or name in ("gpu", "flavour"):
                parts.append(f"--{name} {value}")
            else:
                parts.append(f"--with {name}={value}")
        return " ".join(parts)

    def without(self, dimension: str) -> Request:
        """The same request with one pin dropped (used to find alternatives)."""
        index = _FIELD_INDEX.get(dimension)
        if index is None:  # a framework pin
            return self._replace(frameworks=tuple((n, p) for n, p in self.frameworks if n != dimension))
        values: List[object] = list(self)
        values[index] = False if dimension in ("cpu", "newest") else None
        return tuple.__new__(Request, values)

    def with_pin(self, dimension: str, value: object) -> Request:
        """The same request with one of the version/base/arch pins set to ``value``."""
        values: List[object] = list(self)
        values[_FIELD_INDEX[dimension]] = value
        return tuple.__new__(Request, values)


_FIELD_INDEX = {
    name: index for index, name in enumerate(Request._fields) if name not in ("benchmark", "frameworks")
}


def did_you_mean(value: str, choices: Iterable[str]) -> Optional[str]:
    import difflib  # only for a name the recipes do not know: not on a resolve's path

    close = difflib.get_close_matches(value, list(choices), n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else None


def build_request(
    kb: KnowledgeBase,
    benchmark: str,
    *,
    cuda: Optional[str] = None,
    cudnn: Optional[str] = None,
    nccl: Optional[str] = None,
    python: Optional[str] = None,
    gcc: Optional[str] = None,
    base: Optional[str] = None,
    arch: Optional[str] = None,
    driver: Optional[str] = None,
    cpu: bool = False,
    with_: Sequence[str] = (),
    newest: bool = False,
    gpu: Optional[str] = None,
    round_: Optional[str] = None,
    flavour: Optional[str] = None,
) -> Request:
    """Validate the command line's values and turn them into a :class:`Request`."""
    benchmark = find_benchmark(kb, benchmark, round_)
    given: Dict[str, Tuple[str, str]] = {}  # component -> (raw value, flag that gave it)
    for flag, name, value in (
        ("--cuda", "cuda", cuda),
        ("--cudnn", "cudnn", cudnn),
        ("--nccl", "nccl", nccl),
        ("--python", "python", python),
        ("--gcc", "gcc", gcc),
        ("--base", "base", base),
        ("--arch", "arch", arch),
        ("--driver", "driver", driver),
    ):
        if value is not None:
            given[name] = (value, flag)
    frameworks: Dict[str, VersionPin] = {}
    for item in with_:
        name, value = _split_with(item)
        flag = f"--with {name}="
        if name in kb.frameworks:
            if name in frameworks:
                raise UsageError(f"--with {name}= is given twice")
            frameworks[name] = parse_pin(value, flag=f"--with {name}")
            continue
        if name not in VERSION_COMPONENTS + OTHER_COMPONENTS:
            known = sorted((*VERSION_COMPONENTS, *OTHER_COMPONENTS, *kb.frameworks))
            raise UsageError(
                f"--with: unknown component {name!r}",
                hint=did_you_mean(name, known) or f"components: {', '.join(known)}",
            )
        if name in given and not _same_pin(kb, name, given[name], (value, flag)):
            raise UsageError(f"contradictory pins: {given[name][1]} {given[name][0]} and {flag}{value}")
        given.setdefault(name, (value, flag))
    if len(frameworks) > 1:
        raise UsageError(
            "contradictory pins: a stack has one framework, but --with names "
            + " and ".join(sorted(frameworks))
        )
    if cpu:
        for name in ("cuda", "cudnn", "nccl", "driver"):
            if name in given:
                raise UsageError(f"contradictory pins: --cpu and {given[name][1]} {given[name][0]}")
    if gpu is not None and cpu:
        raise UsageError(f"contradictory pins: --cpu and --gpu {gpu}")
    pins = {
        name: parse_pin(given[name][0], flag=given[name][1]) for name in VERSION_COMPONENTS if name in given
    }
    return Request(
        benchmark=benchmark,
        base=_base_name(kb, given.get("base")),
        arch=_arch_name(kb, given.get("arch")),
        driver=_driver(given.get("driver")),
        cpu=cpu,
        frameworks=tuple(sorted(frameworks.items())),
        newest=newest,
        gpu=_gpu_name(kb, gpu),
        flavour=_flavour(flavour),
        **pins,
    )


def _flavour(flavour: Optional[str]) -> Optional[str]:
    if flavour is None:
        return None
    chosen = choice(flavour, FLAVOURS)
    if chosen is not None:
        return chosen
    raise UsageError(
        f"--flavour: unknown flavour {flavour!r}",
        hint="runtime (a multi-stage image that carries what runs) or devel (compilers and sources stay)",
    )


def find_benchmark(kb: KnowledgeBase, name: str, round_: Optional[str] = None) -> str:
    """The id of benchmark ``name`` in ``round_`` (``--round``): a name in one round needs no
    round; a name in several means the default round (the record saying ``default: true``), else
    the newest of them; an id (``maskrcnn-v2.1``) is accepted as it is, since messages and stack
    files name benchmarks by id."""
    if round_ is not None:
        asked = round_
        round_ = choice(round_, kb.rounds())
        if round_ is None:
            raise UsageError(f"--round: unknown round {asked!r}", hint=f"rounds: {', '.join(kb.rounds())}")
    if name in kb.benchmarks and round_ in (None, kb.benchmarks[name].round):
        return name
    rounds = kb.rounds_of(name)
    if not rounds and name in kb.benchmarks:  # a benchmark of no MLPerf round (nccl-tests)
        raise UsageError(
            f"benchmark {name!r} is not in round {round_}: it belongs to no MLPerf round",
            hint=f"leave out --round: mlcc resolve {name}",
        )
    if not rounds:
        names = sorted({b.base_name for b in kb.benchmarks.values()})
        raise UsageError(
            f"unknown benchmark {name!r}",
            hint=did_you_mean(name, names) or f"benchmarks: {', '.join(names)}",
        )
    if round_ is None:
        # the newest round holding it when the default does not: llama31_405b means v5.1's,
        # whose NVIDIA submission is current, not v5.0's H100 one
        round_ = kb.default_round if kb.default_round in rounds else rounds[-1]
    if round_ not in rounds:
        raise UsageError(
            f"benchmark {name!r} is not in round {round_}",
            hint=f"{name} exists in round {', '.join(rounds)}: pass --round {rounds[-1]}",
        )
    return kb.benchmark_id(name, round_)


def _same_pin(kb: KnowledgeBase, name: str, first: Tuple[str, str], second: Tuple[str, str]) -> bool:
    """Two spellings of one pin (``--arch x86_64`` and ``--with arch=amd64``) agree."""
    if first[0] == second[0]:
        return True
    if name == "arch":
        return _arch_name(kb, first) == _arch_name(kb, second)
    return False


# NAME=VERSION, or pip's spelling NAME==1.1.0 / NAME>=1.14 (the operator is part of the pin)
_WITH = re.compile(r"^\s*([A-Za-z0-9_.-]+)\s*(==|>=|<=|~=|!=|=|<|>)(.*)\Z", re.DOTALL)


def _gpu_name(kb: KnowledgeBase, value: Optional[str]) -> Optional[str]:
    if value is None:
        return None
    name = choice(value, kb.gpus)
    if name is None:
        raise UsageError(
            f"--gpu: unknown GPU {value!r}",
            hint=did_you_mean(value.strip().lower(), kb.gpus)
            or f"GPUs (recipes/gpus.yaml): {', '.join(kb.gpus)}",
        )
    return name


def _split_with(item: str) -> Tuple[str, str]:
    match = _WITH.match(item)
    if match is None or not match.group(3).strip():
        raise UsageError(
            f"--with {item!r}: expected NAME=VERSION",
            hint="for example --with tensorflow=1.13 or --with pytorch==1.1.0",
        )
    name, operator, rest = match.groups()
    name = name.lower()
    value = rest.strip()
    if operator != "=" and not (operator == "==" and name in OTHER_COMPONENTS):
        value = operator + value
    return name, value


def _base_name(kb: KnowledgeBase, given: Optional[Tuple[str, str]]) -> Optional[str]:
    if given is None:
        return None
    value, flag = given
    names = [b.name for b in kb.bases]
    if value not in names:
        raise UsageError(
            f"{flag}: unknown base {value!r}",
            hint=did_you_mean(value, names) or f"bases: {', '.join(names)}",
        )
    return value


def _arch_name(kb: KnowledgeBase, given: Optional[Tuple[str, str]]) -> Optional[str]:
    if given is None:
        return None
    value, flag = given
    canonical = kb.arch_aliases.get(value.strip().lower())
    if canonical is None:
        raise UsageError(
            f"{flag}: unknown arch {value!r}",
            hint=did_you_mean(value, kb.arch_aliases) or f"arches: {', '.join(kb.arches)}",
        )
    return canonical


def _driver(given: Optional[Tuple[str, str]]) -> Optional[str]:
    if given is None:
        return None
    value, flag = given
    text = value.strip()
    # an NVIDIA driver version is dotted ASCII numbers: no epoch (1!1 would meet every CUDA),
    # no local part, no pre-release, no Unicode digits
    if not re.fullmatch(r"[0-9]{1,6}(\.[0-9]{1,6}){0,3}", text) or not is_valid_version(text):
        raise UsageError(
            f"{flag}: {value[:40]!r} is not a driver version",
            hint="dotted numbers as nvidia-smi shows them, for example --driver 418.67",
        )
    return text
