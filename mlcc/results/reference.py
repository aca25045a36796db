"""The published reference results recorded in recipes/ (NVIDIA's MLPerf v0.6 times)."""

from __future__ import annotations

from typing import Any, Dict, NamedTuple, Optional


class PublishedResult(NamedTuple):
    recipe: str  # the benchmark's recipe name (resnet50)
    log_name: str  # its name in MLPerf logs (resnet)
    minutes: float
    system: str
    runs: Optional[int]


def published_results(kb: Any) -> Dict[str, PublishedResult]:
    """Log benchmark name -> the reference result its recipe records."""
    found: Dict[str, PublishedResult] = {}
    for name, benchmark in sorted(kb.benchmarks.items()):
        build = benchmark.build
        reference = build.reference if build is not None else None
        if reference is None:
            continue
        log_name = reference.log_name or name
        found[log_name] = PublishedResult(name, log_name, reference.minutes, reference.system, reference.runs)
    return found
