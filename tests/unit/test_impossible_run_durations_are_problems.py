"""A run's time comes from its log's stamps, which anyone can write: a run whose run_stop
is at its run_start (0.00 min), 1 ms after it, before it, or 317 years after it, or a run
with a second run_stop, is a problem that makes the score partial with a note -- never a
success counted in a "complete" score. ``results add`` stores no run of zero or negative
length, and ``results score --json`` is strict JSON."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO

STACK = REPO / "dockerfiles" / "maskrcnn" / "cuda10.1-cudnn7-ubi8-x86_64" / "stack.json"
STACK_V21 = (
    REPO / "dockerfiles" / "maskrcnn-v2.1" / "cuda11.8-cudnn8-ubi8-x86_64" / "stack.json"
)  # :::MLLOG runs
START = 1_600_000_000_000
MINUTE = 60_000


def _mllog(key: str, time_ms: Any, value: Any = None, **metadata: Any) -> str:
    event = {"namespace": "", "time_ms": time_ms, "event_type": "POINT_IN_TIME", "key": key}
    event.update(value=value, metadata=metadata)
    return ":::MLLOG " + json.dumps(event)


def _run(start_ms: int, stop_ms: int, *, second_stop: bool = False, quality: Any = 0.38) -> List[str]:
    lines = [
        _mllog("submission_benchmark", start_ms, "maskrcnn"),
        _mllog("submission_org", start_ms, "me"),
        _mllog("submission_platform", start_ms, "node"),
        _mllog("run_start", start_ms),
        _mllog("eval_accuracy", start_ms, quality),
        _mllog("run_stop", stop_ms, status="success"),
    ]
    if second_stop:
        lines.append(_mllog("run_stop", stop_ms + 90 * MINUTE, status="success"))
    return lines


def _logs(tmp_path: Path, odd: List[str]) -> Path:
    """Five runs of 20-24 minutes, the third replaced by ``odd``."""
    folder = tmp_path / "logs"
    folder.mkdir()
    for index in range(5):
        start = START + index * 100 * MINUTE
        lines = odd if index == 2 else _run(start, start + (20 + index) * MINUTE)
        (folder / f"result_{index}.txt").write_text("\n".join(lines) + "\n")
    return folder


ODD = {
    "stop-at-start": _run(START, START),
    "one-millisecond": _run(START, START + 1),
    "negative": _run(START, START - 5 * MINUTE),
    "317-years": _run(START, START + 317 * 366 * 24 * 60 * MINUTE),
    "second-run-stop": _run(START, START + 22 * MINUTE, second_stop=True),
}


@pytest.mark.parametrize("name", sorted(ODD))
def test_an_impossible_run_makes_the_score_partial_with_a_note(cli, tmp_path: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    result = cli("results", "score", str(_logs(tmp_path, ODD[name])), "--json")
    assert result.code == 0, result.err
    (scored,) = json.loads(result.out)
    assert scored["state"] == "partial", scored
    odd = scored["results"][2]
    assert odd["problems"], odd
    assert any("problem" in note or "duration" in note for note in scored["notes"]), scored["notes"]
    if name != "second-run-stop":
        assert odd["status"] != "success"


def test_results_add_refuses_runs_of_zero_or_negative_length_and_stores_nothing(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "good.txt").write_text("\n".join(_run(START, START + 22 * MINUTE)) + "\n")
    (folder / "zero.txt").write_text("\n".join(_run(START, START)) + "\n")
    (folder / "negative.txt").write_text("\n".join(_run(START + MINUTE, START)) + "\n")
    history = tmp_path / "h.sqlite"
    result = cli("results", "add", str(folder), "--stack", str(STACK_V21), "--history", str(history))
    assert result.code == 2, result
    assert "2 run(s) of zero or negative length" in result.err and "nothing was stored" in result.err
    assert "zero.txt: lasted 0 s" in result.err and "negative.txt: lasted -60 s" in result.err
    assert "Traceback" not in result.err and not history.exists()
    # the good log alone is stored, as a success
    (folder / "zero.txt").unlink()
    (folder / "negative.txt").unlink()
    stored = cli("results", "add", str(folder), "--stack", str(STACK_V21), "--history", str(history))
    assert stored.code == 0 and "good.txt: success" in stored.out, stored


def test_results_add_refuses_zero_gpus(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = _logs(tmp_path, _run(START, START + 22 * MINUTE))
    result = cli(
        "results",
        "add",
        str(folder),
        "--stack",
        str(STACK),
        "--history",
        str(tmp_path / "h.sqlite"),
        "--gpus",
        "0",
    )
    assert result.code == 2 and "--gpus" in result.err, result
    assert not (tmp_path / "h.sqlite").exists() or "results" not in result.out


def test_results_score_json_is_strict_json(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    odd = _run(START, START + 22 * MINUTE, quality=None)
    odd[4] = odd[4].replace('"value": null', '"value": NaN')
    result = cli("results", "score", str(_logs(tmp_path, odd)), "--json")
    assert result.code == 0, result.err

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in the JSON")

    json.loads(result.out, parse_constant=refuse)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(min_value=-(10**15), max_value=10**15), st.booleans())
def test_any_duration_scores_a_success_only_when_it_is_a_plausible_time(  # type: ignore[no-untyped-def]
    tmp_path_factory, offset_ms: int, second_stop: bool
) -> None:
    import io

    from mlcc.results.parse import parse_stream
    from mlcc.results.score import MAX_RUN_MINUTES, MIN_RUN_SECONDS, run_result

    text = "\n".join(_run(START, START + offset_ms, second_stop=second_stop)) + "\n"
    (run,) = parse_stream(io.BytesIO(text.encode()), "x.log")[0]
    result = run_result(run)
    plausible = MIN_RUN_SECONDS * 1000 <= offset_ms <= MAX_RUN_MINUTES * MINUTE
    if result.status == "success":
        assert plausible and result.minutes is not None and math.isfinite(result.minutes)
    if not plausible or second_stop:
        assert result.problems, (offset_ms, result)


def test_a_v06_log_whose_quality_is_nan_scores_as_strict_json(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "nan.txt"
    log.write_text(
        ':::MLL 1 submission_benchmark: {"value": "maskrcnn"}\n'
        ':::MLL 100 run_start: {"value": null}\n'
        ':::MLL 200 eval_accuracy: {"value": {"BBOX": NaN, "SEGM": Infinity}}\n'
        ':::MLL 1300 run_stop: {"value": null, "metadata": {"status": "success"}}\n'
    )
    result = cli("results", "score", str(log), "--json")
    assert result.code == 0 and "internal error" not in result.err, result

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} in the JSON")

    (scored,) = json.loads(result.out, parse_constant=refuse)
    assert scored["results"][0]["quality"] == {"BBOX": None, "SEGM": None}
