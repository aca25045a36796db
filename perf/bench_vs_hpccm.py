"""mlcc against HPC Container Maker, side by side: cold processes in alternating runs.

    python perf/bench_vs_hpccm.py --hpccm PATH [--runs 15]

The machine is shared and noisy, so absolute times drift by tens of percent within a
minute. Each round runs mlcc once and HPCCM once, back to back (A B A B ...), and the
figure is the median of the per-round ratios mlcc / HPCCM: drift that hits both runs of
a round cancels. Targets (issue 9): both ratios <= 1.0.

- ``mlcc gen maskrcnn --cuda 10.1`` writing all its files (Dockerfile, stack.json,
  mlcc-record, OpenShift objects) into a scratch folder;
- ``mlcc resolve maskrcnn --cuda 10.1 --json``;
- HPCCM: ``hpccm --recipe perf/hpccm_small_recipe.py`` (a CUDA base image plus the gnu
  and python building blocks, to a Dockerfile on stdout).

Both run with their per-user caches as a second run finds them (mlcc: the validated
knowledge base, built once before timing).

``--instructions`` adds each command's instruction count under valgrind's callgrind: the
same count whatever else the machine is doing, so it compares trees and levers where wall
times drift (it counts work, not waiting: reading files, page faults and the dynamic
loader's disk time are not in it).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[1]
RECIPE = REPO / "perf" / "hpccm_small_recipe.py"


def _mlcc() -> List[str]:
    script = Path(sys.executable).with_name("mlcc")
    return [str(script)] if script.exists() else [sys.executable, "-m", "mlcc"]


def _once(argv: List[str], env: Dict[str, str], cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd, check=True)
    return (time.perf_counter() - start) * 1000


def alternate(
    mlcc: List[str], hpccm: List[str], runs: int, env: Dict[str, str], cwd: str
) -> Tuple[float, float, float]:
    """Median mlcc ms, median HPCCM ms, median of the per-round ratios."""
    ours, theirs, ratios = [], [], []
    for _ in range(runs):
        shutil.rmtree(os.path.join(cwd, "dockerfiles"), ignore_errors=True)
        shutil.rmtree(os.path.join(cwd, "buildconfigs"), ignore_errors=True)
        a = _once(mlcc, env, cwd)
        b = _once(hpccm, env, cwd)
        ours.append(a)
        theirs.append(b)
        ratios.append(a / b)
    return statistics.median(ours), statistics.median(theirs), statistics.median(ratios)


def instructions(argv: List[str], env: Dict[str, str], cwd: str) -> Optional[int]:
    """Instructions ``argv`` executes under callgrind, or None without valgrind."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return None
    run = subprocess.run(
        [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=True,
    )
    found = re.search(r"Collected : ([0-9]+)", run.stderr)
    return int(found.group(1)) if found else None


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hpccm", required=True, help="path of an hpccm executable (pip install hpccm)")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--check", action="store_true", help="exit 1 when a ratio is above 1.0")
    parser.add_argument("--instructions", action="store_true", help="also count instructions (valgrind)")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "mlcc")], check=True, env=env)
    hpccm = [args.hpccm, "--recipe", str(RECIPE)]
    missed = False
    with tempfile.TemporaryDirectory() as scratch:
        env["MLCC_CACHE_DIR"] = os.path.join(scratch, "cache")
        commands = {
            "mlcc gen maskrcnn --cuda 10.1": [*_mlcc(), "gen", "maskrcnn", "--cuda", "10.1"],
            "mlcc resolve maskrcnn --cuda 10.1 --json": [
                *_mlcc(),
                "resolve",
                "maskrcnn",
                "--cuda",
                "10.1",
                "--json",
            ],
        }
        for argv in commands.values():  # warm the cache (knowledge base)
            _once(argv, env, scratch)
        _once(hpccm, env, scratch)
        print(f"cpus: {os.cpu_count()}  python: {sys.version.split()[0]}  rounds: {args.runs} (A B A B ...)")
        for name, argv in commands.items():
            ours, theirs, ratio = alternate(argv, hpccm, args.runs, env, scratch)
            missed = missed or ratio > 1.0
            print(f"{name:42s} median {ours:6.1f} ms | hpccm {theirs:6.1f} ms | median ratio {ratio:.2f}x")
        if args.instructions:
            counted = {
                name: instructions(argv, env, scratch) for name, argv in [*commands.items(), ("hpccm", hpccm)]
            }
            if None in counted.values():
                print("instructions: valgrind not found")
            else:
                base = counted["hpccm"] or 1
                for name, count in counted.items():
                    print(f"{name:42s} {count / 1e6:7.1f} M instructions  {count / base:.2f}x hpccm")
    return 1 if (args.check and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
