"""A results table from before the round column is read (and, by a writer, upgraded) with
its rows as v0.6's -- except the rows of benchmarks v0.6 did not have: a bert or rnnt row
was stamped ``v0.6``; its round is now unknown rather than a wrong one."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from mlcc.history import History
from mlcc.results.parse import parse_file
from mlcc.results.store import Placement, StackInfo, add_runs, stored_runs
from tests.conftest import mlperf_v06

V21 = Path(__file__).resolve().parents[1] / "data" / "mlperf-v2.1" / "NVIDIA" / "results"


def _old_table(tmp_path: Path) -> History:
    history = History(tmp_path / "h.sqlite")
    ssd = parse_file(mlperf_v06("NVIDIA", "dgx1_ngc19.05_pytorch", "ssd") / "result_0.txt").runs
    add_runs(history, ssd, StackInfo("old", "ssd", None, None, None, None, None), Placement(), "test")
    rnnt = parse_file(V21 / "dgxa100_ngc22.04_pytorch" / "rnnt" / "result_0.txt").runs
    add_runs(history, rnnt, StackInfo("old", "rnnt", None, None, None, None, None), Placement(), "test")
    with contextlib.closing(sqlite3.connect(history.path)) as connection:
        connection.execute("ALTER TABLE results DROP COLUMN round")
        connection.commit()
    return history


def test_a_reader_gives_rows_of_benchmarks_v06_lacked_no_round(tmp_path: Path) -> None:
    history = _old_table(tmp_path)
    assert [(row["benchmark"], row["round"]) for row in stored_runs(history)] == [
        ("ssd", "v0.6"),
        ("rnnt", None),
    ]


def test_a_writer_upgrading_the_table_stamps_no_wrong_round(tmp_path: Path) -> None:
    history = _old_table(tmp_path)
    more = parse_file(V21 / "dgxh100_preview" / "maskrcnn" / "result_0.txt").runs
    add_runs(history, more, StackInfo("new", "maskrcnn", None, None, None, None, None), Placement(), "test")
    assert [(row["benchmark"], row["round"]) for row in stored_runs(history)] == [
        ("ssd", "v0.6"),
        ("rnnt", None),
        ("maskrcnn", "v2.1"),
    ]
