"""`mlcc results` on MLLOG logs (MLPerf Training v0.7 and later): NVIDIA's real v2.1 result
folders score as mlcommons' own scorer scores them, by the rules of the round; malformed
:::MLLOG lines are reported with file and line; `results compare` labels each row's round.

The data are NVIDIA's v2.1 result logs under tests/data/mlperf-v2.1 (origin, commit and
licence in tests/data/README.md).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from mlcc.app.results import score_logs
from mlcc.errors import RecipeError
from mlcc.history import History
from mlcc.kb.loader import load
from mlcc.results.mllog import MLLOG_MAX_DEPTH, MllogLineError, parse_event
from mlcc.results.parse import parse_file
from mlcc.results.rules import scoring_rules
from mlcc.results.score import FAILED, SUCCESS, RunResult, olympic_mean
from mlcc.results.store import Placement, StackInfo, add_runs
from tests.conftest import mlperf_v06

V21 = Path(__file__).resolve().parents[1] / "data" / "mlperf-v2.1" / "NVIDIA" / "results"
# (folder, benchmark, the package's path): "summarizer" runs mlcommons' per-folder scorer
# with its compliance check; "parser" its lower-level functions (see the test below).
FOLDERS = [
    ("dgxa100_ngc22.09_pytorch/maskrcnn", "maskrcnn", "summarizer"),
    ("dgxh100_preview/maskrcnn", "maskrcnn", "summarizer"),
    ("dgxa100_ngc22.04_mxnet/resnet", "resnet", "summarizer"),
    ("dgxh100_preview/bert", "bert", "parser"),
]
RULESET = "2.1.0"  # mlperf-logging's name of the v2.1 training rules


def _mlcc_score(folder: Path) -> Dict[str, Any]:
    scored = score_logs(load(), [str(folder)])
    assert len(scored.scores) == 1, scored.scores
    return scored.scores[0].as_json()


def _summarizer_score(folder: Path, benchmark: str) -> float:
    from mlperf_logging.result_summarizer import result_summarizer

    with contextlib.redirect_stdout(io.StringIO()):
        score, _, _ = result_summarizer._compute_strong_score_standalone(
            benchmark, folder.parent.name, False, str(folder), "training", RULESET
        )
    assert score is not None
    return float(score)


def _parser_score(folder: Path) -> float:
    from mlperf_logging.compliance_checker.mlp_parser import parse_file as mlperf_parse
    from mlperf_logging.result_summarizer import result_summarizer

    minutes = []
    dropped = 0
    for log in sorted(folder.glob("result_*.txt")):
        lines, failed = mlperf_parse(str(log), ruleset=RULESET)
        assert failed == []
        (stop,) = [line for line in lines if line.key == "run_stop"]
        # The compliance check is what drops a run that missed its target; without it, a
        # run_stop status other than success is that run, dropped as the summarizer drops it.
        if stop.value["metadata"]["status"] != "success":
            dropped += 1
            continue
        minutes.append(result_summarizer._query_mlperf_strong_scaling_score(lines))
    assert dropped <= 1
    average = result_summarizer._compute_olympic_average(minutes, dropped, 1)
    return float(average) * result_summarizer._get_scaling_factor(str(folder))


@pytest.mark.parametrize(("folder", "benchmark", "path"), FOLDERS, ids=[f[0] for f in FOLDERS])
def test_scores_of_nvidia_v21_folders_equal_mlcommons_scorer(folder: str, benchmark: str, path: str) -> None:
    """mlperf-logging 4.1.68 (the test extra) scores each folder two ways:

    - "summarizer": ``result_summarizer._compute_strong_score_standalone``, the function its
      result_summarizer calls per benchmark folder: the 2.1.0 compliance check of each log (a
      failing run, as the aborted ResNet-50 run 2, is dropped as non-converged), olympic
      average, and the folder's scaling.json; no whole submission tree is needed for it.
    - "parser": for BERT, whose v2.1 logs the package's 2.1.0 compliance rules reject (they
      want ``opt_lamb_epsilon``; NVIDIA's logs say ``opt_epsilon``), the same function's
      steps without the check: the package's ``mlp_parser.parse_file``, its
      ``_query_mlperf_strong_scaling_score`` per run and ``_compute_olympic_average``, a run
      whose run_stop status is not success dropped as non-converged (result_3 of these).
    """
    where = V21 / folder
    mine = _mlcc_score(where)
    theirs = _summarizer_score(where, benchmark) if path == "summarizer" else _parser_score(where)
    assert mine["benchmark"] == benchmark
    assert mine["round"] == "v2.1"
    assert mine["state"] == "complete"
    assert abs(mine["score_minutes"] - theirs) < 0.01, (mine["score_minutes"], theirs)


def test_the_published_v21_times_come_out() -> None:
    """The scores of NVIDIA's v2.1 results table (minutes, two decimals)."""
    found = {f: round(_mlcc_score(V21 / f)["score_minutes"], 2) for f, _, _ in FOLDERS}
    assert found == {
        "dgxa100_ngc22.09_pytorch/maskrcnn": 40.13,
        "dgxh100_preview/maskrcnn": 20.35,
        "dgxa100_ngc22.04_mxnet/resnet": 28.81,
        "dgxh100_preview/bert": 6.38,
    }


def test_an_aborted_run_counts_as_the_slowest_and_scaling_json_applies() -> None:
    scored = _mlcc_score(V21 / "dgxa100_ngc22.04_mxnet" / "resnet")
    statuses = [r["status"] for r in scored["results"]]
    assert statuses == [SUCCESS, SUCCESS, FAILED, SUCCESS, SUCCESS]
    assert scored["scaling_factor"] == pytest.approx(1.0043956043956044)
    succeeded = sorted(r["minutes"] for r in scored["results"] if r["status"] == SUCCESS)
    # the fastest and the aborted run are dropped: the mean of the other three, scaled
    assert scored["score_minutes"] == pytest.approx(sum(succeeded[1:]) / 3 * 1.0043956043956044, abs=1e-3)
    assert any("scaling.json" in note for note in scored["notes"])


def test_v06_logs_keep_their_scores_under_the_rules_table() -> None:
    folder = mlperf_v06("NVIDIA", "dgx1_ngc19.05_pytorch", "maskrcnn")
    scored = _mlcc_score(folder)
    assert scored["round"] == "v0.6"
    assert scored["required_runs"] == 5
    assert round(scored["score_minutes"], 2) == 207.48
    assert scored["scaling_factor"] is None


def test_unet3d_drops_four_at_each_end_and_allows_four_failed_runs() -> None:
    """v2.1's rule for unet3d, read from the rules table: 40 runs, the 4 fastest and 4
    slowest dropped, at most 4 that miss the target."""
    rule = scoring_rules().rule("v2.1", "unet3d")
    assert (rule.runs, rule.dropped, rule.max_failed) == (40, 4, 4)
    runs = [RunResult(f"r{i}", 0, str(i), SUCCESS, float(i), None, ()) for i in range(1, 37)]
    failed = [RunResult(f"f{i}", 0, f"f{i}", FAILED, 1.0, None, ()) for i in range(4)]
    value, why = olympic_mean(runs + failed, rule.dropped, rule.max_failed)
    assert why == []
    assert value == pytest.approx(sum(range(5, 37)) / 32)
    value, why = olympic_mean(runs[:-1] + failed + failed[:1], rule.dropped, rule.max_failed)
    assert value is None
    assert why == ["5 runs did not reach the target: at most 4 may"]


def _mllog(key: str, time_ms: Any, value: Any = None, **metadata: Any) -> str:
    event = {"namespace": "", "time_ms": time_ms, "event_type": "POINT_IN_TIME", "key": key}
    event.update(value=value, metadata=metadata)
    return ":::MLLOG " + json.dumps(event)


def _run(start_ms: int, minutes: float, status: str = "success") -> List[str]:
    return [
        _mllog("submission_benchmark", start_ms, "maskrcnn"),
        _mllog("submission_org", start_ms, "me"),
        _mllog("submission_platform", start_ms, "node"),
        _mllog("run_start", start_ms),
        "some training output between the result lines",
        _mllog("run_stop", start_ms + int(minutes * 60000), status=status),
    ]


BAD_LINES: List[Tuple[str, str]] = [
    (':::MLLOG {"key": "eval_accuracy", "time_ms": NaN, "value": 0.3}', "not a number JSON allows"),
    (':::MLLOG {"key": "eval_accuracy", "time_ms": -5, "value": 0.3}', "is not a time"),
    (':::MLLOG {"key": "eval_accuracy", "time_ms": 1e300, "value": 0.3}', "is not a time"),
    (':::MLLOG {"key": "eval_accuracy", "time_ms": "soon"}', "time_ms is not a number"),
    (":::MLLOG [1, 2]", "not an object"),
    (':::MLLOG {"key": "run_stop", "time_ms": 1, "metadata": [1]}', "metadata is not an object"),
    (':::MLLOG {"key": "a b", "time_ms": 1}', "no valid key"),
    (
        ':::MLLOG {"key": "eval_accuracy", "time_ms": 1, "value": ' + "[" * 100000 + "]" * 100000 + "}",
        "nested",
    ),
    (':::MLLOG {"key": "eval_accuracy", "time_ms": 1, "value": ' + "[" * 30 + "]" * 30 + "}", "nested"),
    (":::MLLOG {not json", "not valid JSON"),
]


@pytest.mark.parametrize(("line", "why"), BAD_LINES, ids=[w for _, w in BAD_LINES])
def test_a_malformed_mllog_line_is_an_error_naming_file_and_line(
    cli: Any, tmp_path: Path, line: str, why: str
) -> None:
    with pytest.raises(MllogLineError, match=why):
        parse_event(line.encode())
    log = tmp_path / "result_0.txt"
    lines = _run(1_600_000_000_000, 20.0)
    lines.insert(4, line)
    log.write_text("\n".join(lines) + "\n")
    result = cli("results", "score", str(log))
    assert result.code == 0, result.err
    assert f"note: {log}: line 5: :::MLLOG line " in result.err
    assert why in result.err
    assert "(1 run(s), no score)" in result.out


def test_a_cut_off_mllog_line_is_reported_as_cut_off(tmp_path: Path) -> None:
    log = tmp_path / "result_0.txt"
    log.write_text("\n".join(_run(1_600_000_000_000, 20.0)) + '\n:::MLLOG {"key": "run_st')
    parsed = parse_file(log)
    assert parsed.runs[0].stop_status == "success"
    assert parsed.runs[0].problems == ("line 7: :::MLLOG line cut off: the log ends in the middle of it",)


def test_a_malformed_line_before_any_run_is_the_files_problem(tmp_path: Path) -> None:
    log = tmp_path / "result_0.txt"
    log.write_text('output\n:::MLLOG {"key": "run_start", "time_ms": -1}\n')
    parsed = parse_file(log)
    assert parsed.runs == ()
    (problem,) = parsed.problems
    assert problem == "line 2: :::MLLOG line run_start: time_ms -1 is not a time (0 .. 10000000000000 ms)"


def test_depth_limit_holds_for_the_deepest_allowed_value() -> None:
    deep = "[" * (MLLOG_MAX_DEPTH - 1) + "]" * (MLLOG_MAX_DEPTH - 1)
    event = parse_event(f':::MLLOG {{"key": "eval_accuracy", "time_ms": 5, "value": {deep}}}'.encode())
    assert event is not None and event.seconds == 0.005


def test_mllog_runs_in_one_file_score_by_the_v21_rules(cli: Any, tmp_path: Path) -> None:
    """Five runs written one after another in one log (run 3 aborted); the JSON names the
    round and its rules document."""
    log = tmp_path / "runs.log"
    lines: List[str] = []
    for index, minutes in enumerate([21.0, 22.0, 30.0, 23.0, 24.0]):
        lines += _run(1_600_000_000_000 + index * 10_000_000, minutes, "aborted" if index == 2 else "success")
    log.write_text("\n".join(lines) + "\n")
    result = cli("results", "score", str(log), "--json")
    assert result.code == 0, result.err
    (scored,) = json.loads(result.out)
    assert scored["round"] == "v2.1"
    assert (
        "training_rules.adoc" in scored["rules"]
        and "@7a0d1c002b69fa1cabdcce3092280feacb40fa6e" in scored["rules"]
    )
    assert [r["status"] for r in scored["results"]] == ["success", "success", "failed", "success", "success"]
    assert scored["score_minutes"] == pytest.approx((22.0 + 23.0 + 24.0) / 3)


def test_round_flag_picks_the_rules_and_an_unknown_round_is_a_usage_error(cli: Any) -> None:
    folder = V21 / "dgxh100_preview" / "maskrcnn"
    result = cli("results", "score", str(folder), "--round", "v0.6", "--json")
    assert result.code == 0, result.err
    (scored,) = json.loads(result.out)
    assert scored["round"] == "v0.6"
    assert scored["scaling_factor"] is None
    result = cli("results", "score", str(folder), "--round", "v9.9")
    assert result.code == 2
    assert "--round v9.9: no such round" in result.err
    assert "v0.6, v2.1" in result.err


def test_every_round_of_the_rules_table_cites_a_full_commit_of_the_rules(recipes_copy: Path) -> None:
    for name, row in scoring_rules().rounds.items():
        assert row.rules.startswith("github:mlcommons/training_policies @"), name
        assert "training_rules.adoc" in row.rules, name
    record = recipes_copy / "rounds" / "v2.1.yaml"
    text = record.read_text()
    record.write_text(
        text.replace('  rules: "github:mlcommons/training_policies @7a0d', '  rules: "somewhere @7a0d', 1)
    )
    with pytest.raises(RecipeError, match="rules"):
        load(str(recipes_copy), use_cache=False)


def test_results_compare_shows_maskrcnn_v06_dgx1_beside_v21_a100_and_h100(cli: Any, tmp_path: Path) -> None:
    """The real runs of three submissions, each stored with the container it ran in (NVIDIA's
    NGC images, named as their system descriptions name them), compared: each row names
    its round, and each round's score is the one its rules give."""
    history = History(tmp_path / "h.sqlite")
    submissions = [
        (mlperf_v06("NVIDIA", "dgx1_ngc19.05_pytorch", "maskrcnn"), "NGC 19.05 PyTorch (NVIDIA v0.6)"),
        (V21 / "dgxa100_ngc22.09_pytorch" / "maskrcnn", "NGC 22.09 PyTorch (NVIDIA v2.1)"),
        (V21 / "dgxh100_preview" / "maskrcnn", "H100 preview PyTorch (NVIDIA v2.1)"),
    ]
    for folder, label in submissions:
        runs = [run for log in sorted(folder.glob("result_*.txt")) for run in parse_file(log).runs]
        stack = StackInfo(label, "maskrcnn", None, None, None, None, None)
        added = add_runs(history, runs, stack, Placement(), "test")
        assert len(added.stored) == 5
    result = cli("results", "compare", "-b", "maskrcnn", "--history", str(history.path))
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0].startswith("maskrcnn  reference 207.48 min")
    # v2.1's references on each GPU, each on its own line (the recipe's reference and
    # gpu_references), the H100 one first as its stack is the fastest
    assert lines[1] == "  v2.1 H100 reference 20.35 min (NVIDIA DGX H100 (8x H100-SXM5-80GB), preview)"
    assert lines[2] == "  v2.1 A100 reference 40.13 min (NVIDIA DGX A100 (8x A100-SXM4-80GB), NGC 22.09)"
    assert lines[3].split()[:2] == ["stack", "round"]
    rows = [line for line in lines if "NVIDIA v" in line]
    # (round, score, vs the reference of the row's own round and GPU): NVIDIA's own runs are
    # their references, so 1.00x each; H100's beside A100's would read 0.51x
    ratios = [
        next(w for w in r.split() if w.endswith("x") and w[:-1].replace(".", "").isdigit()) for r in rows
    ]
    assert [[*r.split(")  ")[1].split()[:2], ratio] for r, ratio in zip(rows, ratios)] == [
        ["v2.1", "20.35", "1.00x"],
        ["v2.1", "40.13", "1.00x"],
        ["v0.6", "207.48", "1.00x"],
    ]
    compared = json.loads(cli("results", "compare", "--json", "--history", str(history.path)).out)
    assert {(s["stack"], s["round"], s["runs"], s["reference"]["gpu"]) for s in compared[0]["stacks"]} == {
        ("NGC 19.05 PyTorch (NVIDIA v0.6)", "v0.6", 5, None),
        ("NGC 22.09 PyTorch (NVIDIA v2.1)", "v2.1", 5, "a100"),
        ("H100 preview PyTorch (NVIDIA v2.1)", "v2.1", 5, "h100"),
    }


def test_results_add_stores_the_round_flag_names(cli: Any, tmp_path: Path) -> None:
    stack = Path(__file__).resolve().parents[2] / "dockerfiles" / "maskrcnn"
    stack_file = stack / "cuda10.1-cudnn7-ubi8-x86_64" / "stack.json"
    folder = V21 / "dgxh100_preview" / "maskrcnn"
    path = str(tmp_path / "h.sqlite")
    result = cli(
        "results", "add", str(folder), "--stack", str(stack_file), "--history", path, "--round", "v0.6"
    )
    assert result.code == 0, result.err
    compared = json.loads(cli("results", "compare", "--json", "--history", path).out)
    assert [s["round"] for s in compared[0]["stacks"]] == ["v0.6"]
    result = cli(
        "results", "add", str(folder), "--stack", str(stack_file), "--history", path, "--round", "v1"
    )
    assert result.code == 2
    assert "--round v1: no such round" in result.err


def test_a_history_from_before_the_round_column_reads_as_v06(tmp_path: Path) -> None:
    """Rows stored before mlcc read MLLOG are v0.6 runs; the column is added on the next add."""
    import sqlite3

    from mlcc.results.store import stored_runs

    history = History(tmp_path / "h.sqlite")
    folder = mlperf_v06("NVIDIA", "dgx1_ngc19.05_pytorch", "ssd")
    runs = parse_file(folder / "result_0.txt").runs
    add_runs(history, runs, StackInfo("old", "ssd", None, None, None, None, None), Placement(), "test")
    with contextlib.closing(sqlite3.connect(history.path)) as connection:
        connection.execute("ALTER TABLE results DROP COLUMN round")
        connection.commit()
    assert [row["round"] for row in stored_runs(history)] == ["v0.6"]
    more = parse_file(V21 / "dgxh100_preview" / "maskrcnn" / "result_0.txt").runs
    add_runs(history, more, StackInfo("new", "maskrcnn", None, None, None, None, None), Placement(), "test")
    assert [row["round"] for row in stored_runs(history)] == ["v0.6", "v2.1"]
    assert not math.isnan(stored_runs(history)[1]["minutes"])


def test_a_stacks_gpu_is_read_from_its_variant_tag_or_its_system() -> None:
    """Runs of a stack resolved with --gpu h100 carry the variant tag sm90; NVIDIA's logs name
    the GPU in submission_platform. Runs naming two GPUs, or none, get no GPU reference."""
    from mlcc.results.reference import published_by_gpu

    by_gpu = published_by_gpu(load())
    assert by_gpu.gpu_of([{"variant": "cuda11.8-cudnn8-ubi8-x86_64-sm80", "system": None}]) == "a100"
    # sm90 is H100's and H200's: the tag alone cannot tell them apart, the system can
    assert by_gpu.gpu_of([{"variant": "cuda11.8-cudnn8-ubi8-x86_64-sm90", "system": None}]) is None
    assert (
        by_gpu.gpu_of([{"variant": "cuda11.8-cudnn8-ubi8-x86_64-sm90", "system": "1xNVIDIA DGX H100"}])
        == "h100"
    )
    assert by_gpu.gpu_of([{"variant": None, "system": "1xNVIDIA DGX A100"}]) == "a100"
    assert by_gpu.gpu_of([{"system": "1xNVIDIA DGX A100"}, {"system": "1xNVIDIA DGX H100"}]) is None
    assert by_gpu.gpu_of([{"variant": "cuda10.1-cudnn7-ubi8-x86_64", "system": "dgx1"}]) is None
    bert = by_gpu.reference("bert", "v2.1", [{"system": "1xNVIDIA DGX H100"}])
    assert bert is not None and (bert.minutes, bert.runs, bert.recipe) == (6.38, 10, "bert-v2.1")
    assert by_gpu.reference("bert", "v0.6", [{"system": "1xNVIDIA DGX H100"}]) is None
