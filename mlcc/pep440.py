"""PEP 440 versions, parsed without a regular expression.

``packaging.version`` costs ``mlcc gen`` ~3 ms before it parses anything: its module and
the compile of its verbose, case-insensitive pattern. This parser reads the same grammar
with string methods (https://peps.python.org/pep-0440/, "Appendix B: Parsing version
strings with regular expressions", and its normalisation rules), gives the same canonical
text and the same order, and raises ValueError where packaging raises InvalidVersion.
It reads ASCII only: versions reach it from the knowledge base (whose schemas allow ASCII
versions only) and from pins (checked against an ASCII alphabet first).
``tests/unit/test_pep440.py`` holds it to packaging with generated versions, valid and
not. Requirements, specifier sets and wheel names in the knowledge base's checks (the
cold path) are still read by packaging itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Tuple, Union

_SEPARATORS = "-_."
# pre-release spellings and their normal form, longest first so "preview" is not "pre"
_PRE: Tuple[Tuple[str, str], ...] = (
    ("preview", "rc"),
    ("alpha", "a"),
    ("beta", "b"),
    ("pre", "rc"),
    ("rc", "rc"),
    ("a", "a"),
    ("b", "b"),
    ("c", "rc"),
)
_POST = ("post", "rev", "r")
_ASCII_DIGITS = frozenset("0123456789")
_LOCAL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_.")

if TYPE_CHECKING:
    LocalPart = Union[int, str]


def _digits(text: str, start: int) -> int:
    """The index after the ASCII digits that begin at ``start``."""
    end = start
    while end < len(text) and text[end] in _ASCII_DIGITS:
        end += 1
    return end


def _separator(text: str, start: int) -> int:
    return start + 1 if start < len(text) and text[start] in _SEPARATORS else start


def _number(text: str, start: int) -> Tuple[Optional[int], int]:
    """The optional separator and number after a tag (``a1``, ``.post-2``, ``rc.``):
    (the number or None, the index after them)."""
    at = _separator(text, start)
    end = _digits(text, at)
    return (int(text[at:end]) if end > at else None), end


class Version:
    """A parsed PEP 440 version: ordered, hashable and printed as packaging does."""

    __slots__ = ("_key", "_text", "dev", "epoch", "local", "post", "pre", "release")

    def __init__(self, text: str) -> None:
        parsed = _parse(text.strip().lower()) if text.isascii() else None
        if parsed is None:
            raise ValueError(f"Invalid version: {text!r}")
        self.epoch, self.release, self.pre, self.post, self.dev, local = parsed
        self.local: Optional[str] = ".".join(str(part) for part in local) if local is not None else None
        self._key = _order_key(self.epoch, self.release, self.pre, self.post, self.dev, local)
        self._text = _canonical(self)

    @property
    def public(self) -> str:
        return self._text.partition("+")[0]

    @property
    def is_prerelease(self) -> bool:
        return self.dev is not None or self.pre is not None

    @property
    def is_postrelease(self) -> bool:
        return self.post is not None

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"<Version({self._text!r})>"

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Version) and self._key == other._key

    def __lt__(self, other: Version) -> bool:
        return self._key < other._key

    def __le__(self, other: Version) -> bool:
        return self._key <= other._key

    def __gt__(self, other: Version) -> bool:
        return self._key > other._key

    def __ge__(self, other: Version) -> bool:
        return self._key >= other._key


if TYPE_CHECKING:
    _Parsed = Tuple[
        int,
        Tuple[int, ...],
        Optional[Tuple[str, int]],
        Optional[int],
        Optional[int],
        Optional[Tuple[LocalPart, ...]],
    ]


def _parse(text: str) -> Optional[_Parsed]:
    """PEP 440's grammar on lower-cased, stripped text; None when it is not a version."""
    public, plus, local_text = text.partition("+")
    local = _local(local_text) if plus else None
    if plus and local is None:
        return None
    at = 1 if public.startswith("v") else 0
    epoch = 0
    end = _digits(public, at)
    if end < len(public) and public[end] == "!" and end > at:
        epoch, at = int(public[at:end]), end + 1
    release, at = _release(public, at)
    if release is None:
        return None
    pre, at = _pre(public, at)
    post, at = _post(public, at)
    dev, at = _dev(public, at)
    return (epoch, release, pre, post, dev, local) if at == len(public) else None


def _release(text: str, at: int) -> Tuple[Optional[Tuple[int, ...]], int]:
    """``N(.N)*``: the numbers, or None, and the index after them."""
    parts = []
    while True:
        end = _digits(text, at)
        if end == at:
            return None, at
        parts.append(int(text[at:end]))
        if not (end + 1 < len(text) and text[end] == "." and text[end + 1] in _ASCII_DIGITS):
            return tuple(parts), end
        at = end + 1


def _pre(text: str, start: int) -> Tuple[Optional[Tuple[str, int]], int]:
    at = _separator(text, start)
    for spelling, normal in _PRE:
        if text.startswith(spelling, at):
            number, end = _number(text, at + len(spelling))
            return (normal, number or 0), end
    return None, start


def _post(text: str, start: int) -> Tuple[Optional[int], int]:
    if start < len(text) and text[start] == "-":  # "1.0-1": an implicit post-release
        end = _digits(text, start + 1)
        if end > start + 1:
            return int(text[start + 1 : end]), end
    at = _separator(text, start)
    for spelling in _POST:
        if text.startswith(spelling, at):
            number, end = _number(text, at + len(spelling))
            return number or 0, end
    return None, start


def _dev(text: str, start: int) -> Tuple[Optional[int], int]:
    at = _separator(text, start)
    if text.startswith("dev", at):
        number, end = _number(text, at + 3)
        return number or 0, end
    return None, start


def _local(text: str) -> Optional[Tuple[LocalPart, ...]]:
    """``[a-z0-9]+([-_.][a-z0-9]+)*``: numbers as ints, the rest as text."""
    if not text or not set(text) <= _LOCAL_CHARS:
        return None
    parts = text.replace("-", ".").replace("_", ".").split(".")
    if "" in parts:
        return None
    return tuple(int(part) if set(part) <= _ASCII_DIGITS else part for part in parts)


def _canonical(version: Version) -> str:
    text = f"{version.epoch}!" if version.epoch else ""
    text += ".".join(str(part) for part in version.release)
    if version.pre is not None:
        text += f"{version.pre[0]}{version.pre[1]}"
    if version.post is not None:
        text += f".post{version.post}"
    if version.dev is not None:
        text += f".dev{version.dev}"
    if version.local is not None:
        text += f"+{version.local}"
    return text


def _order_key(
    epoch: int,
    release: Tuple[int, ...],
    pre: Optional[Tuple[str, int]],
    post: Optional[int],
    dev: Optional[int],
    local: Optional[Tuple[LocalPart, ...]],
) -> Tuple[object, ...]:
    """PEP 440's order as tuples of comparable parts (packaging's _cmpkey, with its
    infinities as ranks): trailing zeros of the release do not count; a dev release of a
    final comes before its pre-releases, which come before it; post-releases after."""
    trimmed = list(release)
    while trimmed and trimmed[-1] == 0:
        trimmed.pop()
    if pre is None and post is None and dev is not None:
        pre_key: Tuple[object, ...] = (0,)
    else:
        pre_key = (2,) if pre is None else (1, *pre)
    post_key = (0,) if post is None else (1, post)
    dev_key = (2,) if dev is None else (1, dev)
    # a local version sorts after its public one; numbers after text, each in its kind
    local_key = () if local is None else tuple((1, p, "") if isinstance(p, int) else (0, 0, p) for p in local)
    return (epoch, tuple(trimmed), pre_key, post_key, dev_key, (local is not None, local_key))
