"""Command-line flags described once, on the fields of the options types they fill.

An options type (``Pins``, ``BuildPolicy``, ``ClusterOptions`` ...) is a frozen dataclass
whose fields carry a :class:`Flag` in their metadata: the flag's name, help and shape. The
CLI derives its click options from it, and the values a command receives go back into the
same type by field name, so a new option is one field, not six edits.

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


class Field(NamedTuple):
    """One field of an options type: its name, its default (or a factory) and its flag."""

    name: str
    default: Any
    factory: Optional[Callable[[], Any]] = None
    flag: Optional[Flag] = None

    def fresh_default(self) -> Any:
        return self.factory() if self.factory is not None else self.default


def flag(name: str, help: str, *, default: Any, **shape: Any) -> Any:
    """A dataclass field with a default and the flag that sets it (``default`` by keyword,
    as :func:`dataclasses.field` takes it)."""
    return dataclasses.field(default=default, metadata={"flag": Flag(name, help, **shape)})


def fields_of(cls_or_instance: Any) -> Tuple[Field, ...]:
    """The fields of an options type (a dataclass), each with its flag if it has one."""
    return tuple(_field(item) for item in dataclasses.fields(cls_or_instance))


def _field(item: dataclasses.Field[Any]) -> Field:
    factory = item.default_factory
    return Field(
        name=item.name,
        default=None if item.default is dataclasses.MISSING else item.default,
        factory=None if factory is dataclasses.MISSING else factory,
        flag=item.metadata.get("flag"),
    )


def flags_of(cls: type, groups: Optional[Sequence[str]] = None) -> Dict[str, Tuple[Flag, Any]]:
    """``{field name: (flag, default)}`` in declaration order, optionally only some groups."""
    found: Dict[str, Tuple[Flag, Any]] = {}
    for item in fields_of(cls):
        spec = item.flag
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


def given(instance: Any) -> Dict[str, Any]:
    """The fields that differ from their defaults (what the user actually set)."""
    return {
        item.name: getattr(instance, item.name)
        for item in fields_of(instance)
        if getattr(instance, item.name) != item.fresh_default()
    }


def given_flags(instance: Any) -> Tuple[str, ...]:
    """The flags (``--namespace``) whose fields differ from their defaults: what the user set."""
    return tuple(
        item.flag.name
        for item in fields_of(instance)
        if item.flag is not None and item.name in given(instance)
    )
