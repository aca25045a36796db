"""Regular expressions compiled when first used.

Compiling a pattern costs 30-600 us; the validators of options a plain ``mlcc gen``
does not take (cluster settings, mirrors, image references, credential redaction) were
~2.5 ms of every start compiling patterns nothing then ran. A module states its pattern
as before, ``_QUANTITY = LazyPattern(r"...")``, and calls it as a compiled one; the
compile happens at the first call. Patterns every run uses stay ``re.compile``.
"""

from __future__ import annotations

import re
import sys
from typing import Callable, Optional, Union


class LazyPattern:
    """``re.compile(pattern, flags)``, done at the first match, search or substitution."""

    __slots__ = ("_compiled", "_flags", "_pattern")

    def __init__(self, pattern: str, flags: Union[int, re.RegexFlag] = 0) -> None:
        self._pattern = pattern
        self._flags = flags
        self._compiled: Optional[re.Pattern[str]] = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._pattern, self._flags)
        return self._compiled

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Optional[re.Match[str]]:
        return self.compiled.match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Optional[re.Match[str]]:
        return self.compiled.fullmatch(string, pos, endpos)

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Optional[re.Match[str]]:
        return self.compiled.search(string, pos, endpos)

    def sub(self, repl: Union[str, Callable[[re.Match[str]], str]], string: str, count: int = 0) -> str:
        return self.compiled.sub(repl, string, count)

    def __repr__(self) -> str:
        return f"LazyPattern({self._pattern!r})"
