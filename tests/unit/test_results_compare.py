"""`mlcc results compare`: stacks side by side with the recipe's reference, and the results
view of the report: one inline-SVG plot per benchmark, rendered in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

from tests import pngpixels
from tests.conftest import mlperf_v06

STACKS = Path(__file__).resolve().parents[2] / "dockerfiles"
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
REFERENCE_PURPLE = (0x6A, 0x1B, 0x9A)
RUN_GREEN = (0x2E, 0x7D, 0x32)
MISSED_RED = (0xC6, 0x28, 0x28)


def _slowed(source: Path, target: Path, minutes: float) -> None:
    """A copy of a real log whose run_stop comes ``minutes`` later (a slower stack's run)."""

    def later(match: re.Match) -> bytes:  # type: ignore[type-arg]
        return b":::MLL %.3f run_stop" % (float(match.group(1)) + minutes * 60)

    target.write_bytes(re.sub(rb":::MLL ([0-9.]+) run_stop", later, source.read_bytes()))


@pytest.fixture
def history(cli, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    """maskrcnn: the five real runs on one stack, three slower ones (one aborted) on another."""
    logs = mlperf_v06("NVIDIA", "dgx1_ngc19.05_pytorch", "maskrcnn")
    path = tmp_path / "h.sqlite"
    first = STACKS / "maskrcnn" / "cuda10.1-cudnn7-ubi8-x86_64" / "stack.json"
    assert cli("results", "add", str(logs), "--stack", str(first), "--history", str(path)).code == 0
    slow = tmp_path / "slow"
    slow.mkdir()
    for index in range(3):
        _slowed(logs / f"result_{index}.txt", slow / f"result_{index}.txt", 30.0 + index)
    aborted = slow / "result_2.txt"
    aborted.write_bytes(aborted.read_bytes().replace(b'"status": "success"', b'"status": "aborted"'))
    second = STACKS / "maskrcnn" / "cuda10.1-cudnn7-ubi7-x86_64" / "stack.json"
    result = cli("results", "add", str(slow), "--stack", str(second), "--history", str(path))
    assert result.code == 0, result.err
    return path


def _compare(cli, history: Path, *extra: str) -> List[Dict[str, Any]]:  # type: ignore[no-untyped-def]
    result = cli("results", "compare", "--history", str(history), "--json", *extra)
    assert result.code == 0, result.err
    return json.loads(result.out)  # type: ignore[no-any-return]


def test_compare_puts_stacks_side_by_side_with_the_reference(cli, history: Path) -> None:  # type: ignore[no-untyped-def]
    (maskrcnn,) = _compare(cli, history)
    assert maskrcnn["benchmark"] == "maskrcnn"
    assert maskrcnn["reference"] == {
        "minutes": 207.48,
        "system": "NVIDIA DGX-1 (8x V100-SXM2-16GB), NGC 19.05",
        "runs": 5,
    }
    fast, slow = maskrcnn["stacks"]
    assert fast["variant"] == "cuda10.1-cudnn7-ubi8-x86_64" and fast["state"] == "complete"
    assert fast["score_minutes"] == pytest.approx(207.48, abs=0.005) and fast[
        "vs_reference"
    ] == pytest.approx(1.0, abs=0.001)
    assert fast["spread_percent"] == pytest.approx((208.4613 - 192.934) / 192.934 * 100, abs=0.01)
    # Three runs, one aborted: the aborted one is the one dropped, and the fastest too.
    assert slow["variant"] == "cuda10.1-cudnn7-ubi7-x86_64" and slow["runs"] == 3
    assert [r["status"] for r in slow["results"]] == ["success", "success", "failed"]
    assert slow["score_minutes"] == pytest.approx(207.807 + 31.0, abs=0.01)
    assert slow["state"] == "partial" and "3 of the 5 runs MLPerf requires" in slow["notes"]


def test_compare_filters_and_table(cli, history: Path) -> None:  # type: ignore[no-untyped-def]
    assert _compare(cli, history, "-b", "ssd") == []
    (only,) = _compare(cli, history, "--stack", "ubi7")
    assert [s["variant"] for s in only["stacks"]] == ["cuda10.1-cudnn7-ubi7-x86_64"]
    table = cli("results", "compare", "--history", str(history))
    assert "maskrcnn  reference 207.48 min" in table.out
    lines = table.out.splitlines()
    first = next(i for i, line in enumerate(lines) if "cuda10.1-cudnn7-ubi8" in line)
    second = next(i for i, line in enumerate(lines) if "cuda10.1-cudnn7-ubi7" in line)
    assert first < second and "1.00x" in lines[first] and "(partial)" in lines[second]
    empty = cli("results", "compare", "--history", str(history.parent / "none.sqlite"))
    assert empty.code == 0 and "no results stored" in empty.out


def test_resnet50_is_found_under_its_log_name(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    logs = mlperf_v06("NVIDIA", "dgx1_ngc19.05_mxnet", "resnet")
    stack = next((STACKS / "resnet50").glob("*/stack.json"))
    path = tmp_path / "h.sqlite"
    assert cli("results", "add", str(logs), "--stack", str(stack), "--history", str(path)).code == 0
    (entry,) = _compare(cli, path, "-b", "resnet50")
    assert entry["recipe"] == "resnet50" and entry["reference"]["minutes"] == 115.22
    assert entry["stacks"][0]["score_minutes"] == pytest.approx(115.22, abs=0.005)


def test_results_page_is_self_contained_and_escaped(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    logs = mlperf_v06("NVIDIA", "dgx1_ngc19.05_pytorch", "ssd")
    stack = json.loads(next((STACKS / "ssd").glob("*/stack.json")).read_text())
    # free text the schema allows (a variant must match ^[A-Za-z0-9._-]+$) that the page shows
    stack["components"]["framework"]["name"] = '<img src=x onerror="alert(1)">'
    evil = tmp_path / "stack.json"
    evil.write_text(json.dumps(stack))
    path = tmp_path / "h.sqlite"
    assert cli("results", "add", str(logs), "--stack", str(evil), "--history", str(path)).code == 0
    page = tmp_path / "out" / "results.html"
    result = cli("results", "compare", "--history", str(path), "--html", str(page))
    assert result.code == 0, result.err
    text = page.read_text()
    assert "<img" not in text and "&lt;img src=x" in text
    assert "<script" not in text and not re.search(r'(src|href)="(https?:)?//', text)
    assert text.count("<svg") == 1
    again = tmp_path / "again.html"
    cli("results", "compare", "--history", str(path), "--html", str(again))
    assert again.read_text() == text  # deterministic


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not found:
        pytest.fail("the results view needs Chromium or Google Chrome: tests/run installs Debian's chromium")
    return found


def test_results_view_renders_in_chromium(cli, history: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    page = tmp_path / "report" / "results.html"
    assert cli("results", "compare", "--history", str(history), "--html", str(page)).code == 0
    chromium = _chromium()
    profile = tmp_path / "chromium-profile"
    dom = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert dom.stdout.count('class="stack"') == 2 and dom.stdout.count('class="reference"') == 1
    assert dom.stdout.count('data-status="failed"') == 1
    shot = tmp_path / "results.png"
    taken = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--window-size=900,600",
         f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert taken.returncode == 0, taken.stderr[-2000:]
    colours = pngpixels.colours(shot)
    # The plot was drawn: the dashed reference line, the runs' dots, the aborted run's ring.
    assert colours[REFERENCE_PURPLE] > 100
    assert colours[RUN_GREEN] > 100
    assert colours[MISSED_RED] > 10


def test_the_matrix_report_gains_the_results_view(cli, history: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    page = tmp_path / "report.html"
    result = cli("report", "--html", str(page), "--history", str(history), "--benchmark", "maskrcnn")
    assert result.code == 0, result.err
    text = page.read_text()
    assert 'id="matrix"' in text and 'id="results-view"' in text
    assert text.count("<svg") == 1 and 'data-benchmark="maskrcnn"' in text and 'class="reference"' in text
    empty = tmp_path / "empty.html"
    assert cli("report", "--html", str(empty), "--history", str(tmp_path / "none.sqlite")).code == 0
    assert "results-view" not in empty.read_text()  # no runs stored: no results view
