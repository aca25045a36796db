"""The published reference results recorded in recipes/ (NVIDIA's MLPerf v0.6 times, v2.1's
on DGX A100 and, where the recipe records it, DGX H100)."""

from __future__ import annotations

import re
from typing import Any, Dict, Mapping, NamedTuple, Optional, Sequence, Tuple


class PublishedResult(NamedTuple):
    recipe: str  # the benchmark's recipe name (resnet50)
    log_name: str  # its name in MLPerf logs (resnet)
    minutes: float
    system: str
    runs: Optional[int]
    round: Optional[str] = None  # the recipe's MLPerf round (recipes/rounds/)
    gpu: Optional[str] = None  # the GPU generation it ran on (recipes/gpus.yaml), if the recipe says


class GpuReferences(NamedTuple):
    """The references by GPU generation (recipes: build.reference and build.gpu_references
    that name a GPU), and how stored runs tell their GPU: the variant's tag of a stack
    resolved with --gpu (``...-x86_64-sm90``), or the GPU's name as a word of the system
    (MLLOG's submission_platform, ``1xNVIDIA DGX H100``)."""

    results: Mapping[Tuple[str, Optional[str], str], PublishedResult]  # (log name, round, GPU)
    tags: Mapping[str, str]  # GPU name -> its variant tag (h100 -> sm90)

    def gpu_of(self, rows: Sequence[Mapping[str, Any]]) -> Optional[str]:
        """The one GPU the rows ran on, or None when they name none or several.

        A system's name names its GPU; a variant's tag (``sm90``) names an architecture,
        which several GPUs may share (H100 and H200): it settles the GPU only when one
        GPU has it, else the system must."""
        found = set()
        for row in rows:
            variant = str(row.get("variant") or "")
            system = str(row.get("system") or "")
            named = {name for name in self.tags if re.search(rf"\b{re.escape(name)}\b", system, re.I)}
            by_tag = {name for name, tag in self.tags.items() if variant.endswith(f"-{tag}")}
            found |= (named & by_tag or named) if named else by_tag
        return found.pop() if len(found) == 1 else None

    def reference(
        self, log_name: str, round_: Optional[str], rows: Sequence[Mapping[str, Any]]
    ) -> Optional[PublishedResult]:
        gpu = self.gpu_of(rows)
        return self.results.get((log_name, round_, gpu)) if gpu else None


def published_results(kb: Any) -> Dict[str, PublishedResult]:
    """Log benchmark name -> the reference result its recipe records; where a name has one in
    several rounds, the default round's, as a name without --round means."""
    found: Dict[str, PublishedResult] = {}
    default = kb.default_round

    def default_round_last(item: Tuple[Tuple[str, Optional[str]], PublishedResult]) -> Tuple[bool, str]:
        round_ = item[0][1]
        return (round_ in (None, default), round_ or "")

    for (log_name, _round), result in sorted(published_by_round(kb).items(), key=default_round_last):
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
            name,
            log_name,
            reference.minutes,
            reference.system,
            reference.runs,
            benchmark.round,
            reference.gpu,
        )
    return found


def published_by_gpu(kb: Any) -> GpuReferences:
    """(log benchmark name, round, GPU) -> the reference on that GPU each recipe records."""
    found: Dict[Tuple[str, Optional[str], str], PublishedResult] = {}
    for name, benchmark in sorted(kb.benchmarks.items()):
        build = benchmark.build
        if build is None:
            continue
        runs = ((build.reference,) if build.reference is not None else ()) + build.gpu_references
        for run in runs:
            if run.gpu is None:
                continue
            log_name = (build.reference.log_name if build.reference else None) or benchmark.base_name
            found[(log_name, benchmark.round, run.gpu)] = PublishedResult(
                name, log_name, run.minutes, run.system, run.runs, benchmark.round, run.gpu
            )
    tags = {name: gpu.sm.replace("_", "") for name, gpu in kb.gpus.items()}
    return GpuReferences(found, tags)
