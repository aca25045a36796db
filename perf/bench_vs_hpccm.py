"""mlcc's start-up against HPC Container Maker, side by side: cold processes in alternating runs.

    python perf/bench_vs_hpccm.py --hpccm PATH [--runs 15] [--tree DIR ...] [--instructions]

The machine is shared and noisy, so absolute times drift by tens of percent within a
minute. Each round runs every mlcc tree once and HPCCM once, back to back (A B A B ...),
and the figure is the median of the per-round ratios mlcc / HPCCM: drift that hits every
run of a round cancels. ``--tree`` (repeatable; default: this checkout) runs the mlcc of
another checkout in the same rounds, which is how a before/after pair is measured.

- ``mlcc gen maskrcnn --cuda 10.1`` writing all its files (Dockerfile, stack.json,
  mlcc-record, OpenShift objects) into a scratch folder;
- ``mlcc resolve maskrcnn --cuda 10.1 --json``;
- HPCCM: ``hpccm --recipe perf/hpccm_small_recipe.py`` (a CUDA base image plus the gnu
  and python building blocks, to a Dockerfile on stdout).

Both run with their per-user caches as a second run finds them (mlcc: the validated
knowledge base, built once before timing). The guard (perf/README.md): gen above
``GEN_GUARD`` or resolve above ``RESOLVE_GUARD`` times HPCCM is worth a look; ``--check``
exits 1 then.

``--instructions`` adds each command's instruction count under valgrind's callgrind: the
same count whatever else the machine is doing (it counts work, not waiting for files).
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
from typing import Dict, List, Optional, Sequence

REPO = Path(__file__).resolve().parents[1]
RECIPE = REPO / "perf" / "hpccm_small_recipe.py"
GEN_GUARD = 2.5
RESOLVE_GUARD = 1.6
ARGS = {
    "gen": ["gen", "maskrcnn", "--cuda", "10.1"],
    "resolve": ["resolve", "maskrcnn", "--cuda", "10.1", "--json"],
}
GUARDS = {"gen": GEN_GUARD, "resolve": RESOLVE_GUARD}


def _mlcc() -> List[str]:
    script = Path(sys.executable).with_name("mlcc")
    return [str(script)] if script.exists() else [sys.executable, "-m", "mlcc"]


def _once(argv: Sequence[str], env: Dict[str, str], cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd, check=True)
    return (time.perf_counter() - start) * 1000


def _tree_env(base: Dict[str, str], tree: Path, scratch: str) -> Dict[str, str]:
    """The environment that runs ``tree``'s mlcc, with a knowledge-base cache of its own."""
    env = dict(base, PYTHONPATH=str(tree))
    env["MLCC_CACHE_DIR"] = os.path.join(scratch, "cache-" + str(abs(hash(str(tree)))))
    return env


def _clean(cwd: str) -> None:
    for folder in ("dockerfiles", "buildconfigs"):
        shutil.rmtree(os.path.join(cwd, folder), ignore_errors=True)


def rounds(
    command: str,
    trees: Sequence[Path],
    hpccm: List[str],
    runs: int,
    envs: Dict[Path, Dict[str, str]],
    cwd: str,
) -> Dict[str, List[float]]:
    """Per tree and for HPCCM: the wall times (ms) of each round; per tree the ratios."""
    found: Dict[str, List[float]] = {"hpccm": []}
    for tree in trees:
        found[f"{tree} ms"], found[f"{tree} ratio"] = [], []
    for _ in range(runs):
        ours = {}
        for tree in trees:
            _clean(cwd)
            ours[tree] = _once([*_mlcc(), *ARGS[command]], envs[tree], cwd)
        theirs = _once(hpccm, envs[trees[0]], cwd)
        found["hpccm"].append(theirs)
        for tree in trees:
            found[f"{tree} ms"].append(ours[tree])
            found[f"{tree} ratio"].append(ours[tree] / theirs)
    return found


def instructions(argv: Sequence[str], env: Dict[str, str], cwd: str) -> Optional[int]:
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
    parser.add_argument("--tree", action="append", type=Path, help="an mlcc checkout (repeatable)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a ratio is past its guard")
    parser.add_argument("--instructions", action="store_true", help="also count instructions (valgrind)")
    args = parser.parse_args()
    trees = [t.resolve() for t in (args.tree or [REPO])]
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for tree in trees:  # an installed mlcc has bytecode: the figure is not about compiling
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "mlcc")], check=True, env=base)
    hpccm = [args.hpccm, "--recipe", str(RECIPE)]
    past_guard = False
    with tempfile.TemporaryDirectory() as scratch:
        envs = {tree: _tree_env(base, tree, scratch) for tree in trees}
        for tree in trees:  # warm each tree's knowledge-base cache
            for argv in ARGS.values():
                _once([*_mlcc(), *argv], envs[tree], scratch)
        _once(hpccm, envs[trees[0]], scratch)
        print(f"cpus: {os.cpu_count()}  python: {sys.version.split()[0]}  rounds: {args.runs} (A B A B ...)")
        for command in ARGS:
            found = rounds(command, trees, hpccm, args.runs, envs, scratch)
            hpccm_ms = statistics.median(found["hpccm"])
            print(f"mlcc {' '.join(ARGS[command])}   (hpccm median {hpccm_ms:6.1f} ms)")
            for tree in trees:
                ratio = statistics.median(found[f"{tree} ratio"])
                past_guard = past_guard or ratio > GUARDS[command]
                print(
                    f"  {tree!s:40s} median {statistics.median(found[f'{tree} ms']):6.1f} ms"
                    f"  median ratio {ratio:.2f}x hpccm  (guard {GUARDS[command]}x)"
                )
        if args.instructions:
            base_count = instructions(hpccm, envs[trees[0]], scratch)
            if base_count is None:
                print("instructions: valgrind not found")
                return 1 if (args.check and past_guard) else 0
            print(f"hpccm {base_count / 1e6:7.1f} M instructions")
            for command, argv in ARGS.items():
                for tree in trees:
                    count = instructions([*_mlcc(), *argv], envs[tree], scratch) or 0
                    ratio = count / base_count
                    print(f"  {command:8s} {tree!s:40s} {count / 1e6:7.1f} M  {ratio:.2f}x hpccm")
    return 1 if (args.check and past_guard) else 0


if __name__ == "__main__":
    sys.exit(main())
