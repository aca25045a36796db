"""The fast canonical JSON writer is byte-identical to json.dumps(indent=2, sort_keys=True)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlcc.render import canonical_json

leaves = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
)
documents = st.recursive(
    leaves,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=40,
)


def _reference(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


@settings(max_examples=400, deadline=None)
@given(documents)
def test_matches_json_dumps(value: Any) -> None:
    assert canonical_json.dumps(value) == _reference(value)


def test_matches_on_a_real_stack_document(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    from mlcc.api import Pins, request_for
    from mlcc.render import render

    stack = resolver.resolve(request_for(kb, "maskrcnn", Pins(cuda="10.1")))
    document = json.loads(render(stack).content("stack.json"))
    assert canonical_json.dumps(document) == _reference(document)


@pytest.mark.parametrize("bad", [float("nan"), {1: "x"}, object()])
def test_refuses_what_json_cannot_spell(bad: Any) -> None:
    with pytest.raises((TypeError, ValueError)):
        canonical_json.dumps(bad)


def test_dicts_with_the_same_keys_in_any_order_share_one_sorted_layout() -> None:
    first = {"b": "1", "a": ["x"], "c": {"z": True, "y": None}}
    second = {"a": ["y"], "c": {"y": False, "z": 2}, "b": "2"}
    for document in (first, second, first, [first, second]):
        assert canonical_json.dumps(document) == _reference(document)
    with pytest.raises(TypeError):
        canonical_json.dumps({"a": "x", 1: "y"})
