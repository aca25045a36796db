"""One rule for named choices: ``--gpu``, ``--flavour`` and ``--round`` each match after
surrounding spaces are dropped and case is folded (``--gpu ' A100 '`` was read while
``--round ' V2.1'`` and ``--flavour Runtime`` were refused). A benchmark that exists but not
in the round asked for says so, and which rounds have it."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlcc.validate import choice


@pytest.mark.parametrize(
    "flags",
    [
        ("--round", " V2.1 ", "--gpu", "a100", "--flavour", "runtime"),
        ("--round", "v2.1", "--gpu", " A100 ", "--flavour", "runtime"),
        ("--round", "v2.1", "--gpu", "a100", "--flavour", " Runtime"),
    ],
    ids=["round", "gpu", "flavour"],
)
def test_named_choices_fold_case_and_spaces_alike(cli, flags) -> None:  # type: ignore[no-untyped-def]
    plain = cli("resolve", "maskrcnn", "--round", "v2.1", "--gpu", "a100", "--flavour", "runtime")
    result = cli("resolve", "maskrcnn", *flags)
    assert result.code == 0, result.err
    assert result.out == plain.out


@pytest.mark.parametrize("flag", ["--round", "--gpu", "--flavour"])
def test_an_unknown_choice_is_still_a_usage_error(cli, flag: str) -> None:  # type: ignore[no-untyped-def]
    result = cli("resolve", "maskrcnn", flag, "nosuch")
    assert result.code == 2 and flag in result.err and "nosuch" in result.err, result


def test_a_benchmark_outside_the_round_asked_for_says_so(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("resolve", "nccl-tests", "--round", "v2.1")
    assert result.code == 2, result
    assert "did you mean 'nccl-tests'" not in result.err
    assert "nccl-tests" in result.err and "v2.1" in result.err and "round" in result.err


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.sampled_from(["v2.1", "a100", "runtime", "devel"]),
    st.text(" \t", max_size=3),
    st.text(" \t", max_size=3),
    st.lists(st.booleans(), min_size=7, max_size=7),
)
def test_any_spelling_of_a_choice_folds_to_it(name: str, before: str, after: str, upper: list) -> None:  # type: ignore[type-arg]
    typed = before + "".join(c.upper() if u else c for c, u in zip(name, upper + [False] * 10)) + after
    assert choice(typed, [name, "other"]) == name


def test_a_choice_of_nothing_names_nothing() -> None:
    assert choice("  ", ["a", ""]) is None and choice("b", ["a"]) is None


def test_results_score_reads_its_round_by_the_same_rule(cli) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import REPO

    folder = REPO / "tests" / "data" / "mlperf-v2.1" / "NVIDIA" / "results" / "dgxh100_preview" / "maskrcnn"
    plain = cli("results", "score", str(folder), "--round", "v2.1")
    folded = cli("results", "score", str(folder), "--round", " V2.1 ")
    assert plain.code == 0 and folded.code == 0 and folded.out == plain.out, folded
