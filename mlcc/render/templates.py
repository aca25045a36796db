"""The Jinja2 environment of the renderers: strict, no autoescaping, shell-aware filters."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

TEMPLATES = Path(__file__).parent / "templates"


def double_quoted(value: str) -> str:
    """A value as a double-quoted word for Dockerfile ENV/LABEL and POSIX shells.

    ``$`` stays live on purpose (``${PATH}`` must expand); recipe values are
    schema-checked and cannot contain quotes or backticks.
    """
    escaped = str(value).replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`")
    return f'"{escaped}"'


@cache
def environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["dq"] = double_quoted
    return env
