"""``NamedTuple`` record classes at a fifth of the cost to define.

mlcc's data are immutable records: ``class Stack(NamedTuple): ...``. ``typing.NamedTuple``
spends 60-90 us defining each class (``collections.namedtuple`` compiles a ``__new__``
with ``eval``; typing then checks every annotation and sets the namespace one attribute
at a time). ``mlcc gen`` defines about a hundred before it does any work: 5-7 ms, a tenth
of its own time. This ``NamedTuple`` makes the same classes in ~15 us each:

- ``__new__`` comes from one compiled template per number of fields, renamed to the
  fields with ``CodeType.replace``: no compile per class, and the same positional and
  keyword construction, at the same speed, as ``collections.namedtuple``'s;
- the class is made by one ``type()`` call from a complete namespace.

A class made here behaves as ``typing.NamedTuple`` makes it (``tests/unit/test_records.py``
holds the two to each other): a tuple subclass with ``_fields``, ``_field_defaults``,
``_make``, ``_replace``, ``_asdict``, ``__match_args__``, the same ``repr``, equality,
hashing, copying and pickling, its methods and class attributes, and its annotations as
written (strings stay strings: nothing is evaluated). Type checkers see
``typing.NamedTuple``. Generic records and the functional form are refused with a
TypeError; mlcc has neither.
"""

from __future__ import annotations

from types import CodeType, FunctionType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterable, Tuple

__all__ = ["NamedTuple"]

try:
    # the C field accessor collections.namedtuple uses
    from _collections import _tuplegetter  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # interpreters without it

    def _tuplegetter(index: int, doc: str) -> property:
        return property(lambda self: self[index], doc=doc)


_tuple_new = tuple.__new__

# what a record's class body may not define, as typing.NamedTuple refuses it
_PROHIBITED = frozenset(
    {"__new__", "__init__", "__slots__", "__getnewargs__"}
    | {"_fields", "_field_defaults", "_make", "_replace", "_asdict", "_source"}
)


_NEW_TEMPLATES: Dict[int, CodeType] = {}


def _new_template(arity: int) -> CodeType:
    """The code of ``def __new__(_cls, _0, _1, ...): return _tuple_new(_cls, (_0, _1, ...))``."""
    code = _NEW_TEMPLATES.get(arity)
    if code is None:
        names = ", ".join(f"_{i}" for i in range(arity))
        values = f"({names},)" if arity == 1 else f"({names})"
        namespace: Dict[str, Any] = {}
        # exec of the text, not of compile(): the first compile() call in a process sets
        # up the ast module's types (~1 ms) in case it was given a tree
        exec(f"def __new__(_cls, {names}):\n    return _tuple_new(_cls, {values})\n", namespace)
        code = _NEW_TEMPLATES[arity] = namespace["__new__"].__code__
    return code


def _arguments(fields: Tuple[str, ...]) -> str:
    """The fields as collections.namedtuple lists them in docstrings: one is a 1-tuple."""
    return ", ".join(fields) + ("," if len(fields) == 1 else "")


def _new_function(
    name: str, qualname: str, fields: Tuple[str, ...], defaults: Tuple[Any, ...]
) -> FunctionType:
    code = _new_template(len(fields)).replace(co_varnames=("_cls", *fields))
    new = FunctionType(code, {"_tuple_new": _tuple_new}, "__new__", defaults or None)
    new.__qualname__ = f"{qualname}.__new__"
    new.__doc__ = f"Create new instance of {name}({_arguments(fields)})"
    return new


def _make(cls: Any, iterable: Iterable[Any]) -> Any:
    """Make a new record from a sequence or iterable."""
    result = _tuple_new(cls, iterable)
    if len(result) != len(cls._fields):
        raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(result)}")
    return result


def _replace(self: Any, /, **changes: Any) -> Any:
    """Return a new record replacing specified fields with new values."""
    result = self._make(map(changes.pop, self._fields, self))
    if changes:
        raise ValueError(f"Got unexpected field names: {list(changes)!r}")
    return result


def _asdict(self: Any) -> Dict[str, Any]:
    """Return a new dict which maps field names to their values."""
    return dict(zip(self._fields, self))


def _getnewargs(self: Any) -> Tuple[Any, ...]:
    """Return self as a plain tuple. Used by copy and pickle."""
    return tuple(self)


def _repr(self: Any) -> str:
    """Return a nicely formatted representation string"""
    fields = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
    return f"{type(self).__name__}({fields})"


def _defaults(fields: Tuple[str, ...], namespace: Dict[str, Any]) -> Tuple[Any, ...]:
    """The default values, which only the last fields may have."""
    with_default = [field for field in fields if field in namespace]
    if with_default and fields[len(fields) - len(with_default) :] != tuple(with_default):
        first = fields.index(with_default[0])
        late = next(field for field in fields[first:] if field not in namespace)
        raise TypeError(f"Non-default namedtuple field {late} cannot follow default field {with_default[0]}")
    return tuple(namespace[field] for field in with_default)


def _record_class(name: str, namespace: Dict[str, Any]) -> type:
    annotations: Dict[str, Any] = namespace.get("__annotations__", {})
    fields = tuple(annotations)
    for field in fields:  # "_cls" and "_make" style names are the record's own
        if field.startswith("_"):
            raise ValueError(f"Field names cannot start with an underscore: {field!r}")
    defaults = _defaults(fields, namespace)
    new = _new_function(name, namespace.get("__qualname__", name), fields, defaults)
    new.__annotations__ = annotations
    body: Dict[str, Any] = {
        "__doc__": f"{name}({_arguments(fields)})",
        "__slots__": (),
        "_fields": fields,
        "_field_defaults": dict(zip(fields[len(fields) - len(defaults) :], defaults)),
        "__new__": new,
        "_make": classmethod(_make),
        "_replace": _replace,
        "__repr__": _repr,
        "_asdict": _asdict,
        "__getnewargs__": _getnewargs,
        "__match_args__": fields,
    }
    body.update(
        (field, _tuplegetter(index, f"Alias for field number {index}")) for index, field in enumerate(fields)
    )
    for key, value in namespace.items():
        if key in _PROHIBITED:
            raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
        if key not in fields:  # a field's default is in the namespace under its name
            body[key] = value
    return type(name, (tuple,), body)


class _RecordMeta(type):
    def __new__(cls, name: str, bases: Tuple[type, ...], namespace: Dict[str, Any]) -> type:
        if bases != (_Record,):
            raise TypeError(
                "a record class inherits from NamedTuple alone: mlcc.records has no generic records"
            )
        return _record_class(name, namespace)


_Record = type.__new__(_RecordMeta, "NamedTuple", (), {})


def _class_form_only(*args: Any, **kwargs: Any) -> type:
    raise TypeError("mlcc.records.NamedTuple takes the class form only: class Name(NamedTuple): ...")


# ``class Name(NamedTuple)`` asks a non-class base for the bases to use instead (PEP 560):
# typing.NamedTuple is a function that answers the same way
_class_form_only.__mro_entries__ = lambda bases: (_Record,)  # type: ignore[attr-defined]

if TYPE_CHECKING:
    from typing import NamedTuple  # noqa: TID251 (the one place it is named)
else:
    NamedTuple: Callable[..., type] = _class_form_only
