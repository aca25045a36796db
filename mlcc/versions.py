"""Version strings and the pins users give on the command line.

A pin is either a *release prefix* (``10.1`` matches 10.1.105, 10.1.168 and 10.1.243, but
not 10.10.0), an *exact* version (``1.1.0a0+828a6a3``), or a PEP 440 *specifier set*
(``>=10.1,<11``). Versions and specifier sets are :mod:`packaging`'s; the release prefix
is mlcc's own meaning, read on top of them. Anything else is rejected before it can reach
a Dockerfile or a shell: the PEP 440 grammar has no room for ``;``, quotes, ``$`` or
whitespace tricks.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Literal, NamedTuple, Optional, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from mlcc.errors import UsageError

if TYPE_CHECKING:
    PinKind = Literal["prefix", "exact", "specifier"]

_MAX_PIN_LENGTH = 100
_PREFIX = re.compile(r"^[0-9]+(?:\.[0-9]+)*(?:\.\*)?\Z")
# Characters a PEP 440 specifier set may use; checked before the parser sees the text so
# the error can say exactly what is wrong.
_SPECIFIER_CHARS = re.compile(r"^[0-9A-Za-z.*+!<>=~, ]+\Z")
_OPERATOR = re.compile(r"[<>=!~]")


@lru_cache(maxsize=4096)
def parse_version(text: str) -> Version:
    """Parse a version from the knowledge base (already schema-checked)."""
    return Version(text)


def is_valid_version(text: str) -> bool:
    try:
        Version(text)
    except (InvalidVersion, ValueError):  # not PEP 440, or a number past Python's int-string limit
        return False
    return True


def release_prefix(text: str, parts: int) -> str:
    """``release_prefix("10.1.243", 2) == "10.1"``."""
    return ".".join(str(p) for p in parse_version(text).release[:parts])


def major(text: str) -> int:
    return parse_version(text).release[0]


@lru_cache(maxsize=1024)
def parse_spec(text: str) -> SpecifierSet:
    """Parse a PEP 440 specifier set; raise ValueError (InvalidSpecifier) when it is not one."""
    return SpecifierSet(text)


def satisfies(version: str, spec: Optional[str]) -> bool:
    """True when ``version`` meets ``spec`` (None means no constraint); the knowledge
    base's ranges admit pre-releases (``>=1.1.0a0,<1.2`` holds 1.1.0a0+828a6a3)."""
    return spec is None or parse_spec(spec).contains(parse_version(version), prereleases=True)


class VersionPin(NamedTuple):
    """A parsed pin; ``text`` is what the user typed, normalised for display."""

    text: str
    kind: PinKind
    prefix: Tuple[int, ...] = ()
    exact: Optional[Version] = None
    specifier: Optional[SpecifierSet] = None

    def matches(self, version: str) -> bool:
        parsed = parse_version(version)
        if parsed.is_prerelease and not self.admits_prereleases:
            return False
        if self.kind == "prefix":
            return parsed.release[: len(self.prefix)] == self.prefix
        if self.kind == "exact":
            return parsed == self.exact
        assert self.specifier is not None
        return self.specifier.contains(parsed, prereleases=True)

    @property
    def admits_prereleases(self) -> bool:
        """PEP 440: a pin admits pre-releases only when it names one (``--with pytorch=1.1.0``
        must not pick 1.1.0a0+828a6a3; ``1.1.0a0+828a6a3`` or ``>=1.1.0a0`` may)."""
        if self.kind == "exact":
            return True
        if self.specifier is None:
            return False
        return any(_names_prerelease(item.operator, item.version) for item in self.specifier)

    def __str__(self) -> str:
        return self.text


def _names_prerelease(op: str, value: str) -> bool:
    # as packaging decides it: "!=" and "==X.*" never ask for pre-releases
    if op == "===":
        return True  # arbitrary equality names one exact string
    return op != "!=" and not value.endswith(".*") and Version(value).is_prerelease


@lru_cache(maxsize=2048)
def parse_pin(text: str, *, flag: str) -> VersionPin:
    """Parse a user's version pin, or raise :class:`UsageError` naming ``flag``."""
    cleaned = text.strip()
    if not cleaned:
        raise UsageError(f"{flag}: empty version", hint=_PIN_HINT)
    if len(cleaned) > _MAX_PIN_LENGTH:
        raise UsageError(f"{flag}: version is longer than {_MAX_PIN_LENGTH} characters")
    if _PREFIX.match(cleaned):
        digits = cleaned[:-2] if cleaned.endswith(".*") else cleaned
        return VersionPin(text=digits, kind="prefix", prefix=tuple(int(p) for p in digits.split(".")))
    if not _SPECIFIER_CHARS.match(cleaned):
        bad = sorted({c for c in cleaned if not _SPECIFIER_CHARS.match(c)})
        raise UsageError(
            f"{flag}: {text!r} is not a version: it contains {' '.join(repr(c) for c in bad)}",
            hint=_PIN_HINT,
        )
    if _OPERATOR.search(cleaned):
        return _parse_specifier(cleaned, text, flag)
    try:
        exact = Version(cleaned)
    except (InvalidVersion, ValueError):
        raise UsageError(f"{flag}: {text!r} is not a valid version", hint=_PIN_HINT) from None
    return VersionPin(text=str(exact), kind="exact", exact=exact)


def _parse_specifier(cleaned: str, original: str, flag: str) -> VersionPin:
    try:
        spec = parse_spec(cleaned.replace(" ", ""))
    except (InvalidSpecifier, ValueError):  # ValueError: a number past Python's int-string limit
        raise UsageError(f"{flag}: {original!r} is not a valid version specifier", hint=_PIN_HINT) from None
    # packaging prints the clauses sorted, so that equal pins print, hash and compare the same.
    return VersionPin(text=str(spec), kind="specifier", specifier=spec)


_PIN_HINT = (
    "give a release prefix (10.1), an exact version (1.1.0a0+828a6a3) or a PEP 440 specifier ('>=10.1,<11')"
)
