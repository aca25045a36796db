"""``mlcc advise BENCHMARK --gpu GPU``: which known stack is fastest for this benchmark on
this GPU, and on what evidence.

The answer is made only of what is known: the runs stored in the history (scored and
compared as ``mlcc results compare`` scores them, :func:`mlcc.results.compare.compare_stored`)
whose stack ran on the GPU, and the reference results the rounds' recipes record for that
GPU (NVIDIA's published times, each citing its recipe). Each known stack is ranked by its
score with its evidence (runs, spread, where it came from); beside them, the stack mlcc
would build for the benchmark on that GPU in each round. Nothing is estimated: a GPU
without runs, a round without a reference on the GPU, a stack whose runs name no GPU are
listed as unknown, never given a number.
"""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from mlcc.app.history import open_history
from mlcc.app.kb import resolve
from mlcc.errors import ConflictError, UsageError
from mlcc.kb.model import Benchmark, KnowledgeBase
from mlcc.resolve.explain import StackConflict, summarize
from mlcc.resolve.pins import Pins
from mlcc.results.compare import StackScore, compare_stored
from mlcc.results.reference import PublishedResult, published_by_gpu
from mlcc.results.store import stored_runs

RUNS = "stored runs"
REFERENCE = "reference result"


class StackEvidence(NamedTuple):
    """What a known stack's score rests on."""

    kind: str  # RUNS (the history's rows) or REFERENCE (a recipe's published result)
    runs: Optional[int]  # runs behind the score; None: the source does not say
    spread_percent: Optional[float]  # (slowest - fastest) / fastest; None: unknown
    source: str  # the history file, or the recipe and the published system it cites
    systems: Tuple[str, ...] = ()


class KnownStack(NamedTuple):
    """One stack known to have run the benchmark on the GPU."""

    stack: str  # the stored stack's label, or the system of a reference result
    round: Optional[str]
    score_minutes: Optional[float]  # None: runs stored, but they make no score
    state: str  # complete, partial, no score (stored runs); published (a reference)
    evidence: StackEvidence
    notes: Tuple[str, ...] = ()

    def as_json(self) -> Dict[str, Any]:
        evidence = self.evidence
        spread = evidence.spread_percent
        return {
            "stack": self.stack,
            "round": self.round,
            "score_minutes": None if self.score_minutes is None else round(self.score_minutes, 4),
            "state": self.state,
            "evidence": {
                "kind": evidence.kind,
                "runs": evidence.runs,
                "spread_percent": None if spread is None else round(spread, 2),
                "source": evidence.source,
                "systems": list(evidence.systems),
            },
            "notes": list(self.notes),
        }


class Build(NamedTuple):
    """The stack mlcc would build for the benchmark on the GPU, in one round."""

    benchmark: str  # the recipe's id (maskrcnn-v2.1)
    round: Optional[str]
    variant: Optional[str]  # None: no stack resolves for this GPU
    summary: str  # the stack in one line, or why none resolves

    def as_json(self) -> Dict[str, Any]:
        return {
            "benchmark": self.benchmark,
            "round": self.round,
            "variant": self.variant,
            "summary": self.summary,
        }


class Advice(NamedTuple):
    benchmark: str
    gpu: str
    history: str
    known: List[KnownStack]  # fastest score first; stacks whose runs make no score last
    builds: List[Build]
    unknown: List[str]  # what is not known, one sentence each

    def as_json(self) -> Dict[str, Any]:
        return {
            "benchmark": self.benchmark,
            "gpu": self.gpu,
            "history": self.history,
            "known": [k.as_json() for k in self.known],
            "builds": [b.as_json() for b in self.builds],
            "unknown": list(self.unknown),
        }


def advise(
    kb: KnowledgeBase,
    benchmark: str,
    gpu: str,
    *,
    round_name: Optional[str] = None,
    history_file: Optional[str] = None,
) -> Advice:
    """The stacks known for ``benchmark`` on ``gpu``, ranked by score, with their evidence.

    Args:
        kb: The knowledge base (the recipes' rounds and reference results).
        benchmark: A recipe name (maskrcnn, resnet50), id (maskrcnn-v2.1) or the name its
            MLPerf logs give it (resnet).
        gpu: A GPU generation of recipes/gpus.yaml (a100, h100).
        round_name: Only this MLPerf round's recipe; default: every round of the benchmark.
        history_file: ``--history FILE``, or None for the default database.

    Returns:
        The known stacks (stored runs on the GPU and the rounds' references on it), the
        stack mlcc would build per round, and what is unknown.

    Raises:
        UsageError: The benchmark, GPU or round is unknown.
        HistoryError: The database is locked or damaged.
    """
    recipes = _recipes(kb, benchmark, round_name)
    if gpu not in kb.gpus:
        raise UsageError(f"--gpu {gpu}: no such GPU generation", hint=f"GPUs: {', '.join(sorted(kb.gpus))}")
    history = open_history(history_file)
    by_gpu = published_by_gpu(kb)
    log_names = sorted({_log_name(r) for r in recipes})
    rounds = {r.round for r in recipes}
    comparisons = compare_stored(kb, history, benchmarks=log_names, gpu=gpu)
    on_gpu = [s for c in comparisons for s in c.stacks if s.round in rounds or not any(rounds)]
    known = [_from_runs(s, str(history.path)) for s in on_gpu]
    unknown: List[str] = []
    if not on_gpu:
        unknown.append(
            f"no runs of {benchmark} on {gpu} are stored in {history.path}: its time there is unknown"
        )
    unnamed = [row for row in stored_runs(history, benchmarks=log_names) if by_gpu.gpu_of([row]) is None]
    if unnamed:
        unknown.append(
            f"{len(unnamed)} stored run(s) of {benchmark} name no GPU (no -smNN variant, no GPU in the"
            " system's name): not counted for any GPU"
        )
    for recipe in recipes:
        reference = by_gpu.results.get((_log_name(recipe), recipe.round, gpu))
        if reference is not None:
            known.append(_from_reference(recipe, reference))
        else:
            unknown.append(f"{recipe.name}: its recipe records no reference result on {gpu}")
    known.sort(key=lambda k: (k.score_minutes is None, k.score_minutes or 0.0, k.stack, k.round or ""))
    builds = [_build(kb, recipe, gpu) for recipe in recipes]
    return Advice(benchmark, gpu, str(history.path), known, builds, unknown)


def _recipes(kb: KnowledgeBase, benchmark: str, round_name: Optional[str]) -> List[Benchmark]:
    """The recipes of ``benchmark`` (every round's, or ``round_name``'s), oldest round first.

    Raises:
        UsageError: No recipe has that name, or none of that round.
    """
    named = [b for b in kb.benchmarks.values() if benchmark in (b.name, b.base_name, _log_name(b))]
    if not named:
        raise UsageError(f"unknown benchmark '{benchmark}'", hint="mlcc list benchmarks names them")
    if round_name is not None:
        named = [b for b in named if b.round == round_name]
        if not named:
            rounds = ", ".join(
                sorted(str(b.round) for b in kb.benchmarks.values() if b.base_name == benchmark)
            )
            raise UsageError(
                f"--round {round_name}: {benchmark} has no recipe of that round", hint=f"rounds: {rounds}"
            )
    return sorted(named, key=lambda b: (b.round or "", b.name))


def _log_name(recipe: Benchmark) -> str:
    build = recipe.build
    reference = build.reference if build is not None else None
    return (reference.log_name if reference is not None else None) or recipe.base_name


def _from_runs(stack: StackScore, history: str) -> KnownStack:
    return KnownStack(
        stack=stack.stack,
        round=stack.round,
        score_minutes=stack.score_minutes,
        state=stack.state,
        evidence=StackEvidence(RUNS, stack.runs, stack.spread_percent, history, stack.systems),
        notes=stack.notes,
    )


def _from_reference(recipe: Benchmark, reference: PublishedResult) -> KnownStack:
    return KnownStack(
        stack=reference.system,
        round=recipe.round,
        score_minutes=reference.minutes,
        state="published",
        evidence=StackEvidence(
            REFERENCE,
            reference.runs,
            None,
            f"{recipe.origin_of('build').rsplit(':', 1)[0]} (reference of {recipe.name})",
            (reference.system,),
        ),
    )


def _build(kb: KnowledgeBase, recipe: Benchmark, gpu: str) -> Build:
    try:
        stack = resolve(kb, recipe.name, Pins(gpu=gpu))
    except ConflictError as conflict:
        failures: Sequence[Any] = conflict.failures if isinstance(conflict, StackConflict) else ()
        why = failures[0].message if failures else str(conflict).splitlines()[0]
        return Build(recipe.name, recipe.round, None, f"none resolves: {why}")
    return Build(recipe.name, recipe.round, stack.variant, summarize(stack))
