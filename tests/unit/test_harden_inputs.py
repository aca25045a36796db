"""Issue 10, untrusted files: YAML bombs, recursion, deep nesting, FIFOs, binary and odd lint input."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from tests.conftest import SHARED

BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8)
)


def _no_crash(result) -> None:  # type: ignore[no-untyped-def]
    assert "internal error" not in result.err and "Traceback" not in result.err, result.err


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (BOMB, "alias bomb"),
        ("a: &r [*r]\n", "refers to itself"),
        ("a: " + "[" * 5000 + "]" * 5000 + "\n", "nesting depth"),  # libyaml's own limit
        ("a: " + "[" * 100 + "]" * 100 + "\n", "nested deeper than 64"),
        ("a: " + "{b: " * 300 + "1" + "}" * 300 + "\n", "nested deeper than 64"),
    ],
    ids=["bomb", "recursive", "deep-list", "list-100", "deep-map"],
)
def test_hostile_yaml_is_refused(text: str, expected: str) -> None:
    from mlcc.errors import RecipeError
    from mlcc.kb.yamlsrc import parse_yaml, parse_yaml_all

    with pytest.raises(RecipeError, match=expected):
        parse_yaml(text, "x.yaml")
    with pytest.raises(RecipeError, match=expected):
        parse_yaml_all(text, "x.yaml")


def test_bomb_as_matrix_file_is_a_usage_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bomb = tmp_path / "matrix.yaml"
    bomb.write_text(BOMB)
    result = cli("matrix", "--matrix-file", str(bomb))
    _no_crash(result)
    assert result.code == 2 and "alias bomb" in result.err


def test_bomb_as_lint_input_is_a_finding(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(BOMB)
    result = cli("lint", str(bomb))
    _no_crash(result)
    assert result.code == 8 and "alias bomb" in result.out


def _with_fifo(path: Path, action):  # type: ignore[no-untyped-def]
    """Run ``action`` with a FIFO at ``path``; a reader that blocks is freed after 10 s and fails."""
    os.mkfifo(path)
    outcome: dict = {}  # type: ignore[type-arg]
    worker = threading.Thread(target=lambda: outcome.setdefault("result", action()), daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():
        with open(path, "w"):  # unblock the reader so the test process can end
            pass
        worker.join(10)
        pytest.fail("reading a FIFO blocked")
    return outcome["result"]


def test_fifo_as_lint_input_is_refused(tmp_path: Path) -> None:
    from mlcc.lint import lint_paths

    findings = _with_fifo(tmp_path / "x.yaml", lambda: lint_paths([tmp_path / "x.yaml"]))
    assert [f.rule for f in findings] == ["KS001"] and "regular file" in findings[0].message


def test_fifo_as_recipe_is_refused(recipes_copy: Path) -> None:
    from mlcc.errors import RecipeError
    from mlcc.kb.yamlsrc import load_yaml

    target = recipes_copy / "cuda.yaml"
    target.unlink()

    def load() -> str:
        try:
            load_yaml(target, "cuda.yaml")
        except RecipeError as error:
            return str(error)
        return "loaded"

    assert "regular file" in _with_fifo(target, load)


@pytest.mark.parametrize(
    ("name", "content", "rule", "message"),
    [
        ("bin.yaml", b"\x00\x01\xff", "KS001", "binary"),
        ("latin.yaml", b"caf\xe9: 1\n", "KS001", "not UTF-8"),
        ("list.yaml", b"- a\n- b\n", "KS001", "not an API object"),
        ("scalar.yaml", b"just text\n", "KS001", "not an API object"),
        ("Dockerfile", b"\xff\xfeF\x00", "DF000", "binary"),
        ("bare/Dockerfile", b"FROM\nRUN\n", "DF000", "FROM without arguments"),
    ],
)
def test_odd_lint_input_is_a_finding_not_a_crash(  # type: ignore[no-untyped-def]
    cli, tmp_path: Path, name: str, content: bytes, rule: str, message: str
) -> None:
    target = tmp_path / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    result = cli("lint", str(target))
    _no_crash(result)
    assert result.code == 8
    assert f"{rule} error" in result.out and message in result.out


def test_broken_schema_file_is_a_usage_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import REPO

    schemas = tmp_path / "schemas"
    shutil.copytree(SHARED / "schemas", schemas)
    (schemas / "v4.17-standalone-strict" / "buildconfig-build-v1.json").write_text('{"type": 12')
    result = cli("lint", "--schema-dir", str(schemas), str(REPO / "buildconfigs" / "ssd"))
    _no_crash(result)
    assert result.code == 2 and "buildconfig-build-v1.json is not a usable JSON Schema" in result.err
