"""mlcc.records.NamedTuple makes the classes typing.NamedTuple makes.

Each property builds one class with both, from the same class body, and holds every
behaviour mlcc relies on to be the same: construction (positional, keyword, defaults and
its errors), the tuple it is, repr, equality, hashing, _fields, _field_defaults, _make,
_replace, _asdict, __match_args__, docstrings, methods and class attributes, copying
and pickling.
"""

import copy
import pickle
import typing
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlcc.records import NamedTuple

FIELD_NAMES = ["name", "version", "arch", "source", "x", "items", "kind", "path"]
VALUES = st.one_of(st.none(), st.integers(), st.text(max_size=5), st.tuples(st.integers()))


def _both(fields: List[str], defaults: List[Any], doc: Optional[str] = None) -> Tuple[type, type]:
    """The class ``Record`` with ``fields`` (the last ``len(defaults)`` defaulted), made by
    typing.NamedTuple and by mlcc.records, with a method and a class attribute."""
    lines = ["class Record(Base):"]
    if doc is not None:
        lines.append(f"    {doc!r}")
    first_default = len(fields) - len(defaults)
    for index, field in enumerate(fields):
        default = f" = defaults[{index - first_default}]" if index >= first_default else ""
        lines.append(f"    {field}: Optional[int]{default}")
    lines += ["    LIMIT = 3", "    def count(self) -> int:", "        return len(self) + self.LIMIT"]
    made = []
    for base in (typing.NamedTuple, NamedTuple):
        namespace: Dict[str, Any] = {"Base": base, "Optional": Optional, "defaults": defaults}
        exec("\n".join(lines), namespace)
        made.append(namespace["Record"])
    return made[0], made[1]


def _outcome(make: Callable[[], Any]) -> Tuple[str, str]:
    """What calling ``make`` gives: its result's repr, or the error's type and message
    (the class name in messages is the same for both)."""
    try:
        return ("value", repr(make()))
    except (TypeError, ValueError, AttributeError) as error:
        return (type(error).__name__, str(error))


records = st.integers(min_value=0, max_value=len(FIELD_NAMES)).flatmap(
    lambda size: st.tuples(
        st.just(FIELD_NAMES[:size]),
        st.lists(VALUES, max_size=size),
        st.lists(VALUES, min_size=size, max_size=size),
    )
)


@settings(max_examples=150, deadline=None)
@given(records, st.none() | st.text(max_size=10))
def test_a_record_class_is_typings(
    record: Tuple[List[str], List[Any], List[Any]], doc: Optional[str]
) -> None:
    fields, defaults, values = record
    typed, ours = _both(fields, defaults, doc)
    assert ours is not typed and issubclass(ours, tuple)
    for attribute in ("_fields", "_field_defaults", "__match_args__", "__doc__", "LIMIT", "__name__"):
        assert getattr(ours, attribute) == getattr(typed, attribute), attribute
    assert ours.__annotations__ == typed.__annotations__
    assert ours.__new__.__doc__ == typed.__new__.__doc__
    assert [getattr(ours, f).__doc__ for f in fields] == [getattr(typed, f).__doc__ for f in fields]
    assert ours.__mro__[1:] == typed.__mro__[1:] == (tuple, object)
    assert not hasattr(ours(*values), "__dict__")


@settings(max_examples=150, deadline=None)
@given(
    records,
    st.lists(VALUES, max_size=len(FIELD_NAMES) + 1),
    st.dictionaries(st.sampled_from([*FIELD_NAMES, "other"]), VALUES, max_size=3),
)
def test_records_are_made_and_changed_as_typings_are(
    record: Tuple[List[str], List[Any], List[Any]], args: List[Any], kwargs: Dict[str, Any]
) -> None:
    fields, defaults, values = record
    typed, ours = _both(fields, defaults)
    # construction, with any arguments: the same record or the same error
    assert _outcome(lambda: ours(*args, **kwargs)) == _outcome(lambda: typed(*args, **kwargs))
    assert _outcome(lambda: ours._make(args)) == _outcome(lambda: typed._make(args))
    a, b = ours(*values), typed(*values)
    assert repr(a) == repr(b) and a == b == tuple(values) and hash(a) == hash(b)
    assert a.count() == b.count()
    assert a._asdict() == b._asdict()
    assert [getattr(a, f) for f in fields] == [getattr(b, f) for f in fields] == values
    assert _outcome(lambda: a._replace(**kwargs)) == _outcome(lambda: b._replace(**kwargs))
    assert type(a._replace()) is ours and type(ours._make(values)) is ours
    with pytest.raises(AttributeError):
        a.x = 1  # type: ignore[attr-defined]


@given(st.integers(min_value=1, max_value=len(FIELD_NAMES) - 1))
def test_a_field_without_a_default_after_one_with_is_the_same_error(size: int) -> None:
    body = "\n".join(f"    {f}: int{' = 0' if i == 0 else ''}" for i, f in enumerate(FIELD_NAMES[: size + 1]))
    errors = []
    for base in (typing.NamedTuple, NamedTuple):
        with pytest.raises(TypeError) as error:
            exec(f"class Record(Base):\n{body}\n", {"Base": base})
        errors.append(str(error.value))
    assert errors[0].startswith(errors[1])  # typing also lists every defaulted field before


@pytest.mark.parametrize("field", ["_cls", "_x"])
def test_a_field_may_not_start_with_an_underscore_as_with_typing(field: str) -> None:
    errors = []
    for base in (typing.NamedTuple, NamedTuple):
        with pytest.raises(ValueError) as error:
            exec(f"class Record(Base):\n    x: int\n    {field}: int\n", {"Base": base})
        errors.append(str(error.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("attribute", ["_replace", "__new__", "__getnewargs__", "_fields"])
def test_a_record_may_not_define_what_makes_it_a_record(attribute: str) -> None:
    with pytest.raises(AttributeError, match=attribute):
        exec(f"class Record(Base):\n    x: int\n    {attribute} = None\n", {"Base": NamedTuple})


def test_generic_records_and_the_functional_form_are_refused() -> None:
    with pytest.raises(TypeError, match="generic"):
        exec(
            "class Record(Base, Generic[T]):\n    x: T\n",
            {"Base": NamedTuple, "Generic": typing.Generic, "T": typing.TypeVar("T")},
        )
    with pytest.raises(TypeError, match="class form"):
        NamedTuple("Record", [("x", int)])  # type: ignore[operator,call-overload,unused-ignore]


class Pinned(NamedTuple):
    """A record at module level, so that pickle finds it by name."""

    name: str
    versions: Tuple[str, ...] = ()
    note: Optional["Pinned"] = None

    def label(self) -> str:
        return f"{self.name}@{','.join(self.versions)}"


def test_records_pickle_and_copy_as_themselves() -> None:
    record = Pinned("cuda", ("10.1", "10.2"), Pinned("driver"))
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        again = pickle.loads(pickle.dumps(record, protocol=protocol))
        assert again == record and type(again) is Pinned and type(again.note) is Pinned
    assert copy.copy(record) == record and copy.deepcopy(record) == record
    assert type(copy.deepcopy(record)) is Pinned
    assert record.label() == "cuda@10.1,10.2"
    assert Pinned.__qualname__ == "Pinned" and Pinned.__module__ == __name__
    assert Pinned.__annotations__["note"] == Optional["Pinned"]  # as written, not evaluated


def test_records_match_by_position_and_keyword() -> None:
    record = Pinned("nccl", ("2.4",))
    found = {}
    exec(
        "match record:\n    case Pinned(name, versions=(only,)):\n        found['it'] = (name, only)\n",
        {"record": record, "Pinned": Pinned, "found": found},
    )
    assert found == {"it": ("nccl", "2.4")}
