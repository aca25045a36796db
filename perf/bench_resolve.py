"""Resolver performance: the cold CLI process and the full cross product.

    python perf/bench_resolve.py [--runs N] [--check]

Target (issue 2): resolving every benchmark x base x CUDA release x arch with each
conflict explained (failed rules and alternatives), in-process, under 1 s. The cold
``mlcc resolve maskrcnn --cuda 10.1 --json`` process is printed for reading; its guard
is perf/bench_vs_hpccm.py's (perf/README.md).

The machines are noisy (a pure-Python loop varies by +-20 % between runs), so each
figure is a median, and the interpreter's own start-up is printed beside it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, List

REPO = Path(__file__).resolve().parents[1]
TARGET_MATRIX_S = 1.0


def _mlcc_command() -> List[str]:
    script = Path(sys.executable).with_name("mlcc")
    return [str(script)] if script.exists() else [sys.executable, "-m", "mlcc"]


def _process_ms(argv: List[str], runs: int, env: dict) -> float:  # type: ignore[type-arg]
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def bench_cli(runs: int, hpccm: str) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    # A real install has bytecode; compile once so the figure is not about compiling.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "mlcc")], check=True, env=env)
    argv = [*_mlcc_command(), "resolve", "maskrcnn", "--cuda", "10.1", "--json"]
    subprocess.run(argv, stdout=subprocess.DEVNULL, check=True, env=env)  # warm the recipe cache
    python = _process_ms([sys.executable, "-c", "pass"], runs, env)
    click = _process_ms([sys.executable, "-c", "import click"], runs, env)
    cli = _process_ms(argv, runs, env)
    print(f"python -c pass               median {python:6.1f} ms")
    print(f"python -c 'import click'     median {click:6.1f} ms")
    print(f"mlcc resolve maskrcnn --cuda 10.1 --json   median {cli:6.1f} ms")
    if hpccm:
        # HPCCM's whole run for a small recipe, the start-up guard's reference
        recipe = REPO / "perf" / "hpccm_small_recipe.py"
        reference = _process_ms([hpccm, "--recipe", str(recipe)], runs, env)
        print(
            f"hpccm --recipe small         median {reference:6.1f} ms  -> mlcc/hpccm = {cli / reference:.2f}"
        )
    return cli


def bench_matrix(runs: int) -> float:
    sys.path.insert(0, str(REPO))
    from mlcc.kb import load
    from mlcc.resolve import Resolver, build_request
    from mlcc.resolve.explain import StackConflict

    kb = load()

    def once() -> Callable[[], None]:
        resolver = Resolver(kb)
        resolved = explained = 0
        for benchmark in kb.benchmarks:
            for base in kb.bases:
                for arch in kb.arches:
                    for cuda in [None, *(r.version for r in kb.cuda)]:
                        request = build_request(
                            kb, benchmark, base=base.name, arch=arch, cuda=cuda, cpu=cuda is None
                        )
                        try:
                            resolver.resolve(request)
                            resolved += 1
                        except StackConflict as conflict:
                            assert conflict.failures or conflict.note
                            explained += 1
        once.cells = (resolved, explained)  # type: ignore[attr-defined]
        return lambda: None

    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        once()
        samples.append(time.perf_counter() - start)
    resolved, explained = once.cells  # type: ignore[attr-defined]
    median = statistics.median(samples)
    print(
        f"cross product: {resolved + explained} cells, {resolved} resolved, {explained} conflicts explained"
        f"   median {median:.3f} s  (best {min(samples):.3f} s; target < {TARGET_MATRIX_S:.0f} s)"
    )
    return median


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument(
        "--hpccm",
        default=os.environ.get("HPCCM", ""),
        help="path of an hpccm executable to time alongside (the issue's reference)",
    )
    args = parser.parse_args()
    if shutil.which("nproc"):
        print(f"cpus: {os.cpu_count()}  python: {sys.version.split()[0]}")
    bench_cli(args.runs, args.hpccm)
    matrix = bench_matrix(max(3, args.runs // 4))
    missed = matrix >= TARGET_MATRIX_S
    return 1 if (args.check and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
