"""Small checks of values shared by the commands: empty paths, integer ranges, finite times, counts."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterable, Optional

from mlcc.errors import UsageError

if TYPE_CHECKING:
    from pathlib import Path

INT32_MAX = 2**31 - 1


def path_flag(value: Optional[str], flag: str) -> Optional[Path]:
    """``value`` as a Path; an empty string is an error (Path("") would silently mean ".")."""
    if value is None:
        return None
    if not value.strip():
        raise UsageError(f"{flag}: empty path", hint=f"give {flag} a file or folder name")
    # imported here: `mlcc resolve` imports this module for its other checks and never
    # needs pathlib (and through it urllib.parse and ipaddress)
    from pathlib import Path

    return Path(value)


def int_in_range(value: int, flag: str, low: int, high: int) -> int:
    if not low <= value <= high:
        raise UsageError(f"{flag} {value}: give a whole number from {low} to {high}")
    return value


SQLITE_INT_MAX = 2**63 - 1


def finite_time(value: object) -> Optional[float]:
    """A duration or time stamp that means something: finite and not negative, else None.

    float() reads ``1e999`` as infinity and JSON ``NaN``/``Infinity`` as such; one of those in
    a log or a history row would otherwise break every report drawn from it.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value) if abs(value) < 1e308 else math.inf
    return number if math.isfinite(number) and number >= 0 else None


def count(value: object) -> Optional[int]:
    """A count that means something: ASCII digits (or an int), 0 .. SQLite's largest integer, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        if not text.isascii() or not text.isdigit() or len(text) > 19:
            return None
        value = int(text)
    if not isinstance(value, int) or not 0 <= value <= SQLITE_INT_MAX:
        return None
    return value


def choice(value: str, names: Iterable[str]) -> Optional[str]:
    """The one of ``names`` that ``value`` names, by the one rule for named choices (--gpu,
    --flavour, --round): surrounding spaces are dropped and case is folded. None: no such name.

    Args:
        value: What the user typed.
        names: The names to choose from, as the knowledge base spells them.

    Returns:
        The name as spelled in ``names``, or None.
    """
    folded = value.strip().casefold()
    return next((name for name in names if name.casefold() == folded), None) if folded else None
