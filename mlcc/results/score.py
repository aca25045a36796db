"""Time to train per run and the MLPerf score per benchmark.

The rules (MLPerf Training rules, "Benchmark results"; the v0.6 result logs of
mlcommons/training_results_v0.6 reproduce the published times with them):

- time to train is run_stop minus run_start; v0.6 MiniGo evaluates its models after
  training and logs ``eval_result`` with the time (from run start) of the first model
  that beat the target, 0 when none did (NVIDIA's ``ml_perf/eval_models.py`` in
  mlcommons/training_results_v0.6);
- the score is the mean after dropping the fastest and the slowest run;
- a run that did not reach the target counts as infinitely slow, so it is the run
  dropped; with two or more such runs there is no score;
- an unfinished run (no run_stop: killed, or a cut-off log) is treated like a failed one
  and marks the result partial, as does having fewer runs than the benchmark requires.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from mlcc.results.parse import LogFile, Run

SUCCESS = "success"
FAILED = "failed"  # ran to the end, missed the target (run_stop status other than success)
UNFINISHED = "unfinished"  # no run_stop: killed or cut off
NO_START = "no run_start"
# No training run lasts a year: a longer "time to train" comes from broken or forged stamps.
MAX_RUN_MINUTES = 366 * 24 * 60
DUPLICATE = "duplicate"
MIN_RUNS = 3  # dropping the fastest and the slowest needs a third to average


class RunResult(NamedTuple):
    file: str
    position: int
    run_id: str
    status: str
    minutes: Optional[float]  # time to train; for failed runs the time until they stopped
    quality: Any
    problems: Tuple[str, ...]
    benchmark: Optional[str] = None


class BenchmarkScore(NamedTuple):
    benchmark: str
    submitter: str
    platform: str
    system: Dict[str, str]
    results: Tuple[RunResult, ...]
    score_minutes: Optional[float]
    state: str  # "complete", "partial" or "no score"
    notes: Tuple[str, ...]
    required_runs: Optional[int]

    @property
    def runs(self) -> int:
        return sum(1 for r in self.results if r.status != DUPLICATE)

    def as_json(self) -> Dict[str, Any]:
        return {
            "benchmark": self.benchmark,
            "submitter": self.submitter,
            "platform": self.platform,
            "system": self.system,
            "runs": self.runs,
            "required_runs": self.required_runs,
            "score_minutes": _round(self.score_minutes),
            "state": self.state,
            "notes": list(self.notes),
            "results": [
                {
                    "file": r.file,
                    "run": r.position,
                    "run_id": r.run_id,
                    "minutes": _round(r.minutes),
                    "status": r.status,
                    "quality": r.quality,
                    "problems": list(r.problems),
                }
                for r in self.results
            ],
        }


def _round(value: Optional[float]) -> Optional[float]:
    return None if value is None else round(value, 4)


def run_result(run: Run) -> RunResult:
    status, minutes = _status(run)
    return RunResult(
        file=run.file,
        position=run.position,
        run_id=run.run_id,
        status=status,
        minutes=minutes,
        quality=run.quality,
        problems=run.problems,
        benchmark=run.benchmark,
    )


def _status(run: Run) -> Tuple[str, Optional[float]]:
    if run.start is None:
        return NO_START, None
    if run.result_seconds is not None:
        if 0 < run.result_seconds / 60.0 <= MAX_RUN_MINUTES:
            return SUCCESS, run.result_seconds / 60.0
        return FAILED, None
    if run.stop is None:
        return UNFINISHED, None
    minutes = (run.stop - run.start) / 60.0
    if not 0 <= minutes <= MAX_RUN_MINUTES:  # NaN fails the comparison too
        return FAILED, None
    return (SUCCESS if run.stop_status == SUCCESS else FAILED), minutes


def olympic_mean(results: Sequence[RunResult]) -> Tuple[Optional[float], List[str]]:
    """The MLPerf score of these runs, and why there is none when there is none."""
    counted = [r for r in results if r.status != DUPLICATE]
    missed = [r for r in counted if r.status != SUCCESS]
    if len(counted) < MIN_RUNS:
        return None, [f"{len(counted)} run(s): a score needs at least {MIN_RUNS}"]
    if len(missed) > 1:
        return None, [f"{len(missed)} runs did not reach the target: at most one may (it is the one dropped)"]
    times = sorted(r.minutes if r.status == SUCCESS and r.minutes is not None else math.inf for r in counted)
    kept = times[1:-1]
    return sum(kept) / len(kept), []


def score(
    logs: Iterable[LogFile], required: Optional[Mapping[str, int]] = None
) -> Tuple[List[BenchmarkScore], List[str]]:
    """Group the runs by (benchmark, submitter, platform) and score each group.

    ``required`` maps a log's benchmark name to the runs the rules ask for. Returns the
    scores (sorted) and notes about files that hold no run.
    """
    groups: Dict[Tuple[str, str, str], List[Tuple[Run, RunResult]]] = {}
    notes: List[str] = []
    seen: Dict[str, str] = {}
    for log in logs:
        if not log.runs:
            notes.append(f"{log.path}: no MLPerf result lines (:::MLL or :::MLPv0.5.0); skipped")
            continue
        for run in log.runs:
            result = run_result(run)
            if run.run_id in seen:
                result = result._replace(
                    status=DUPLICATE, problems=(f"the same run as {seen[run.run_id]}", *result.problems)
                )
            else:
                seen[run.run_id] = _where(run)
            key = (
                run.benchmark or "unknown",
                run.system.get("submitter", "-"),
                run.system.get("platform", "-"),
            )
            groups.setdefault(key, []).append((run, result))
    scores = [_group_score(key, members, required or {}) for key, members in sorted(groups.items())]
    return scores, notes


def _where(run: Run) -> str:
    return run.file if run.position == 0 else f"{run.file} (run {run.position + 1})"


def _group_score(
    key: Tuple[str, str, str], members: List[Tuple[Run, RunResult]], required: Mapping[str, int]
) -> BenchmarkScore:
    benchmark, submitter, platform = key
    results = tuple(sorted((r for _, r in members), key=lambda r: (_natural(r.file), r.position)))
    value, why = olympic_mean(results)
    notes = list(why)
    counted = [r for r in results if r.status != DUPLICATE]
    need = required.get(benchmark)
    partial = False
    if need is not None and len(counted) < need:
        notes.append(f"{len(counted)} of the {need} runs MLPerf requires for {benchmark}")
        partial = True
    unfinished = [r for r in counted if r.status in (UNFINISHED, NO_START)]
    if unfinished:
        notes.append(f"{len(unfinished)} run(s) unfinished (no run_stop or no run_start)")
        partial = True
    if any(r.problems for r in results):
        partial = True
    duplicates = len(results) - len(counted)
    if duplicates:
        notes.append(f"{duplicates} duplicate run(s) counted once")
    state = "no score" if value is None else ("partial" if partial else "complete")
    system = {}
    for run, _ in members:
        system.update(run.system)
    return BenchmarkScore(
        benchmark=benchmark,
        submitter=submitter,
        platform=platform,
        system=dict(sorted(system.items())),
        results=results,
        score_minutes=value,
        state=state,
        notes=tuple(notes),
        required_runs=need,
    )


def _natural(path: str) -> Tuple[Any, ...]:
    """result_2 before result_10."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", path))


def log_files(paths: Sequence[Path]) -> Tuple[List[Path], List[str]]:
    """The files to read: each file given, and every file under each folder (sorted)."""
    found: List[Path] = []
    missing: List[str] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted((p for p in path.rglob("*") if p.is_file()), key=lambda p: _natural(str(p))))
        elif path.is_file():
            found.append(path)
        else:
            missing.append(str(path))
    return list(dict.fromkeys(found)), missing
