"""Options types declare their flags once, on dataclass fields (mlcc.flags)."""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from typing import Optional, Tuple

from mlcc.flags import fields_of, flag, flags_of, from_flags, given
from mlcc.resolve.pins import Pins


@dataclass(frozen=True)
class Inner:
    depth: int = flag("--depth", "How deep.", default=1)


@dataclass(frozen=True)
class Sample:
    name: Optional[str] = flag("--name", "A name.", default=None, metavar="NAME")
    tags: Tuple[str, ...] = flag("--tag", "Tags.", default=(), multiple=True)
    inner: Inner = field(default_factory=Inner)
    plain: int = 3


def test_fields_flags_and_what_was_given() -> None:
    assert [f.name for f in fields_of(Sample)] == ["name", "tags", "inner", "plain"]
    assert [f.flag is not None for f in fields_of(Sample)] == [True, True, False, False]
    assert list(flags_of(Sample)) == ["name", "tags"]
    assert flags_of(Sample)["name"][0].metavar == "NAME"
    assert given(Sample()) == {}
    assert given(Sample(tags=("x",), plain=4)) == {"tags": ("x",), "plain": 4}


def test_from_flags_turns_what_click_hands_over_into_the_fields() -> None:
    made = from_flags(Sample, {"name": "a", "tags": ["x", "y"], "plain": 9})
    assert made == Sample(name="a", tags=("x", "y"))  # a list becomes a tuple; non-flags ignored


def test_pins_pickle_round_trip() -> None:
    pins = Pins(cuda="10.1", with_=("tensorflow=1.13",))
    assert pickle.loads(pickle.dumps(pins)) == pins
    assert pins.names_given() == ("--cuda", "--with")
