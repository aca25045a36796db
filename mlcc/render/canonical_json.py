"""Canonical JSON text, byte-identical to ``json.dumps(v, indent=2, sort_keys=True,
ensure_ascii=False)`` but several times faster.

The standard library falls back to its pure-Python, generator-based encoder whenever
``indent`` is set; stack.json is written for every rendered variant, so that encoder
was a third of the render time. This writer appends to one list, uses the C string
escaper, and sorts and escapes each distinct set of keys once per depth, separators and
indentation included (the nine choices of a stack document share one layout, and every
document the layouts of the others).
``tests/unit/test_canonical_json.py`` checks it against ``json.dumps`` on generated
documents.

A :class:`Fragment` is the canonical text of a value written once and spliced in
wherever that value recurs, as it is at the depth it was written for, else re-indented
with one C-level ``str.replace`` (no JSON string holds a raw newline, and every line of a
value is indented at least as deep as its first). stack.json repeats records across the variants of a
set (a framework build's pip hash locks, the choices' citations), and the renderer keeps
their fragments (:mod:`mlcc.render.manifest`).
"""

from __future__ import annotations

from json.encoder import encode_basestring  # the C implementation when available
from typing import Any, Dict, List, Tuple

_INDENT = "  "
_CONSTANTS = {True: "true", False: "false", None: "null"}
# A dict's keys in insertion order and its items' indentation -> (key, '{\n  "key": ')
# in sorted order. Bounded: a document with ever-new keys costs a sort per dict, never memory.
_LAYOUTS: Dict[Tuple[Tuple[Any, ...], str], Tuple[Tuple[str, str], ...]] = {}
_MAX_LAYOUTS = 1024


class Fragment(str):
    """Canonical JSON text of one value, as :func:`dumps` writes it where a line break and
    its indentation are ``newline`` (``"\\n"`` at the top level)."""

    newline: str


class _Spellings(dict[str, str]):
    """Each string's JSON spelling, escaped once: a set's documents repeat the same long
    citations, URLs and hashes in records that differ elsewhere (the published set escapes
    181,000 characters a pass, 54,000 of them distinct). A hit is one C-level look-up."""

    def __missing__(self, text: str) -> str:
        spelled = encode_basestring(text)  # TypeError for what is not a string
        if len(self) >= _MAX_SPELLINGS:
            self.clear()
        self[text] = spelled
        return spelled


_MAX_SPELLINGS = 1 << 16
_SPELLINGS = _Spellings()
_spelled = _SPELLINGS.__getitem__


def fragment(value: Any, newline: str = "\n") -> Fragment:
    """The text of ``value`` for the depth whose line breaks are ``newline``: spliced there
    it is appended as it is, elsewhere re-indented with one replace."""
    out: List[str] = []
    _write(value, newline, out)
    text = Fragment("".join(out))
    text.newline = newline
    return text


def dumps(value: Any) -> str:
    out: List[str] = []
    _write(value, "\n", out)
    return "".join(out)


def clear_memos() -> None:
    """Forget the key layouts and the strings' spellings (see mlcc.render.clear_memos)."""
    _LAYOUTS.clear()
    _SPELLINGS.clear()


def _write(value: Any, newline: str, out: List[str]) -> None:
    if type(value) is Fragment:  # before str: a fragment is text already written
        out.append(value if value.newline == newline else value.replace(value.newline, newline))
    elif isinstance(value, str):
        out.append(_spelled(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, dict):
        _write_dict(value, newline, out)
    elif isinstance(value, (list, tuple)):
        _write_list(value, newline, out)
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _layout(value: Any, inner: str) -> Tuple[Tuple[str, str], ...]:
    """(key, what precedes its value) in sorted order: ``{`` or ``,``, the line break and
    indentation ``inner``, the spelled key."""
    keys = tuple(value)
    layout = _LAYOUTS.get((keys, inner))
    if layout is None:
        if not all(isinstance(key, str) for key in keys):
            raise TypeError("stack documents have string keys only")
        layout = tuple(
            (key, ("," if n else "{") + inner + encode_basestring(key) + ": ")
            for n, key in enumerate(sorted(keys))
        )
        if len(_LAYOUTS) < _MAX_LAYOUTS:
            _LAYOUTS[(keys, inner)] = layout
    return layout


def _write_dict(value: Any, newline: str, out: List[str]) -> None:
    if not value:
        out.append("{}")
        return
    inner = newline + _INDENT
    for key, spelled in _layout(value, inner):
        item = value[key]
        # strings and flags are most of a stack document: spell them here, skip the dispatch
        if type(item) is str:
            out.append(spelled + _spelled(item))
        elif item is True or item is False or item is None:
            out.append(spelled + _CONSTANTS[item])
        elif type(item) is dict:
            out.append(spelled)
            _write_dict(item, inner, out)
        elif type(item) is list:
            out.append(spelled)
            _write_list(item, inner, out)
        else:
            out.append(spelled)
            _write(item, inner, out)
    out.append(newline + "}")


def _write_list(value: Any, newline: str, out: List[str]) -> None:
    if not value:
        out.append("[]")
        return
    inner = newline + _INDENT
    # (a Fragment is a str to encode_basestring: such a list takes the loop below)
    if type(value[0]) is str and Fragment not in set(map(type, value)):
        try:
            # lists of strings (packages, sources) in one C-level pass
            out.append("[" + inner + ("," + inner).join(map(_spelled, value)) + newline + "]")
            return
        except TypeError:  # a list that mixes strings with other values
            pass
    separator = "[" + inner
    comma = "," + inner
    for item in value:
        out.append(separator)
        if type(item) is dict:
            _write_dict(item, inner, out)
        else:
            _write(item, inner, out)
        separator = comma
    out.append(newline + "]")


def _float(value: float) -> str:
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{value!r} has no JSON spelling")
    return float.__repr__(value)
