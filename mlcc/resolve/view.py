"""What the explainers read of a resolver, and the tracker a search records rejections in.

The conflict explanation (:mod:`mlcc.resolve.explain`, :mod:`mlcc.resolve.causes`), the
reasons of a stack's choices (:mod:`mlcc.resolve.reasons`) and the GPU rule's summary
(:mod:`mlcc.resolve.gpu`) depend on :class:`ResolverView` (its searches, and the rules and
candidates it searches with), not on the resolver's class:
:class:`mlcc.resolve.engine.Resolver` is one (mypy checks it where it hands itself over),
and the explainers import nothing of the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Protocol, Sequence, Tuple

from mlcc.kb.model import Benchmark, KnowledgeBase
from mlcc.resolve.request import Request
from mlcc.resolve.stack import Stack
from mlcc.resolve.stages import Failure, Rejection, rejection

if TYPE_CHECKING:  # both import this module (the Tracker); the explainers only read them
    from mlcc.resolve.candidates import Candidates
    from mlcc.resolve.rules import Rules


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
    # the rules the search filters with, whose reasons the explanations quote
    rules: Rules
    # the candidates of each stage in the order the search tries them
    candidates: Candidates

    def try_resolve(self, request: Request) -> Optional[Stack]:
        """The preferred stack, or None when there is none."""

    def default_arch(self, bench: Benchmark, gpu: Optional[str] = None) -> str:
        """The arch a request without ``--arch`` (and with ``--gpu gpu``) resolves for."""
