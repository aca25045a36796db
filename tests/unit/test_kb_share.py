"""The knowledge base is cached with its equal values as one object each (mlcc.kb.share): the
same model, of the same types, in a pickle about half the size, which every warm command
reads."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any, List, NamedTuple

import pytest

from mlcc.kb.build import build
from mlcc.kb.loader import PICKLE_PROTOCOL, load, recipe_files, recipes_root
from mlcc.kb.share import shared


class Pin(NamedTuple):
    name: str
    version: Any


def _shapes(value: Any) -> Any:
    """The value's types all the way down, in order (what equality does not compare)."""
    if isinstance(value, dict):
        return (dict, [(_shapes(k), _shapes(v)) for k, v in value.items()])
    if isinstance(value, tuple):
        return (type(value), [_shapes(item) for item in value])
    return type(value)


def test_the_shared_knowledge_base_is_the_same_model_in_half_the_pickle() -> None:
    root = recipes_root()
    built = build(root, recipe_files(root))
    cached = shared(built)
    assert cached == built
    assert _shapes(cached) == _shapes(built)
    size = len(pickle.dumps(cached, protocol=PICKLE_PROTOCOL))
    assert size < 0.75 * len(pickle.dumps(built, protocol=PICKLE_PROTOCOL))


def test_equal_strings_and_tuples_become_one_object() -> None:
    a, b = "".join(["torch", "vision"]), "".join(["torchv", "ision"])
    assert a is not b
    first, second = shared(((a, "0.6.0"), (b, "0.6.0")))
    assert first is second
    assert first[0] is second[0]
    record = shared({"x": Pin(a, (1, 2)), "y": Pin(b, (1, 2))})
    assert record["x"] is record["y"]
    assert type(record["x"]) is Pin


def test_values_that_only_compare_equal_are_never_merged() -> None:
    values: List[Any] = [(1,), (True,), (1.0,), Pin("n", 1), ("n", 1), Pin("n", True)]
    assert values[0] == values[1] == values[2] and values[3] == values[4] == values[5]
    result = shared(tuple(values))
    assert len({id(item) for item in result}) == len(values)
    assert [_shapes(item) for item in result] == [_shapes(item) for item in values]
    assert result[1][0] is True and type(result[2][0]) is float


def test_a_cold_load_caches_the_shared_knowledge_base_and_a_warm_one_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MLCC_CACHE_DIR", str(tmp_path))
    cold = load()
    (cache,) = tmp_path.glob("kb-*.pickle")
    assert cache.stat().st_size == len(pickle.dumps(cold, protocol=PICKLE_PROTOCOL))
    assert cache.stat().st_size < 0.75 * len(
        pickle.dumps(build(cold.root, recipe_files(cold.root)), protocol=PICKLE_PROTOCOL)
    )
    warm = load()
    assert warm == cold and warm is not cold
