"""`mlcc results score`: the real MLPerf v0.6 logs reproduce the published results, and bad
logs (cut off, unfinished, mixed, duplicated, not UTF-8, huge) give clear, partial answers."""

from __future__ import annotations

import io
import json
import shutil
import tracemalloc
from pathlib import Path
from typing import Any, Dict, List

import pytest

from mlcc.results.parse import CHUNK, MAX_LINE, parse_file, parse_stream
from mlcc.results.score import DUPLICATE, FAILED, SUCCESS, UNFINISHED, olympic_mean, run_result, score
from tests.conftest import MLPERF_V06


@pytest.fixture(scope="module")
def logs() -> Path:
    return MLPERF_V06


def _by_key(data: List[Dict[str, Any]]) -> Dict[tuple, Dict[str, Any]]:  # type: ignore[type-arg]
    return {(d["benchmark"], d["submitter"]): d for d in data}


def test_real_logs_reproduce_the_published_v06_results(cli, logs: Path, kb) -> None:  # type: ignore[no-untyped-def]
    result = cli("results", "score", str(logs), "--json")
    assert result.code == 0, result.err
    found = _by_key(json.loads(result.out))
    # The anchor: NVIDIA DGX-1 Mask R-CNN, 207.48 minutes.
    assert found[("maskrcnn", "NVIDIA")]["score_minutes"] == pytest.approx(207.48, abs=0.005)
    # Every NVIDIA DGX-1 score equals the published time its recipe records (recipes/benchmarks).
    checked = 0
    for name, benchmark in kb.benchmarks.items():
        reference = benchmark.build.reference if benchmark.build else None
        if reference is None or benchmark.round != "v0.6":
            continue  # these logs are v0.6's; v2.1's references are checked on v2.1's logs
        entry = found[(reference.log_name or name, "NVIDIA")]
        assert round(entry["score_minutes"], 2) == reference.minutes, name
        assert entry["runs"] == reference.runs and entry["state"] == "complete"
        checked += 1
    assert checked == 6  # maskrcnn, ssd, gnmt, transformer, resnet50, minigo
    # Google's TPU runs are another submitter's: scored apart, never mixed into NVIDIA's.
    assert found[("resnet", "google")]["runs"] == 5 and found[("transformer", "google")]["runs"] == 10
    assert found[("resnet", "google")]["score_minutes"] != found[("resnet", "NVIDIA")]["score_minutes"]


def test_json_lists_each_run_with_file_minutes_status(cli, logs: Path) -> None:  # type: ignore[no-untyped-def]
    folder = logs / "NVIDIA" / "results" / "dgx1_ngc19.05_pytorch" / "maskrcnn"
    data = json.loads(cli("results", "score", str(folder), "--json").out)
    assert len(data) == 1
    entry = data[0]
    assert {"benchmark", "runs", "score_minutes", "results"} <= set(entry)
    assert entry["system"]["nodes"] == "1" and entry["system"]["gpus_per_node"] == "8"
    minutes = {Path(r["file"]).name: r["minutes"] for r in entry["results"]}
    assert minutes["result_0.txt"] == pytest.approx(192.93, abs=0.005)  # the fastest, dropped
    assert all(r["status"] == SUCCESS for r in entry["results"])
    assert entry["results"][0]["quality"]["accuracy"]["BBOX"] > 0.377  # the target reached


def test_minigo_time_comes_from_eval_result(logs: Path) -> None:
    log = parse_file(logs / "NVIDIA" / "results" / "dgx1_ngc19.05_tensorflow" / "minigo" / "result_0.txt")
    (run,) = log.runs
    assert run.stop is None and run.result_seconds == pytest.approx(1725.869)
    assert run_result(run).minutes == pytest.approx(1725.869 / 60)


def test_table_output_names_state_and_runs(cli, logs: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("results", "score", str(logs / "NVIDIA" / "results" / "dgx1_ngc19.05_pytorch" / "ssd"))
    assert result.code == 0
    assert "ssd  NVIDIA · 1xDGX-1 with V100: 22.36 min (5 run(s), complete)" in result.out


# ------------------------------------------------------------------ the scoring rules


def _result(minutes: float | None, status: str = SUCCESS) -> Any:
    from mlcc.results.score import RunResult

    return RunResult("f", 0, str(minutes), status, minutes, None, ())


def test_one_failed_run_is_the_one_dropped_two_mean_no_score() -> None:
    runs = [_result(10.0), _result(11.0), _result(12.0), _result(13.0), _result(50.0, FAILED)]
    value, why = olympic_mean(runs)
    assert value == pytest.approx(12.0) and not why  # 10 dropped as fastest, the failure as slowest
    runs[0] = _result(None, UNFINISHED)
    value, why = olympic_mean(runs)
    assert value is None and "2 runs did not reach the target" in why[0]
    assert olympic_mean([_result(1.0), _result(2.0)])[0] is None


# ------------------------------------------------------------------ bad input


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


@pytest.fixture(scope="module")
def ssd_log(logs: Path) -> bytes:
    return (logs / "NVIDIA" / "results" / "dgx1_ngc19.05_pytorch" / "ssd" / "result_0.txt").read_bytes()


def test_truncated_log_is_unfinished_and_marks_partial(
    cli, tmp_path: Path, ssd_log: bytes, logs: Path
) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "ssd"
    shutil.copytree(logs / "NVIDIA" / "results" / "dgx1_ngc19.05_pytorch" / "ssd", folder)
    for path in folder.iterdir():
        path.chmod(0o644)  # a checkout may be read-only
    cut = ssd_log.index(b"run_stop") + 20  # in the middle of the run_stop line
    _write(folder / "result_4.txt", ssd_log[:cut])
    result = cli("results", "score", str(folder), "--json")
    assert result.code == 0, result.err
    (entry,) = json.loads(result.out)
    statuses = {Path(r["file"]).name: r["status"] for r in entry["results"]}
    assert statuses["result_4.txt"] == UNFINISHED
    assert entry["state"] == "partial" and entry["score_minutes"] is not None
    assert any("unfinished" in n for n in entry["notes"])
    cut_run = next(r for r in entry["results"] if r["file"].endswith("result_4.txt"))
    assert any("run_stop is cut off" in p for p in cut_run["problems"])
    text = cli("results", "score", str(folder))
    assert "run_stop is cut off" in text.err and "result_4.txt" in text.err


def test_log_without_run_stop_is_unfinished(tmp_path: Path, ssd_log: bytes) -> None:
    lines = [line for line in ssd_log.split(b"\n") if b"run_stop" not in line]
    log = parse_file(_write(tmp_path / "r.txt", b"\n".join(lines)))
    assert run_result(log.runs[0]).status == UNFINISHED


def test_aborted_run_is_failed(tmp_path: Path, ssd_log: bytes) -> None:
    data = ssd_log.replace(b'"status": "success"', b'"status": "aborted"')
    log = parse_file(_write(tmp_path / "r.txt", data))
    result = run_result(log.runs[0])
    assert result.status == FAILED and result.minutes == pytest.approx(22.46, abs=0.01)


def test_several_benchmarks_in_one_folder_are_scored_apart(cli, tmp_path: Path, logs: Path) -> None:  # type: ignore[no-untyped-def]
    for benchmark in ("ssd", "transformer"):
        for source in (logs / "NVIDIA" / "results" / "dgx1_ngc19.05_pytorch" / benchmark).iterdir():
            shutil.copy(source, tmp_path / f"{benchmark}-{source.name}")
    (tmp_path / "README").write_text("not a log\n")
    result = cli("results", "score", str(tmp_path), "--json")
    data = json.loads(result.out)
    assert [d["benchmark"] for d in data] == ["ssd", "transformer"]
    assert [d["runs"] for d in data] == [5, 10]
    assert [round(d["score_minutes"], 2) for d in data] == [22.36, 20.34]


def test_duplicate_runs_count_once(cli, tmp_path: Path, logs: Path) -> None:  # type: ignore[no-untyped-def]
    folder = logs / "NVIDIA" / "results" / "dgx1_ngc19.05_pytorch" / "maskrcnn"
    copy = tmp_path / "copy-of-result_1.txt"
    shutil.copy(folder / "result_1.txt", copy)
    data = json.loads(cli("results", "score", str(folder), str(copy), "--json").out)
    (entry,) = data
    assert entry["runs"] == 5 and entry["score_minutes"] == pytest.approx(207.48, abs=0.005)
    (duplicate,) = [r for r in entry["results"] if r["status"] == DUPLICATE]
    assert duplicate["file"] == str(copy) and "result_1.txt" in duplicate["problems"][0]


def test_non_utf8_bytes_are_survived_and_named(cli, tmp_path: Path, ssd_log: bytes) -> None:  # type: ignore[no-untyped-def]
    noisy = b"garbage \xff\xfe\x80 in the training output\n" + ssd_log.replace(
        b'submission_platform: {"value": "1xDGX-1 with V100"',
        b'submission_platform: {"value": "1xDGX-1 \xff with V100"',
    )
    log = parse_file(_write(tmp_path / "r.txt", noisy))
    (run,) = log.runs
    assert run_result(run).status == SUCCESS and run.system["platform"] == "1xDGX-1 \ufffd with V100"
    assert any("not UTF-8" in p for p in run.problems)
    result = cli("results", "score", str(tmp_path))
    assert result.code == 0 and "not UTF-8" in result.err


def test_escape_sequences_from_a_log_never_reach_the_terminal(cli, tmp_path: Path, ssd_log: bytes) -> None:  # type: ignore[no-untyped-def]
    evil = ssd_log.replace(b'"value": "NVIDIA"', b'"value": "NV\\u001b[31mIDIA"')
    _write(tmp_path / "r.txt", evil)
    result = cli("results", "score", str(tmp_path))
    assert "\x1b" not in result.out and "NV?[31mIDIA" in result.out


def test_no_logs_and_missing_paths_are_usage_errors(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "notes.txt").write_text("just text\n")
    result = cli("results", "score", str(tmp_path))
    assert result.code == 2 and "no MLPerf runs in 1 file(s)" in result.err
    assert "Traceback" not in result.err
    result = cli("results", "score", str(tmp_path / "nope"))
    assert result.code == 2 and "no such file or folder" in result.err


def test_markers_split_across_chunks_and_line_numbers(tmp_path: Path) -> None:
    start = b':::MLL 100.0 run_start: {"value": null}\n'
    stop = b':::MLL 700.0 run_stop: {"value": null, "metadata": {"status": "success"}}\n'
    bench = b':::MLL 99.0 submission_benchmark: {"value": "ssd"}\n'
    padding = b"x" * (CHUNK - 3) + b"\n"  # the next marker straddles the chunk boundary
    data = bench + padding + start + b"noise\n" * 10 + b"[1,0]<stdout>:" + stop
    runs, problems, lines = parse_stream(io.BytesIO(data), "mem")
    (run,) = runs
    assert run.benchmark == "ssd" and run.start == 100.0 and run.stop == 700.0 and not problems
    assert run.first_line == 1 and run.last_line == 14 and lines == 14


def test_several_runs_in_one_file(tmp_path: Path) -> None:
    one = (
        b':::MLL 1.0 submission_benchmark: {"value": "gnmt"}\n:::MLL 10.0 run_start: {"value": null}\n'
        b':::MLL 70.0 run_stop: {"value": null, "metadata": {"status": "success"}}\n'
    )
    two = (
        b':::MLL 100.0 run_start: {"value": null}\n'
        b':::MLL 220.0 run_stop: {"value": null, "metadata": {"status": "success"}}\n'
    )
    runs, _, _ = parse_stream(io.BytesIO(one + b"between\n" + two), "mem")
    assert [run_result(r).minutes for r in runs] == [1.0, 2.0]
    assert [r.benchmark for r in runs] == ["gnmt", "gnmt"] and runs[0].run_id != runs[1].run_id


def test_v05_lines_are_read() -> None:
    data = (
        b":::MLPv0.5.0 ssd 1541711000.000 (train.py:10) run_start\n"
        b':::MLPv0.5.0 ssd 1541711000.500 (train.py:20) eval_accuracy: {"epoch": 3, "value": 0.21}\n'
        b':::MLPv0.5.0 ssd 1541712200.000 (train.py:30) run_stop: {"success": true}\n'
    )
    (run,), _, _ = parse_stream(io.BytesIO(data), "mem")
    result = run_result(run)
    assert run.benchmark == "ssd" and run.log_format == "v0.5" and run.quality == 0.21
    assert result.status == SUCCESS and result.minutes == pytest.approx(20.0)


def test_a_100_mb_log_in_bounded_memory(tmp_path: Path, ssd_log: bytes) -> None:
    path = tmp_path / "huge.txt"
    noise = b"I1118 12:00:00.000 train.py:42] step 1234 loss 0.1234 lr 0.0100 images/s 4321.0\n" * 12000
    head, tail = ssd_log.split(b":::MLL", 1)
    with open(path, "wb") as out:
        out.write(head + b":::MLL" + tail.split(b"\n", 1)[0] + b"\n")  # submission_benchmark
        body = tail.split(b"\n", 1)[1]
        out.write(body[: body.index(b"run_stop") - 30])
        while out.tell() < 100 * 1024 * 1024:
            out.write(noise)
        out.write(b"x" * (3 * MAX_LINE) + b"\n")  # one absurd line, no marker
        out.write(body[body.index(b"run_stop") - 30 :])
    tracemalloc.start()
    try:
        log = parse_file(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert log.size > 100 * 1024 * 1024
    assert peak < 4 * (CHUNK + MAX_LINE)  # a few chunks, never the file
    (run,) = log.runs
    assert run_result(run).status == SUCCESS and run_result(run).minutes == pytest.approx(22.46, abs=0.01)


def test_score_groups_nothing_from_empty_input() -> None:
    scores, notes = score([])
    assert scores == [] and notes == []
