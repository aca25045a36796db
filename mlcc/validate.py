"""Small checks of flag values shared by the commands: empty paths, integer ranges."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from mlcc.errors import UsageError

INT32_MAX = 2**31 - 1


def path_flag(value: Optional[str], flag: str) -> Optional[Path]:
    """``value`` as a Path; an empty string is an error (Path("") would silently mean ".")."""
    if value is None:
        return None
    if not value.strip():
        raise UsageError(f"{flag}: empty path", hint=f"give {flag} a file or folder name")
    return Path(value)


def int_in_range(value: int, flag: str, low: int, high: int) -> int:
    if not low <= value <= high:
        raise UsageError(f"{flag} {value}: give a whole number from {low} to {high}")
    return value
