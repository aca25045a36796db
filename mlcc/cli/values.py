"""Values of command-line options checked for meaning as click parses them.

click's INT and FLOAT hand the text to int() and float(), which read any Unicode digit
(``--gpus ٤`` is 4), ``1_000``, ``nan`` and ``inf``; an empty path silently means the
current folder or the default. Every count, duration and path option of mlcc takes one of
these types instead, so the error names the flag and says what is allowed. (A module of
its own: the root command imports it before anything costly loads.)
"""

from __future__ import annotations

import math
import os
import re
from typing import Any, Optional

import click

# Options taking these are files or folders: an empty value is refused, never the default.
PATH_METAVARS = ("FILE", "DIR", "PATH")


class WholeNumber(click.ParamType[int, Any]):
    """A count from the command line: ASCII digits only, within ``low`` .. ``high``.

    click's INT hands the text to int(), which reads any Unicode digit (``٤`` is 4) and
    ``1_000``; a count a user did not type as one is refused instead.
    """

    name = "integer"

    def __init__(self, low: int = 0, high: int = 2**63 - 1) -> None:
        self.low = low
        self.high = high  # SQLite's largest integer: every count may end up in the history

    def allowed(self) -> str:
        return f"at least {self.low}" if self.high == 2**63 - 1 else f"from {self.low} to {self.high}"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            text = str(value).strip()
            if not text.isascii() or not text.isdigit():
                self.fail(
                    f"{value!r} is not a whole number: give ASCII digits 0-9, {self.allowed()}",
                    param,
                    ctx,
                )
            number = int(text)
        if not self.low <= number <= self.high:
            self.fail(f"{number} is out of range: give a whole number {self.allowed()}", param, ctx)
        return number


class FiniteNumber(click.ParamType[float, Any]):
    """A finite, non-negative decimal number in ASCII (``nan``, ``inf``, ``1e999``, ``٤`` refused)."""

    name = "number"
    _DECIMAL = re.compile(r"^[0-9]+(\.[0-9]+)?\Z")

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> float:
        if (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and math.isfinite(value)
            and value >= 0
        ):
            return float(value)
        text = str(value).strip()
        if not self._DECIMAL.match(text) or not math.isfinite(float(text)):
            self.fail(f"{value!r} is not a finite number: give ASCII digits such as 24 or 0.5", param, ctx)
        return float(text)


class NonEmpty(click.ParamType[str, Any]):
    """A path or name that must not be empty: ``Path("")`` silently means the current folder,
    and an empty recipes, schema or matrix folder would silently mean the default one."""

    name = "text"

    def __init__(self, what: str = "a file or folder name") -> None:
        self.what = what

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> str:
        text = str(value)
        if not text.strip():
            self.fail(f"empty value: give {self.what} (or leave the option out)", param, ctx)
        return text


class FileName(NonEmpty):
    """A file to write: not empty, and not a name that ends with ``/`` (``DIR/`` names a
    folder; writing it would make a file called ``DIR``)."""

    name = "file"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> str:
        text = super().convert(value, param, ctx)
        if text.endswith(("/", os.sep)):
            self.fail(f"{text!r} names a folder: give a file name, e.g. {text}report.html", param, ctx)
        return text


COUNT = WholeNumber(0)
POSITIVE = WholeNumber(1)
HOURS = FiniteNumber()
PATH = NonEmpty()
NONEMPTY_TEXT = NonEmpty("some text")  # a title, a system's name: empty would show as nothing
FILE = FileName()
