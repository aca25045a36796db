"""Deterministic YAML for Kubernetes objects: PyYAML's safe dumper with mlcc's quoting rule.

PyYAML writes block style (keys in insertion order, sequences under their key the way
``oc get -o yaml`` prints them); the one thing mlcc adds is how each string is written,
chosen by :func:`_style`:

- a multi-line string is a literal block when it reads back unchanged as one, so an
  inline Dockerfile stays readable;
- a string is plain only when no reader sees anything but that string in it: it passes
  :func:`_plain_ok` (a conservative alphabet, no key, comment or block indicator) and
  :func:`reads_as_string`;
- anything else is single-quoted, or double-quoted when it holds a line break, a tab or a
  character YAML may not hold raw.

:func:`reads_as_string` is stricter than PyYAML's own resolver, because a manifest is
read by more than PyYAML: YAML 1.1 (PyYAML; Go's yaml.v2, through which Kubernetes'
sigs.k8s.io/yaml reads manifests) -- booleans and nulls in any letter case plus Go's
``y``/``n``, ints (binary, octal, hexadecimal, sexagesimal, with ``_``), floats
(sexagesimal, ``.inf``, ``.nan``), timestamps, the merge key ``<<``, the value key ``=``
and ``!``, ``&``, ``*``; YAML 1.2 core as ruamel.yaml and yaml.v3 read it, underscores
included (``0o17``, ``1e3``, ``.5``, ``-_`` and ``._``, which ruamel.yaml takes for an int
and a float); Go's strconv, which yaml.v2 asks for ints after dropping ``_`` (``0x1p3``,
``1_000``). Anything numeric-looking that Python's int and float parsers accept counts as
a number too: quoting a string costs nothing, a string read back as a number breaks a
Kubernetes object.

The pure-Python emitter, not libyaml's, writes every file: the bytes do not depend on
whether PyYAML was built with libyaml.
"""

from __future__ import annotations

import math
import re
from typing import Any, Optional

import yaml

# Plain scalars: a conservative alphabet; the typing rule rules out what a reader would
# take for a number, boolean, null or timestamp.
_PLAIN = re.compile(r"^[A-Za-z0-9_./$^][A-Za-z0-9_./:$(){}=+,@%~*^ -]*\Z")
# What YAML (1.1 and 1.2) may not hold raw: C0 controls but tab and newline, DEL, C1
# controls, surrogates, U+FFFE/U+FFFF; U+2028/U+2029 are line breaks to YAML 1.1 readers
# and U+FEFF a byte-order mark: all three are written escaped, never raw, so every reader
# gets the same string back.
_NOT_PRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
# What YAML 1.1 (and Go's yaml.v2, which kubectl uses) read as booleans or null, beyond
# PyYAML's list: "y" and "n" are booleans there.
_NOT_STRINGS_11 = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", ""})
# YAML 1.2 core numbers, and Go's strconv (0o17, 1e3, 1234e56, 0x1p3, 1_000): quoted.
_NUMBERISH = re.compile(r"^[-+]?(\.?[0-9]|0[xXoObB])[0-9A-Za-z_.:+-]*\Z")
# The YAML 1.1 implicit types beyond booleans and null (https://yaml.org/type/): int,
# float, timestamp, merge, value and the documentation-only "yaml" type; the forms
# Python's parsers reject, such as "0b_", "0x_", "1:20.5" or "2001-12-14 21:59:43.10 -5",
# are caught here. The last line is YAML 1.2's int and float the way ruamel.yaml matches
# them, underscores anywhere: "-_" and "._" are an int and a float to it (and crash it).
_TYPED = re.compile(
    r"""[-+]?0b[0-1_]+ | [-+]?0[0-7_]+ | [-+]?(?:0|[1-9][0-9_]*) | [-+]?0x[0-9a-fA-F_]+
    | [-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+
    | [-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)? | \.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
    | [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]* | [-+]?\.(?:inf|Inf|INF) | \.(?:nan|NaN|NAN)
    | [0-9]{4}-[0-9]{2}-[0-9]{2}
    | [0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[\ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?
      (?:[\ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?
    | << | = | [!&*]
    | [-+]?0o?[0-7_]+ | [-+]?[0-9_]+ | [-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?""",
    re.VERBOSE,
)
_SEXAGESIMAL_OR_DATE = re.compile(
    r"^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?\Z|^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"
)

# Every form _TYPED and _NUMBERISH know starts with one of these: a string that starts
# otherwise (most keys and values start with a letter) can only be a boolean or null.
_TYPED_STARTS = frozenset("-+.0123456789<=!&*")
# Go's yaml.v2 hands any plain scalar starting with a sign to strconv.ParseFloat, which
# reads a signed inf, infinity or nan in any letter case as a float.
_SIGNED_SPECIAL_FLOAT = re.compile(r"[-+](?:inf|infinity|nan)\Z", re.IGNORECASE)


class _Dumper(yaml.SafeDumper):
    """PyYAML's safe dumper, writing each string in the style :func:`_style` picks."""

    def ignore_aliases(self, data: Any) -> bool:
        """Write a value shared by two objects out twice: a manifest has no anchors."""
        return True


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=_style(text))


_Dumper.add_representer(str, _represent_str)


def dumps(document: Any) -> str:
    """One YAML document (a mapping at the top), ending in a newline."""
    # an infinite width: PyYAML would otherwise fold long strings over several lines
    return yaml.dump(
        document,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=math.inf,
        default_flow_style=False,
    )


def _style(text: str) -> Optional[str]:
    """PyYAML's scalar style for ``text``: literal block, plain (None), single or double quotes."""
    if "\n" in text and _literal_ok(text):
        return "|"
    if _plain_ok(text) and reads_as_string(text):
        return None
    if _NOT_PRINTABLE.search(text) is None and "\n" not in text and "\t" not in text:
        return "'"
    return '"'


def _literal_ok(text: str) -> bool:
    """Can ``text`` be a literal block and read back unchanged?"""
    if _NOT_PRINTABLE.search(text) or "\t" in text or text.startswith((" ", "\n")):
        return False
    return all(not line.endswith(" ") for line in text.split("\n"))


def _plain_ok(text: str) -> bool:
    """No indicator in ``text``: no reader sees a key, a comment, a flow or block indicator."""
    if text.endswith((":", " ")) or ": " in text or " #" in text:
        return False
    if text.startswith("-"):  # "-g" and "--prefix" are plain; "-", "- x" and "---" are not
        rest = text.lstrip("-")
        return len(text) - len(rest) <= 2 and bool(rest) and bool(_PLAIN.match(rest))
    return bool(_PLAIN.match(text))


def reads_as_string(text: str) -> bool:
    """Would every common YAML reader (1.1, 1.2, Go) read plain ``text`` back as this string?"""
    if text.lower() in _NOT_STRINGS_11:
        return False
    if text[:1] not in _TYPED_STARTS:
        return True
    return not (_looks_numeric(text) or _TYPED.fullmatch(text) or _SIGNED_SPECIAL_FLOAT.match(text))


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
    return bool(_SEXAGESIMAL_OR_DATE.match(text))
