"""Text from outside (image labels, registry and server messages, logs) made safe for a terminal.

An ESC sequence in a label can move the cursor, rewrite earlier lines or set the window
title; control characters are shown as visible escapes instead of being sent raw.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control character (and bidi override) written as ``\\xNN``/``\\uNNNN``."""

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        if keep_newlines and char == "\n":
            return char
        return f"\\x{ord(char):02x}" if ord(char) <= 0xFF else f"\\u{ord(char):04x}"

    return _CONTROL.sub(escape, text)
