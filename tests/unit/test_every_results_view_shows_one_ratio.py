"""One comparison, every view: `results compare` (text and --json), its --html page and
`mlcc report` set each stack beside the same reference (its round's, on its GPU) with the
same ratio. One history of NVIDIA's real runs (maskrcnn v0.6 on a DGX-1, v2.1 on a DGX A100
and a DGX H100; bert v2.1 on a DGX H100, whose A100 reference is the benchmark's own) is
rendered by each view and the numbers compared."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any, Dict, List

from mlcc.history import History
from mlcc.results.parse import parse_file
from mlcc.results.store import Placement, StackInfo, add_runs
from tests.conftest import mlperf_v06

V21 = Path(__file__).resolve().parents[1] / "data" / "mlperf-v2.1" / "NVIDIA" / "results"
SUBMISSIONS = [
    (mlperf_v06("NVIDIA", "dgx1_ngc19.05_pytorch", "maskrcnn"), "maskrcnn", "NGC 19.05 (v0.6)"),
    (V21 / "dgxa100_ngc22.09_pytorch" / "maskrcnn", "maskrcnn-v2.1", "NGC 22.09 (v2.1 A100)"),
    (V21 / "dgxh100_preview" / "maskrcnn", "maskrcnn-v2.1", "H100 preview (v2.1 H100)"),
    (V21 / "dgxh100_preview" / "bert", "bert-v2.1", "H100 preview (v2.1 bert H100)"),
]


def _history(path: Path) -> Path:
    history = History(path)
    for folder, benchmark, label in SUBMISSIONS:
        runs = [run for log in sorted(folder.glob("result_*.txt")) for run in parse_file(log).runs]
        stack = StackInfo(label, benchmark, None, None, None, None, None)
        assert add_runs(history, runs, stack, Placement(), "test").stored
    return path


def _html_ratios(page: str) -> Dict[str, str]:
    """stack -> the "vs reference" cell of each table row of a results view."""
    found: Dict[str, str] = {}
    for row in re.findall(r"<tr>\s*<td>(.*?)</tr>", page, re.S):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", "<td>" + row, re.S)
        stack = html.unescape(re.sub(r"<div.*", "", cells[0], flags=re.S))
        found[stack] = html.unescape(re.sub(r"<div.*", "", cells[4], flags=re.S))
    return found


def _json_ratios(compared: List[Dict[str, Any]]) -> Dict[str, str]:
    return {
        s["stack"]: "-" if s["vs_reference"] is None else f"{s['vs_reference']:.2f}x"
        for benchmark in compared
        for s in benchmark["stacks"]
    }


def test_compare_json_html_and_report_show_the_same_ratios(cli: Any, tmp_path: Path) -> None:
    history = _history(tmp_path / "h.sqlite")
    page = tmp_path / "compare.html"
    result = cli("results", "compare", "--json", "--html", str(page), "--history", str(history))
    assert result.code == 0, result.err
    compared = json.loads(result.out)
    from_json = _json_ratios(compared)
    # NVIDIA's own runs are their references: each 1.00x against its round's result on its GPU
    assert from_json == {label: "1.00x" for _, _, label in SUBMISSIONS}
    bert = next(s for b in compared if b["benchmark"] == "bert" for s in b["stacks"])
    assert (bert["reference"]["gpu"], bert["reference"]["round"]) == ("h100", "v2.1")

    assert _html_ratios(page.read_text()) == from_json

    report = tmp_path / "report.html"
    result = cli("report", "--html", str(report), "--history", str(history))
    assert result.code == 0, result.err
    assert _html_ratios(report.read_text()) == from_json

    text = cli("results", "compare", "--history", str(history))
    assert text.code == 0, text.err
    for label, ratio in from_json.items():
        (line,) = [line for line in text.out.splitlines() if line.startswith(label)]
        assert ratio in line.split(), line


def test_the_html_row_names_a_reference_other_than_the_headings(cli: Any, tmp_path: Path) -> None:
    history = _history(tmp_path / "h.sqlite")
    page = tmp_path / "compare.html"
    assert cli("results", "compare", "-b", "bert", "--html", str(page), "--history", str(history)).code == 0
    text = page.read_text()
    assert "reference: 16.88 min" in text  # the heading: bert's own result, on a DGX A100
    assert "vs v2.1 H100 6.38 min" in text  # the row: the DGX H100 result its score is divided by
    # the plot draws that reference across the row, and names the row's round and GPU
    assert '<line class="row-reference"' in text and "v2.1 H100 reference 6.38 min" in text
    assert "v2.1 H100 · H100 preview (v2.1 bert H100)" in text
