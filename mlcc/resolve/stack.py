"""The resolver's product: one immutable, fully pinned software stack."""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from mlcc.kb.model import (
    Arch,
    Base,
    Benchmark,
    CudaRelease,
    FrameworkBuild,
    LibBuild,
    NcclProfile,
    NvidiaRepo,
    PublicHost,
    PythonOption,
    PythonTooling,
    System,
    Toolset,
)
from mlcc.kb.pip_locks import PipLocks
from mlcc.resolve.request import Request
from mlcc.versions import parse_version

# The format of ``mlcc resolve --json``; /etc/mlcc/stack.json has its own
# (mlcc.stackfile.document.MANIFEST_FORMAT).
STACK_FORMAT = 1


# How the variant name spells a departure from the default stack (a framework by its
# name, a GPU by its sm_XY name).
_VARIANT_SUFFIX = {"python": "py", "gpu": "", "flavour": ""}


class Choice(NamedTuple):
    """Why one component was chosen, and what the choice rests on."""

    component: str
    version: Optional[str]
    reason: str
    origin: str
    sources: Tuple[str, ...]
    verified: bool
    unverified_fields: Tuple[str, ...] = ()

    def to_dict(self) -> Dict[str, Any]:
        return {
            "name": self.component,
            "version": self.version,
            "reason": self.reason,
            "origin": self.origin,
            "sources": list(self.sources),
            "verified": self.verified,
            "unverified_fields": list(self.unverified_fields),
        }


class Compiler(NamedTuple):
    """The host compiler: the base's system GCC or one of its toolsets."""

    version: str
    toolset: Optional[Toolset] = None

    @property
    def major(self) -> int:
        return parse_version(self.version).release[0]


class Installer(NamedTuple):
    """A pinned tool download for this stack's arch (the Miniforge of a conda build)."""

    name: str
    version: str
    url: str
    checksum_suffix: Optional[str] = None
    sha256: Optional[str] = None  # the installer's own sha256, when the recipe pins it
    sha256_unavailable: Optional[str] = None  # the recipe's reason it pins none


class Stack(NamedTuple):
    """Every fact a renderer needs: renderers read the Stack, never the knowledge base."""

    benchmark: Benchmark
    arch: Arch
    base: Base
    python: Optional[PythonOption]
    gcc: Compiler
    cuda: Optional[CudaRelease]
    cudnn: Optional[LibBuild]
    nccl: Optional[LibBuild]
    framework: Optional[FrameworkBuild]
    # Why each component is what it is, from the knowledge base: the same words whatever
    # request resolved to this stack (they are written into stack.json, inside the digest).
    choices: Tuple[Choice, ...]
    # The public hosts besides NVIDIA's (recipes/hosts.yaml): renderers write a URL on one
    # through its mirror's build argument, whose default is the host.
    hosts: Tuple[PublicHost, ...]
    # Where NVIDIA's downloads live (recipes/cuda.yaml); renderers route them through $NVIDIA_MIRROR.
    download_host: str
    # False when the CUDA release is not the newest of its minor line: the variant name
    # then spells the full version so that it cannot collide with the newest.
    cuda_newest_in_line: bool = True
    # The NVIDIA package repositories the CUDA, cuDNN and NCCL packages come from.
    repositories: Tuple[NvidiaRepo, ...] = ()
    # pip / setuptools / wheel for the Python's virtual environment.
    python_tooling: Optional[PythonTooling] = None
    # The installer a conda framework build needs (Miniforge), for this arch.
    installer: Optional[Installer] = None
    # The module name that imports the framework (``torch`` for pytorch).
    framework_module: Optional[str] = None
    # The compute capability of the GPU asked (--gpu): source builds compile for it.
    gpu_capability: Optional[str] = None
    # With --gpu, each arch-list variable a build takes (recipes/gpus.yaml's and the
    # benchmark's build.arch_list_env) and its value for that GPU: ("NVTE_CUDA_ARCHS", "100a").
    gpu_arch_env: Tuple[Tuple[str, str], ...] = ()
    # The hash locks of the pip installs for this stack's Python, arch and glibc
    # (recipes/locks/): the renderers install with --require-hashes where they lock.
    pip_locks: Optional[PipLocks] = None
    # Named NCCL settings for the ranks of a multi-node run (recipes/nccl-profiles.yaml).
    nccl_profiles: Tuple[NcclProfile, ...] = ()
    # The machines the benchmark's launch names as node shapes (recipes/systems.yaml): what a
    # run pod on one asks of the cluster (CPU, memory, /dev/shm).
    systems: Tuple[System, ...] = ()
    # The components that differ from the default stack of this stack's CUDA release, base
    # and arch, as (component, version): the variant name spells them. A fact of the stack
    # and the knowledge base, not of a request: pinning a component to the version the
    # default stack has changes nothing, pinning another one is a departure.
    departures: Tuple[Tuple[str, str], ...] = ()
    # What the image carries: "devel" (the build's compilers, headers and sources stay) or
    # "runtime" (a second stage on the runtime stack gets what the build made, nothing else).
    flavour: str = "devel"
    # Python packages that only build (recipes/tools.yaml build_only): a runtime image's
    # final stage goes without them. (name as the rule spells it, its PEP 503 name)
    build_only: Tuple[Tuple[str, str], ...] = ()

    @property
    def runtime(self) -> bool:
        """True for a multi-stage image whose final stage carries what runs."""
        return self.flavour == "runtime"

    @property
    def from_base(self) -> Tuple[str, ...]:
        """The components the base image already holds (an NGC image: CUDA, cuDNN, NCCL,
        Python and the framework), which the build installs none of (less a cuDNN or NCCL a
        build step installs over the base's: :attr:`replaced`); empty for a plain base."""
        if self.base.contents is None:
            return ()
        held = ("cuda", "cudnn", "nccl", "python", "framework")
        return tuple(
            name
            for name in held
            if (name != "python" or self.python is not None) and name not in self.replaced
        )

    @property
    def accelerator(self) -> str:
        return "cuda" if self.cuda else "cpu"

    @property
    def driver_min(self) -> Optional[str]:
        return self.cuda.min_driver if self.cuda else None

    @property
    def reference(self) -> bool:
        """True when the framework is the build the benchmark's reference run used."""
        if self.base.contents is not None:  # the reference is the base the recipe names first
            return not self.benchmark.bases or self.benchmark.bases[0] == self.base.name
        rule = self.benchmark.framework
        if rule is None or self.framework is None:
            return self.framework is None
        return self.framework.version in rule.prefer

    @property
    def verified(self) -> bool:
        return all(c.verified and not c.unverified_fields for c in self.choices)

    @property
    def variant(self) -> str:
        """A deterministic directory/tag name, e.g. ``cuda10.1-cudnn7-ubi8-x86_64``.

        The core names the accelerator, the cuDNN major (or the NCCL line when there is
        no cuDNN), the base and the arch; each component that differs from the default
        stack of that core (:attr:`departures`) is appended, so that different stacks
        never share a name and one stack has one name however it was asked for.
        """
        parts: List[str] = []
        if self.cuda is None:
            parts.append("cpu")
        else:
            line = self.cuda.minor if self.cuda_newest_in_line else self.cuda.version
            parts.append(f"cuda{line}")
            if self.cudnn is not None and self.cudnn.confirmed:
                parts.append(f"cudnn{self.cudnn.major}")
            elif self.nccl is not None and self.nccl.confirmed:
                parts.append("nccl" + ".".join(self.nccl.version.split(".")[:2]))
        parts += [self.base.name, self.arch.name]
        parts += [_VARIANT_SUFFIX.get(name, name) + version for name, version in self.departures]
        return "-".join(parts)

    def to_dict(self) -> Dict[str, Any]:
        """The JSON form of ``mlcc resolve --json`` (keys documented in README)."""
        fw = self.framework
        return {
            "format": STACK_FORMAT,
            "benchmark": self.benchmark.name,
            "variant": self.variant,
            "accelerator": self.accelerator,
            "arch": self.arch.name,
            "base": self.base.name,
            "base_image": self.base.ref,
            "cuda": self.cuda.version if self.cuda else None,
            "cudnn": self.cudnn.version if self.cudnn else None,
            "nccl": self.nccl.version if self.nccl else None,
            "python": self.python.version if self.python else None,
            "gcc": self.gcc.version,
            "gcc_toolset": self.gcc.toolset.name if self.gcc.toolset else None,
            "framework": (
                {
                    "name": fw.framework,
                    "version": fw.version,
                    "variant": fw.variant,
                    "install": fw.install.method,
                }
                if fw
                else None
            ),
            "driver_min": self.driver_min,
            "flavour": self.flavour,
            "reference": self.reference,
            "verified": self.verified,
            "components": [c.to_dict() for c in self.choices],
            **({"from_base": list(self.from_base)} if self.from_base else {}),
            **({"replaced": self.replaced} if self.replaced else {}),
        }

    @property
    def replaced(self) -> Dict[str, str]:
        """The image base's own cuDNN / NCCL that a build step replaced, by name: the version
        the base's record confirms, or ``unconfirmed``; empty when no step replaces one."""
        return {
            lib.library: lib.replaced
            for lib in (self.cudnn, self.nccl)
            if lib is not None and lib.replaced is not None
        }


def pinned(request: Request, stack: Stack) -> Dict[str, str]:
    """Which component each of the request's pins chose: the pinned components, each with
    the version this stack holds (``--cuda 10.1`` gives ``{"cuda": "10.1.243"}``).

    For the places that record the request beside the image (``mlcc resolve``, the build
    history), never for the image: the stack is the same whatever was pinned. The driver
    pin is a fact of the host, not of the image, so it is left out.
    """
    held: Dict[str, Optional[str]] = {
        "cuda": stack.cuda.version if stack.cuda else None,
        "cudnn": stack.cudnn.version if stack.cudnn else None,
        "nccl": stack.nccl.version if stack.nccl else None,
        "python": stack.python.version if stack.python else None,
        "gcc": stack.gcc.version,
        "base": stack.base.name,
        "arch": stack.arch.name,
    }
    found: Dict[str, str] = {}
    for name, value in held.items():
        if getattr(request, name) is not None and value is not None:
            found[name] = value
    if request.cpu:
        found["cpu"] = "true"
    fw = stack.framework
    for name, _ in request.frameworks:
        if fw is not None and fw.framework == name:
            found[name] = fw.version
    if request.gpu is not None and stack.gpu_capability is not None:
        found["gpu"] = stack.gpu_capability
    return found
