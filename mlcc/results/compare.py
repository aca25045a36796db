"""Stacks side by side: per benchmark, the stored runs of each stack scored as MLPerf scores
them, beside the published reference result its recipe records.

Runs of different MLPerf rounds (v0.6's DGX-1 beside v2.1's A100 and H100) are scored
apart, each by its round's rules, and every row names its round. Where a round's recipe
records a reference per GPU generation (v2.1: DGX A100 and DGX H100), a stack's runs on H100
stand beside NVIDIA's H100 result, on A100 beside its A100 one.

Only like is compared with like: one table holds one benchmark, a log name whose rounds'
rules name one model (recipes/rounds/: ``model``). v0.6's ssd (SSD) and v2.1's ssd (SSD
(RetinaNet)) share a log name but are two benchmarks, two tables; maskrcnn and retinanet are
never in one table, and no ratio is drawn between two benchmarks.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from mlcc.history import History
from mlcc.results.reference import (
    GpuReferences,
    PublishedResult,
    published_by_gpu,
    published_by_round,
    published_results,
)
from mlcc.results.rules import ScoringRules, scoring_rules
from mlcc.results.score import NO_START, SUCCESS, UNFINISHED, RunResult, olympic_mean
from mlcc.results.store import stored_runs


class StackScore(NamedTuple):
    stack: str
    variant: Optional[str]
    images: Tuple[str, ...]
    systems: Tuple[str, ...]
    gpus: Tuple[int, ...]
    nodes: Tuple[int, ...]
    results: Tuple[RunResult, ...]
    score_minutes: Optional[float]
    state: str  # complete, partial, no score
    notes: Tuple[str, ...]
    round: Optional[str] = None  # the MLPerf round whose rules scored the runs
    # the reference of the stack's own round and GPU (maskrcnn v2.1's on A100 or on H100
    # beside v0.6's on DGX-1)
    reference: Optional[PublishedResult] = None
    gpu: Optional[str] = None  # the GPU generation its runs name (recipes/gpus.yaml), if one

    @property
    def runs(self) -> int:
        return len(self.results)

    @property
    def times(self) -> List[float]:
        return sorted(r.minutes for r in self.results if r.status == SUCCESS and r.minutes is not None)

    @property
    def spread_percent(self) -> Optional[float]:
        """(slowest - fastest) / fastest of the runs that reached the target."""
        times = self.times
        if len(times) < 2 or times[0] <= 0:
            return None
        return (times[-1] - times[0]) / times[0] * 100.0


class BenchmarkComparison(NamedTuple):
    benchmark: str
    reference: Optional[PublishedResult]
    stacks: Tuple[StackScore, ...]  # fastest score first; no score last
    model: Optional[str] = None  # the model its rounds' rules name (recipes/rounds/), if they do
    # why runs of this log name stand in another table (another model under the same name)
    notes: Tuple[str, ...] = ()

    @property
    def title(self) -> str:
        """``ssd`` alone, ``ssd (SSD (RetinaNet))`` where the log name has two models."""
        return f"{self.benchmark} ({self.model})" if self.notes and self.model else self.benchmark

    def as_json(self) -> Dict[str, Any]:
        reference = self.reference
        return {
            "benchmark": self.benchmark,
            "model": self.model,
            "notes": list(self.notes),
            "recipe": reference.recipe if reference else None,
            "reference": (
                {"minutes": reference.minutes, "system": reference.system, "runs": reference.runs}
                if reference
                else None
            ),
            "stacks": [_stack_json(s, reference) for s in self.stacks],
        }


def _stack_json(stack: StackScore, reference: Optional[PublishedResult]) -> Dict[str, Any]:
    score = stack.score_minutes
    reference = stack.reference or reference
    ratio = vs_reference(stack, reference)
    return {
        "stack": stack.stack,
        "round": stack.round,
        "gpu": stack.gpu,
        "variant": stack.variant,
        "images": list(stack.images),
        "systems": list(stack.systems),
        "gpus": list(stack.gpus),
        "nodes": list(stack.nodes),
        "runs": stack.runs,
        "score_minutes": None if score is None else round(score, 4),
        "state": stack.state,
        "spread_percent": None if stack.spread_percent is None else round(stack.spread_percent, 2),
        "vs_reference": None if ratio is None else round(ratio, 4),
        "reference": (
            {
                "minutes": reference.minutes,
                "system": reference.system,
                "round": reference.round,
                "gpu": reference.gpu,
            }
            if reference
            else None
        ),
        "notes": list(stack.notes),
        "results": [
            {
                "file": r.file,
                "minutes": None if r.minutes is None else round(r.minutes, 4),
                "status": r.status,
            }
            for r in stack.results
        ],
    }


def vs_reference(stack: StackScore, fallback: Optional[PublishedResult] = None) -> Optional[float]:
    """The one ratio every view shows (text, JSON, the HTML page, the report): the stack's
    score over the reference of its own round and GPU (:func:`compare` sets it), else over
    ``fallback``; None without a score or a reference.

    Args:
        stack: One stack's scored runs.
        fallback: The benchmark's reference, for a stack scored without its own.

    Returns:
        score / reference minutes, or None.
    """
    reference = stack.reference or fallback
    if stack.score_minutes is None or reference is None or not reference.minutes > 0:
        return None
    return stack.score_minutes / reference.minutes


def ratio_text(stack: StackScore, fallback: Optional[PublishedResult] = None) -> str:
    """:func:`vs_reference` as the tables print it: ``0.51x``, or ``-``."""
    ratio = vs_reference(stack, fallback)
    return "-" if ratio is None else f"{ratio:.2f}x"


def reference_label(reference: PublishedResult) -> str:
    """Which reference a ratio is to: its round and GPU (``v2.1 H100``)."""
    gpu = f" {reference.gpu.upper()}" if reference.gpu else ""
    return f"{reference.round or '-'}{gpu}"


def _result(row: Mapping[str, Any]) -> RunResult:
    quality = json.loads(row["quality"]) if row.get("quality") else None
    return RunResult(
        file=str(row["log"]),
        position=0,
        run_id=str(row["run_id"]),
        status=str(row["status"]),
        minutes=row["minutes"],
        quality=quality,
        problems=(),
        benchmark=str(row["benchmark"]),
    )


def compare(
    rows: Sequence[Mapping[str, Any]],
    references: Mapping[str, PublishedResult],
    rules: Optional[ScoringRules] = None,
    by_round: Optional[Mapping[Tuple[str, Optional[str]], PublishedResult]] = None,
    by_gpu: Optional[GpuReferences] = None,
) -> List[BenchmarkComparison]:
    """Group stored runs (mlcc.results.store.stored_runs) by benchmark, then by stack, round
    and GPU (with ``by_gpu``: runs of one stack on an A100 and on an H100 are two results, not
    one mean); with ``rules``, each group is scored by its round's rules (runs required, runs
    dropped, failed runs allowed), else by v0.6's olympic rule. Each group stands beside the
    reference of its round on its GPU (``by_gpu``), else of its round, else ``references``'."""
    groups: Dict[Tuple[str, str], Dict[Tuple[str, str, str], List[Mapping[str, Any]]]] = {}
    for row in rows:
        gpu = (by_gpu.gpu_of([row]) if by_gpu else None) or ""
        round_name = str(row.get("round") or "")
        key = (str(row["stack"]), round_name, gpu)
        benchmark = str(row["benchmark"])
        model = (rules.model(round_name, benchmark) if rules is not None else None) or ""
        groups.setdefault((benchmark, model), {}).setdefault(key, []).append(row)
    found = []
    for benchmark, model in sorted(groups):
        reference = _like_reference(benchmark, model, references, by_round, rules)
        stacks = [
            _stack_score(
                stack,
                members,
                (by_gpu.reference(benchmark, round_name or None, members) if by_gpu else None)
                or (by_round or {}).get((benchmark, round_name or None), reference),
                _rule(rules, round_name, benchmark),
            )._replace(gpu=gpu or None)
            for (stack, round_name, gpu), members in groups[(benchmark, model)].items()
        ]
        stacks.sort(
            key=lambda s: (
                s.score_minutes is None,
                s.score_minutes or 0.0,
                s.stack,
                s.round or "",
                s.gpu or "",
            )
        )
        notes = _apart(benchmark, model, groups)
        found.append(BenchmarkComparison(benchmark, reference, tuple(stacks), model or None, notes))
    return found


def _apart(
    benchmark: str, model: str, groups: Mapping[Tuple[str, str], Mapping[Tuple[str, str, str], Any]]
) -> Tuple[str, ...]:
    """Why the runs of this log name that train another model stand in another table."""
    notes = []
    for (name, other), members in sorted(groups.items()):
        if name != benchmark or other == model:
            continue
        rounds = ", ".join(sorted({round_name or "no round" for _, round_name, _ in members}))
        notes.append(
            f"{benchmark} runs of {rounds} train {other or 'another model'}, not {model or 'this one'}:"
            " another benchmark under the same log name, compared in its own table"
        )
    return tuple(notes)


def _like_reference(
    benchmark: str,
    model: str,
    references: Mapping[str, PublishedResult],
    by_round: Optional[Mapping[Tuple[str, Optional[str]], PublishedResult]],
    rules: Optional[ScoringRules],
) -> Optional[PublishedResult]:
    """The benchmark's reference (its default round's) where that round's rules name the same
    model, else the reference of the first round that does; none of another benchmark."""

    def like(result: PublishedResult) -> bool:
        theirs = rules.model(result.round or "", benchmark) if rules is not None else None
        return not model or not theirs or theirs == model

    default = references.get(benchmark)
    if default is not None and like(default):
        return default
    return next(
        (r for (name, _), r in sorted((by_round or {}).items(), key=str) if name == benchmark and like(r)),
        None,
    )


def different_benchmarks(comparisons: Sequence[BenchmarkComparison]) -> Optional[str]:
    """What to say when the tables hold several benchmarks: each is compared only with
    itself (maskrcnn on V100 and retinanet on GB200 are two benchmarks, not two speeds).

    Args:
        comparisons: What :func:`compare_stored` found.

    Returns:
        The sentence, or None for one benchmark.
    """
    titles = list(dict.fromkeys(_with_model(c) for c in comparisons))
    if len(titles) < 2:
        return None
    return (
        f"{', '.join(titles[:-1])} and {titles[-1]} are different benchmarks: each table compares"
        " runs of one benchmark only, and no ratio is drawn between them"
    )


def _with_model(comparison: BenchmarkComparison) -> str:
    return f"{comparison.benchmark} ({comparison.model})" if comparison.model else comparison.benchmark


def compare_stored(
    kb: Any,
    history: History,
    *,
    benchmarks: Sequence[str] = (),
    stacks: Sequence[str] = (),
    systems: Sequence[str] = (),
    gpu: Optional[str] = None,
) -> List[BenchmarkComparison]:
    """The stored runs compared as every view shows them (``results compare``, its ``--json``
    and ``--html``, ``mlcc report``, ``mlcc advise``): each round scored by its rules, each
    stack beside the reference of its round and GPU.

    Args:
        kb: The knowledge base (the recipes' reference results).
        history: The history holding the runs.
        benchmarks: Log names (maskrcnn, resnet) or recipe names (resnet50); empty: all.
        stacks: Substrings of the stacks' names; empty: all.
        systems: Substrings of the systems' names; empty: all.
        gpu: Only the runs on this GPU generation (as :meth:`GpuReferences.gpu_of` tells
            it from the run's variant or system); None: all.

    Returns:
        One comparison per benchmark, fastest stack first.

    Raises:
        HistoryError: The database is locked or damaged.
    """
    references = published_results(kb)
    names = {ref.recipe: ref.log_name for ref in references.values()}
    wanted = [names.get(b, b) for b in benchmarks]
    rows = stored_runs(history, benchmarks=wanted, stacks=stacks, systems=systems)
    by_gpu = published_by_gpu(kb)
    if gpu is not None:
        rows = [row for row in rows if by_gpu.gpu_of([row]) == gpu]
    return compare(rows, references, scoring_rules(kb), published_by_round(kb), by_gpu)


class _Rule(NamedTuple):
    round: Optional[str]
    runs: Optional[int]
    dropped: int = 1
    max_failed: int = 1
    scaling_json: bool = False


def _rule(rules: Optional[ScoringRules], round_name: str, benchmark: str) -> _Rule:
    if rules is None or round_name not in rules.rounds:
        return _Rule(round_name or None, None)
    rule = rules.rule(round_name, benchmark)
    return _Rule(round_name, rule.runs, rule.dropped, rule.max_failed, rule.scaling_json)


def _stack_score(
    stack: str, members: Sequence[Mapping[str, Any]], reference: Optional[PublishedResult], rule: _Rule
) -> StackScore:
    results = tuple(_result(r) for r in members)
    value, why = olympic_mean(results, rule.dropped, rule.max_failed)
    notes = list(why)
    if rule.scaling_json:
        factor, scaling_notes = _scaling(members)
        notes += scaling_notes
        if value is not None and factor is not None:
            value *= factor
    unfinished = sum(1 for r in results if r.status in (UNFINISHED, NO_START))
    partial = unfinished > 0
    if unfinished:
        notes.append(f"{unfinished} run(s) unfinished")
    required = rule.runs if rule.runs is not None else (reference.runs if reference else None)
    if required and len(results) < required:
        notes.append(f"{len(results)} of the {required} runs MLPerf requires")
        partial = True
    return StackScore(
        stack=stack,
        variant=next((str(r["variant"]) for r in members if r.get("variant")), None),
        images=_distinct(r.get("image") for r in members),
        systems=_distinct(r.get("system") for r in members),
        gpus=tuple(sorted({int(r["gpus"]) for r in members if r.get("gpus") is not None})),
        nodes=tuple(sorted({int(r["nodes"]) for r in members if r.get("nodes") is not None})),
        results=results,
        score_minutes=value,
        state="no score" if value is None else ("partial" if partial else "complete"),
        notes=tuple(notes),
        round=rule.round,
        reference=reference,
    )


def _scaling(members: Sequence[Mapping[str, Any]]) -> Tuple[Optional[float], List[str]]:
    """The scaling.json factor stored with the runs, applied as ``results score`` applies it
    to their logs: one factor for all, else none."""
    factors = {r.get("scaling_factor") for r in members}
    found = {f for f in factors if isinstance(f, (int, float)) and f > 0}
    if not found:
        return None, []
    if len(found) > 1 or len(factors) > 1:
        return None, ["the runs' scaling.json factors differ: not applied"]
    factor = float(found.pop())
    return factor, [f"scaled by {factor:.6g} (scaling.json: the RCP normalization of the review)"]


def _distinct(values: Any) -> Tuple[str, ...]:
    return tuple(sorted({str(v) for v in values if v}))
