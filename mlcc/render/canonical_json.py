"""Canonical JSON text, byte-identical to ``json.dumps(v, indent=2, sort_keys=True,
ensure_ascii=False)`` but several times faster.

The standard library falls back to its pure-Python, generator-based encoder whenever
``indent`` is set; stack.json is written for every rendered variant, so that encoder
was a third of the render time. This writer appends to one list and uses the C string
escaper. ``tests/unit/test_canonical_json.py`` checks it against ``json.dumps`` on
generated documents.
"""

from __future__ import annotations

from json.encoder import encode_basestring  # the C implementation when available
from typing import Any, List

_INDENT = "  "
_CONSTANTS = {True: "true", False: "false", None: "null"}


def dumps(value: Any) -> str:
    out: List[str] = []
    _write(value, "\n", out)
    return "".join(out)


def _write(value: Any, newline: str, out: List[str]) -> None:
    if isinstance(value, str):
        out.append(encode_basestring(value))
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


def _write_dict(value: Any, newline: str, out: List[str]) -> None:
    if not value:
        out.append("{}")
        return
    inner = newline + _INDENT
    separator = "{" + inner
    for key in sorted(value):
        if not isinstance(key, str):
            raise TypeError("stack documents have string keys only")
        item = value[key]
        # strings and flags are most of a stack document: spell them here, skip the dispatch
        if type(item) is str:
            out.append(f"{separator}{encode_basestring(key)}: {encode_basestring(item)}")
        elif item is True or item is False or item is None:
            out.append(f"{separator}{encode_basestring(key)}: {_CONSTANTS[item]}")
        elif type(item) is dict:
            out.append(f"{separator}{encode_basestring(key)}: ")
            _write_dict(item, inner, out)
        elif type(item) is list:
            out.append(f"{separator}{encode_basestring(key)}: ")
            _write_list(item, inner, out)
        else:
            out.append(f"{separator}{encode_basestring(key)}: ")
            _write(item, inner, out)
        separator = "," + inner
    out.append(newline + "}")


def _write_list(value: Any, newline: str, out: List[str]) -> None:
    if not value:
        out.append("[]")
        return
    inner = newline + _INDENT
    try:
        # lists of strings (packages, sources) in one C-level pass
        out.append("[" + inner + ("," + inner).join(map(encode_basestring, value)) + newline + "]")
        return
    except TypeError:
        pass
    separator = "[" + inner
    for item in value:
        out.append(separator)
        if type(item) is dict:
            _write_dict(item, inner, out)
        else:
            _write(item, inner, out)
        separator = "," + inner
    out.append(newline + "]")


def _float(value: float) -> str:
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{value!r} has no JSON spelling")
    return float.__repr__(value)
