"""Text from outside (image labels, registry and server messages, logs) made safe for a terminal.

An ESC sequence in a label can move the cursor, rewrite earlier lines or set the window
title; control characters are shown as visible escapes instead of being sent raw.
"""

from __future__ import annotations

import re

import click

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control character (and bidi override) written as ``\\xNN``/``\\uNNNN``
    (``keep_newlines``: line breaks and tabs stay)."""

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        if keep_newlines and char in "\n\t":
            return char
        return f"\\x{ord(char):02x}" if ord(char) <= 0xFF else f"\\u{ord(char):04x}"

    return _CONTROL.sub(escape, text)


def echo(text: object = "", *, err: bool = False, nl: bool = True) -> None:
    """Print ``text`` through :func:`printable`: the one way mlcc writes to a terminal.

    Whatever a line holds (a file name, a pod name, --system, an image label, recipe text, a
    registry's or cluster's message), control characters and terminal escapes in it arrive
    as visible ``\\x1b`` text; line breaks and tabs stay.
    """
    click.echo(printable(str(text), keep_newlines=True), err=err, nl=nl)
