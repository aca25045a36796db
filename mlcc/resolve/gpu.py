"""The GPU rule: a stack runs on a GPU generation only if its CUDA release targets the GPU's
compute capability (recipes/gpus.yaml: ``min_cuda``). Kept apart from the other rules: the
resolver asks it about each CUDA release when ``--gpu`` is given, and nothing else."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Tuple

from mlcc.kb.model import CudaRelease, KnowledgeBase
from mlcc.resolve.view import ResolverView
from mlcc.versions import parse_version

if TYPE_CHECKING:
    from mlcc.resolve.request import Request


def cuda_supports(kb: KnowledgeBase, gpu: Optional[str], release: CudaRelease) -> bool:
    if gpu is None:
        return True
    return parse_version(release.version) >= parse_version(kb.gpus[gpu].min_cuda)


def gpu_problem(kb: KnowledgeBase, gpu: Optional[str], release: CudaRelease) -> Optional[Tuple[str, str]]:
    """(why the release cannot serve the GPU, where the fact is written), or None."""
    if gpu is None or cuda_supports(kb, gpu, release):
        return None
    found = kb.gpus[gpu]
    return (
        f"{found.title} (compute capability {found.compute_capability}, {found.sm}) needs CUDA"
        f" >= {found.min_cuda}: CUDA {release.version} and the frameworks built for it have no"
        f" {found.sm} kernels",
        found.prov.origin,
    )


def explain(resolver: ResolverView, request: Request) -> str:
    """Why no stack runs on the GPU asked, and the nearest GPU generation one runs on."""
    kb = resolver.kb
    assert request.gpu is not None
    gpu = kb.gpus[request.gpu]
    parts = [
        f"{gpu.title} is compute capability {gpu.compute_capability} ({gpu.sm}):"
        f" it needs CUDA >= {gpu.min_cuda}"
    ]
    free = resolver.try_resolve(request._replace(gpu=None))
    if free is not None and free.cuda is not None:
        parts.append(f"without --gpu, {request.benchmark} resolves to CUDA {free.cuda.version}")
    older = sorted(
        (
            g
            for g in kb.gpus.values()
            if parse_version(g.compute_capability) < parse_version(gpu.compute_capability)
        ),
        key=lambda g: parse_version(g.compute_capability),
        reverse=True,
    )
    for other in older:
        stack = resolver.try_resolve(request._replace(gpu=other.name))
        if stack is not None:
            parts.append(
                f"nearest GPU generation with a stack: {other.title} ({other.compute_capability}),"
                f" {stack.variant} (mlcc resolve {request.benchmark} --gpu {other.name})"
            )
            break
    return "; ".join(parts)
