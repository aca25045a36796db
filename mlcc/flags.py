"""Command-line flags described once, on the fields of the options types they fill.

An options type (``Pins``, ``BuildPolicy``, ``ClusterOptions`` ...) is a frozen record
made by :func:`options_type`, whose fields carry a :class:`Flag`: the flag's name, help and
shape. The CLI derives its click options from it, and the values a command receives go
back into the same type by field name, so a new option is one field, not six edits.

Why not ``dataclasses``: on every start-up path. Importing it brings ``inspect`` (and
``ast``, ``dis``, ``tokenize``), and each frozen dataclass compiles its methods with
``exec`` when its module loads: together about 5 % of a warm ``mlcc resolve``, which
must start as fast as HPC Container Maker (perf/README.md). :func:`options_type` keeps the
dataclass semantics mlcc uses (keyword or positional construction, defaults and default
factories, ``__post_init__``, frozen instances, value equality and hashing, ``replace``)
with generic methods, and is declared a ``dataclass_transform`` so mypy checks the
constructors as it checks a dataclass's.

Nothing here imports click: the Python API uses these types without the CLI.
"""

from __future__ import annotations

from typing import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Type, TypeVar

    from typing_extensions import dataclass_transform

    from mlcc.kb.model import KnowledgeBase
else:

    def dataclass_transform(**_kwargs: Any) -> Callable[[Any], Any]:
        return lambda decorated: decorated


if TYPE_CHECKING:
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


class _Spec(NamedTuple):
    """What a field's right-hand side says before the class names it."""

    default: Any
    factory: Optional[Callable[[], Any]]
    flag: Optional[Flag]


def flag(name: str, help: str, *, default: Any, **shape: Any) -> Any:
    """A field with a default and the flag that sets it (``default`` by keyword: that is
    how a type checker tells a field with a default)."""
    return _Spec(default, None, Flag(name, help, **shape))


def field(*, default_factory: Callable[[], Any]) -> Any:
    """A field without a flag whose default is made anew for every instance."""
    return _Spec(None, default_factory, None)


class FrozenInstanceError(AttributeError):
    """An options value was assigned to: they are values, use :func:`replace`."""


class _Record:
    """The methods :func:`options_type` gives every options type (generic: nothing is compiled
    per class, unlike a dataclass's)."""

    __fields__: Tuple[Field, ...] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = type(self).__fields__
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__}() takes {len(fields)} arguments, {len(args)} given")
        for item, value in zip(fields, args):
            if item.name in kwargs:
                raise TypeError(f"{type(self).__name__}() got two values for {item.name!r}")
            kwargs[item.name] = value
        for item in fields:
            object.__setattr__(
                self, item.name, kwargs.pop(item.name) if item.name in kwargs else item.fresh_default()
            )
        if kwargs:
            raise TypeError(f"{type(self).__name__}() got an unexpected argument {sorted(kwargs)[0]!r}")
        post_init = getattr(self, "__post_init__", None)
        if post_init is not None:
            post_init()

    def _values(self) -> Tuple[Any, ...]:
        return tuple(getattr(self, item.name) for item in type(self).__fields__)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._values()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{item.name}={getattr(self, item.name)!r}" for item in type(self).__fields__)
        return f"{type(self).__name__}({shown})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


_MISSING: Any = object()
_SHARED = ("__init__", "_values", "__eq__", "__hash__", "__repr__", "__setattr__", "__delattr__")


@dataclass_transform(frozen_default=True, field_specifiers=(flag, field))
def options_type(cls: Type[T]) -> Type[T]:
    """Make ``cls`` a frozen options type from its annotated class attributes (in place)."""
    found: List[Field] = []
    for name in cls.__dict__.get("__annotations__", {}):  # noqa: RUF063 (this class's own, in order)
        value = cls.__dict__.get(name, _MISSING)
        if value is _MISSING:
            raise TypeError(f"{cls.__name__}.{name} has no default: every option has one")
        if isinstance(value, _Spec):
            found.append(Field(name, value.default, value.factory, value.flag))
        else:
            found.append(Field(name, value))
        # the class attribute keeps the plain default, as a dataclass's does
        type.__setattr__(cls, name, found[-1].default)
    type.__setattr__(cls, "__fields__", tuple(found))
    for method in _SHARED:
        if method not in cls.__dict__:  # as a dataclass, keep what the class defines itself
            type.__setattr__(cls, method, _Record.__dict__[method])
    return cls


def fields_of(cls_or_instance: Any) -> Tuple[Field, ...]:
    fields: Tuple[Field, ...] = cls_or_instance.__fields__
    return fields


def replace(instance: T, **changes: Any) -> T:
    """A copy of ``instance`` with some fields changed (``__post_init__`` checks it again)."""
    values = {item.name: getattr(instance, item.name) for item in fields_of(instance)}
    values.update(changes)
    return type(instance)(**values)


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
