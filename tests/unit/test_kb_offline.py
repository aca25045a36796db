"""The offline pin check: the record `mlcc kb check --record` writes, read by `mlcc lint recipes`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest

from mlcc.errors import IndexUnreachable
from mlcc.kb.index import IndexClient, IndexFile, Page
from mlcc.kbtools.check import Pin, Target
from mlcc.kbtools.offline import (
    RECORD_FILE,
    RecordedIndex,
    checked_pins,
    load_record,
    offline_pin_errors,
    record,
)

PYPI = "https://pypi.org/simple/"


def _record(pages: Dict[str, Any]) -> Dict[str, Any]:
    return {"format": 1, "index": PYPI, "pages": pages}


def test_record_keeps_only_the_pinned_versions(tmp_path: Path) -> None:
    client = IndexClient(PYPI, cache=str(tmp_path))
    page = Page(
        PYPI + "demo/",
        True,
        (
            IndexFile("demo-1.0-cp36-cp36m-manylinux1_x86_64.whl", "u1", ">=3.6"),
            IndexFile("demo-2.0-cp36-cp36m-manylinux1_x86_64.whl", "u2"),
            IndexFile("demo-1.0.tar.gz", "u3", None, True),
        ),
    )
    client._memory[page.url] = page  # what a check run read
    pin = Pin("demo==1.0", "recipes/x.yaml:3", Target("3.6", "x86_64", "2.17"))
    data = record(client, [pin])
    assert data["pages"][PYPI + "demo/"]["files"] == [
        ["demo-1.0-cp36-cp36m-manylinux1_x86_64.whl", ">=3.6", False],
        ["demo-1.0.tar.gz", None, True],
    ]
    recorded = RecordedIndex(json.loads(json.dumps(data))).project("demo")
    assert recorded.files[0].filename.startswith("demo-1.0-") and recorded.found
    with pytest.raises(IndexUnreachable):
        RecordedIndex(data).project("other")


def test_lint_reports_a_pin_with_no_file_for_the_arch_offline(kb, recipes_copy: Path) -> None:  # type: ignore[no-untyped-def]
    # the record says what PyPI says of opencv-python 3.4.1.15: x86_64 wheels only, no sdist
    pins = checked_pins(kb, [])
    assert pins  # every framework build's pins at least
    pages = {
        PYPI + "numpy/": {
            "found": True,
            "files": [["numpy-1.16.3-cp36-cp36m-manylinux1_x86_64.whl", ">=2.7", False]],
        }
    }
    errors = offline_pin_errors(kb, _record(pages))
    # numpy==1.16.3 is pinned for the ppc64le WML CE stacks too: no ppc64le file, no sdist
    assert any("numpy==1.16.3" in f.subject and "ppc64le" in f.message for f in errors), errors
    assert all(":" in f.origin and f.origin.startswith("recipes/") for f in errors)
    (recipes_copy / RECORD_FILE).write_text(json.dumps(_record(pages)), encoding="utf-8")
    assert load_record(str(recipes_copy)) == _record(pages)


def test_the_committed_record_finds_no_error(kb) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import RECIPES

    data = load_record(str(RECIPES))
    assert data is not None, f"recipes/{RECORD_FILE} is missing: run mlcc kb check --record"
    assert offline_pin_errors(kb, data) == []


def test_mlcc_lint_recipes_names_the_recipe_line(recipes_copy: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from mlcc.cli import run as cli_run

    pages = {
        PYPI + "numpy/": {
            "found": True,
            "files": [["numpy-1.16.3-cp36-cp36m-manylinux1_x86_64.whl", ">=2.7", False]],
        }
    }
    (recipes_copy / RECORD_FILE).write_text(json.dumps(_record(pages)), encoding="utf-8")
    code = cli_run(["--recipes", str(recipes_copy), "lint", str(recipes_copy)])
    out = capsys.readouterr().out
    assert code == 8, out
    assert "KB001 error: numpy==1.16.3" in out and "ppc64le" in out
    assert "pinned project(s) not in the record" in out  # the record holds numpy only
    assert all(line.split(":", 2)[1].isdigit() for line in out.splitlines() if "KB001" in line)
    (recipes_copy / RECORD_FILE).unlink()
    assert cli_run(["--recipes", str(recipes_copy), "lint", str(recipes_copy)]) == 0
    assert f"no {RECORD_FILE}" in capsys.readouterr().out
