"""Matrix performance: `mlcc matrix --explain` over the published matrix, and parallel
matrix builds (-j 2 against -j 1) on small real builds.

    .venv/bin/python perf/bench_matrix.py [--runs 11] [--builds] [--cache DIR]

Targets (issue 6): --explain over the full published matrix under 1 s (a cold process,
as users run it); -j 2 against -j 1: report the speed-up. ``--builds`` needs root and the
tools tests/run installs (it runs in the end-to-end world of tests/e2e).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TARGET_EXPLAIN_S = 1.0
MATRIX = """\
kind: matrix
schema_version: 1
axes:
  benchmark: [e2e-probe, e2e-probe2]
  base: [ubi8]
  arch: [x86_64]
  cuda: [default, "12.4"]
"""


def bench_explain(runs: int) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    command = [sys.executable, "-m", "mlcc", "matrix", "--explain"]
    subprocess.run(command, check=True, capture_output=True, env=env, cwd=REPO)  # warm the recipe cache
    samples: List[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env=env, cwd=REPO)
        samples.append(time.perf_counter() - start)
    median = statistics.median(samples)
    target = f"target < {TARGET_EXPLAIN_S:.0f} s"
    print(
        f"mlcc matrix --explain (cold process)   median {median:.3f} s, best {min(samples):.3f} s  ({target})"
    )
    return median


def bench_parallel(cache: str) -> None:
    from tests.e2e.test_matrix import executed_and_distinct
    from tests.e2e.world import mlcc, open_world

    if cache:
        os.environ["MLCC_E2E_CACHE"] = cache
    with (
        tempfile.TemporaryDirectory(prefix="mlcc-bench-matrix-") as scratch,
        open_world(Path(scratch), ["x86_64"]) as world,
    ):
        matrix = Path(scratch) / "matrix.yaml"
        matrix.write_text(MATRIX)
        timings = {}
        for jobs, alias in (("1", "a1"), ("2", "a2")):  # a fresh mirror URL each: new content, cold
            args = [
                "build",
                "--matrix",
                "--matrix-file",
                str(matrix),
                "--base-image",
                world.stage.base_image,
                "--mirror",
                f"{world.stage.mirror}/{alias}",
                "--push",
                "--registry",
                f"{world.registry.host}/m{jobs}",
                "--no-tls-verify",
                "--backend",
                "buildah",
                "--logs",
                f"{scratch}/logs{jobs}",
                "--no-history",
                "-j",
                jobs,
            ]
            start = time.perf_counter()
            result = mlcc(world, *args)
            timings[jobs] = time.perf_counter() - start
            if result.code != 0:
                raise SystemExit(result.err[-3000:])
        print(f"4 cells, -j 1                          {timings['1']:.1f} s")
        speedup = timings["1"] / timings["2"]
        print(f"4 cells, -j 2                          {timings['2']:.1f} s  -> speed-up {speedup:.2f}x")
        for jobs in ("1", "2"):  # every distinct RUN step once: executed / distinct = 1.00
            executed, distinct = executed_and_distinct(sorted(Path(f"{scratch}/logs{jobs}").rglob("*.log")))
            print(f"4 cells, -j {jobs}: RUN steps executed / distinct   {executed} / {distinct}")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument(
        "--builds", action="store_true", help="also time -j 1 against -j 2 on real builds (root)"
    )
    parser.add_argument("--cache", default="", help="keep the Debian rootfs tarballs here between runs")
    args = parser.parse_args()
    explain = bench_explain(args.runs)
    if args.builds:
        bench_parallel(args.cache)
    return 0 if explain < TARGET_EXPLAIN_S else 1


if __name__ == "__main__":
    sys.exit(main())
