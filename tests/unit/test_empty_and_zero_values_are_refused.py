"""Values that mean nothing are usage errors (exit 2) naming their flag, on one line: an
empty --system or --title, a CPU request or volume of 0, an --index-url that is no http(s)
URL (it exited 5, "unreachable", and a newline in it split the message), an --nccl-env
value with a newline (its message split across lines)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import REPO

STACK = REPO / "dockerfiles" / "maskrcnn" / "cuda10.1-cudnn7-ubi8-x86_64" / "stack.json"


def _one_line_usage_error(result, flag: str) -> None:  # type: ignore[no-untyped-def]
    assert result.code == 2, result
    assert flag in result.err and "Traceback" not in result.err and "internal error" not in result.err
    said = [line for line in result.err.splitlines() if flag in line and "rror" in line]
    assert said, result.err
    # a newline in the value is shown escaped, on the line of the message
    assert not any(line.startswith(("NCCL_X", "/simple", "x'", 'x"')) for line in result.err.splitlines())


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (("results", "add", "{log}", "--stack", str(STACK), "--system", ""), "--system"),
        (("results", "compare", "--title", "", "--html", "{tmp}/c.html"), "--title"),
        (("report", "--title", " ", "--html", "{tmp}/m.html"), "--title"),
        (("gen", "maskrcnn", "--build-cpu", "0", "-o", "{tmp}/o"), "--build-cpu"),
        (("gen", "maskrcnn", "--build-memory", "0Gi", "-o", "{tmp}/o"), "--build-memory"),
        (("gen", "maskrcnn", "--storage-class", "fast", "--data-size", "0", "-o", "{tmp}/o"), "--data-size"),
        (("kb", "check", "--index-url", ""), "--index-url"),
        (("kb", "check", "--index-url", "ftp://mirror/simple"), "--index-url"),
        (("kb", "check", "--index-url", "https://mirror\n/simple"), "--index-url"),
        (("kb", "lock", "--index-url", "not a url"), "--index-url"),
        (("gen", "maskrcnn", "--nccl-env", "NCCL_DEBUG=WARN\nNCCL_X=1", "-o", "{tmp}/o"), "--nccl-env"),
        (
            ("gen", "maskrcnn", "--nccl-env", "NCCL_A=1", "--nccl-env", "NCCL_A=2\nx", "-o", "{tmp}/o"),
            "--nccl-env",
        ),
    ],
    ids=[
        "system-empty",
        "compare-title-empty",
        "matrix-title-blank",
        "build-cpu-0",
        "build-memory-0",
        "data-size-0",
        "index-url-empty",
        "index-url-ftp",
        "index-url-newline",
        "index-url-spaces",
        "nccl-env-newline",
        "nccl-env-twice-newline",
    ],
)
def test_a_value_that_means_nothing_is_a_one_line_usage_error(cli, tmp_path: Path, argv, flag: str) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "run.log"
    log.write_text(':::MLL 1 submission_benchmark: {"value": "maskrcnn"}\n')
    result = cli(*(a.format(tmp=tmp_path, log=log) for a in argv))
    _one_line_usage_error(result, flag)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (("build", "maskrcnn", "--no-sbom", "--dry-run"), "--no-sbom"),
        (("build", "maskrcnn", "--registry", "", "--push", "--dry-run"), "--registry"),
        (("build", "maskrcnn", "--registry", " ", "--dry-run"), "--registry"),
        (("build", "--matrix", "-j", "0", "--dry-run"), "-j"),
    ],
    ids=["no-sbom-without-push", "registry-empty-push", "registry-blank", "jobs-0"],
)
def test_a_build_flag_that_means_nothing_is_refused_before_anything_runs(cli, argv, flag: str) -> None:  # type: ignore[no-untyped-def]
    result = cli(*argv)
    _one_line_usage_error(result, flag)
    assert "building" not in result.out and "would build" not in result.out, result.out


@pytest.mark.parametrize("command", [("report",), ("results", "compare")], ids=["report", "results-compare"])
def test_an_html_target_ending_in_a_slash_names_a_folder_not_a_file(cli, tmp_path: Path, command) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "newdir"
    result = cli(*command, "--html", f"{target}/", "--history", str(tmp_path / "h.sqlite"))
    _one_line_usage_error(result, "--html")
    assert not target.exists()


def test_results_score_on_a_fifo_says_it_is_not_a_regular_file(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result = cli("results", "score", str(fifo))
    assert result.code == 2 and "not a regular file" in result.err and "no such file" not in result.err, (
        result
    )
