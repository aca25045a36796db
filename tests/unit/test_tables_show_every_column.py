"""Terminal tables show every column and every character of the cells but the last, however
narrow the terminal: a dropped column or a cut digest would mislead."""

from __future__ import annotations

import pytest

from mlcc.ui.table import render

HEADERS = ("name", "image", "content tag", "why")
ROWS = [
    ("ubi9", "registry.access.redhat.com/ubi9/ubi:9.5", "mlcc-" + "a" * 32, "the newest base " * 6),
    ("ubi8", "registry.access.redhat.com/ubi8/ubi:8.10", "mlcc-" + "b" * 32, "short"),
]


@pytest.mark.parametrize("columns", ["40", "80", "200"])
def test_every_column_and_cell_is_shown_at_any_width(monkeypatch: pytest.MonkeyPatch, columns: str) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    text = render(HEADERS, ROWS)
    header = text.splitlines()[0].split()
    assert header == ["name", "image", "content", "tag", "why"]
    for row in ROWS:
        for cell in row[:-1]:
            assert cell in text
    assert " ".join(text.split()).count("the newest base") == 6  # the last column wraps, whole


def test_no_rows_is_no_table() -> None:
    assert render(HEADERS, []) == ""
