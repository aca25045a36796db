"""A local matrix build over real images: parallel builds, keep going past a failure,
one log per cell, the history, and the HTML report checked in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import List, Tuple

import pytest

from tests.e2e.conftest import World, mlcc

# e2e-probe and e2e-probe2 on the default CUDA and on 12.4 (the mirror serves both), plus
# a cell on CUDA 12.5: it resolves, but the mirror has no 12.5 packages, so it fails.
MATRIX = """\
kind: matrix
schema_version: 1
axes:
  benchmark: [e2e-probe, e2e-probe2]
  base: [ubi8]
  arch: [x86_64]
  cuda: [default, "12.4"]
include:
  - {benchmark: e2e-probe, base: ubi8, arch: x86_64, cuda: "12.5"}
"""
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


def _build(world: World, matrix: Path, work: Path, *extra: str) -> List[str]:
    return [
        "build",
        "--matrix",
        "--matrix-file",
        str(matrix),
        "--base-image",
        world.stage.base_image,
        "--mirror",
        f"{world.stage.mirror}/a8",
        "--push",
        "--registry",
        f"{world.registry.host}/matrix",
        "--no-tls-verify",
        "--backend",
        "buildah",
        "--logs",
        str(work / "logs"),
        "--history",
        str(work / "history.sqlite"),
        *extra,
    ]


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("the report test needs Debian's chromium: tests/run installs it")
    return found


STEP = re.compile(r"STEP \d+/\d+: (.*)")


def run_steps(log: str) -> List[Tuple[Tuple[str, ...], bool]]:
    """Each RUN step of a buildah log: the instructions up to it (what the layer cache keys
    on, the build args aside) and whether it ran (False: "Using cache")."""
    steps: List[Tuple[Tuple[str, ...], bool]] = []
    prefix: List[str] = []
    for line in log.splitlines():
        found = STEP.search(line)
        if found:
            prefix.append(found.group(1))
            if found.group(1).startswith("RUN "):
                steps.append((tuple(prefix), True))
        elif "--> Using cache" in line and steps and steps[-1][0] == tuple(prefix):
            steps[-1] = (steps[-1][0], False)
    return steps


def executed_and_distinct(logs: List[Path]) -> Tuple[int, int]:
    steps = [step for log in logs for step in run_steps(log.read_text())]
    return sum(ran for _, ran in steps), len({prefix for prefix, _ in steps})


def test_matrix_build_history_and_report(world: World, tmp_path: Path) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(MATRIX)
    listed = mlcc(world, "matrix", "--matrix-file", str(matrix), "--format", "json")
    assert listed.code == 0, listed.err
    assert len(json.loads(listed.out)) == 5

    first = mlcc(world, *_build(world, matrix, tmp_path, "-j", "2"))
    assert first.code == 4, first.err[-3000:]  # one cell failed, the others went on
    assert "4 built, 0 skipped, 1 failed" in first.out
    assert "1 of 5 cells failed" in first.err and "cuda12.5" in first.err
    assert first.err.count("✔ built") == 4 and "✘ failed" in first.err  # progress, one line per cell
    logs = sorted((tmp_path / "logs").rglob("*.log"))
    assert len(logs) == 5
    failed_log = next(p for p in logs if "cuda12.5" in p.name)
    assert "No match for argument" in failed_log.read_text()
    # every distinct build step ran once, cold and with -j 2 (perf/README.md records the figures)
    executed, distinct = executed_and_distinct(logs)
    print(f"cold -j 2: {executed} RUN steps executed, {distinct} distinct")
    assert distinct > 0 and executed == distinct

    history = json.loads(mlcc(world, "history", "--history", str(tmp_path / "history.sqlite"), "--json").out)
    assert sorted(r["status"] for r in history) == ["built", "built", "built", "built", "failed"]
    built = [r for r in history if r["status"] == "built"]
    assert all(r["image_digest"].startswith("sha256:") and r["size"] > 0 for r in built)
    assert all(Path(r["log_path"]).is_file() for r in history)

    second = mlcc(world, *_build(world, matrix, tmp_path, "-j", "2"))
    assert second.code == 4
    assert "0 built, 4 skipped, 1 failed" in second.out
    # unchanged: nothing runs again but the step that failed (its cached steps stay cached)
    again = [step for step in run_steps(failed_log.read_text()) if step[1]]
    assert len(again) == 1 and "dnf" in again[0][0][-1]
    assert executed_and_distinct([p for p in logs if p != failed_log])[0] == 0

    page = tmp_path / "report" / "index.html"
    report = mlcc(
        world,
        "report",
        "--html",
        str(page),
        "--matrix-file",
        str(matrix),
        "--history",
        str(tmp_path / "history.sqlite"),
    )
    assert report.code == 0, report.err
    chromium = _chromium()
    profile = tmp_path / "chromium-profile"
    dom = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert html.count('data-status="skipped"') == 4  # the latest outcome of each built cell
    assert html.count('data-status="failed"') == 1
    assert 'id="matrix"' in html and "e2e-probe2" in html
    shot = tmp_path / "report.png"
    taken = subprocess.run(
        [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            "--window-size=1400,900",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert taken.returncode == 0, taken.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


def test_matrix_build_refuses_bad_input(world: World, tmp_path: Path) -> None:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(MATRIX)
    zero = mlcc(world, "build", "--matrix", "--matrix-file", str(matrix), "-j", "0")
    assert zero.code == 2 and "'-j'" in zero.err and "at least 1" in zero.err
    nothing = mlcc(world, "build", "--matrix", "--matrix-file", str(matrix), "--arch", "ppc64le")
    assert nothing.code == 2 and "no cell of the matrix matches" in nothing.err
    pinned = mlcc(world, "build", "--matrix", "--matrix-file", str(matrix), "--cudnn", "8")
    assert pinned.code == 2 and "not by --cudnn" in pinned.err
