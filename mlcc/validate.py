"""Small checks of flag values shared by the commands: empty paths, integer ranges."""

from __future__ import annotations

from typing import Optional

from mlcc.errors import UsageError
from mlcc.paths import pure

INT32_MAX = 2**31 - 1


def path_flag(value: Optional[str], flag: str) -> Optional[str]:
    """``value`` spelled as ``str(Path(value))`` ("out" for "./out/"), without importing
    pathlib (mlcc.paths); an empty string is an error (Path("") would silently mean ".")."""
    if value is None:
        return None
    if not value.strip():
        raise UsageError(f"{flag}: empty path", hint=f"give {flag} a file or folder name")
    return pure(value)


def int_in_range(value: int, flag: str, low: int, high: int) -> int:
    if not low <= value <= high:
        raise UsageError(f"{flag} {value}: give a whole number from {low} to {high}")
    return value
