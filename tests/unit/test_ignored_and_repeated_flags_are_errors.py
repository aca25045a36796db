"""A flag that would be silently ignored, silently repeated (last wins) or silently defaulted
is an error naming it, with what is allowed and a suggestion."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

REPEATED = [
    ("gen", "maskrcnn", "--nccl-env", "NCCL_DEBUG=WARN", "--nccl-env", "NCCL_DEBUG=INFO", "-o", "out"),
    ("kb", "lock", "--index-url", "https://a.example/simple", "--index-url", "https://b.example/simple"),
    ("kb", "check", "--ttl", "1", "--ttl", "2"),
    ("results", "compare", "--html", "a.html", "--html", "b.html"),
]


@pytest.mark.parametrize("args", REPEATED, ids=lambda a: " ".join(a[:2]))
def test_a_repeated_single_value_is_refused(cli, args) -> None:  # type: ignore[no-untyped-def]
    result = cli(*args)
    assert result.code == 2, result.err
    flag = next(a for a in args if a.startswith("--") and args.count(a) > 1)
    assert flag in result.err and ("given twice" in result.err or "given 2 times" in result.err)
    assert "hint:" in result.err


def test_different_nccl_settings_still_repeat(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli(
        "gen", "maskrcnn", "--nccl-env", "NCCL_DEBUG=WARN", "--nccl-env", "NCCL_P2P_LEVEL=NVL", "-o", "o"
    )
    assert result.code == 0, result.err


IGNORED = [
    (("gen", "maskrcnn", "--gpus", "2", "--only", "dockerfile"), "--gpus", "--only dockerfile"),
    (("gen", "maskrcnn", "--namespace", "mlperf", "--format", "script"), "--namespace", "--format script"),
    (
        ("gen", "maskrcnn", "--openshift", "3.11", "--format", "singularity"),
        "--openshift",
        "--format singularity",
    ),
    (
        ("gen", "maskrcnn", "--storage-class", "fast", "--data-size", "1Gi", "--results-size", "5Gi"),
        "--results-size",
        "--results-claim",
    ),
]


@pytest.mark.parametrize("args, flag, why", IGNORED, ids=lambda a: a if isinstance(a, str) else "")
def test_a_flag_that_would_be_ignored_is_refused(cli, args, flag: str, why: str) -> None:  # type: ignore[no-untyped-def]
    result = cli(*args, "-o", "out")
    assert result.code == 2, result.err
    assert flag in result.err and why in result.err and "hint:" in result.err
    assert not Path("out").exists()  # nothing written


def test_the_flags_that_are_used_still_work(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("gen", "maskrcnn", "--gpus", "2", "-o", "a").code == 0
    assert cli("gen", "maskrcnn", "--namespace", "mlperf", "--only", "openshift").code == 0
    storage = (
        "--storage-class",
        "fast",
        "--data-size",
        "1Gi",
        "--results-size",
        "5Gi",
        "--results-claim",
        "r",
    )
    assert cli("gen", "maskrcnn", *storage, "-o", "b").code == 0


def test_a_folder_as_matrix_file_is_named_a_folder(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("matrix", "--matrix-file", str(tmp_path))
    assert result.code == 2
    assert "is a folder" in result.err and "missing" not in result.err and "--matrix-file" in result.err


def test_results_compare_html_errors_name_html(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("results", "compare", "--html", str(tmp_path))
    assert result.code == 2 and "--html" in result.err and not re.search(r"(?<![\w-])-o\b", result.err)


@pytest.mark.parametrize("field, limit", [("title", 200), ("note", 4000)])
def test_an_overlong_recipe_text_is_refused_at_load(cli, recipes_copy: Path, field: str, limit: int) -> None:  # type: ignore[no-untyped-def]
    recipe = recipes_copy / "benchmarks" / "maskrcnn.yaml"
    data = yaml.safe_load(recipe.read_text(encoding="utf-8"))
    assert field in data
    data[field] = "x" * 100_000
    recipe.write_text(yaml.safe_dump(data, width=1 << 20), encoding="utf-8")
    result = cli("--recipes", str(recipes_copy), "list", "benchmarks")
    assert result.code == 2
    assert "maskrcnn.yaml" in result.err and f"at most {limit:,}" in result.err
    assert len(result.err) < 2_000  # the text itself is not echoed back
