"""NVIDIA's v2.1 MLLOG logs name their node count (`submission_platform` `1xNVIDIA DGX A100`)
and their result folder's system description (`NVIDIA/systems/<system>.json`) the GPUs per
node: `mlcc results add` stores both, so the results view shows "8 GPUs; 1 node(s)" where it
showed "- GPUs; - node(s)". A log's own values win, a damaged description is named and not
used, and a log outside a submission's layout keeps what it says."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any, List, Tuple

from mlcc.results.parse import parse_file, parse_stream
from mlcc.results.system import described, description_file, read_description

REPO = Path(__file__).resolve().parents[2]
V21 = REPO / "tests" / "data" / "mlperf-v2.1" / "NVIDIA"
MASKRCNN_A100 = V21 / "results" / "dgxa100_ngc22.09_pytorch" / "maskrcnn"
V21_STACK = REPO / "dockerfiles" / "maskrcnn-v2.1" / "cuda11.8-cudnn8-ubi8-x86_64" / "stack.json"


def _placements(history: Path) -> List[Tuple[Any, ...]]:
    with sqlite3.connect(history) as db:
        return db.execute("SELECT system, gpus, nodes FROM results ORDER BY id").fetchall()


def test_the_platform_names_the_node_count() -> None:
    line = ':::MLLOG {"time_ms": 1, "key": "submission_platform", "value": "%s", "metadata": {}}\n'
    for platform, nodes in (("1xNVIDIA DGX A100", "1"), ("8xNVIDIA DGX A100", "8"), ("my-a100", None)):
        text = (line % platform) + ':::MLLOG {"time_ms": 2, "key": "run_start", "value": null}\n'
        runs, _, _ = parse_stream(io.BytesIO(text.encode()), "log")
        assert runs[0].system.get("nodes") == nodes, platform
        assert runs[0].system["platform"] == platform


def test_the_system_description_beside_the_results_names_the_gpus() -> None:
    path = description_file(str(MASKRCNN_A100 / "result_0.txt"))
    assert path == V21 / "systems" / "dgxa100_ngc22.09_pytorch.json"
    assert read_description(path) == (
        {"nodes": "1", "gpus_per_node": "8", "accelerator": "NVIDIA A100-SXM4-80GB"},
        None,
    )
    assert description_file("logs/result_0.txt") is None  # not a submission's layout


def test_add_stores_nvidias_gpus_and_nodes_and_the_view_shows_them(cli: Any, tmp_path: Path) -> None:
    history = tmp_path / "h.sqlite"
    for system in ("dgxa100_ngc22.09_pytorch", "dgxh100_preview"):
        logs = V21 / "results" / system / "maskrcnn"
        result = cli("results", "add", str(logs), "--stack", str(V21_STACK), "--history", str(history))
        assert result.code == 0, result.err
    assert set(_placements(history)) == {("1xNVIDIA DGX A100", 8, 1), ("1xNVIDIA DGX H100", 8, 1)}

    (maskrcnn,) = json.loads(cli("results", "compare", "--json", "--history", str(history)).out)
    # one stack, two GPUs: two results, each beside its GPU's reference
    assert sorted((s["gpu"], s["systems"], s["gpus"], s["nodes"]) for s in maskrcnn["stacks"]) == [
        ("a100", ["1xNVIDIA DGX A100"], [8], [1]),
        ("h100", ["1xNVIDIA DGX H100"], [8], [1]),
    ]
    text = cli("results", "compare", "--history", str(history)).out
    assert " ".join(text.split()).count("8 GPUs; 1 node(s)") == 2
    page = tmp_path / "view.html"
    assert cli("results", "compare", "--html", str(page), "--history", str(history)).code == 0
    assert "8 GPUs; 1 node(s)" in page.read_text() and "- GPUs" not in page.read_text()


def test_the_flags_and_the_log_win_over_the_description(cli: Any, tmp_path: Path) -> None:
    history = tmp_path / "h.sqlite"
    log = str(MASKRCNN_A100 / "result_0.txt")
    args = ("--stack", str(V21_STACK), "--history", str(history), "--gpus", "4", "--system", "lab")
    assert cli("results", "add", log, *args).code == 0
    assert _placements(history) == [("lab", 4, 1)]


def test_a_damaged_description_is_named_and_not_used(cli: Any, tmp_path: Path) -> None:
    copy = tmp_path / "NVIDIA"
    shutil.copytree(MASKRCNN_A100, copy / "results" / "dgxa100_ngc22.09_pytorch" / "maskrcnn")
    (copy / "systems").mkdir()
    description = copy / "systems" / "dgxa100_ngc22.09_pytorch.json"
    description.write_text(json.dumps(["not", "an", "object"]))
    history = tmp_path / "h.sqlite"
    result = cli(
        "results", "add", str(copy / "results"), "--stack", str(V21_STACK), "--history", str(history)
    )
    assert result.code == 0, result.err
    assert f"{description}: system description not used (not a JSON object)" in result.err
    assert set(_placements(history)) == {("1xNVIDIA DGX A100", None, 1)}  # the log's node count only


def test_a_count_in_words_is_not_a_count(tmp_path: Path) -> None:
    description = tmp_path / "NVIDIA" / "systems" / "box.json"
    description.parent.mkdir(parents=True)
    description.write_text('{"number_of_nodes": "2", "accelerators_per_node": "eight"}')
    assert read_description(description) == ({"nodes": "2"}, None)
    log_path = tmp_path / "NVIDIA" / "results" / "box" / "maskrcnn" / "result_0.txt"
    log_path.parent.mkdir(parents=True)
    shutil.copy(MASKRCNN_A100 / "result_0.txt", log_path)
    (run,) = described(parse_file(log_path)).runs
    assert run.system["nodes"] == "1"  # the log's own 1x... stands over the description's 2
    assert "gpus_per_node" not in run.system


def test_a_count_of_zero_gpus_or_nodes_is_unknown_not_zero(cli: Any, tmp_path: Path) -> None:
    """A system description saying 0 accelerators per node (or 0 nodes) says nothing about
    where the run ran: the run is stored with its GPUs unknown, never as 0 GPUs."""
    copy = tmp_path / "NVIDIA"
    shutil.copytree(MASKRCNN_A100, copy / "results" / "box" / "maskrcnn")
    (copy / "systems").mkdir()
    (copy / "systems" / "box.json").write_text('{"number_of_nodes": "0", "accelerators_per_node": "0"}')
    history = tmp_path / "h.sqlite"
    result = cli(
        "results", "add", str(copy / "results"), "--stack", str(V21_STACK), "--history", str(history)
    )
    assert result.code == 0, result.err
    assert set(_placements(history)) == {("1xNVIDIA DGX A100", None, 1)}  # the log's 1 node; GPUs unknown
