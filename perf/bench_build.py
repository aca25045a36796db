"""Build performance on real builds: skip-if-built, and layer reuse across benchmarks.

    sudo .venv/bin/python perf/bench_build.py [--cache DIR]

Runs in the end-to-end world of the test suite (tests/e2e/world.py: a local registry, a
signed fixture mirror, an offline RPM-family base, buildah), so it needs root and the
tools tests/run installs. ``--cache DIR`` keeps the Debian rootfs between runs.

Targets (issue 5):
- rebuilding an unchanged set costs registry look-ups only: <= 5 % of the cold build;
- two benchmarks sharing a stack prefix: how many layers the second build reuses, and the
  time saved against building it with no cache.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Tuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.e2e.world import World, mlcc, open_world  # noqa: E402

TARGET_RATIO = 0.05


def _build(world: World, benchmark: str, alias: str, *extra: str) -> Tuple[float, str, str]:
    args = [
        "build",
        benchmark,
        "--base",
        "ubi8",
        "--base-image",
        world.stage.base_image,
        "--mirror",
        f"{world.stage.mirror}/{alias}",
        "--push",
        "--registry",
        f"{world.registry.host}/bench",
        "--no-tls-verify",
        "--backend",
        "buildah",
        *extra,
    ]
    start = time.perf_counter()
    result = mlcc(world, *args)
    seconds = time.perf_counter() - start
    if result.code != 0:
        raise SystemExit(f"mlcc {' '.join(args)} failed:\n{result.err[-3000:]}")
    return seconds, result.out, result.err


def bench_skip(world: World) -> float:
    aliases = ["a3", "a4", "a5"]  # three variants with their own content (their own mirror URL)
    cold = [_build(world, "e2e-probe", a, "--no-cache")[0] for a in aliases]
    warm_runs: List[float] = []
    for alias in aliases:
        seconds, out, _ = _build(world, "e2e-probe", alias)
        assert "skipped" in out, out
        warm_runs.append(seconds)
    ratio = sum(warm_runs) / sum(cold)
    each_cold = ", ".join(f"{c:.1f}" for c in cold)
    each_warm = ", ".join(f"{w:.2f}" for w in warm_runs)
    print(f"cold build of 3 variants (no cache)      {sum(cold):7.1f} s  ({each_cold})")
    print(f"rebuild of the unchanged set (skipped)   {sum(warm_runs):7.1f} s  ({each_warm})")
    print(f"  ratio {ratio:.1%}  (target <= {TARGET_RATIO:.0%}; each includes a cold mlcc process)")
    return ratio


def bench_shared_prefix(world: World) -> None:
    # a6 is a mirror URL no other build used: the first build starts from an empty cache
    # (buildah keeps no layers for reuse from a --no-cache build, so none is passed here)
    first, _, _ = _build(world, "e2e-probe", "a6")
    cached, _, log = _build(world, "e2e-probe2", "a6")
    reused = log.count("Using cache")
    steps = log.count("STEP ") - 1  # FROM is not a layer
    uncached, _, _ = _build(world, "e2e-probe2", "a6", "--no-cache", "--force")
    print(f"e2e-probe, cold                          {first:7.1f} s")
    print(f"e2e-probe2 on the same stack, with cache {cached:7.1f} s  ({reused} of {steps} steps from cache)")
    print(f"e2e-probe2 with no cache                 {uncached:7.1f} s  -> saved {uncached - cached:.1f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cache", help="keep the Debian rootfs tarballs here between runs")
    args = parser.parse_args()
    if args.cache:
        os.environ["MLCC_E2E_CACHE"] = args.cache
    with (
        tempfile.TemporaryDirectory(prefix="mlcc-bench-build-") as scratch,
        open_world(Path(scratch), ["x86_64"]) as world,
    ):
        ratio = bench_skip(world)
        bench_shared_prefix(world)
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
