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


def _as_fragments(value: Any, pick: Any) -> Any:
    """``value`` with the sub-values ``pick`` chooses replaced by their fragments, each
    written for some depth (the one it lands at, or another)."""
    if pick.draw(st.booleans()):
        return canonical_json.fragment(value, "\n" + "  " * pick.draw(st.integers(0, 4)))
    if isinstance(value, dict):
        return {k: _as_fragments(v, pick) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_fragments(v, pick) for v in value]
    return value


@settings(max_examples=400, deadline=None)
@given(documents, st.data())
def test_fragments_spliced_at_any_depth_read_as_the_values_they_stand_for(value: Any, data: Any) -> None:
    spliced = _as_fragments(value, data)
    assert canonical_json.dumps(spliced) == _reference(value)


@pytest.mark.parametrize("items", [["a", "b"], ["a", None], [{"x": "1"}, "b"], ["a", {"x": ["1", "2"]}]])
def test_lists_of_strings_beside_fragments_and_other_values(items: Any) -> None:
    as_fragments = ["a", canonical_json.fragment(items)]
    assert canonical_json.dumps(as_fragments) == _reference(["a", items])
    assert canonical_json.dumps(items) == _reference(items)


def test_stack_json_from_recurring_fragments_is_the_plain_document(kb) -> None:  # type: ignore[no-untyped-def]
    """render() writes stack.json with memoised fragments of the records that recur across
    variants; the bytes are the canonical JSON of the plain document, for the whole set."""
    from mlcc.app.published_set import published
    from mlcc.render.fetches import as_fetched
    from mlcc.render.manifest import dumps, stack_document, stack_text
    from mlcc.render.plan import DEFAULT_OPTIONS, build_plan

    stacks = [o.stack for o in published(kb) if o.published and o.stack]
    assert len(stacks) > 20
    for stack in stacks * 2:  # the second round reads every record from the memo
        plan = build_plan(stack, DEFAULT_OPTIONS)
        fetched = as_fetched(plan.fetches, plan.mirror, plan.build_args)
        where = {"base_image": plan.base_image, "mirror": plan.mirror, "fetches": fetched}
        assert stack_text(stack, **where) == dumps(stack_document(stack, **where))
