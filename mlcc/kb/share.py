"""Equal values of the knowledge base as one object each, before it is cached.

The build makes an object per mention: the same package pin, provenance, version string or
tuple of names read from several recipes and lock files is a separate, equal object each
time. pickle writes an object once per identity (its memo), so every equal copy is written
to the per-user cache, and unpickled by every warm command, once each: about half of the
strings and tuples of the shipped recipes are such copies. Sharing them before the cache is
written halves it, and the time a warm start takes to read it.
"""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Tuple, TypeVar

T = TypeVar("T")


def shared(value: T) -> T:
    """``value`` with its equal strings and tuples (named tuples too) made one object each.

    A string is interned (:func:`sys.intern`). A tuple is replaced by an earlier one of the
    same type whose items are the very same objects (after their own sharing), so values
    that only compare equal (``1``, ``1.0`` and ``True``; a record and a plain tuple with its
    fields) are never merged. Dicts are rebuilt in their order with shared keys and values;
    anything else is kept as it is, unshared inside.

    Args:
        value: The knowledge base (or any part of it); it is not changed.

    Returns:
        An equal value of the same types.
    """
    return _Sharing().share(value)  # type: ignore[no-any-return]


class _Sharing:
    def __init__(self) -> None:
        self.tuples: Dict[Tuple[type, Tuple[int, ...]], Any] = {}  # (type, ids of the items)
        self.done: Dict[int, Any] = {}  # id of a tuple seen -> its shared copy
        self.kept: List[Any] = []  # the tuples seen, so that no id in done is reused

    def share(self, value: Any) -> Any:
        kind = type(value)
        if kind is str:
            return sys.intern(value)
        if kind is dict:
            return {self.share(k): self.share(v) for k, v in value.items()}
        if isinstance(value, tuple) and (kind is tuple or hasattr(kind, "_make")):
            return self._tuple(value)
        return value

    def _tuple(self, value: Tuple[Any, ...]) -> Any:
        seen = self.done.get(id(value))
        if seen is not None:
            return seen
        items = [self.share(item) for item in value]
        kind: Any = type(value)
        key = (kind, tuple(map(id, items)))
        copy = self.tuples.get(key)
        if copy is None:
            unchanged = all(a is b for a, b in zip(items, value))
            copy = value if unchanged else (tuple(items) if kind is tuple else kind._make(items))
            self.tuples[key] = copy
        self.kept.append(value)
        self.done[id(value)] = copy
        return copy
