"""Results scoring performance: a folder of MLPerf v0.6 logs in one process.

    python perf/bench_results.py [--runs N] [--logs DIR] [--check]

Target (issue 14): scoring the 60 NVIDIA and Google v0.6 result logs the tests use, in full
(about 34 MB: the folders of mlcommons/training_results_v0.6 that tests/data/README.md
lists, given as --logs), in one process runs at the speed of reading the files, well under
a second. Without --logs it scores the test copies in tests/data/mlperf-v0.6 (1.2 MB).
Printed beside the scoring: reading the same files (page cache warm) with nothing else, so the ratio says how
close the parser comes to plain I/O on this machine at this moment.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, List

REPO = Path(__file__).resolve().parents[1]
TEST_LOGS = REPO / "tests" / "data" / "mlperf-v0.6"
TARGET_S = 1.0


def _median(func: Callable[[], None], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--logs", default=str(TEST_LOGS))
    parser.add_argument("--check", action="store_true", help="exit 1 when the target is missed")
    options = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    from mlcc.results.parse import parse_file
    from mlcc.results.score import log_files, score

    files, _ = log_files([Path(options.logs)])
    size = sum(p.stat().st_size for p in files)

    def read() -> None:
        for path in files:
            with open(path, "rb") as stream:
                while stream.read(1 << 20):
                    pass

    def scored() -> None:
        score([parse_file(p) for p in files])

    read()  # warm the page cache: both figures are about CPU, not the disk
    read_s = _median(read, options.runs)
    score_s = _median(scored, options.runs)
    mb = size / 1e6
    print(f"{len(files)} logs, {mb:.1f} MB")
    print(f"read only          median {read_s * 1000:7.1f} ms  {mb / read_s:8.0f} MB/s")
    print(
        f"parse and score    median {score_s * 1000:7.1f} ms  {mb / score_s:8.0f} MB/s"
        f"  (target < {TARGET_S:.0f} s)"
    )
    print(f"scoring / reading  {score_s / read_s:.1f}x")
    return 1 if options.check and score_s >= TARGET_S else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
