"""What the explainers read of a resolver, and the tracker a search records rejections in.

The conflict explanation (:mod:`mlcc.resolve.explain`, :mod:`mlcc.resolve.causes`), the
reasons of a stack's choices (:mod:`mlcc.resolve.reasons`) and the GPU rule's summary
(:mod:`mlcc.resolve.gpu`) depend on :class:`ResolverView`, not on the resolver's class:
:class:`mlcc.resolve.engine.Resolver` is one (mypy checks it where it hands itself over),
and the explainers import nothing of the engine.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Protocol, Sequence, Tuple

from mlcc.kb.model import Base, Benchmark, CudaRelease, FrameworkBuild, KnowledgeBase
from mlcc.resolve.request import Request
from mlcc.resolve.stack import Stack
from mlcc.resolve.stages import Failure, Rejection, rejection


class Tracker:
    """Collects rejections while a search runs, for the conflict explanation.

    Rejections arrive as chunks (tuples the stage caches share between searches), so that
    recording costs one append and summaries can be cached per chunk.
    """

    def __init__(self) -> None:
        self.chunks: List[Tuple[Rejection, ...]] = []

    def add(self, stage: str, subject: str, failures: Sequence[Failure]) -> None:
        self.chunks.append((rejection(stage, subject, failures),))

    def extend(self, chunk: Tuple[Rejection, ...]) -> None:
        if chunk:
            self.chunks.append(chunk)

    @property
    def rejections(self) -> List[Rejection]:
        return [r for chunk in self.chunks for r in chunk]


class ResolverView(Protocol):
    """The resolver's knowledge base, its searches and rules, and the memos the
    explanations keep on it (they live as long as the resolver)."""

    kb: KnowledgeBase
    # per-dimension value lists, and whether a pin matches anything (mlcc.resolve.explain)
    domains: Dict[str, Tuple[str, ...]]
    # the values of a dimension that resolve given the other pins
    alternatives: Dict[Tuple[Request, str], Dict[str, Stack]]
    # a summary per chunk of rejections, keyed by the chunk's id
    chunk_summaries: Dict[int, Any]

    def try_resolve(self, request: Request) -> Optional[Stack]:
        """The preferred stack, or None when there is none."""

    def ordered_builds(self, benchmark: str, newest: bool = False) -> Tuple[FrameworkBuild, ...]:
        """The benchmark framework's builds in the order the resolver tries them."""

    def last_cuda_on(self, arch: str) -> Optional[str]:
        """The newest CUDA release NVIDIA publishes packages of for ``arch``."""

    def default_arch(self, bench: Benchmark) -> str:
        """The arch a request without ``--arch`` resolves for."""

    def framework_rule_failures(
        self, bench: Benchmark, build: FrameworkBuild, arch: str, accelerator: str
    ) -> List[Failure]:
        """Why the knowledge base's rules refuse ``build`` for ``bench`` (empty: they allow it)."""

    def base_failures(
        self, base: Base, release: Optional[CudaRelease], arch: str, req: Request
    ) -> List[Failure]:
        """Why the pins or the rules refuse ``base`` (empty: nothing does)."""

    def reference_version(self, bench: Benchmark, req: Request, component: str) -> Optional[str]:
        """The reference run's version of ``component``, when the default policy uses it."""

    def gcc_bounds(
        self,
        bench: Benchmark,
        build: Optional[FrameworkBuild],
        cuda: Optional[CudaRelease],
        arch: str,
    ) -> List[Tuple[str, str, str]]:
        """(specifier, who imposes it, origin) for every bound on the host compiler."""
