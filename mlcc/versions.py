"""Version strings and the pins users give on the command line.

A pin is either a *release prefix* (``10.1`` matches 10.1.105, 10.1.168 and 10.1.243, but
not 10.10.0), an *exact* version (``1.1.0a0+828a6a3``), or a PEP 440 *specifier set*
(``>=10.1,<11``). Anything else is rejected before it can reach a Dockerfile or a shell:
pins are parsed as PEP 440 versions (:mod:`mlcc.pep440`, held to :mod:`packaging` by
tests), whose grammar has no room for ``;``, quotes, ``$`` or whitespace tricks.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Callable, Dict, Literal, NamedTuple, Optional, Tuple

from mlcc.errors import UsageError
from mlcc.lazy_pattern import LazyPattern
from mlcc.pep440 import Version

if TYPE_CHECKING:
    PinKind = Literal["prefix", "exact", "specifier"]

_MAX_PIN_LENGTH = 100
_PREFIX = re.compile(r"^[0-9]+(?:\.[0-9]+)*(?:\.\*)?\Z")
# Characters a PEP 440 specifier set may use; checked before the parser sees the text so
# the error can say exactly what is wrong.
_SPECIFIER_CHARS = LazyPattern(r"^[0-9A-Za-z.*+!<>=~, ]+\Z")
_OPERATOR = LazyPattern(r"[<>=!~]")


@lru_cache(maxsize=4096)
def parse_version(text: str) -> Version:
    """Parse a version from the knowledge base (already schema-checked)."""
    return Version(text)


def is_valid_version(text: str) -> bool:
    try:
        Version(text)
    except ValueError:  # not PEP 440, or a number past Python's int-string limit
        return False
    return True


def release_prefix(text: str, parts: int) -> str:
    """``release_prefix("10.1.243", 2) == "10.1"``."""
    return ".".join(str(p) for p in parse_version(text).release[:parts])


def major(text: str) -> int:
    return parse_version(text).release[0]


# ------------------------------------------------------------------ specifier sets
#
# packaging.specifiers costs ~12 ms to import (it pulls in packaging.tags), a fifth of the
# start-up budget. Specifier sets are therefore evaluated here, with PEP 440 semantics and
# pre-releases always allowed; packaging still parses them for validation on the cold
# path, and a property test checks this evaluator against packaging's.

_CLAUSE = re.compile(r"^(===|~=|==|!=|<=|>=|<|>)\s*([0-9A-Za-z.*+!_-]+)\Z")


def _equal(candidate: Version, text: str) -> bool:
    if text.endswith(".*"):
        prefix = parse_version(text[:-2]).release
        release = candidate.release + (0,) * max(0, len(prefix) - len(candidate.release))
        return release[: len(prefix)] == prefix and candidate.epoch == parse_version(text[:-2]).epoch
    wanted = parse_version(text)
    if wanted.local is not None:
        return candidate == wanted
    return parse_version(candidate.public) == wanted


def _trimmed(version: Version) -> Tuple[int, Tuple[int, ...]]:
    release = list(version.release)
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    return version.epoch, tuple(release)


def _less(candidate: Version, text: str) -> bool:
    bound = parse_version(text)
    if not candidate < bound:
        return False
    # "<1.2" must not admit 1.2's own pre-releases (PEP 440)
    same_family = _trimmed(candidate) == _trimmed(bound)
    return bound.is_prerelease or not (candidate.is_prerelease and same_family)


def _greater(candidate: Version, text: str) -> bool:
    bound = parse_version(text)
    if not candidate > bound:
        return False
    if _trimmed(candidate) != _trimmed(bound):
        return True
    # ">V" must not admit V's own post-releases (unless V is one) nor V's local versions
    if not bound.is_postrelease and candidate.is_postrelease and _without_post(candidate) == bound:
        return False
    return candidate.local is None or parse_version(candidate.public) != bound


def _without_post(version: Version) -> Version:
    text = version.public
    index = text.find(".post")
    return parse_version(text[:index] if index >= 0 else text)


def _compatible(candidate: Version, text: str) -> bool:
    release = parse_version(text).release
    prefix = ".".join(str(p) for p in release[:-1]) + ".*"
    return parse_version(candidate.public) >= parse_version(text) and _equal(candidate, prefix)


_OPERATORS: Dict[str, Callable[[Version, str], bool]] = {
    "==": _equal,
    "!=": lambda c, t: not _equal(c, t),
    "<=": lambda c, t: parse_version(c.public) <= parse_version(t),
    ">=": lambda c, t: parse_version(c.public) >= parse_version(t),
    "<": _less,
    ">": _greater,
    "~=": _compatible,
    "===": lambda c, t: str(c) == t,
}


class Spec(NamedTuple):
    """A PEP 440 specifier set such as ``>=1.1.0a0,<1.2`` (pre-releases allowed)."""

    text: str
    clauses: Tuple[Tuple[str, str], ...]

    def contains(self, version: str) -> bool:
        candidate = parse_version(version)
        return all(_OPERATORS[op](candidate, value) for op, value in self.clauses)

    def __str__(self) -> str:
        return self.text


@lru_cache(maxsize=1024)
def parse_spec(text: str) -> Spec:
    """Parse a specifier set; raise ValueError when it is not one."""
    clauses = []
    for part in text.split(","):
        match = _CLAUSE.match(part.strip())
        if not match:
            raise ValueError(f"{text!r} is not a version specifier")
        op, value = match.groups()
        if op != "===":
            try:
                release = Version(value[:-2] if value.endswith(".*") else value).release
            except ValueError:  # not PEP 440, or a number past Python's int-string limit
                raise ValueError(f"{text!r} is not a version specifier") from None
            if value.endswith(".*") and op not in ("==", "!="):
                raise ValueError(f"{text!r}: '.*' only goes with == and !=")
            if op == "~=" and len(release) < 2:  # PEP 440: ~=V needs V.N at least
                raise ValueError(f"{text!r}: ~= needs at least two release numbers (~=10.1)")
        clauses.append((op, value))
    return Spec(text=text, clauses=tuple(clauses))


def satisfies(version: str, spec: Optional[str]) -> bool:
    """True when ``version`` meets ``spec`` (None means no constraint)."""
    return spec is None or parse_spec(spec).contains(version)


class VersionPin(NamedTuple):
    """A parsed pin; ``text`` is what the user typed, normalised for display."""

    text: str
    kind: PinKind
    prefix: Tuple[int, ...] = ()
    exact: Optional[Version] = None
    specifier: Optional[Spec] = None

    def matches(self, version: str) -> bool:
        parsed = parse_version(version)
        if parsed.is_prerelease and not self.admits_prereleases:
            return False
        if self.kind == "prefix":
            return parsed.release[: len(self.prefix)] == self.prefix
        if self.kind == "exact":
            return parsed == self.exact
        assert self.specifier is not None
        return self.specifier.contains(version)

    @property
    def admits_prereleases(self) -> bool:
        """PEP 440: a pin admits pre-releases only when it names one (``--with pytorch=1.1.0``
        must not pick 1.1.0a0+828a6a3; ``1.1.0a0+828a6a3`` or ``>=1.1.0a0`` may)."""
        if self.kind == "exact":
            return True
        if self.specifier is None:
            return False
        return any(_names_prerelease(op, value) for op, value in self.specifier.clauses)

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
    except ValueError:
        raise UsageError(f"{flag}: {text!r} is not a valid version", hint=_PIN_HINT) from None
    return VersionPin(text=str(exact), kind="exact", exact=exact)


def _parse_specifier(cleaned: str, original: str, flag: str) -> VersionPin:
    compact = cleaned.replace(" ", "")
    try:
        spec = parse_spec(",".join(sorted(compact.split(","))))
    except ValueError:
        raise UsageError(f"{flag}: {original!r} is not a valid version specifier", hint=_PIN_HINT) from None
    # Clauses are sorted so that equal pins print, hash and compare the same.
    return VersionPin(text=spec.text, kind="specifier", specifier=spec)


_PIN_HINT = (
    "give a release prefix (10.1), an exact version (1.1.0a0+828a6a3) or a PEP 440 specifier ('>=10.1,<11')"
)
