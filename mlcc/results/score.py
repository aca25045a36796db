"""Time to train per run and the MLPerf score per benchmark.

The rules (MLPerf Training rules, "Benchmark results"; the v0.6 result logs of
mlcommons/training_results_v0.6 and the v2.1 ones of training_results_v2.1 reproduce the
published times with them). How many runs a benchmark needs, how many of the fastest and
slowest are dropped and how many may miss the target differ by round and benchmark: they
are data, :mod:`mlcc.results.rules`; the defaults below are v0.6's.

- time to train is run_stop minus run_start; v0.6 MiniGo evaluates its models after
  training and logs ``eval_result`` with the time (from run start) of the first model
  that beat the target, 0 when none did (NVIDIA's ``ml_perf/eval_models.py`` in
  mlcommons/training_results_v0.6);
- the score is the mean after dropping the fastest and the slowest run (v2.1 unet3d: the
  four fastest and four slowest);
- a run that did not reach the target counts as infinitely slow, so it is a run
  dropped; with more such runs than the round allows (one; unet3d four) there is no score;
- from v2.0, the result folder's ``scaling.json`` (the RCP normalization the review
  committee recorded) multiplies the score, as mlcommons' result_summarizer applies it;
- an unfinished run (no run_stop: killed, or a cut-off log) is treated like a failed one
  and marks the result partial, as does having fewer runs than the benchmark requires.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from mlcc.errors import UsageError
from mlcc.results.parse import LogFile, Run
from mlcc.results.rules import BenchmarkRule, ScoringRules

SUCCESS = "success"
FAILED = "failed"  # ran to the end, missed the target (run_stop status other than success)
UNFINISHED = "unfinished"  # no run_stop: killed or cut off
NO_START = "no run_start"
# No training run lasts a year: a longer "time to train" comes from broken or forged stamps.
MAX_RUN_MINUTES = 366 * 24 * 60
# Nor does one end within a second of its start (the fastest MLPerf Training v2.1 results
# take about 12 s on thousands of GPUs): a shorter time is a stamp, not a run.
MIN_RUN_SECONDS = 1.0
DUPLICATE = "duplicate"
MIN_RUNS = 3  # dropping the fastest and the slowest needs a third to average
SCALING_FILE = "scaling.json"
MAX_SCALING = 2.0  # RCP normalization slows a score by a few percent; more is no such factor


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
    round: Optional[str] = None  # the MLPerf round whose rules scored it (recipes/rounds/)
    rules: Optional[str] = None  # the rules document, cited
    scaling_factor: Optional[float] = None  # from the folder's scaling.json, applied

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
            "round": self.round,
            "rules": self.rules,
            "scaling_factor": self.scaling_factor,
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
                    "quality": _finite(r.quality),
                    "problems": list(r.problems),
                }
                for r in self.results
            ],
        }


def _finite(value: Any) -> Any:
    """A log's value for JSON: NaN and infinities (which a log's JSON may hold) are null,
    so the output is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


def _round(value: Optional[float]) -> Optional[float]:
    return None if value is None else round(value, 4)


def run_result(run: Run) -> RunResult:
    status, minutes = _status(run)
    problem = _impossible_time(run)
    if problem is not None:
        status, minutes = (FAILED, None)
    return RunResult(
        file=run.file,
        position=run.position,
        run_id=run.run_id,
        status=status,
        minutes=minutes,
        quality=run.quality,
        problems=run.problems + ((problem,) if problem is not None else ()),
        benchmark=run.benchmark,
    )


def _status(run: Run) -> Tuple[str, Optional[float]]:
    if run.start is None:
        return NO_START, None
    if run.result_seconds is not None:
        return SUCCESS, run.result_seconds / 60.0
    if run.stop is None:
        return UNFINISHED, None
    minutes = (run.stop - run.start) / 60.0
    return (SUCCESS if run.stop_status == SUCCESS else FAILED), minutes


def _impossible_time(run: Run) -> Optional[str]:
    """Why the run's time is no training run's (a problem of the run), or None."""
    if run.start is None:
        return None
    if run.result_seconds is not None:
        seconds = run.result_seconds
        what = "eval_result's time"
    elif run.stop is not None:
        seconds = run.stop - run.start
        what = "run_stop - run_start"
    else:
        return None
    if seconds < 0:
        return f"{what} is negative ({seconds:.3f} s): an impossible duration, the run is not counted"
    if seconds < MIN_RUN_SECONDS:
        return f"{what} is {seconds:.3f} s, under {MIN_RUN_SECONDS:g} s: an impossible duration, not counted"
    if not seconds / 60.0 <= MAX_RUN_MINUTES:  # NaN fails the comparison too
        years = seconds / (365.25 * 24 * 3600)
        return f"{what} is {years:.0f} years: an impossible duration, the run is not counted"
    return None


def olympic_mean(
    results: Sequence[RunResult], dropped: int = 1, max_failed: int = 1
) -> Tuple[Optional[float], List[str]]:
    """The MLPerf score of these runs, and why there is none when there is none.

    ``dropped`` runs are dropped at each end; up to ``max_failed`` runs may have missed the
    target, each counted as infinitely slow (so among the slowest dropped).
    """
    counted = [r for r in results if r.status != DUPLICATE]
    missed = [r for r in counted if r.status != SUCCESS]
    least = 2 * dropped + 1
    if len(counted) < least:
        return None, [f"{len(counted)} run(s): a score needs at least {least}"]
    if len(missed) > max_failed:
        allowed = "one may (it is the one dropped)" if max_failed == 1 else f"{max_failed} may"
        return None, [f"{len(missed)} runs did not reach the target: at most {allowed}"]
    times = sorted(r.minutes if r.status == SUCCESS and r.minutes is not None else math.inf for r in counted)
    kept = times[dropped : len(times) - dropped]
    return sum(kept) / len(kept), []


def score(
    logs: Iterable[LogFile],
    required: Optional[Mapping[str, int]] = None,
    *,
    rules: Optional[ScoringRules] = None,
    round_name: Optional[str] = None,
) -> Tuple[List[BenchmarkScore], List[str]]:
    """Group the runs by (round, benchmark, submitter, platform) and score each group.

    With ``rules``, each run is scored by the rules of its round (``round_name``, or the
    round its log's format, benchmark or folder imply) and ``required`` is not used;
    without, ``required`` maps a log's benchmark name to the runs the rules ask for and
    v0.6's olympic rule applies.
    Returns the scores (sorted) and notes about files that hold no run.

    Raises:
        UsageError: The round cannot be told (see :meth:`ScoringRules.round_of`), or a
            scaling.json is not a scaling factor.
    """
    groups: Dict[Tuple[str, str, str, str], List[Tuple[Run, RunResult]]] = {}
    notes: List[str] = []
    seen: Dict[str, str] = {}
    for log in logs:
        if not log.runs:
            if Path(log.path).name == SCALING_FILE:
                continue  # the RCP normalization beside the logs, read when they are scored
            notes.append(f"{log.path}: no MLPerf result lines (:::MLLOG, :::MLL or :::MLPv0.5.0); skipped")
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
                rules.round_of(run.log_format, round_name, benchmark=run.benchmark, path=run.file)
                if rules is not None
                else "",
                run.benchmark or "unknown",
                run.system.get("submitter", "-"),
                run.system.get("platform", "-"),
            )
            groups.setdefault(key, []).append((run, result))
    scores = []
    for key, members in sorted(groups.items(), key=lambda item: item[0][1:] + item[0][:1]):
        rule = rules.rule(key[0], key[1]) if rules is not None else None
        scores.append(_group_score(key[1:], members, required or {}, rule))
    return scores, notes


def _where(run: Run) -> str:
    return run.file if run.position == 0 else f"{run.file} (run {run.position + 1})"


def _group_score(
    key: Tuple[str, str, str],
    members: List[Tuple[Run, RunResult]],
    required: Mapping[str, int],
    rule: Optional[BenchmarkRule] = None,
) -> BenchmarkScore:
    benchmark, submitter, platform = key
    results = tuple(sorted((r for _, r in members), key=lambda r: (_natural(r.file), r.position)))
    if rule is not None:
        value, why = olympic_mean(results, rule.dropped, rule.max_failed)
        need = rule.runs
    else:
        value, why = olympic_mean(results)
        need = required.get(benchmark)
    notes = list(why)
    factor = None
    if rule is not None and rule.scaling_json:
        factor, scaling_notes = _scaling_factor(results)
        notes += scaling_notes
        if value is not None and factor is not None:
            value *= factor
    counted = [r for r in results if r.status != DUPLICATE]
    partial = False
    if need is not None and len(counted) < need:
        notes.append(f"{len(counted)} of the {need} runs MLPerf requires for {benchmark}")
        partial = True
    unfinished = [r for r in counted if r.status in (UNFINISHED, NO_START)]
    if unfinished:
        notes.append(f"{len(unfinished)} run(s) unfinished (no run_stop or no run_start)")
        partial = True
    troubled = [r for r in results if r.problems]
    if troubled:
        impossible = sum(1 for r in troubled if any("impossible duration" in p for p in r.problems))
        if impossible:
            notes.append(f"{impossible} run(s) with an impossible duration, not counted")
        if len(troubled) > impossible:
            notes.append(f"{len(troubled) - impossible} run(s) with problems in their logs (see each run)")
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
        round=rule.round if rule is not None else None,
        rules=rule.source if rule is not None else None,
        scaling_factor=factor,
    )


def _scaling_factor(results: Sequence[RunResult]) -> Tuple[Optional[float], List[str]]:
    """The factor of the scaling.json beside the runs' logs, as mlcommons' summarizer reads
    it (one per result folder); none when there is none or the folders disagree."""
    folders = sorted({str(Path(r.file).parent) for r in results})
    factors = {folder: read_scaling(Path(folder) / SCALING_FILE) for folder in folders}
    found = {f for f in factors.values() if f is not None}
    if not found:
        return None, []
    if len(found) > 1 or None in factors.values():
        return None, [f"{SCALING_FILE} differs between the runs' folders: not applied"]
    factor = found.pop()
    return factor, [f"scaled by {factor:.6g} ({SCALING_FILE}: the RCP normalization of the review)"]


def read_scaling(path: Path) -> Optional[float]:
    """{"scaling_factor": F} from a scaling.json; None when there is no such file.

    Args:
        path: The scaling.json beside a result folder's logs.

    Returns:
        F, or None without the file.

    Raises:
        UsageError: The file is not JSON, or F is not a finite number in (0, MAX_SCALING].
    """
    if not path.is_file():
        return None
    try:
        text = path.read_bytes()[:4096].decode("utf-8")
        value = json.loads(text, parse_constant=lambda name: name).get("scaling_factor")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError, RecursionError) as error:
        raise UsageError(f"{path}: not a scaling file ({error})", hint='{"scaling_factor": 1.0043}') from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_SCALING:
        raise UsageError(
            f"{path}: scaling_factor {value!r:.40} is not a number in (0, {MAX_SCALING}]",
            hint='{"scaling_factor": 1.0043}',
        )
    return float(value)


def _natural(path: str) -> Tuple[Any, ...]:
    """result_2 before result_10."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", path))


def log_files(paths: Sequence[Path]) -> Tuple[List[Path], List[str]]:
    """The files to read: each file given, and every file under each folder (sorted); and
    each path that is neither, with why (``X: no such file or folder``, ``X: not a regular
    file`` for a FIFO, a device or a socket, which reading would block on or misread)."""
    found: List[Path] = []
    unusable: List[str] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted((p for p in path.rglob("*") if p.is_file()), key=lambda p: _natural(str(p))))
        elif path.is_file():
            found.append(path)
        elif path.exists():
            unusable.append(f"{path}: not a regular file (a FIFO, device or socket)")
        else:
            unusable.append(f"{path}: no such file or folder")
    return list(dict.fromkeys(found)), unusable
