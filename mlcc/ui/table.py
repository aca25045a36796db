"""Plain-text tables: aligned columns, the last column wrapped to the terminal width.

Written here rather than imported from rich so that listing and resolving stay fast to
start; rich is used where a live display earns its import time.
"""

from __future__ import annotations

import shutil
import textwrap
from typing import List, Sequence


def terminal_width(fallback: int) -> int:
    """COLUMNS, else the terminal's width, else ``fallback``."""
    return shutil.get_terminal_size((fallback, 24)).columns


def render(headers: Sequence[str], rows: Sequence[Sequence[str]], *, wrap_last: bool = True) -> str:
    if not rows:
        return ""
    cells = [list(map(str, headers))] + [[str(c) for c in row] for row in rows]
    count = len(headers)
    widths = [max(len(row[i]) for row in cells) for i in range(count - 1)]
    lead = sum(widths) + 2 * (count - 1)
    total = terminal_width(120)
    room = max(total - lead, 30)
    lines: List[str] = []
    for index, row in enumerate(cells):
        head = "  ".join(row[i].ljust(widths[i]) for i in range(count - 1))
        last = row[-1]
        pieces = textwrap.wrap(last, room) if wrap_last and len(last) > room else [last]
        pieces = pieces or [""]
        lines.append(f"{head}  {pieces[0]}".rstrip() if count > 1 else pieces[0])
        lines.extend(" " * (lead + 2) + piece for piece in pieces[1:])
        if index == 0:
            lines.append(
                "  ".join("-" * w for w in widths)
                + ("  " if count > 1 else "")
                + "-" * min(max(len(r[-1]) for r in cells), room)
            )
    return "\n".join(lines)
