"""Stacks side by side: per benchmark, the stored runs of each stack scored as MLPerf scores
them, beside the published reference result its recipe records."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from mlcc.results.reference import PublishedResult
from mlcc.results.score import NO_START, SUCCESS, UNFINISHED, RunResult, olympic_mean


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

    def as_json(self) -> Dict[str, Any]:
        reference = self.reference
        return {
            "benchmark": self.benchmark,
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
    return {
        "stack": stack.stack,
        "variant": stack.variant,
        "images": list(stack.images),
        "systems": list(stack.systems),
        "gpus": list(stack.gpus),
        "nodes": list(stack.nodes),
        "runs": stack.runs,
        "score_minutes": None if score is None else round(score, 4),
        "state": stack.state,
        "spread_percent": None if stack.spread_percent is None else round(stack.spread_percent, 2),
        "vs_reference": round(score / reference.minutes, 4) if score is not None and reference else None,
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
    rows: Sequence[Mapping[str, Any]], references: Mapping[str, PublishedResult]
) -> List[BenchmarkComparison]:
    """Group stored runs (mlcc.results.store.stored_runs) by benchmark, then by stack."""
    groups: Dict[str, Dict[str, List[Mapping[str, Any]]]] = {}
    for row in rows:
        groups.setdefault(str(row["benchmark"]), {}).setdefault(str(row["stack"]), []).append(row)
    found = []
    for benchmark in sorted(groups):
        reference = references.get(benchmark)
        stacks = [_stack_score(stack, members, reference) for stack, members in groups[benchmark].items()]
        stacks.sort(key=lambda s: (s.score_minutes is None, s.score_minutes or 0.0, s.stack))
        found.append(BenchmarkComparison(benchmark, reference, tuple(stacks)))
    return found


def _stack_score(
    stack: str, members: Sequence[Mapping[str, Any]], reference: Optional[PublishedResult]
) -> StackScore:
    results = tuple(_result(r) for r in members)
    value, why = olympic_mean(results)
    notes = list(why)
    unfinished = sum(1 for r in results if r.status in (UNFINISHED, NO_START))
    partial = unfinished > 0
    if unfinished:
        notes.append(f"{unfinished} run(s) unfinished")
    if reference and reference.runs and len(results) < reference.runs:
        notes.append(f"{len(results)} of the {reference.runs} runs MLPerf requires")
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
    )


def _distinct(values: Any) -> Tuple[str, ...]:
    return tuple(sorted({str(v) for v in values if v}))
