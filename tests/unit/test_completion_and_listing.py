"""Shell completion offers the values the knowledge base and the installed engines know, for
every option with a fixed set of values; ``mlcc list gpus`` shows the GPU generations and
``mlcc list rounds`` the MLPerf rounds recipes/rounds/ records."""

from __future__ import annotations

import json
from typing import List

import pytest
import yaml

from tests.conftest import REPO, run_mlcc


def _complete(words: str) -> List[str]:
    """What bash completion offers for the last word of ``words``."""
    cword = str(len(words.split()) - (0 if words.endswith(" ") else 1))
    result = run_mlcc([], _MLCC_COMPLETE="bash_complete", COMP_WORDS=words, COMP_CWORD=cword)
    assert result.code == 0, result.err
    return [line.split(",", 1)[1] for line in result.out.splitlines() if "," in line]


@pytest.mark.parametrize(
    ("words", "offered", "not_offered"),
    [
        ("mlcc resolve maskrcnn --gpu h", ["h100"], ["a100"]),
        ("mlcc gen ssd --gpu ", ["v100", "a100", "h100"], []),
        ("mlcc resolve ssd --arch ppc", ["ppc64le", "ppc64el"], ["x86_64"]),
        ("mlcc build ssd --backend bu", ["buildah"], ["podman"]),
        ("mlcc build ssd --backend ", ["buildah", "podman", "docker", "openshift"], []),
        ("mlcc inspect quay.io/x/y --arch x", ["x86_64"], ["ppc64le"]),
        ("mlcc gen maskrcnn --round v2", ["v2.1"], ["v0.6"]),
        ("mlcc resolve maskrcnn --round ", ["v0.6", "v2.1"], []),
        ("mlcc results score x --round v0", ["v0.6"], ["v2.1"]),
        ("mlcc results add x --round ", ["v0.6", "v2.1"], []),
    ],
)
def test_completion_offers_what_the_option_takes(
    words: str, offered: List[str], not_offered: List[str]
) -> None:
    values = _complete(words)
    assert set(offered) <= set(values), values
    assert not set(not_offered) & set(values), values


def test_every_gpu_of_the_recipes_is_listed_with_its_facts() -> None:
    recipe = yaml.safe_load((REPO / "recipes" / "gpus.yaml").read_text())["gpus"]
    listed = json.loads(run_mlcc(["list", "gpus", "--json"]).out)
    assert [row["name"] for row in listed] == [gpu["name"] for gpu in recipe]
    h100 = next(row for row in listed if row["name"] == "h100")
    facts = next(gpu for gpu in recipe if gpu["name"] == "h100")
    assert (h100["sm"], h100["min_cuda"], h100["min_driver"]) == (
        "sm_" + facts["compute_capability"].replace(".", ""),
        facts["min_cuda"],
        facts["min_driver"],
    )


def test_the_gpu_table_marks_what_rests_on_unconfirmed_evidence() -> None:
    result = run_mlcc(["list", "gpus"])
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0].split()[:3] == ["name", "title", "architecture"]
    weak = [
        g["name"]
        for g in yaml.safe_load((REPO / "recipes" / "gpus.yaml").read_text())["gpus"]
        if not g["verified"]
    ]
    for name in weak:
        assert any(line.startswith(f"{name} *") for line in lines), name
    assert "rests on unconfirmed evidence" in result.out


def test_every_round_record_is_listed_with_its_benchmarks_and_the_default_marked() -> None:
    records = sorted((REPO / "recipes" / "rounds").glob("*.yaml"))
    facts = {r["name"]: r for r in (yaml.safe_load(path.read_text()) for path in records)}
    listed = json.loads(run_mlcc(["list", "rounds", "--json"]).out)
    assert [row["name"] for row in listed] == ["v0.6", "v2.1", "v5.0", "v5.1"] == sorted(facts)
    for row in listed:
        assert (row["year"], row["default"]) == (facts[row["name"]]["year"], facts[row["name"]]["default"])
        assert row["rules"] == facts[row["name"]]["scoring"]["rules"]
        assert row["systems"] == list(facts[row["name"]]["systems"])
    v21 = next(row for row in listed if row["name"] == "v2.1")
    assert {"bert", "maskrcnn", "rnnt", "ssd", "unet3d"} <= set(v21["benchmarks"])
    table = run_mlcc(["list", "rounds"]).out.splitlines()
    assert table[0].split() == ["name", "year", "default", "systems", "benchmarks"]
    assert table[2].split()[:3] == ["v0.6", "2019", "yes"]
    assert table[3].split()[:3] == ["v2.1", "2022", "no"]
    assert table[5].split()[:4] == ["v5.1", "2025", "no", "GB200,GB300"]


@pytest.mark.parametrize(
    "command",
    [["gen", "--help"], ["resolve", "--help"], ["results", "score", "--help"], ["results", "add", "--help"]],
)
def test_round_help_lists_the_recorded_rounds(command: List[str]) -> None:
    result = run_mlcc(command)
    assert result.code == 0, result.err
    assert "v0.6, v2.1" in " ".join(result.out.split())


def _kb():  # type: ignore[no-untyped-def]
    from mlcc.app.kb import knowledge_base

    return knowledge_base(None)


@pytest.mark.parametrize(
    ("words", "offered", "not_offered"),
    [
        ("mlcc gen maskrcnn --flavour ", ["runtime", "devel"], []),
        ("mlcc resolve ssd --flavour d", ["devel"], ["runtime"]),
        ("mlcc resolve ssd --cuda 10.", ["10.1", "10.1.243"], ["11.8"]),
        ("mlcc gen ssd --cudnn 7.6", ["7.6.5.32"], []),
        ("mlcc gen ssd --nccl 2.", ["2.8.4"], []),
        ("mlcc gen ssd --python 3.", ["3.6", "3.9"], []),
        ("mlcc gen ssd --gcc ", ["8.5.0"], []),
        ("mlcc gen ssd --with tensorflow=1.1", ["tensorflow=1.13.1"], ["pytorch=1.1.0"]),
        ("mlcc matrix --benchmark ss", ["ssd"], ["maskrcnn"]),
        ("mlcc results compare --benchmark mask", ["maskrcnn"], ["ssd"]),
    ],
)
def test_completion_offers_the_knowledge_bases_values(
    words: str, offered: List[str], not_offered: List[str]
) -> None:
    values = _complete(words)
    assert set(offered) <= set(values), values
    assert not set(not_offered) & set(values), values


@pytest.mark.parametrize(
    "words",
    [
        "mlcc gen --round ",
        "mlcc build --round ",
        "mlcc results score x --round ",
        "mlcc results add --round ",
    ],
)
def test_round_completion_offers_the_rounds_the_recipes_hold(words: str) -> None:
    rounds = _kb().rounds()
    assert len(rounds) >= 2
    assert _complete(words) == list(rounds)


def test_round_completion_after_a_benchmark_offers_its_rounds() -> None:
    kb = _kb()
    assert _complete("mlcc gen maskrcnn --round ") == list(kb.rounds_of("maskrcnn"))
    assert list(kb.rounds_of("maskrcnn")) != list(kb.rounds())  # the benchmark's, not every round
    assert _complete("mlcc gen maskrcnn --round v2") == [
        r for r in kb.rounds_of("maskrcnn") if r.startswith("v2")
    ]


def test_completion_offers_nothing_rather_than_a_traceback_on_broken_recipes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "recipes").mkdir()
    result = run_mlcc(
        [],
        _MLCC_COMPLETE="bash_complete",
        COMP_WORDS=f"mlcc --recipes {tmp_path}/recipes gen --round ",
        COMP_CWORD="5",
    )
    assert result.code == 0, result.err
    assert "Traceback" not in result.out + result.err
