"""The published reference results recorded in recipes/ (NVIDIA's MLPerf v0.6 times)."""

from __future__ import annotations

from typing import Any, Dict, NamedTuple, Optional, Tuple

from mlcc.kb.model import DEFAULT_ROUND


class PublishedResult(NamedTuple):
    recipe: str  # the benchmark's recipe name (resnet50)
    log_name: str  # its name in MLPerf logs (resnet)
    minutes: float
    system: str
    runs: Optional[int]
    round: Optional[str] = None  # the recipe's MLPerf round (v0.6, v2.1)


def published_results(kb: Any) -> Dict[str, PublishedResult]:
    """Log benchmark name -> the reference result its recipe records; where a name has one in
    several rounds, the default round's (v0.6), as a name without --round means."""
    found: Dict[str, PublishedResult] = {}
    for (log_name, _round), result in sorted(published_by_round(kb).items(), key=_default_round_last):
        found[log_name] = result
    return found


def published_by_round(kb: Any) -> Dict[Tuple[str, Optional[str]], PublishedResult]:
    """(log benchmark name, round) -> the reference result that round's recipe records."""
    found: Dict[Tuple[str, Optional[str]], PublishedResult] = {}
    for name, benchmark in sorted(kb.benchmarks.items()):
        build = benchmark.build
        reference = build.reference if build is not None else None
        if reference is None:
            continue
        log_name = reference.log_name or benchmark.base_name
        found[(log_name, benchmark.round)] = PublishedResult(
            name, log_name, reference.minutes, reference.system, reference.runs, benchmark.round
        )
    return found


def _default_round_last(item: Tuple[Tuple[str, Optional[str]], PublishedResult]) -> Tuple[bool, str]:
    round_ = item[0][1]
    return (round_ in (None, DEFAULT_ROUND), round_ or "")
