"""Deterministic YAML for Kubernetes objects, written directly.

PyYAML's emitter analyses every scalar character by character in Python; an inline
Dockerfile, a stack.json and a script per BuildConfig made YAML two thirds of a
``mlcc gen``. The objects mlcc writes are plain dicts, lists, strings, numbers and
booleans, so this writer emits block style itself: keys in insertion order, sequences
indented under their key the way ``oc get -o yaml`` prints them, multi-line strings as
literal blocks (an inline Dockerfile stays readable), every other string plain when YAML
reads it back as that same string and quoted otherwise. ``tests/unit/test_yamlout.py``
checks that PyYAML loads every output back to the input.
"""

from __future__ import annotations

import re
from typing import Any, List

import yaml

_INDENT = "  "
# Plain scalars: a conservative alphabet; the resolver below rules out what YAML 1.1
# would read as a number, boolean, null or timestamp.
_PLAIN = re.compile(r"^[A-Za-z0-9_./$^][A-Za-z0-9_./:$(){}=+,@%~*^ -]*\Z")
# U+2028/U+2029 are line breaks to YAML 1.1 readers and U+FEFF a byte-order mark: all
# three are written escaped, never raw, so every reader gets the same string back.
_PRINTABLE = re.compile(
    r"^[\t\n\x20-\x7e\u00a0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]*\Z"
)
_PRINTABLE_CHAR = re.compile(
    r"[\x20-\x7e\u00a0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
# What YAML 1.1 (and Go's yaml.v2, which kubectl uses) read as booleans or null, beyond
# PyYAML's list: "y" and "n" are booleans there.
_NOT_STRINGS_11 = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", ""})
# YAML 1.2 core numbers, and Go's strconv (0o17, 1e3, 1234e56, 0x1p3, 1_000): quoted.
_NUMBERISH = re.compile(r"^[-+]?(\.?[0-9]|0[xXoObB])[0-9A-Za-z_.:+-]*\Z")
_STR_TAG = "tag:yaml.org,2002:str"


def _resolver() -> Any:
    return yaml.resolver.Resolver()


_RESOLVER = _resolver()


def dumps(document: Any) -> str:
    """One YAML document (a mapping at the top), ending in a newline."""
    out: List[str] = []
    if isinstance(document, dict) and document:
        _mapping(document, "", out)
    else:
        out.append(_inline(document) + "\n")
    return "".join(out)


def _mapping(value: dict, indent: str, out: List[str]) -> None:  # type: ignore[type-arg]
    for key, item in value.items():
        out.append(f"{indent}{_scalar(str(key))}:")
        _value(item, indent, indent + _INDENT, out)


def _value(item: Any, indent: str, child: str, out: List[str]) -> None:
    """The value after ``key:`` or ``- ``; ``child`` is the indent of a nested mapping."""
    if isinstance(item, dict) and item:
        out.append("\n")
        _mapping(item, child, out)
    elif isinstance(item, list) and item:
        out.append("\n")
        _sequence(item, indent, out)
    elif isinstance(item, str) and "\n" in item and _literal_ok(item):
        _literal(item, child, out)
    else:
        out.append(" " + _inline(item) + "\n")


def _sequence(value: list, indent: str, out: List[str]) -> None:  # type: ignore[type-arg]
    for item in value:
        if isinstance(item, dict) and item:
            first = True
            for key, sub in item.items():
                lead = f"{indent}- " if first else f"{indent}{_INDENT}"
                out.append(f"{lead}{_scalar(str(key))}:")
                _value(sub, indent + _INDENT, indent + _INDENT * 2, out)
                first = False
        elif isinstance(item, list) and item:
            out.append(f"{indent}-\n")
            _sequence(item, indent + _INDENT, out)
        elif isinstance(item, str) and "\n" in item and _literal_ok(item):
            out.append(f"{indent}-")
            _literal(item, indent + _INDENT, out)
        else:
            out.append(f"{indent}- {_inline(item)}\n")


def _literal_ok(text: str) -> bool:
    """Can ``text`` be a literal block and read back unchanged?"""
    if not _PRINTABLE.match(text) or text.startswith((" ", "\t", "\n")):
        return False
    return all(not line.endswith((" ", "\t")) for line in text.split("\n"))


def _literal(text: str, indent: str, out: List[str]) -> None:
    body = text.rstrip("\n")
    trailing = len(text) - len(body)
    chomp = "-" if trailing == 0 else ("" if trailing == 1 else "+")
    out.append(f" |{chomp}\n")
    for line in body.split("\n"):
        out.append(f"{indent}{line}\n" if line else "\n")
    out.append("\n" * (trailing - 1) if trailing > 1 else "")


def _inline(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return _scalar(str(value))


def _scalar(text: str) -> str:
    if _plain_ok(text) and _reads_as_string(text):
        return text
    if _PRINTABLE.match(text) and "\n" not in text and "\t" not in text:
        return "'" + text.replace("'", "''") + "'"
    return _double_quoted(text)


def _plain_ok(text: str) -> bool:
    if text.endswith((":", " ")) or ": " in text or " #" in text:
        return False
    if text.startswith("-"):  # "-g" and "--prefix" are plain; "-", "- x" and "---" are not
        rest = text.lstrip("-")
        return len(text) - len(rest) <= 2 and bool(rest) and bool(_PLAIN.match(rest))
    return bool(_PLAIN.match(text))


_ESCAPES = {"\n": "\\n", "\t": "\\t", "\\": "\\\\", '"': '\\"'}


def _double_quoted(text: str) -> str:
    """A YAML double-quoted scalar; YAML's \\u escapes, unlike JSON's, know no surrogate pairs."""
    parts = ['"']
    for char in text:
        if char in _ESCAPES:
            parts.append(_ESCAPES[char])
        elif _PRINTABLE_CHAR.match(char):
            parts.append(char)
        elif ord(char) <= 0xFF:
            parts.append(f"\\x{ord(char):02x}")
        elif ord(char) <= 0xFFFF:
            parts.append(f"\\u{ord(char):04x}")
        else:
            parts.append(f"\\U{ord(char):08x}")
    parts.append('"')
    return "".join(parts)


def _reads_as_string(text: str) -> bool:
    """Would every common YAML reader (1.1, 1.2, Go) read plain ``text`` back as this string?"""
    if text.lower() in _NOT_STRINGS_11 or _looks_numeric(text):
        return False
    return bool(_RESOLVER.resolve(yaml.ScalarNode, text, (True, False)) == _STR_TAG)


def _looks_numeric(text: str) -> bool:
    """A number to some reader: anything numeric-looking that Python's parsers accept,
    and any sexagesimal or timestamp-like digit string (YAML 1.1)."""
    if not _NUMBERISH.match(text):
        return False
    plain = text.replace("_", "")
    hexadecimal = plain.lstrip("+-")[:2] in ("0x", "0X")
    for parse in (lambda t: int(t, 0), float, float.fromhex if hexadecimal else float):
        try:
            parse(plain)
            return True
        except ValueError:
            pass
    return bool(
        re.match(r"^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?\Z|^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}", text)
    )
