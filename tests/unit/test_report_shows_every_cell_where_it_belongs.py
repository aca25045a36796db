"""The HTML matrix report: each cell in the column of the base and arch its stack was built for,
no "any base . any arch" column, the page within 1280 px in Chromium (the browser the results
view's tests use), and the cells left out counted as `mlcc matrix` counts them."""

from __future__ import annotations

import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from tests.unit.test_results_compare import CHROMIUM_FLAGS, _chromium


class _Grid(HTMLParser):
    """The column headers, and per benchmark row the variants of each td, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.columns: List[str] = []
        self.rows: Dict[str, List[List[str]]] = {}
        self._row: Optional[str] = None
        self._in_header = False
        self._in_cell = False

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "th" and found.get("scope") == "col":
            self._in_header = True
            self.columns.append("")
        elif tag == "tr" and "data-benchmark" in found:
            self._row = found["data-benchmark"]
            self.rows[self._row] = []
        elif tag == "td" and self._row is not None:
            self.rows[self._row].append([])
            self._in_cell = True
        elif tag == "div" and found.get("class") == "variant" and self._row is not None:
            self.rows[self._row][-1].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "th":
            self._in_header = False
        elif tag == "td":
            self._in_cell = False

    def handle_data(self, data: str) -> None:
        if self._in_header:
            self.columns[-1] += data
        elif (
            self._in_cell
            and self._row is not None
            and self.rows[self._row][-1]
            and not self.rows[self._row][-1][-1]
        ):
            self.rows[self._row][-1][-1] = data.strip()


@pytest.fixture
def report(cli, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    page = tmp_path / "report.html"
    result = cli("report", "--html", str(page), "--history", str(tmp_path / "none.sqlite"))
    assert result.code == 0, result.err
    return page


def test_every_cell_is_in_the_column_of_its_stack(report: Path) -> None:
    grid = _Grid()
    grid.feed(report.read_text())
    assert grid.columns and not [c for c in grid.columns if "any" in c], grid.columns
    placed = 0
    for benchmark, cells in grid.rows.items():
        for column, variants in zip(grid.columns, cells):
            base, arch = column.split(" · ")
            for variant in variants:
                # a cell that names its GPU ends with the GPU's code (-sm75, -sm100)
                assert re.search(rf"-{base}-{arch}(-sm[0-9]+)?$", variant), (
                    benchmark,
                    column,
                    variant,
                )
                placed += 1
    # maskrcnn's ubi8/x86_64 image (the matrix cell "maskrcnn --cuda 10.1", no base or arch
    # pinned) is in the ubi8 . x86_64 column, which is therefore not blank
    maskrcnn = dict(zip(grid.columns, grid.rows["maskrcnn"]))
    assert maskrcnn["ubi8 · x86_64"] == ["cuda10.1-cudnn7-ubi8-x86_64"]
    assert placed >= 26


def test_left_out_cells_are_counted_as_mlcc_matrix_counts_them(cli, report: Path) -> None:  # type: ignore[no-untyped-def]
    matrix = cli("matrix")
    built, left_out = map(int, re.search(r"(\d+) cells build; (\d+) left out", matrix.out).groups())  # type: ignore[union-attr]
    text = " ".join(report.read_text().split())
    assert f"{left_out} left out" in text, text[:2000]
    assert f"{built} not built yet" in text


def test_the_report_fits_1280_px_in_chromium(report: Path, tmp_path: Path) -> None:
    # the page has no script of its own; a copy gets one that writes its layout into the DOM
    probe = tmp_path / "probe.html"
    measure = (
        "<script>document.body.setAttribute('data-width', "
        "String(Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)))</script>"
    )
    probe.write_text(report.read_text().replace("</body>", measure + "</body>"))
    chromium = _chromium()
    dom = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,900",
         "--dump-dom", probe.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert dom.returncode == 0, dom.stderr[-2000:]
    width = int(re.search(r'data-width="(\d+)"', dom.stdout).group(1))  # type: ignore[union-attr]
    assert width <= 1280, width
