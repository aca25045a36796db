"""Free text in recipes stays on one line, holds no control characters and has a length limit.

Recipes are data a user may take from elsewhere (``--recipes``). Their text reaches
Dockerfile comments and labels, shell scripts, YAML and terminals; a newline there
starts a new instruction or command, U+2028/U+2029 break YAML readers, an escape
sequence rewrites the terminal. No recipe needs any of them, so every string value (and
key) of every recipe file is checked before the schema, wherever it sits.
"""

from __future__ import annotations

import re
from typing import Any, Iterator, Tuple

from mlcc.errors import RecipeError
from mlcc.kb.yamlsrc import LineMap, PathKey, line_of

# C0 and C1 controls, DEL, the Unicode line and paragraph separators, and the BOM.
FORBIDDEN = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]")
# The longest text a recipe field may hold: the longest today (a note) is under 1,500
# characters; a 100,000-character title would fill every table and page it reaches.
MAX_TEXT = 4000
# Names and titles are shown in tables and headings: a line, not a paragraph.
MAX_TITLE = 200


def check_text(data: Any, display: str, lines: LineMap) -> None:
    """Raise RecipeError at the first string holding a forbidden character."""
    for path, text in _strings(data, ()):
        limit = MAX_TITLE if path and path[-1] in ("title", "name") else MAX_TEXT
        if len(text) > limit:
            raise RecipeError(
                display,
                line_of(lines, path),
                f"{_name(path)}: {len(text):,} characters; recipe text holds at most {limit:,} here",
                hint="shorten it (a long explanation belongs in the recipe's note or its sources)",
            )
        match = FORBIDDEN.search(text)
        if match:
            raise RecipeError(
                display,
                line_of(lines, path),
                f"{_name(path)}: character U+{ord(match.group()):04X} is not allowed in recipe text",
                hint="recipe text is one line of printable characters (no newlines, tabs or control codes)",
            )


def _strings(value: Any, path: PathKey) -> Iterator[Tuple[PathKey, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key), str(key)
            yield from _strings(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, (*path, index))


def _name(path: PathKey) -> str:
    return ".".join(str(p) for p in path) or "(top)"
