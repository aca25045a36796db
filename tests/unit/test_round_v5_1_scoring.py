"""`mlcc results score` by MLPerf Training v5.1's rules: NVIDIA's real v5.1 result folders score
as mlcommons' own scorer (mlperf-logging's result_summarizer, ruleset 5.1.0) scores them, with
the folder's scaling.json applied; the round is the one the benchmark implies, the one the
folder names, or the one --round names, and otherwise the user is asked for it. The round
records' counts are mlperf-logging's, and their systems agree with recipes/systems.yaml or
say why not.

The data are under tests/data/mlperf-v5.1 (origin, commit and licence in tests/data/README.md).
"""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path
from typing import Any, Dict, Optional

import pytest

from mlcc.app.results import score_logs
from mlcc.errors import UsageError
from mlcc.kb.loader import load
from mlcc.kb.model import KnowledgeBase
from tests.conftest import REPO, run_mlcc

V51 = REPO / "tests" / "data" / "mlperf-v5.1" / "NVIDIA" / "results"
FOLDERS = [
    "tyche_ngpu72_ngc25.04_pytorch/retinanet",
    "tyche_ngpu72_ngc25.09_nemo/llama31_8b",
    "tyche_ngpu512_ngc25.09_nemo/llama31_405b",
    "tyche_ngpu8_ngc25.09_nemo/llama2_70b_lora",
    "tyche_ngpu8_ngc25.03_hugectr/dlrm_dcnv2",
]
RULES_V51 = "github:mlcommons/training_policies @d4c2f58b28e30312454db67b7874a36777fb60c3"
RULES_V50 = "github:mlcommons/training_policies @7e298673bfdd23fd5ab776c6bb885b10ef91e548"


@pytest.fixture(scope="module")
def knowledge() -> KnowledgeBase:
    return load()


def _score(kb: KnowledgeBase, folder: Path, round_name: Optional[str] = None) -> Dict[str, Any]:
    scored = score_logs(kb, [str(folder)], round_name)
    assert len(scored.scores) == 1, scored.scores
    return scored.scores[0].as_json()


def _summarizer(folder: Path, ruleset: str = "5.1.0") -> Any:
    from mlperf_logging.result_summarizer import result_summarizer

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        score, _, factor = result_summarizer._compute_strong_score_standalone(
            folder.name, folder.parent.name, False, str(folder), "training", ruleset
        )
    assert out.getvalue() == "", out.getvalue()  # every log passed its compliance check
    return score, factor


@pytest.mark.parametrize("folder", FOLDERS)
def test_scores_of_nvidia_v51_folders_equal_mlcommons_summarizer(
    knowledge: KnowledgeBase, folder: str
) -> None:
    """mlperf-logging 4.1.68's ``_compute_strong_score_standalone`` (what its result_summarizer
    runs per benchmark folder): the 5.1.0 compliance check of each log, the olympic mean, and
    the folder's scaling.json."""
    mine = _score(knowledge, V51 / folder)
    theirs, factor = _summarizer(V51 / folder)
    assert mine["round"] == "v5.1"
    assert mine["rules"].startswith(RULES_V51)
    assert mine["state"] == "complete"
    assert abs(mine["score_minutes"] - theirs) < 0.01, (mine["score_minutes"], theirs)
    assert (mine["scaling_factor"] or 1.0) == pytest.approx(factor)


def test_the_scaling_json_multiplies_the_olympic_mean(knowledge: KnowledgeBase) -> None:
    scored = _score(knowledge, V51 / "tyche_ngpu72_ngc25.09_nemo" / "llama31_8b")
    assert scored["scaling_factor"] == pytest.approx(1.0177861477296506)
    minutes = sorted(r["minutes"] for r in scored["results"])
    assert scored["runs"] == scored["required_runs"] == 10
    assert scored["score_minutes"] == pytest.approx(sum(minutes[1:-1]) / 8 * 1.0177861477296506, abs=1e-3)


def test_three_llama31_405b_runs_are_a_result_and_score_their_median(knowledge: KnowledgeBase) -> None:
    scored = _score(knowledge, V51 / "tyche_ngpu512_ngc25.09_nemo" / "llama31_405b")
    assert scored["required_runs"] == 3 and scored["runs"] == 3
    assert scored["scaling_factor"] is None  # the folder has no scaling.json
    minutes = sorted(r["minutes"] for r in scored["results"])
    assert scored["score_minutes"] == pytest.approx(minutes[1], abs=1e-3)


def _copy(folder: str, under: Path) -> Path:
    target = under / Path(folder).name
    shutil.copytree(V51 / folder, target)
    return target


def test_a_benchmark_only_v51_holds_is_scored_by_v51_wherever_it_lies(
    knowledge: KnowledgeBase, tmp_path: Path
) -> None:
    copy = _copy("tyche_ngpu72_ngc25.09_nemo/llama31_8b", tmp_path / "logs")
    assert _score(knowledge, copy)["round"] == "v5.1"


def test_a_benchmark_of_v50_and_v51_outside_a_round_folder_asks_for_the_round(
    knowledge: KnowledgeBase, tmp_path: Path
) -> None:
    copy = _copy("tyche_ngpu72_ngc25.04_pytorch/retinanet", tmp_path / "logs")
    with pytest.raises(UsageError) as caught:
        score_logs(knowledge, [str(copy)])
    assert "a retinanet log may be of rounds v5.0, v5.1" in str(caught.value)
    assert "--round v5.0|v5.1" in (caught.value.hint or "")


def test_round_flag_and_round_folder_decide_between_v50_and_v51(
    knowledge: KnowledgeBase, tmp_path: Path
) -> None:
    copy = _copy("tyche_ngpu72_ngc25.04_pytorch/retinanet", tmp_path / "logs")
    by_flag = _score(knowledge, copy, "v5.0")
    assert by_flag["round"] == "v5.0" and by_flag["rules"].startswith(RULES_V50)
    in_folder = _copy("tyche_ngpu72_ngc25.04_pytorch/retinanet", tmp_path / "training_results_v5.0" / "x")
    assert _score(knowledge, in_folder)["round"] == "v5.0"
    # v5.0 and v5.1 count retinanet alike: the score is the same, only the rules cited differ
    assert (
        by_flag["score_minutes"]
        == _score(knowledge, V51 / "tyche_ngpu72_ngc25.04_pytorch" / "retinanet")["score_minutes"]
    )


def test_a_v21_benchmark_v50_also_holds_keeps_its_round_in_a_v21_folder(knowledge: KnowledgeBase) -> None:
    """bert is v2.1's and v5.0's: the folder (tests/data/mlperf-v2.1) names v2.1."""
    bert = REPO / "tests" / "data" / "mlperf-v2.1" / "NVIDIA" / "results" / "dgxh100_preview" / "bert"
    assert _score(knowledge, bert)["round"] == "v2.1"


def test_the_cli_names_the_v51_rules_it_scored_by() -> None:
    result = run_mlcc(["results", "score", str(V51 / "tyche_ngpu72_ngc25.04_pytorch" / "retinanet")])
    assert result.code == 0, result.err
    assert "retinanet  NVIDIA · 18xNVIDIA GB200: 3.77 min (5 run(s), complete)" in result.out
    assert f"scored by the v5.1 rules: {RULES_V51}" in result.out
    assert "scaled by 1.01389" in result.out


@pytest.mark.parametrize(("round_name", "ruleset"), [("v5.0", "5.0"), ("v5.1", "5.1")])
def test_the_round_records_count_runs_as_mlperf_logging_does(
    knowledge: KnowledgeBase, round_name: str, ruleset: str
) -> None:
    """The benchmarks and result-file counts of mlperf-logging 4.1.68's benchmark_meta, and
    its summarizer's one dropped run at each end (max_dropped_scores, 1 but for unet3d)."""
    from mlperf_logging import benchmark_meta

    scoring = knowledge.round(round_name).scoring
    allowed = set(benchmark_meta.get_allowed_benchmarks("training", ruleset))
    assert {name for name, _ in scoring.benchmarks} == allowed
    counts = benchmark_meta.get_result_file_counts("training")
    for name in allowed:
        own = scoring.counts(name)
        assert (own.runs, own.dropped, own.max_failed) == (counts[name], 1, 1), name
    assert scoring.scaling_json is True


def test_v06_stays_the_round_a_bare_benchmark_name_means(knowledge: KnowledgeBase) -> None:
    assert knowledge.default_round == "v0.6"
    assert [r.name for r in knowledge.round_records if r.default] == ["v0.6"]


def test_round_systems_agree_with_recipes_systems_or_both_say_why(knowledge: KnowledgeBase) -> None:
    """A round's system (the counts its config files bind processes by) and recipes/systems.yaml's
    machine of the same name (what a run pod asks for): the same GPUs always; the same cores and
    threads, or a note in each naming the other record."""
    differing = []
    for record in knowledge.round_records:
        for system in record.systems:
            machine = knowledge.systems.get(system.name)
            if machine is None:
                continue
            assert machine.gpus == system.gpus, (record.name, system.name)
            cores = system.sockets * system.socket_cores
            if (cores, cores * system.hyperthreads) == (machine.cores, machine.threads):
                continue
            differing.append((record.name, system.name))
            assert "recipes/systems.yaml" in (system.prov.note or ""), (record.name, system.name)
            assert f"recipes/rounds/{record.name}.yaml" in (machine.prov.note or ""), (
                record.name,
                system.name,
            )
    # v2.1's DGX H100 binds by its DGX A100-copied 2x64 cores; v5.0's is Eos-dfw's HGX H100
    assert differing == [("v2.1", "DGXH100"), ("v5.0", "DGXH100")]


def test_the_v5_systems_are_nvidias_trays_and_nodes(knowledge: KnowledgeBase) -> None:
    shapes = {
        (record.name, s.name): (s.gpu, s.gpus, s.sockets * s.socket_cores)
        for record in knowledge.round_records
        if record.name in ("v5.0", "v5.1")
        for s in record.systems
    }
    assert shapes == {
        ("v5.0", "GB200"): ("gb200", 4, 144),
        ("v5.0", "DGXB200"): ("b200", 8, 112),
        ("v5.0", "DGXH100"): ("h100", 8, 64),
        ("v5.1", "GB200"): ("gb200", 4, 144),
        ("v5.1", "GB300"): ("gb300", 4, 144),
    }


def test_an_mllog_benchmark_no_round_holds_asks_for_the_round(
    knowledge: KnowledgeBase, tmp_path: Path
) -> None:
    """Three rounds write :::MLLOG; a benchmark none of them holds tells none of them."""
    logs = tmp_path / "mine"
    logs.mkdir()
    for run in range(3):
        start = 1_759_900_000_000 + run * 10_000_000
        (logs / f"result_{run}.txt").write_text(
            f':::MLLOG {{"key": "submission_benchmark", "time_ms": {start}, "value": "mybench",'
            ' "metadata": {}}\n'
            f':::MLLOG {{"key": "run_start", "time_ms": {start}, "value": null, "metadata": {{}}}}\n'
            f':::MLLOG {{"key": "run_stop", "time_ms": {start + 600_000}, "value": null,'
            ' "metadata": {"status": "success"}}\n'
        )
    with pytest.raises(UsageError) as caught:
        score_logs(knowledge, [str(logs)])
    assert "a mllog log may be of rounds v2.1, v5.0, v5.1" in str(caught.value)
    scored = _score(knowledge, logs, "v5.1")
    assert (scored["round"], scored["score_minutes"], scored["required_runs"]) == ("v5.1", 10.0, None)
