"""The options types' record (mlcc.flags.options_type): the dataclass behaviour mlcc relies
on, without importing dataclasses on the start-up path."""

from __future__ import annotations

import pickle
import subprocess
import sys
from typing import List, Optional, Tuple

import pytest

from mlcc.flags import FrozenInstanceError, field, fields_of, flag, flags_of, given, options_type, replace
from mlcc.resolve.pins import Pins


@options_type
class Inner:
    depth: int = flag("--depth", "How deep.", default=1)


@options_type
class Sample:
    name: Optional[str] = flag("--name", "A name.", default=None, metavar="NAME")
    tags: Tuple[str, ...] = flag("--tag", "Tags.", default=(), multiple=True)
    inner: Inner = field(default_factory=Inner)
    plain: int = 3

    def __post_init__(self) -> None:
        if self.name == "bad":
            raise ValueError("bad name")


def test_keyword_positional_and_default_construction() -> None:
    assert Sample().name is None and Sample().tags == () and Sample().plain == 3
    assert Sample("a", ("x",)).tags == ("x",)
    assert Sample(name="a") == Sample("a")
    assert Sample().inner == Inner() and Sample().inner is not Sample().inner  # a fresh default each time


def test_wrong_arguments_are_type_errors() -> None:
    with pytest.raises(TypeError, match="unexpected argument 'nmae'"):
        Sample(nmae="a")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="two values"):
        Sample("a", name="b")  # type: ignore[misc]
    with pytest.raises(TypeError, match="takes 4 arguments"):
        Sample("a", (), Inner(), 1, 2)  # type: ignore[call-arg]


def test_frozen_values_with_value_equality() -> None:
    value = Sample(name="a")
    with pytest.raises(FrozenInstanceError):
        value.name = "b"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del value.name  # type: ignore[misc]
    assert value == Sample(name="a") and value != Sample(name="b") and value != "a"
    assert len({value, Sample(name="a"), Sample(name="b")}) == 2
    assert repr(value) == "Sample(name='a', tags=(), inner=Inner(depth=1), plain=3)"


def test_replace_copies_and_checks_again() -> None:
    value = Sample(name="a", tags=("t",))
    changed = replace(value, name="c")
    assert (changed.name, changed.tags, value.name) == ("c", ("t",), "a")
    with pytest.raises(ValueError, match="bad name"):
        replace(value, name="bad")
    with pytest.raises(ValueError, match="bad name"):
        Sample(name="bad")


def test_fields_flags_and_what_was_given() -> None:
    assert [f.name for f in fields_of(Sample)] == ["name", "tags", "inner", "plain"]
    assert list(flags_of(Sample)) == ["name", "tags"]
    assert flags_of(Sample)["name"][0].metavar == "NAME"
    assert given(Sample()) == {}
    assert given(Sample(tags=("x",), plain=4)) == {"tags": ("x",), "plain": 4}
    assert Sample.plain == 3 and Sample.name is None  # class attributes keep the plain default


def test_pickles_round_trip() -> None:
    pins = Pins(cuda="10.1", with_=("tensorflow=1.13",))
    assert pickle.loads(pickle.dumps(pins)) == pins


def test_a_field_without_a_default_is_refused() -> None:
    with pytest.raises(TypeError, match="has no default"):

        @options_type
        class Broken:
            value: int


def test_no_start_up_path_imports_dataclasses() -> None:
    """The reason the record exists: resolve (fast path) and gen's modules load no
    dataclasses, hence no inspect/ast/dis/tokenize."""
    code = (
        "import sys, mlcc.fastpath, mlcc.app.generate, mlcc.app.kb; "
        "print(' '.join(m for m in ('dataclasses', 'inspect') if m in sys.modules))"
    )
    found: List[str] = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert found == []


def test_a_method_the_class_defines_itself_is_kept() -> None:
    @options_type
    class Shown:
        value: int = 1

        def __repr__(self) -> str:
            return f"<{self.value}>"

    assert repr(Shown(value=2)) == "<2>" and Shown() == Shown(value=1)
