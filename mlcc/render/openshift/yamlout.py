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

**Two emitters, one output.** PyYAML writes a document with its pure-Python emitter or,
when it was built with libyaml (PyPI's wheels for x86_64, aarch64 and ppc64le bundle it),
with libyaml's (``yaml.CSafeDumper``), which writes the same List about ten times faster --
the largest single cost of ``mlcc gen`` otherwise (perf/README.md). The pure-Python
emitter's bytes are the reference: the bytes must not depend on how PyYAML was built. The
two agree on everything mlcc publishes, but not on every document, so :func:`dumps`
represents a document once (mlcc's styles, in Python, the same nodes for both emitters)
and hands it to libyaml only when

- libyaml's version is one whose output tests/unit/test_yamlout_libyaml.py compared with
  the pure-Python emitter's, on every published and golden document and on adversarial
  ones (:data:`LIBYAML_VERIFIED`: another version may write differently), and
- the document holds none of what those tests found the two emitters to write
  differently (libyaml 0.2.5 and 0.2.6, PyYAML 6.0.3 and 6.0.4):

  - a character outside the Basic Multilingual Plane: libyaml takes it for unprintable
    and double-quotes the string with an escape where PyYAML writes it raw; a lone
    surrogate, which PyYAML escapes and libyaml cannot encode;
  - a carriage return: libyaml takes it for a line break and writes a key holding one as a
    complex key (``? ``), PyYAML does not (values agree, but a string does not know whether
    it is a key, so any string with one takes the pure-Python emitter);
  - a literal block that keeps its trailing line breaks (``|+``, a string ending in two):
    libyaml may end the document with ``...`` where PyYAML does not (it does when a plain
    key follows the block);
  - an empty key or a long one: PyYAML writes a simple key up to 122 characters (it
    counts the ``!!str`` tag it does not write against its limit of 128), libyaml up to 128
    bytes of UTF-8, and an empty key is simple to libyaml only. A key of 1 to 42
    characters (at most 126 bytes: no character left here takes more than 3) is simple to
    both.

Strings are checked as they are represented (one compiled-regex search and an
``endswith`` per string, at C speed) and keys as each mapping is; any finding sends the
whole document to the pure-Python emitter, as is every document when PyYAML has no
libyaml or one not in :data:`LIBYAML_VERIFIED`.
"""

from __future__ import annotations

import math
import re
from typing import Any, FrozenSet, NamedTuple, Optional, Tuple

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode
from yaml.representer import SafeRepresenter

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


# libyaml versions whose output tests/unit/test_yamlout_libyaml.py compared with the
# pure-Python emitter's; libyaml writes only for these (module docstring).
LIBYAML_VERIFIED: FrozenSet[Tuple[int, int, int]] = frozenset({(0, 2, 5), (0, 2, 6)})
_STR_TAG = "tag:yaml.org,2002:str"
# What libyaml writes differently inside a string (module docstring): a carriage return, a
# surrogate, a character outside the Basic Multilingual Plane.
_LIBYAML_WRITES_DIFFERENTLY = re.compile(r"[\r\ud800-\udfff\U00010000-\U0010ffff]")
# The longest key both emitters write as a simple key whatever its characters (docstring).
_LIBYAML_SIMPLE_KEY = 42


def _libyaml_verified() -> bool:
    """Is PyYAML built with libyaml, of a version in :data:`LIBYAML_VERIFIED`?"""
    try:
        from yaml._yaml import get_version
    except ImportError:  # PyYAML built without libyaml
        return False
    return get_version() in LIBYAML_VERIFIED


_LIBYAML_VERIFIED = _libyaml_verified()


class _Representer(SafeRepresenter):
    """PyYAML's safe representer writing each string in the style :func:`_style` picks,
    noting whether libyaml's emitter would write the document as the pure-Python one does."""

    def __init__(self) -> None:
        super().__init__(default_flow_style=False, sort_keys=False)
        self.libyaml_differs = False

    def ignore_aliases(self, data: Any) -> bool:
        """Write a value shared by two objects out twice: a manifest has no anchors."""
        return True

    def represent_str(self, data: str) -> ScalarNode:
        if _LIBYAML_WRITES_DIFFERENTLY.search(data) or data.endswith("\n\n"):
            self.libyaml_differs = True
        return self.represent_scalar(_STR_TAG, data, style=_style(data))

    def represent_dict(self, data: Any) -> MappingNode:
        if any(isinstance(key, str) and not 0 < len(key) <= _LIBYAML_SIMPLE_KEY for key in data):
            self.libyaml_differs = True
        return super().represent_dict(data)


_Representer.add_representer(str, _Representer.represent_str)
_Representer.add_representer(dict, _Representer.represent_dict)


class Represented(NamedTuple):
    node: Node
    libyaml_differs: bool  # libyaml's emitter would write other bytes than PyYAML's


def dumps(document: Any) -> str:
    """One YAML document (a mapping at the top), ending in a newline: the pure-Python
    emitter's bytes, written by libyaml's emitter where it writes the same (module docstring)."""
    node, libyaml_differs = represent(document)
    return emit(node, libyaml=_LIBYAML_VERIFIED and not libyaml_differs)


def represent(document: Any) -> Represented:
    """``document``'s node graph, each string in mlcc's style, and whether libyaml writes it
    differently."""
    representer = _Representer()
    return Represented(representer.represent_data(document), representer.libyaml_differs)


def emit(node: Node, libyaml: bool) -> str:
    """``node`` as YAML text, by libyaml's emitter (whatever its version) or PyYAML's
    pure-Python one; :func:`dumps` decides which.

    Raises:
        AttributeError: ``libyaml`` is asked for and PyYAML was built without it.
    """
    if libyaml:
        return yaml.serialize(node, Dumper=yaml.CSafeDumper, allow_unicode=True, width=-1)  # -1: no limit
    # an infinite width: PyYAML would otherwise fold long strings over several lines
    return yaml.serialize(node, Dumper=yaml.SafeDumper, allow_unicode=True, width=math.inf)


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
