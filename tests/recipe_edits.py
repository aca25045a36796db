"""Edits of a copied recipes folder, for the tests of what a bad recipe gets: one place
instead of a copy per test file."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlcc.errors import RecipeError
from mlcc.kb import load


def edit(path: Path, old: str, new: str) -> None:
    """Replace the first ``old`` in ``path`` with ``new``; fails if the fixture drifted."""
    text = path.read_text()
    assert old in text, f"fixture drift: {old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def line_of(path: Path, needle: str) -> int:
    """The number of the first line of ``path`` holding ``needle``."""
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(needle)


def load_error(recipes: Path) -> RecipeError:
    """The RecipeError loading ``recipes`` (uncached) raises; fails if it loads."""
    with pytest.raises(RecipeError) as caught:
        load(str(recipes), use_cache=False)
    return caught.value
