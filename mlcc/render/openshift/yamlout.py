"""Deterministic YAML for Kubernetes objects, written directly.

PyYAML's emitter analyses every scalar character by character in Python; an inline
Dockerfile, a stack.json and a script per BuildConfig made YAML two thirds of a
``mlcc gen``. The objects mlcc writes are plain dicts, lists, strings, numbers and
booleans, so this writer emits block style itself: keys in insertion order, sequences
indented under their key the way ``oc get -o yaml`` prints them, multi-line strings as
literal blocks (an inline Dockerfile stays readable), every other string plain when YAML
reads it back as that same string and quoted otherwise. ``tests/unit/test_yamlout.py``
checks that PyYAML loads every output back to the input.

The plain-scalar rule is mlcc's own (importing PyYAML for its resolver cost ``mlcc gen``
~15 ms of start-up). A string is written plain only when all of these hold:

- indicators (:func:`_plain_ok`): it starts with a letter, digit or one of ``_./$^`` (or
  one or two dashes before such a text: ``-g``, ``--prefix``; never ``-``, ``- x`` or
  ``---``), uses only a conservative alphabet, and holds no ``: `` or `` #`` and does not
  end in ``:`` or a space, so no reader sees a key, a comment, a flow or block indicator;
- typing (:func:`reads_as_string`): no common reader gives it another type --
  YAML 1.1 (PyYAML; Go's yaml.v2, through which Kubernetes' sigs.k8s.io/yaml reads
  manifests): booleans and nulls in any letter case plus Go's ``y``/``n``, ints (binary,
  octal, hexadecimal, sexagesimal, with ``_``), floats (sexagesimal, ``.inf``, ``.nan``),
  timestamps, the merge key ``<<``, the value key ``=`` and ``!``, ``&``, ``*``; YAML 1.2 core (ruamel.yaml,
  yaml.v3): ``0o17``, ``1e3``, ``.5``; Go's strconv, which yaml.v2 asks for ints after
  dropping ``_`` (``0x1p3``, ``1_000``). Anything numeric-looking that Python's int and
  float parsers accept counts as a number too: quoting a string costs nothing, a string
  read back as a number breaks a Kubernetes object.

``tests/unit/test_yamlout.py`` cross-checks the rule against PyYAML's resolver and
ruamel.yaml's loader with generated strings.
"""

from __future__ import annotations

import re
from re import compile as LazyPattern  # re.compile; the YAML lane rewrites this module
from typing import Any, List

_INDENT = "  "
# Plain scalars: a conservative alphabet; the resolver below rules out what YAML 1.1
# would read as a number, boolean, null or timestamp.
_PLAIN = re.compile(r"^[A-Za-z0-9_./$^][A-Za-z0-9_./:$(){}=+,@%~*^ -]*\Z")
# What YAML (1.1 and 1.2) may not hold raw: C0 controls but tab and newline, DEL, C1
# controls, surrogates, U+FFFE/U+FFFF; U+2028/U+2029 are line breaks to YAML 1.1 readers
# and U+FEFF a byte-order mark: all three are written escaped, never raw, so every reader
# gets the same string back. Written as the small set of characters *not* allowed:
# the class of the allowed ones, with its ranges up to U+10FFFF, took 10 ms to compile.
_NOT_PRINTABLE = LazyPattern(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
# The same class for ASCII text, which nearly every value is: a tenth of the compile.
_NOT_PRINTABLE_ASCII = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_NOT_PRINTABLE_CHAR = LazyPattern(
    r"[\t\n\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]"
)
# What YAML 1.1 (and Go's yaml.v2, which kubectl uses) read as booleans or null, beyond
# PyYAML's list: "y" and "n" are booleans there.
_NOT_STRINGS_11 = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", ""})
# YAML 1.2 core numbers, and Go's strconv (0o17, 1e3, 1234e56, 0x1p3, 1_000): quoted.
_NUMBERISH = re.compile(r"^[-+]?(\.?[0-9]|0[xXoObB])[0-9A-Za-z_.:+-]*\Z")
# The YAML 1.1 implicit types beyond booleans and null (https://yaml.org/type/): int,
# float, timestamp, merge, value and the documentation-only "yaml" type; the forms
# Python's parsers reject, such as "0b_", "0x_", "1:20.5" or "2001-12-14 21:59:43.10 -5",
# are caught here.
_YAML11_TYPED = LazyPattern(
    r"""[-+]?0b[0-1_]+ | [-+]?0[0-7_]+ | [-+]?(?:0|[1-9][0-9_]*) | [-+]?0x[0-9a-fA-F_]+
    | [-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+
    | [-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)? | \.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
    | [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]* | [-+]?\.(?:inf|Inf|INF) | \.(?:nan|NaN|NAN)
    | [0-9]{4}-[0-9]{2}-[0-9]{2}
    | [0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[\ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?
      (?:[\ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?
    | << | = | [!&*]""",
    re.VERBOSE,
)

# Every form _YAML11_TYPED and _NUMBERISH know starts with one of these: a string that
# starts otherwise (most keys and values start with a letter) can only be a boolean or null.
_TYPED_STARTS = frozenset("-+.0123456789<=!&*")


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


def _unprintable(text: str) -> bool:
    """Does ``text`` hold a character YAML may not hold raw?"""
    pattern = _NOT_PRINTABLE_ASCII if text.isascii() else _NOT_PRINTABLE
    return pattern.search(text) is not None


def _literal_ok(text: str) -> bool:
    """Can ``text`` be a literal block and read back unchanged?"""
    if _unprintable(text) or text.startswith((" ", "\t", "\n")):
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
    if _plain_ok(text) and reads_as_string(text):
        return text
    if not _unprintable(text) and "\n" not in text and "\t" not in text:
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
        elif not _NOT_PRINTABLE_CHAR.match(char):
            parts.append(char)
        elif ord(char) <= 0xFF:
            parts.append(f"\\x{ord(char):02x}")
        elif ord(char) <= 0xFFFF:
            parts.append(f"\\u{ord(char):04x}")
        else:
            parts.append(f"\\U{ord(char):08x}")
    parts.append('"')
    return "".join(parts)


def reads_as_string(text: str) -> bool:
    """Would every common YAML reader (1.1, 1.2, Go) read plain ``text`` back as this string?"""
    if text.lower() in _NOT_STRINGS_11:
        return False
    if text[:1] not in _TYPED_STARTS:
        return True
    return not (_looks_numeric(text) or _YAML11_TYPED.fullmatch(text))


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
