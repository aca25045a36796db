"""The knowledge base shares equal values (mlcc.kb.sharing) and stays the same value."""

import pickle
from typing import Any, Iterator, NamedTuple, Tuple

from hypothesis import given
from hypothesis import strategies as st

from mlcc.kb import load
from mlcc.kb.sharing import share_equal_values


class Pair(NamedTuple):
    left: Any
    right: Any


def _nodes(value: Any, path: str = "") -> Iterator[Tuple[str, Any]]:
    yield path, value
    if isinstance(value, (tuple, list)):
        for index, item in enumerate(value):
            yield from _nodes(item, f"{path}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _nodes(item, f"{path}.{key}")


def _same_types(a: Any, b: Any) -> bool:
    return [(p, type(v)) for p, v in _nodes(a)] == [(p, type(v)) for p, v in _nodes(b)]


atoms = st.one_of(
    st.booleans(), st.integers(-2, 2), st.floats(allow_nan=False), st.text(max_size=2), st.none()
)
values = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda t: Pair(*t)),
        st.lists(inner, max_size=3).map(tuple),
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(max_size=2), inner, max_size=2),
    ),
    max_leaves=12,
)


@given(st.lists(values, max_size=6).map(tuple))
def test_sharing_keeps_every_value_and_type(value: Tuple[Any, ...]) -> None:
    """``True`` and ``1``, ``0.0`` and ``-0.0``, ``(1,)`` and ``(True,)`` are equal in
    Python; a shared value must still be the one of its own type."""
    shared = share_equal_values(value)
    assert shared == value
    assert _same_types(shared, value)
    assert [repr(v) for _, v in _nodes(shared)] == [repr(v) for _, v in _nodes(value)]


def test_equal_records_become_one_object() -> None:
    first, second = Pair("x86_64", (1, 2)), Pair("x86_64", (1, 2))
    shared = share_equal_values((first, second, Pair(True, (True, 2))))
    assert shared[0] is shared[1]
    assert shared[2].left is True and shared[2].right[0] is True


def _unshared(value: Any) -> Any:
    """A deep copy in which no two places hold one object: the knowledge base as the
    recipes' YAML gives it, before sharing."""
    if isinstance(value, tuple):
        items = [_unshared(v) for v in value]
        make = getattr(type(value), "_make", None)
        return make(items) if make is not None else type(value)(items)
    if isinstance(value, str):
        return "".join(list(value))  # a new string object of the same text
    if isinstance(value, dict):
        return {_unshared(k): _unshared(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unshared(v) for v in value]
    return value


def test_the_knowledge_base_is_built_shared_and_unchanged() -> None:
    built = load(use_cache=False)
    unshared = _unshared(built)
    assert unshared == built and _same_types(unshared, built)
    shared_size, unshared_size = len(pickle.dumps(built, protocol=5)), len(pickle.dumps(unshared, protocol=5))
    assert shared_size < 0.7 * unshared_size
    assert pickle.loads(pickle.dumps(built, protocol=5)) == built
