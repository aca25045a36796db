"""The Jinja2 environment of the HTML report (the one use of templates left in mlcc).

Strict (an undefined name is an error, not an empty string), no autoescaping: every
value from a log, an image or the history goes through the ``escape`` the renderers
pass, so the templates say where text is escaped. Not on the start-up path of ``gen``
or ``resolve``: only ``mlcc report`` imports this module.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2

REPORT_TEMPLATES = Path(__file__).parent / "templates"


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(REPORT_TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
