"""Every command a script calls prints one strict JSON object with --json: gen (the files
written), build (status, content tag, digest), diff (also of two stack.json files, before
anything is built), results add and report; stdout holds nothing else."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.conftest import mlperf_v06
from tests.engine_plugin import installed_engine_plugin

VARIANT = "cuda10.1-cudnn7-ubi8-x86_64"

ENGINE = '''
from mlcc.engines.base import BuildResult, Engine


class Instant(Engine):
    """Builds nothing and says it built: what a script reads of a build is the point."""

    name = "instant"

    def check(self):
        pass

    def is_built(self, job, policy):
        return None

    def find_built(self, job, policy):
        return None

    def build(self, job, policy, log):
        log("step 1/1")
        return BuildResult(job, "built", "built", 1.5, image="sha256:" + "1" * 64)
'''


def _strict(text: str) -> Any:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def instant(tmp_path: Path) -> Iterator[None]:
    """A real installed distribution declaring an engine that builds at once."""
    with installed_engine_plugin(tmp_path, "mlcc_instant", ENGINE, {"instant": "Instant"}):
        yield


def test_gen_json_lists_every_file_with_its_status(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("gen", "ssd", "--json", "-o", "out")
    assert result.code == 0, result.err
    document = _strict(result.out)
    assert document["schema"] == "mlcc-gen/1" and document["variants"] == 1
    assert document["roots"] == {"build": "out", "openshift": "out/openshift"}
    files = {row["path"]: row["status"] for row in document["files"]}
    assert files[f"out/ssd/{VARIANT}/Dockerfile"] == "created"
    assert files["out/openshift/ssd/ssd.yaml"] == "created"
    again = _strict(cli("gen", "ssd", "--json", "-o", "out").out)
    assert {row["status"] for row in again["files"]} == {"unchanged"}


def test_build_json_gives_status_content_tag_and_digest(cli, instant) -> None:  # type: ignore[no-untyped-def]
    result = cli("build", "ssd", "--backend", "instant", "--no-history", "--json")
    assert result.code == 0, result.err
    document = _strict(result.out)  # the build's progress went to stderr
    assert document["schema"] == "mlcc-build/1"
    [image] = document["images"]
    assert image["status"] == "built" and image["variant"] == VARIANT
    assert image["content_tag"].split(":")[-1].startswith("mlcc-")
    assert image["tag"].endswith(f"/ssd:{VARIANT}")
    assert image["digest"] is None and image["seconds"] >= 0  # not pushed; timed by mlcc
    assert "content tag" in result.err


def test_build_json_refuses_dry_run(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("build", "ssd", "--json", "--dry-run")
    assert result.code == 2 and "--dry-run" in result.err


def test_diff_compares_two_stack_files_before_anything_is_built(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("gen", "ssd", "--only", "dockerfile", "-o", "a").code == 0
    assert cli("gen", "ssd", "--cuda", "10.2", "--only", "dockerfile", "-o", "b").code == 0
    [newer] = Path("b/ssd").iterdir()
    table = cli("diff", f"a/ssd/{VARIANT}", str(newer / "stack.json"))
    assert table.code == 0, table.err
    assert any(line.startswith("*") and "CUDA" in line and "10.2." in line for line in table.out.splitlines())
    result = cli("diff", "--json", f"a/ssd/{VARIANT}/stack.json", str(newer))
    document = _strict(result.out)
    assert document["schema"] == "mlcc-diff/1"
    cuda = next(row for row in document["components"] if row["component"] == "CUDA")
    assert cuda["differs"] and cuda["a"].startswith("10.1") and cuda["b"].startswith("10.2")
    assert document["differ"] == sum(row["differs"] for row in document["components"]) >= 1


def test_diff_of_a_file_that_is_no_stack_says_so(cli) -> None:  # type: ignore[no-untyped-def]
    Path("x.json").write_text("{}")
    result = cli("diff", "x.json", "x.json")
    assert result.code == 2 and "x.json is not a stack manifest mlcc wrote" in result.err, result.err


def test_results_add_json_says_what_was_stored(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("gen", "maskrcnn", "--cuda", "10.1", "--only", "dockerfile").code == 0
    log = mlperf_v06("NVIDIA", "dgx1_ngc19.05_pytorch", "maskrcnn") / "result_0.txt"
    stack = f"dockerfiles/maskrcnn/{VARIANT}/stack.json"
    history = str(tmp_path / "h.sqlite")
    result = cli("results", "add", str(log), "--stack", stack, "--history", history, "--json")
    assert result.code == 0, result.err
    document = _strict(result.out)
    assert document["schema"] == "mlcc-results-add/1" and document["history"] == history
    [run] = document["stored"]
    assert run["file"].endswith("result_0.txt") and run["status"] == "success" and run["minutes"] > 0
    again = _strict(cli("results", "add", str(log), "--stack", stack, "--history", history, "--json").out)
    assert again["stored"] == [] and len(again["already"]) == 1


def test_report_json_names_the_page_and_its_cells(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    page = tmp_path / "report.html"
    result = cli("report", "--html", str(page), "--history", str(tmp_path / "none.sqlite"), "--json")
    assert result.code == 0, result.err
    document = _strict(result.out)
    assert document["schema"] == "mlcc-report/1" and document["html"] == str(page) and page.is_file()
    assert document["cells"] and {"benchmark", "status", "variant"} <= set(document["cells"][0])
