"""Command-line flags described once, on the dataclass fields they fill.

An options type (``Pins``, ``BuildPolicy``, ``ClusterOptions`` ...) is a frozen dataclass
whose fields carry a :class:`Flag` in their metadata: the flag's name, help and shape.
The CLI derives its click options from it, and the values a command receives go back into
the same type by field name, so a new option is one field, not six edits.

Nothing here imports click: the Python API uses these types without the CLI.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Dict, NamedTuple, Optional, Sequence, Tuple, Type, TypeVar

if TYPE_CHECKING:
    from mlcc.kb.model import KnowledgeBase

T = TypeVar("T")


class Flag(NamedTuple):
    name: str  # "--cuda"
    help: str
    metavar: Optional[str] = None
    multiple: bool = False
    is_flag: bool = False
    choices: Optional[Tuple[str, ...]] = None
    show_default: bool = False
    secondary: Optional[str] = None  # "--no-tls-verify" for an on/off pair
    value_type: Optional[type] = None  # int, for counts
    # Turns what click hands over (a string, a tuple of strings) into the field's value.
    convert: Optional[Callable[[Any], Any]] = None
    group: str = ""  # which commands take it, when a type spans several (e.g. "run")
    short: Optional[str] = None  # "-v" beside "--verbose"
    # Help that names facts of the recipes (a public host): written from the knowledge base
    # when --help is shown, never at start; ``help`` stands when the recipes cannot load.
    describe: Optional[Callable[[KnowledgeBase], str]] = None


def flag(default: Any, name: str, help: str, **shape: Any) -> Any:
    """A dataclass field with a default and the flag that sets it."""
    return dataclasses.field(default=default, metadata={"flag": Flag(name, help, **shape)})


def flags_of(cls: type, groups: Optional[Sequence[str]] = None) -> Dict[str, Tuple[Flag, Any]]:
    """``{field name: (flag, default)}`` in declaration order, optionally only some groups."""
    found: Dict[str, Tuple[Flag, Any]] = {}
    for item in dataclasses.fields(cls):
        spec = item.metadata.get("flag")
        if spec is None or (groups is not None and spec.group not in groups):
            continue
        found[item.name] = (spec, item.default)
    return found


def from_flags(cls: Type[T], values: Dict[str, Any], groups: Optional[Sequence[str]] = None) -> T:
    """Build ``cls`` from what the flags received (keyed by field name); converters applied."""
    kwargs: Dict[str, Any] = {}
    for name, (spec, _default) in flags_of(cls, groups).items():
        if name not in values:
            continue
        value = values[name]
        if spec.convert is not None and value is not None:
            value = spec.convert(value)
        elif spec.multiple and value is not None:
            value = tuple(value)
        kwargs[name] = value
    return cls(**kwargs)


def _default(item: dataclasses.Field) -> Any:  # type: ignore[type-arg]
    if item.default_factory is not dataclasses.MISSING:
        return item.default_factory()
    return item.default


def given(instance: Any) -> Dict[str, Any]:
    """The fields that differ from their defaults (what the user actually set)."""
    return {
        item.name: getattr(instance, item.name)
        for item in dataclasses.fields(instance)
        if getattr(instance, item.name) != _default(item)
    }
