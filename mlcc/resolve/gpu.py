"""The GPU rule: a stack runs on a GPU generation only if its CUDA release targets the GPU's
compute capability (recipes/gpus.yaml: ``min_cuda``, and ``max_cuda`` for a generation a
later CUDA major dropped). Kept apart from the other rules: the resolver asks it about each
CUDA release when ``--gpu`` is given, and nothing else."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Tuple

from mlcc.kb.model import CudaRelease, Gpu, KnowledgeBase
from mlcc.resolve.stages import Failure
from mlcc.resolve.view import ResolverView
from mlcc.versions import parse_version

if TYPE_CHECKING:
    from mlcc.resolve.request import Request


def cuda_supports(kb: KnowledgeBase, gpu: Optional[str], release: CudaRelease) -> bool:
    if gpu is None:
        return True
    found = kb.gpus[gpu]
    if parse_version(release.version) < parse_version(found.min_cuda):
        return False
    return found.max_cuda is None or parse_version(release.minor) <= parse_version(found.max_cuda)


def needed_cuda(gpu: Gpu) -> str:
    """ ">= 12.8", or ">= 9.0 and <= 12.9" for a generation a later CUDA dropped."""
    bound = f">= {gpu.min_cuda}"
    return bound + (f" and <= {gpu.max_cuda}" if gpu.max_cuda else "")


def gpu_problem(kb: KnowledgeBase, gpu: Optional[str], release: CudaRelease) -> Optional[Tuple[str, str]]:
    """(why the release cannot serve the GPU, where the fact is written), or None."""
    if gpu is None or cuda_supports(kb, gpu, release):
        return None
    found = kb.gpus[gpu]
    if parse_version(release.version) < parse_version(found.min_cuda):
        why = f"CUDA {release.version} and the frameworks built for it have no {found.sm} kernels"
    else:
        why = f"CUDA {release.version} no longer compiles for {found.sm}"
        why += f", nor do its libraries carry {found.sm} code"
    return (
        f"{found.title} (compute capability {found.compute_capability}, {found.sm}) needs CUDA"
        f" {needed_cuda(found)}: {why}",
        found.prov.origin,
    )


def cause(resolver: ResolverView, request: Request) -> Failure:
    """Why no stack runs on the GPU asked: its compute capability, the CUDA it needs, and
    what the benchmark resolves to without ``--gpu``. It leads a GPU conflict's explanation;
    the GPUs a stack does run on are alternatives (:mod:`mlcc.resolve.explain`)."""
    kb = resolver.kb
    assert request.gpu is not None
    gpu = kb.gpus[request.gpu]
    message = f"{gpu.title} is compute capability {gpu.compute_capability} ({gpu.sm})"
    message += f": it needs CUDA {needed_cuda(gpu)}"
    free = resolver.try_resolve(request._replace(gpu=None))
    if free is not None and free.cuda is not None:
        message += f"; without --gpu, {request.benchmark} resolves to CUDA {free.cuda.version}"
    message += _other_round(resolver, request)
    return Failure("cuda-gpu", message, gpu.prov.origin)


def _other_round(resolver: ResolverView, request: Request) -> str:
    """ "; --round v2.1 has a stack for it" when another round of the benchmark serves the GPU:
    a later round's frameworks reach the CUDA a newer GPU needs."""
    kb = resolver.kb
    asked = kb.benchmarks[request.benchmark]
    for round_ in reversed(kb.rounds_of(asked.base_name)):
        if round_ == asked.round:
            continue
        other = kb.benchmark_id(asked.base_name, round_)
        found = resolver.try_resolve(request._replace(benchmark=other))
        if found is not None and found.cuda is not None:
            return f"; --round {round_} resolves {asked.base_name} for it (CUDA {found.cuda.version})"
    return ""


def host_arch(kb: KnowledgeBase, gpu: Optional[str]) -> Optional[str]:
    """The arch of every host the GPU comes in (Grace superchips: aarch64), or None."""
    return kb.gpus[gpu].host_arch if gpu is not None else None


def default_arch_note(kb: KnowledgeBase, request: Request, arch: str) -> Optional[str]:
    """What to tell a user whose ``--gpu`` chose the arch: "GB200 nodes have NVIDIA Grace
    (aarch64) hosts: resolved for aarch64 ...", or None when --arch was given or the GPU's
    hosts vary. Printed beside the stack, never part of it."""
    if request.arch is not None or request.gpu is None:
        return None
    gpu = kb.gpus[request.gpu]
    if gpu.host_arch is None or gpu.host_arch != arch:
        return None
    cpu = f"{gpu.host_cpu} ({arch})" if gpu.host_cpu else arch
    return (
        f"{gpu.title} nodes have {cpu} hosts: resolved for {arch} without --arch"
        f" ({gpu.prov.origin}); --arch names another"
    )


def nearest_first(kb: KnowledgeBase, name: str) -> List[str]:
    """The other GPU generations, the nearest older ones first (a stack that runs on an
    older generation is the usual way out), then the newer ones."""
    asked = parse_version(kb.gpus[name].compute_capability)
    others = [g for g in kb.gpus.values() if g.name != name]
    older = sorted(
        (g for g in others if parse_version(g.compute_capability) < asked),
        key=lambda g: parse_version(g.compute_capability),
        reverse=True,
    )
    newer = sorted(
        (g for g in others if parse_version(g.compute_capability) >= asked),
        key=lambda g: parse_version(g.compute_capability),
    )
    return [g.name for g in older + newer]
