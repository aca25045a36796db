"""Times are finite and counts are whole and non-negative, wherever they enter: an MLPerf log
(results score / add / collect), the results history and the build history. A history that
already holds an infinite or NaN time (an older mlcc stored them) still gives its reports."""

from __future__ import annotations

import json
import math
import sqlite3
from html.parser import HTMLParser
from pathlib import Path
from typing import List, Optional, Tuple

import pytest

from mlcc.history import History, Record
from mlcc.report import _link
from mlcc.validate import count, finite_time
from tests.conftest import REPO

STACK = REPO / "dockerfiles" / "maskrcnn" / "cuda10.1-cudnn7-ubi8-x86_64" / "stack.json"
HEAD = ':::MLL 1 submission_benchmark: {"value": "maskrcnn"}\n'


def _no_constant(name: str) -> None:
    raise AssertionError(f"{name} in the JSON")


def _log(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(HEAD + body, encoding="utf-8")
    return path


LOGS = {
    "both-infinite": ':::MLL 1e999 run_start: {"value": null}\n'
    ':::MLL 1e999 run_stop: {"value": null, "metadata": {"status": "success"}}\n',
    "stop-infinite": ':::MLL 100 run_start: {"value": null}\n'
    ':::MLL 1e999 run_stop: {"value": null, "metadata": {"status": "success"}}\n',
    "result-infinity": ':::MLL 100 run_start: {"value": null}\n'
    ':::MLL 200 eval_result: {"value": 1, "metadata": {"timestamp": Infinity}}\n',
    "two-years": ':::MLL 100 run_start: {"value": null}\n'
    ':::MLL 63158400 run_stop: {"value": null, "metadata": {"status": "success"}}\n',
    "result-nan": ':::MLL 100 run_start: {"value": null}\n'
    ':::MLL 200 eval_result: {"value": 1, "metadata": {"timestamp": NaN}}\n',
}


@pytest.mark.parametrize("name", sorted(LOGS))
def test_a_log_with_an_infinite_time_scores_no_infinite_minutes(cli, tmp_path: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    log = _log(tmp_path, f"{name}.log", LOGS[name])
    result = cli("results", "score", str(log), "--json")
    assert result.code == 0, result.err
    json.loads(result.out, parse_constant=_no_constant)  # no Infinity, no NaN
    history = tmp_path / "h.sqlite"
    assert cli("results", "add", str(log), "--stack", str(STACK), "--history", str(history)).code == 0
    stored = sqlite3.connect(history).execute("SELECT minutes FROM results").fetchall()
    assert all(m is None or (math.isfinite(m) and 0 <= m < 366 * 24 * 60) for (m,) in stored)


def _poison(history: Path) -> None:
    """Rows as an older mlcc stored them: infinite and NaN minutes, negative counts."""
    connection = sqlite3.connect(history)
    connection.execute("UPDATE results SET minutes = 1e999, nodes = -3, gpus = -8 WHERE id = 1")
    connection.execute("UPDATE results SET minutes = NULL WHERE id = 2")
    connection.commit()
    connection.close()


def test_reports_of_a_history_holding_an_infinite_time_still_work(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    logs = (
        REPO / "tests" / "data" / "mlperf-v0.6" / "NVIDIA" / "results" / "dgx1_ngc19.05_pytorch" / "maskrcnn"
    )
    history = tmp_path / "h.sqlite"
    assert cli("results", "add", str(logs), "--stack", str(STACK), "--history", str(history)).code == 0
    _poison(history)
    builds = History(history)
    record = Record("ssd", "cuda10.1-cudnn7-ubi8-x86_64", "sha256:" + "a" * 64, "buildah", "built", 1.0)
    builds.record(record)
    connection = sqlite3.connect(history)
    connection.execute("UPDATE builds SET seconds = 1e999")
    connection.commit()
    connection.close()
    compared = cli("results", "compare", "--history", str(history), "--html", str(tmp_path / "c.html"))
    assert compared.code == 0, compared.err
    report = cli("report", "--html", str(tmp_path / "r.html"), "--history", str(history))
    assert report.code == 0, report.err
    listed = cli("history", "--history", str(history))
    assert listed.code == 0 and " inf s" not in listed.out, listed.err
    as_json = cli("history", "--history", str(history), "--json")
    assert as_json.code == 0
    json.loads(as_json.out, parse_constant=_no_constant)


def test_the_build_history_refuses_an_infinite_time(tmp_path: Path) -> None:
    record = Record("ssd", "v", "sha256:" + "a" * 64, "buildah", "built", math.inf)
    with pytest.raises(ValueError):
        History(tmp_path / "h.sqlite").record(record)


def test_finite_time_and_count() -> None:
    assert finite_time(1.5) == 1.5 and finite_time(0) == 0.0
    for bad in (math.inf, -math.inf, math.nan, -1.0, "1", None, True, 10**400):
        assert finite_time(bad) is None
    assert count("8") == 8 and count(0) == 0 and count(2**63 - 1) == 2**63 - 1
    for bad in ("-1", "\u0664", "1_0", " ", -1, 2**63, True, "9" * 30, 1.0):
        assert count(bad) is None


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: List[str] = []

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, str | None]]) -> None:
        if tag == "a":
            self.links.extend(v or "" for k, v in attrs if k == "href")


@pytest.mark.parametrize("name", ["javascript:alert(1)", "data:text/html,x", "JAVASCRIPT:x", "a\nb:c"])
def test_a_log_link_is_a_relative_path_never_a_url(tmp_path: Path, name: str) -> None:
    link = _link(str(tmp_path / name), tmp_path / "report.html")
    assert link is None or (":" not in link and not link.startswith("/"))


def test_a_log_on_another_root_gets_no_file_url(tmp_path: Path) -> None:
    link = _link("/elsewhere/build.log", tmp_path / "report.html")
    assert link is not None and not link.startswith("file:") and link.endswith("elsewhere/build.log")


def test_the_report_never_links_a_javascript_log(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    history = History(tmp_path / "h.sqlite")
    record = Record("ssd", "cuda10.1-cudnn7-ubi8-x86_64", "sha256:" + "a" * 64, "buildah", "built", 1.0)
    history.record(record._replace(log_path=str(tmp_path / "javascript:alert(document.domain)")))
    page = tmp_path / "report.html"
    assert cli("report", "--html", str(page), "--history", str(history.path)).code == 0
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    assert parser.links, "the log is linked"
    assert all(":" not in link for link in parser.links), parser.links


@pytest.mark.parametrize(
    "limit, gpus", [("8", 8), ("-8", None), ("\u0664", None), ("1e3", None), ("x", None), (4, 4)]
)
def test_a_clusters_gpu_count_is_ascii_digits_and_not_negative(limit: object, gpus: Optional[int]) -> None:
    from mlcc.errors import MlccError
    from mlcc.render.openshift.run import GPU
    from mlcc.results.collect import _gpus

    spec = {"containers": [{"name": "c", "resources": {"limits": {GPU: limit}}}]}
    if gpus is None:  # int() took "-8" and "\u0664": now the cluster's object is refused
        with pytest.raises(MlccError, match="not a count"):
            _gpus(spec, "pod p")
    else:
        assert _gpus(spec, "pod p") == gpus
