"""mlcc matrix, the build history, the HTML report and gen -i, without engines."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from html.parser import HTMLParser
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import pytest

from mlcc.errors import HistoryError
from mlcc.history import History, Record


def _record(i: int, **changes: object) -> Record:
    base = Record(
        benchmark="ssd",
        variant="cuda10.1-cudnn7-ubi8-x86_64",
        content_digest="sha256:" + "a" * 64,
        backend="buildah",
        status="built",
        seconds=float(i),
        mlcc_version="0.1.0",
    )
    return base._replace(**changes)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- matrix


def test_matrix_table_lists_the_published_cells(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("matrix")
    assert result.code == 0
    assert "maskrcnn" in result.out and "cuda10.1-cudnn7-ubi8-x86_64" in result.out
    assert "cells build" in result.out


def test_matrix_explain_gives_the_rule_for_each_left_out_cell(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("matrix", "--explain", "--format", "json")
    rows = json.loads(result.out)
    excluded = [r for r in rows if r["status"] == "excluded"]
    assert excluded and all(r["reason"].startswith("[") for r in excluded)
    resnet_ppc = next(r for r in excluded if r["benchmark"] == "resnet50" and r["arch"] == "ppc64le")
    assert "[benchmark-arch]" in resnet_ppc["reason"]
    assert any(r["status"] == "duplicate" and "the same stack as" in r["reason"] for r in rows)


def test_matrix_filters_and_an_empty_result(cli) -> None:  # type: ignore[no-untyped-def]
    rows = json.loads(cli("matrix", "--format", "json", "--benchmark", "ssd", "--arch", "ppc64le").out)
    assert rows and {(r["benchmark"], r["arch"]) for r in rows} == {("ssd", "ppc64le")}
    cuda = json.loads(cli("matrix", "--format", "json", "--cuda", "10.1").out)
    assert cuda and all(r["cuda"].startswith("10.1.") for r in cuda)
    empty = cli("matrix", "--benchmark", "resnet50", "--arch", "ppc64le")
    assert empty.code == 2 and "no cell of the matrix matches" in empty.err
    as_json = cli("matrix", "--benchmark", "resnet50", "--arch", "ppc64le", "--format", "json")
    assert as_json.code == 0 and json.loads(as_json.out) == []
    unknown = cli("matrix", "--benchmark", "maskrcn")
    assert unknown.code == 2 and "maskrcnn" in unknown.err


def test_matrix_github_format(cli) -> None:  # type: ignore[no-untyped-def]
    include = json.loads(cli("matrix", "--format", "github").out)["include"]
    published = json.loads(cli("matrix", "--format", "json").out)
    assert len(include) == len(published)
    for entry in include:
        assert set(entry) >= {"benchmark", "variant", "arch", "cuda", "base", "pins"}


def test_matrix_parity(cli) -> None:  # type: ignore[no-untyped-def]
    rows = json.loads(cli("matrix", "--parity", "--format", "json").out)
    resnet = next(r for r in rows if r["benchmark"] == "resnet50")
    assert resnet["ppc64le"] is None and "ppc64le" in resnet["reason"]
    ssd = next(r for r in rows if r["benchmark"] == "ssd" and "ubi7" in r["x86_64"])
    assert ssd["ppc64le"] == "cuda10.1-cudnn7-ubi7-ppc64le"
    table = cli("matrix", "--parity")
    assert "have no ppc64le counterpart" in table.out


def test_a_matrix_file_with_an_unknown_axis_or_benchmark(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "matrix.yaml"
    bad.write_text("kind: matrix\nschema_version: 1\naxes:\n  benchmark: [maskrcnn]\n  driver: [535]\n")
    result = cli("matrix", "--matrix-file", str(bad))
    assert result.code == 2 and "matrix.yaml:4" in result.err and "'driver'" in result.err
    bad.write_text("kind: matrix\nschema_version: 1\naxes:\n  benchmark: [maskrcnn, resnet5]\n")
    result = cli("matrix", "--matrix-file", str(bad))
    assert result.code == 2 and "unknown benchmark 'resnet5'" in result.err and "resnet50" in result.err


def test_a_matrix_cell_names_the_gpu_its_image_must_run_on(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A cell's gpu is the --gpu pin: the GPU's code in the variant, a Grace GPU's host arch."""
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(
        "kind: matrix\nschema_version: 1\naxes:\n  benchmark: [retinanet-reference]\n  base: [ubi9]\n"
        "  gpu: [b200, gb200]\n"
    )
    rows = json.loads(cli("matrix", "--matrix-file", str(matrix), "--format", "json").out)
    assert {(r["variant"], r["arch"], r["pins"]) for r in rows} == {
        ("cuda13.0-cudnn9-ubi9-x86_64-sm100", "x86_64", "--base ubi9 --gpu b200"),
        ("cuda13.0-cudnn9-ubi9-aarch64-sm100", "aarch64", "--base ubi9 --gpu gb200"),
    }
    matrix.write_text("kind: matrix\nschema_version: 1\naxes:\n  benchmark: [nccl-tests]\n  gpu: [b20]\n")
    result = cli("matrix", "--matrix-file", str(matrix))
    assert result.code == 2 and "matrix.yaml:5" in result.err and "unknown gpu 'b20'" in result.err
    assert "b200" in result.err


# ----------------------------------------------------------------------------- history


def test_history_records_and_filters(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite")
    history.record(_record(1))
    history.record(_record(2, status="skipped"))
    history.record(_record(3, benchmark="gnmt", status="failed", reason="boom"))
    rows = history.rows()
    assert [r["seconds"] for r in rows] == [3.0, 2.0, 1.0]  # newest first
    assert [r["status"] for r in history.rows(benchmark="ssd")] == ["skipped", "built"]
    assert history.rows(status="failed")[0]["reason"] == "boom"
    assert history.latest()[("ssd", "cuda10.1-cudnn7-ubi8-x86_64")]["status"] == "skipped"
    with pytest.raises(ValueError):
        history.record(_record(4, status="done"))


def test_history_under_concurrent_writers(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite")
    history.check()

    def write(offset: int) -> None:
        for i in range(25):
            History(history.path).record(_record(offset + i))

    threads = [threading.Thread(target=write, args=(100 * t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(history.rows()) == 100


def test_a_locked_history_is_a_clear_error_and_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mlcc.history as module

    history = History(tmp_path / "h.sqlite")
    history.record(_record(1))
    monkeypatch.setattr(module, "BUSY_TIMEOUT_SECONDS", 0.2)
    holder = sqlite3.connect(str(history.path), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    with pytest.raises(HistoryError, match="stayed locked"):
        history.record(_record(2))
    holder.execute("ROLLBACK")
    holder.close()
    history.record(_record(3))
    assert [r["seconds"] for r in history.rows()] == [3.0, 1.0]


def test_a_corrupt_history_is_reported_and_left_alone(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "h.sqlite"
    path.write_bytes(b"this is not a database, but someone's data" * 100)
    before = path.read_bytes()
    result = cli("history", "--history", str(path))
    assert result.code == 9
    # someone's data, not a damaged history: never advice to move it (issue 39)
    assert "is not a build history" in result.err and "mlcc never changes" in result.err
    assert "move" not in result.err
    assert path.read_bytes() == before  # never recreated or truncated
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_bytes(b"SQLite format 3\x00" + b"\xff" * 300)
    result = cli("history", "--history", str(damaged))
    assert result.code == 9 and "damaged" in result.err and "move" in result.err, result.err


def test_history_cli(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "h.sqlite"
    empty = cli("history", "--history", str(path))
    assert empty.code == 0 and "no builds recorded" in empty.out and not path.exists()
    History(path).record(_record(7, image_digest="sha256:" + "b" * 64, size=12_345_678))
    table = cli("history", "--history", str(path))
    # 12,345,678 bytes in binary units; a row from before sizes were recorded says no flavour
    assert "ssd" in table.out and "11.8 MiB" in table.out and "7.0 s" in table.out
    History(path).record(
        _record(
            8,
            size=3 * 2**30,
            uncompressed=7 * 2**30,
            flavour="runtime",
            largest_layers='[{"compressed": 5,'
            ' "uncompressed": 9, "instruction": "RUN pip install torch"}, {"instruction": 3}]',
        )
    )
    table = cli("history", "--history", str(path))
    assert re.search(r"runtime\s+3\.0 GiB\s+7\.0 GiB", table.out), table.out
    rows = json.loads(cli("history", "--history", str(path), "--json").out)
    assert rows[1]["benchmark"] == "ssd" and rows[1]["size"] == 12_345_678 and rows[1]["flavour"] is None
    # the largest layers read back checked: the entry whose instruction is not text is dropped
    assert rows[0]["uncompressed"] == 7 * 2**30 and rows[0]["largest_layers"] == [
        {"compressed": 5, "uncompressed": 9, "instruction": "RUN pip install torch"}
    ]
    assert cli("history", "--history", str(path), "--limit", "0").code == 2


# ----------------------------------------------------------------------------- report


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.cells: List[Dict[str, str]] = []
        self.links: List[str] = []
        self.external = False

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "div" and "data-status" in found:  # one entry per matrix cell
            self.cells.append(found)
        if tag == "a":
            self.links.append(found.get("href", ""))
        if tag in ("script", "link", "img") or (found.get("src") or "").startswith("http"):
            self.external = True


def test_report_colours_cells_by_the_latest_build(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    history = History(tmp_path / "h.sqlite")
    log = tmp_path / "logs" / "ssd.log"
    log.parent.mkdir()
    log.write_text("build log\n")
    history.record(_record(1, status="failed"))
    history.record(_record(2, status="built", log_path=str(log)))
    page = tmp_path / "out" / "report.html"
    result = cli("report", "--html", str(page), "--history", str(history.path), "--title", "Nightly <matrix>")
    assert result.code == 0, result.err
    text = page.read_text()
    assert "Nightly &lt;matrix&gt;" in text  # escaped
    parser = _Cells()
    parser.feed(text)
    assert not parser.external
    statuses = [c["data-status"] for c in parser.cells]
    built = [c for c in parser.cells if c["data-status"] == "built"]
    assert [c["data-variant"] for c in built] == ["cuda10.1-cudnn7-ubi8-x86_64"]
    assert "excluded" in statuses and "not built" in statuses
    assert "../logs/ssd.log" in parser.links


# ----------------------------------------------------------------------------- gen -i


def _scripted(answers: Dict[str, str], asked: List[Tuple[str, Sequence[str], str]]):  # type: ignore[no-untyped-def]
    def ask(question: str, options: Sequence[str], default: str) -> str:
        asked.append((question, list(options), default))
        return answers.get(question, default)

    return ask


def test_interactive_offers_only_what_resolves(kb) -> None:  # type: ignore[no-untyped-def]
    from mlcc.app.select import walk

    asked: List[Tuple[str, Sequence[str], str]] = []
    choice = walk(kb, _scripted({"benchmark": "resnet50"}, asked))
    questions = {q: (options, default) for q, options, default in asked}
    assert questions["CPU architecture"][0] == ["x86_64"]  # resnet50 has no ppc64le stack
    cuda_options = questions["CUDA release (or cpu)"][0]
    assert "cpu" not in cuda_options and "12.6" not in cuda_options
    assert choice.stack.benchmark.name == "resnet50" and choice.stack.cuda is not None


def test_interactive_framework_version_menu(kb) -> None:  # type: ignore[no-untyped-def]
    from mlcc.app.select import walk

    asked: List[Tuple[str, Sequence[str], str]] = []
    answers = {
        "benchmark": "tf_cnn_benchmarks",
        "base image": "ubi7",
        "CUDA release (or cpu)": "10.0",
        "tensorflow version": "1.14.0",
    }
    choice = walk(kb, _scripted(answers, asked))
    versions = next(options for q, options, _ in asked if q == "tensorflow version")
    assert versions == ["2.0.0", "1.15.0", "1.14.0", "1.13.1"]  # TF built for CUDA 10.0 that tf_cnn accepts
    assert choice.stack.framework is not None and choice.stack.framework.version == "1.14.0"
    assert choice.stack.variant.startswith("cuda10.0-cudnn7-ubi7-x86_64")


def test_gen_interactive_from_piped_answers(cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.StringIO("ssd\nppc64le\n\n\n\n"))
    result = cli("gen", "-i", "--only", "dockerfile")
    assert result.code == 0, result.err
    assert "dockerfiles/ssd/cuda10.1-cudnn7-ubi7-ppc64le/Dockerfile" in result.out
    assert "the same without menus: mlcc gen ssd" in result.err
    refused = cli("gen", "-i", "ssd")
    assert refused.code == 2
