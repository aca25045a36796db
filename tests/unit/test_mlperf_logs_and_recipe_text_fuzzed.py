"""Hypothesis on two readers of outside input: MLPerf result logs and recipes' text fields.

Logs: the result lines of a real v0.6 log (tests/data, NVIDIA's ResNet-50) and v0.5 lines,
cut, reordered, duplicated and given other times, keys and JSON payloads (any type, deep
nesting, non-finite numbers, bytes that are not UTF-8); `mlcc results score` on them gives
runs, problems or a clear error, never a traceback. Recipes: every text field of a recipe
(titles, notes, sources, names) given hostile text; loading gives the recipe or a RecipeError
naming the file, never a traceback.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any, List

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlcc.errors import MlccError
from mlcc.results.parse import LogFile, parse_stream
from mlcc.results.score import score
from tests.conftest import RECIPES, mlperf_v06

FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=150,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

REAL = (mlperf_v06("NVIDIA", "dgx1_ngc19.05_mxnet", "resnet") / "result_0.txt").read_bytes()
MARKED = [line for line in REAL.splitlines() if line.startswith(b":::MLL")][:40]
V05 = [
    b":::MLPv0.5.0 resnet 1541710000.123 (main.py:10) run_start",
    b':::MLPv0.5.0 resnet 1541710001.5 (main.py:20) eval_accuracy: {"epoch": 1, "value": 0.75}',
    b':::MLPv0.5.0 resnet 1541713600.0 (main.py:30) run_stop: {"success": true}',
]
KEYS = [
    "run_start",
    "run_stop",
    "eval_accuracy",
    "eval_result",
    "submission_entry",
    "submission_org",
    "submission_benchmark",
    "submission_platform",
    "submission_status",
    "other_key",
]

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["value", "metadata", "status", "timestamp", "success", "nodes", "x"]),
            inner,
            max_size=3,
        )
    ),
    max_leaves=8,
)
STAMPS = st.sampled_from(
    [b"1558576743.667", b"0", b"-1", b"1e999", b"-1e999", b"9" * 400, b"1.2.3", b"1e", b"00.0"]
)


def _payload(value: Any) -> bytes:
    return json.dumps(value, allow_nan=True).encode()


@st.composite
def result_line(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["real", "v05", "made", "deep", "bytes"]))
    if kind == "real":
        return draw(st.sampled_from(MARKED))
    if kind == "v05":
        return draw(st.sampled_from(V05))
    if kind == "deep":
        depth = draw(st.integers(10, 5000))  # past json's recursion limit too
        return (
            b":::MLL 1558576743.667 eval_accuracy: " + b"[" * depth + b"]" * draw(st.sampled_from([0, depth]))
        )
    if kind == "bytes":
        return b":::MLL " + draw(st.binary(max_size=60))
    stamp = draw(STAMPS)
    key = draw(st.sampled_from(KEYS)).encode()
    return b":::MLL " + stamp + b" " + key + b": " + _payload(draw(JSON))


def _score(data: bytes) -> None:
    runs, problems, lines = parse_stream(io.BytesIO(data), "log.txt")
    assert lines >= 0 and all(isinstance(p, str) for p in problems)
    scores, _notes = score([LogFile("log.txt", len(data), lines, runs, problems)])
    assert all(s.benchmark for s in scores)


@FUZZ
@given(lines=st.lists(result_line(), min_size=1, max_size=12), cut=st.booleans())
def test_any_mlperf_log_gives_runs_or_problems(lines: List[bytes], cut: bool) -> None:
    data = b"\n".join(lines) + (b"" if cut else b"\n")
    _score(data)


@pytest.mark.parametrize(
    "line",
    [
        b":::MLL 1558576743.667 run_start: " + b"[" * 100_000 + b"]" * 100_000,
        b':::MLL 1558576743.667 eval_accuracy: {"value": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        b":::MLL 1e999 run_start: {}",
        b':::MLL 1558576743.667 submission_entry: {"value": "' + b"(" * 10_000 + b'"}',
        b":::MLL 1558576743.667 submission_entry: {\"value\": \"{'nodes': '" + b"[" * 3000 + b"'}\"}",
    ],
)
def test_hostile_result_lines_are_problems(line: bytes) -> None:
    _score(line + b"\n" + MARKED[-1] + b"\n")


def test_results_score_cli_on_a_fuzzed_log(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "result_0.txt"
    log.write_bytes(b":::MLL 1558576743.667 run_start: " + b"[" * 100_000 + b"\n" + REAL)
    result = cli("results", "score", "--json", str(log))
    assert result.code in (0, 5) and "Traceback" not in result.err and "internal error" not in result.err, (
        result
    )


# ----------------------------------------------------------------------------- recipes

TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        ["", " ", "\x00", "\x1b[2J", "a\nb", "{{", "%(x)s", "${X}", "'", '"', "\\", "\u2028", "a" * 5000]
    ),
    st.integers(),
    st.none(),
    st.lists(st.text(max_size=5), max_size=2),
    st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=2),
)
TEXT_FIELDS = ("title", "note", "description", "name", "source", "origin", "reason", "url")


def _text_paths(value: Any, path: tuple = ()) -> List[tuple]:  # type: ignore[type-arg]
    found: List[tuple] = []  # type: ignore[type-arg]
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str) and (key in TEXT_FIELDS or key.endswith(("title", "note", "notes"))):
                found.append((*path, key))
            found += _text_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _text_paths(item, (*path, index))
    return found


RECIPE_FILES = sorted(
    p.relative_to(RECIPES).as_posix()
    for p in RECIPES.rglob("*.yaml")
    if _text_paths(yaml.safe_load(p.read_text()))
)


@pytest.fixture(scope="module")
def recipes_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("recipes") / "recipes"
    shutil.copytree(RECIPES, target)
    return target


@settings(FUZZ, max_examples=6)  # each example loads the whole knowledge base
@given(data=st.data())
def test_any_text_in_a_recipe_field_loads_or_is_a_recipe_error(
    recipes_template: Path, data: st.DataObject
) -> None:
    from mlcc.kb import load

    name = data.draw(st.sampled_from(RECIPE_FILES))
    path = recipes_template / name
    original = path.read_text()
    document = yaml.safe_load(original)
    field = data.draw(st.sampled_from(_text_paths(document)))
    parent = document
    for key in field[:-1]:
        parent = parent[key]
    parent[field[-1]] = data.draw(TEXT)
    try:
        path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
        try:
            load(str(recipes_template))
        except MlccError as error:
            assert str(error)
    finally:
        path.write_text(original)
