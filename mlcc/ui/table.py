"""Plain-text tables through rich: aligned columns, the last column wrapped to the width.

Every cell is plain text (never rich markup: a reason may say ``[unconfirmed: ...]``),
no colour or box-drawing character is written, and the header is underlined with ``-``,
so a table reads the same on a terminal, in a file and in a CI log.
"""

from __future__ import annotations

import io
from typing import Sequence

from mlcc.ui.safe_text import printable

# rich's SIMPLE_HEAD in ASCII: no frame, a line of dashes under the header, two spaces between columns
_HEADER_RULE = "    \n    \n -  \n    \n    \n    \n    \n    \n"
_GAP = 2  # the padding and the separator after each column


def terminal_width(fallback: int) -> int:
    """COLUMNS, else the terminal's width, else ``fallback``."""
    # imported here: shutil brings bz2, lzma and zlib, and `mlcc resolve --json` draws no table
    import shutil

    return shutil.get_terminal_size((fallback, 24)).columns


def render(headers: Sequence[str], rows: Sequence[Sequence[str]], *, wrap_last: bool = True) -> str:
    """``rows`` under ``headers`` as text ("" without rows): the columns but the last keep
    their width; the last wraps at the terminal's width (COLUMNS, else 120) when ``wrap_last``."""
    if not rows:
        return ""
    # rich (~50 ms to import) only once a table is printed: `mlcc resolve --json` and
    # `mlcc gen` print none, and their start-up is measured against HPC Container Maker's
    from rich.box import Box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    cells = [[printable(str(cell)) for cell in row] for row in rows]
    table = Table(
        box=Box(_HEADER_RULE, ascii=True),
        show_edge=False,
        pad_edge=False,
        padding=(0, 1, 0, 0),
        header_style="",
    )
    needed = 0  # the narrowest width that shows every column: rich drops columns that do not fit
    for index, header in enumerate(headers):
        longest = max(len(str(header)), *(len(row[index]) for row in cells))
        if index < len(headers) - 1:  # never narrowed: a cut digest or variant name misleads
            table.add_column(Text(printable(str(header))), no_wrap=True, min_width=longest)
            needed += longest + _GAP
        else:  # whatever room is left, and at least 30 columns
            table.add_column(Text(str(header)), no_wrap=not wrap_last, min_width=min(longest, 30))
            needed += min(longest, 30) + _GAP
    for row in cells:
        table.add_row(*(Text(cell) for cell in row))
    width = max(terminal_width(120), needed) if wrap_last else 1 << 16
    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None, highlight=False, emoji=False)
    console.print(table, crop=False)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())
