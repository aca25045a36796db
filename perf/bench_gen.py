"""Generator performance: the cold `mlcc gen` process and the in-process rendering rate.

    python perf/bench_gen.py [--runs N]

"Cold" means a new interpreter each time, with the per-user cache (validated knowledge
base) as a second run finds it; the first-ever run is printed too.

The rendering rate is measured on stacks resolved beforehand (the knowledge base loaded,
the published set resolved: neither is timed). A pass renders every published stack once,
from the plan to the digest, as ``mlcc gen --all`` does. Neither figure is a target; the
start-up guard is perf/bench_vs_hpccm.py's (perf/README.md).
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
from typing import Any, Dict, List, Tuple

REPO = Path(__file__).resolve().parents[1]


def _mlcc_command() -> List[str]:
    script = Path(sys.executable).with_name("mlcc")
    return [str(script)] if script.exists() else [sys.executable, "-m", "mlcc"]


def _process_ms(argv: List[str], runs: int, env: Dict[str, str], cwd: str = ".") -> Tuple[float, float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True, cwd=cwd
        )
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples), min(samples)


def bench_cli(runs: int) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    # A real install has bytecode; compile once so the figure is not about compiling.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "mlcc")], check=True, env=env)
    with tempfile.TemporaryDirectory() as scratch:
        env["MLCC_CACHE_DIR"] = os.path.join(scratch, "cache")
        # the command as users type it: dockerfiles/ and buildconfigs/ in the working folder
        argv = [*_mlcc_command(), "gen", "maskrcnn", "--cuda", "10.1"]
        only = [*argv, "--only", "dockerfile"]
        first, _ = _process_ms(argv, 1, env, scratch)
        python, _ = _process_ms([sys.executable, "-c", "pass"], runs, env)
        click, _ = _process_ms([sys.executable, "-c", "import click"], runs, env)
        median, best = _process_ms(argv, runs, env, scratch)
        only_median, _ = _process_ms(only, runs, env, scratch)
    print(f"python -c pass                      median {python:6.1f} ms")
    print(f"python -c 'import click'            median {click:6.1f} ms")
    print(f"mlcc gen maskrcnn --cuda 10.1, first run (empty caches)  {first:6.1f} ms")
    print(f"mlcc gen maskrcnn --cuda 10.1       median {median:6.1f} ms  (best {best:.1f} ms)")
    print(f"  the same with --only dockerfile   median {only_median:6.1f} ms")
    return median


def _published_stacks() -> List[Any]:
    sys.path.insert(0, str(REPO))
    from mlcc.app.published_set import published
    from mlcc.kb import load

    kb = load()
    return [o.stack for o in published(kb) if o.published and o.stack]


def _pass_rate(stacks: List[Any]) -> float:
    from mlcc.render import render

    start = time.perf_counter()
    for stack in stacks:
        render(stack)
    return len(stacks) / (time.perf_counter() - start)


def bench_render(passes: int) -> None:
    stacks = _published_stacks()
    rates = [_pass_rate(stacks) for _ in range(passes)]
    print(
        f"render the published set ({len(stacks)} variants)  median {statistics.median(rates):7,.0f}/s"
        f"  (first pass {rates[0]:,.0f}/s, best {max(rates):,.0f}/s)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    print(f"cpus: {os.cpu_count()}  python: {sys.version.split()[0]}")
    bench_cli(args.runs)
    bench_render(max(5, args.runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
