"""The Jinja2 environment of the renderers: strict, no autoescaping, shell-aware filters."""

from __future__ import annotations

import contextlib
import json
import os
from functools import cache
from pathlib import Path
from typing import Any, Sequence, Tuple

import jinja2

from mlcc.kb.loader import cache_dir, trusted

TEMPLATES = Path(__file__).parent / "templates"


def double_quoted(value: str) -> str:
    """A value as a double-quoted word for Dockerfile ENV/LABEL and POSIX shells.

    ``$`` stays live on purpose (``${PATH}`` must expand); recipe values are
    schema-checked and cannot contain quotes or backticks.
    """
    text = str(value)
    if "\\" in text or '"' in text or "`" in text:
        text = text.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`")
    return f'"{text}"'


def assignments(pairs: Sequence[Tuple[str, str]], separator: str) -> str:
    """NAME="value" pairs joined by ``separator`` (Dockerfile ENV and LABEL bodies).

    One filter call instead of a Jinja loop with ``loop.last``: the loop context
    was the most expensive part of rendering a Dockerfile.
    """
    return separator.join([f"{name}={double_quoted(value)}" for name, value in pairs])


def literal_assignments(pairs: Sequence[Tuple[str, str]], separator: str) -> str:
    """Like :func:`assignments`, with ``$`` escaped: a LABEL holds the exact text.

    A builder expands ``$NAME`` in LABEL values, so a recipe title with ``$`` would make
    the image's label differ from the stack.json stamped beside it.
    """
    return separator.join([f"{name}={_no_expansion(double_quoted(value))}" for name, value in pairs])


def _no_expansion(word: str) -> str:
    return word.replace("$", "\\$")


def joined(items: Sequence[str], separator: str) -> str:
    """``separator.join(items)``: Jinja's own ``join`` goes through its async wrapper."""
    return separator.join(items)


def exec_form(words: Sequence[str]) -> str:
    """A JSON array for ENTRYPOINT/CMD (Jinja's ``tojson`` escapes for HTML, not for us)."""
    return json.dumps(list(words), ensure_ascii=False)


def _bytecode_cache() -> Any:
    """Compiled templates under mlcc's cache folder, or None where it cannot be trusted.

    Compiling the templates is most of a cold ``mlcc gen``; Jinja keys each entry by the
    template's source checksum and the interpreter, so an edited template recompiles.
    """
    directory = os.path.join(cache_dir(), "templates")
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError:
        return None
    if not trusted(directory):
        return None

    class QuietCache(jinja2.FileSystemBytecodeCache):
        def dump_bytecode(self, bucket: Any) -> None:
            with contextlib.suppress(OSError):  # a read-only cache only costs speed
                super().dump_bytecode(bucket)

    return QuietCache(directory)


@cache
def environment() -> Any:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        bytecode_cache=_bytecode_cache(),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["dq"] = double_quoted
    env.filters["assignments"] = assignments
    env.filters["literal_assignments"] = literal_assignments
    env.filters["exec_form"] = exec_form
    env.filters["joined"] = joined
    return env
