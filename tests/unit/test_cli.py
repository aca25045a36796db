"""The CLI as a user types it: output, JSON keys, exit codes, no tracebacks."""

from __future__ import annotations

import json

import pytest

import mlcc

from ..conftest import run_mlcc

JSON_KEYS = {"benchmark", "base", "base_image", "arch", "cuda", "cudnn", "nccl", "python", "gcc", "framework"}


def test_version_and_help(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("--version")
    assert result.code == 0 and mlcc.__version__ in result.out
    result = cli("--help")
    assert result.code == 0
    for command in ("list", "resolve", "completion"):
        assert command in result.out
    assert "Exit codes" in result.out


def test_resolve_json_has_the_documented_keys(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("resolve", "maskrcnn", "--cuda", "10.1", "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert set(data) >= JSON_KEYS
    assert data["base"] == "ubi8" and data["arch"] == "x86_64" and data["cuda"] == "10.1.243"
    assert data["base_image"] == "registry.access.redhat.com/ubi8/ubi:8.10"
    assert data["framework"] == {
        "name": "pytorch",
        "version": "1.1.0a0+828a6a3",
        "variant": "ngc19.05-src",
        "install": "source",
    }


def test_resolve_json_for_cpu_and_for_no_framework(cli) -> None:  # type: ignore[no-untyped-def]
    cpu = json.loads(cli("resolve", "tf_cnn_benchmarks", "--cpu", "--json").out)
    assert cpu["cuda"] is None and cpu["cudnn"] is None and cpu["nccl"] is None
    bare = json.loads(cli("resolve", "nccl-tests", "--json").out)
    assert bare["framework"] is None and bare["python"] is None and bare["nccl"]


def test_resolve_table_explains_each_choice(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("resolve", "maskrcnn", "--cuda", "10.1", "-v")
    assert result.code == 0
    assert "cuda10.1-cudnn7-ubi8-x86_64" in result.out
    for component in ("base", "cuda", "cudnn", "nccl", "python", "gcc", "driver"):
        assert f"\n{component} " in result.out
    assert "recipes/cuda.yaml:" in result.out  # -v shows where facts come from


def test_conflict_exits_3_with_rule_and_alternatives(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("resolve", "maskrcnn", "--cuda", "11.8")
    assert result.code == 3
    assert "no compatible stack" in result.err and "[cuda-framework]" in result.err
    assert "--cuda 10.2" in result.err
    result = cli("resolve", "maskrcnn", "--cuda", "11.8", "--json")
    assert result.code == 3 and json.loads(result.out)["error"] == "conflict"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["resolve", "maskrcn"], "did you mean 'maskrcnn'"),
        (["resolve", "maskrcnn", "--cuda", "10.1; rm -rf /"], "is not a version"),
        (["resolve", "maskrcnn", "--arch", "sparc"], "unknown arch"),
        (["resolve", "maskrcnn", "--with", "torch=1.1"], "unknown component 'torch'"),
        (["resolve", "maskrcnn", "--cpu", "--cuda", "10.1"], "contradictory pins"),
        (["resolve", "maskrcnn", "--frobnicate"], "No such option"),
        (["list", "drivers"], "Invalid value"),
    ],
)
def test_usage_errors_exit_2(cli, args, expected) -> None:  # type: ignore[no-untyped-def]
    result = cli(*args)
    assert result.code == 2, result
    assert expected in result.err
    assert "Traceback" not in result.err


@pytest.mark.parametrize(
    "what", ["benchmarks", "bases", "cuda", "cudnn", "nccl", "frameworks", "arches", "gpus"]
)
def test_list_table_and_json(cli, what) -> None:  # type: ignore[no-untyped-def]
    table = cli("list", what)
    assert table.code == 0 and table.out.count("\n") > 2
    rows = json.loads(cli("list", what, "--json").out)
    assert rows and isinstance(rows, list)


def test_list_marks_unverified_rows(cli) -> None:  # type: ignore[no-untyped-def]
    out = cli("list", "cuda").out
    assert "10.1.168 *" in out and "rests on unconfirmed evidence" in out


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts(cli, shell) -> None:  # type: ignore[no-untyped-def]
    result = cli("completion", shell)
    assert result.code == 0 and "_MLCC_COMPLETE" in result.out


def test_completion_offers_benchmarks() -> None:
    result = run_mlcc([], _MLCC_COMPLETE="bash_complete", COMP_WORDS="mlcc resolve mask", COMP_CWORD="2")
    assert "maskrcnn" in result.out


def test_real_process_exit_codes_and_clean_stderr() -> None:
    ok = run_mlcc(["resolve", "maskrcnn", "--cuda", "10.1", "--json"])
    assert ok.code == 0 and json.loads(ok.out)["cuda"] == "10.1.243" and ok.err == ""
    bad = run_mlcc(["resolve", "maskrcnn", "--cuda", "10.1; rm -rf /"])
    assert bad.code == 2 and "Traceback" not in bad.err and bad.out == ""
    conflict = run_mlcc(["resolve", "maskrcnn", "--cuda", "11.8"])
    assert conflict.code == 3 and "Traceback" not in conflict.err


def test_output_is_identical_across_hash_seeds() -> None:
    outputs = {
        run_mlcc(["resolve", "ssd", "--arch", "ppc64le", "--json"], PYTHONHASHSEED=seed).out
        for seed in ("0", "1", "12345")
    }
    assert len(outputs) == 1
