"""`mlcc report --html FILE`: the matrix as one self-contained page.

Rows are benchmarks, columns the base image and arch each cell's stack was built for (a
cell that pins neither, "maskrcnn --cuda 10.1", sits where its stack landed, ubi8 . x86_64,
not in an "any base" column of its own); each cell shows its stack (its CUDA or CPU) and the
latest build from the history (coloured by status, linking its log), and cells left out are
greyed with the reason, counted as `mlcc matrix` counts them. Five columns fit 1280 px. No external assets:
the CSS is inline and nothing is fetched, so the file can be mailed or archived by CI.
"""

from __future__ import annotations

import html
import os
from pathlib import Path, PurePath
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple
from urllib.parse import quote

import mlcc
from mlcc.image.sizes import human
from mlcc.matrix import CPU, CellResult, row
from mlcc.report.templating import environment

CELL_STATUSES = ("built", "skipped", "failed", "not built", "excluded", "duplicate")


class GridCell(NamedTuple):
    benchmark: str
    column: str
    status: str
    variant: Optional[str]
    stack: str  # one line: CUDA, cuDNN, NCCL, framework, Python
    reason: str
    finished: Optional[str]
    seconds: Optional[float]
    digest: Optional[str]
    log: Optional[str]  # a link, relative to the report when it can be
    size: str = ""  # "devel: 2.1 GiB pulled, 5.8 GiB unpacked", when the history knows it


def column_of(found: Dict[str, Any]) -> str:
    """A cell's column: the base and arch of its stack (of its pins when it has none)."""
    return " · ".join([found.get("base") or "any base", found.get("arch") or "any arch"])


def _column_order(column: str) -> Tuple[bool, str, bool, str]:
    base, _, arch = column.partition(" · ")
    return (base == "any base", base, arch != "x86_64", arch)


def _stack_line(found: Dict[str, Any]) -> str:
    parts = [f"CUDA {found['cuda']}" if found.get("cuda") not in (None, CPU) else "CPU"]
    for key, label in (("cudnn", "cuDNN"), ("nccl", "NCCL"), ("python", "Python")):
        if found.get(key):
            parts.append(f"{label} {found[key]}")
    if found.get("framework"):
        parts.append(str(found["framework"]))
    return ", ".join(parts)


def grid(
    outcomes: Sequence[CellResult], latest: Dict[Tuple[str, str], Dict[str, Any]], report: Path
) -> List[GridCell]:
    cells = []
    for outcome in outcomes:
        found = row(outcome)
        history = latest.get((found["benchmark"], found["variant"])) if found["variant"] else None
        status = found["status"]
        if status == "published":
            status = history["status"] if history else "not built"
        cells.append(
            GridCell(
                benchmark=found["benchmark"],
                column=column_of(found),
                status=status,
                variant=found["variant"],
                stack=_stack_line(found) if found["variant"] else "",
                reason=found["reason"] or (history or {}).get("reason") or "",
                finished=(history or {}).get("finished"),
                seconds=(history or {}).get("seconds"),
                digest=(history or {}).get("image_digest"),
                log=_link((history or {}).get("log_path"), report),
                size=_size_line(history or {}),
            )
        )
    return cells


def _size_line(history: Dict[str, Any]) -> str:
    """The flavour and sizes of a cell's latest build, as the history recorded them."""
    if not history.get("size") and not history.get("uncompressed"):
        return ""
    figures = [
        f"{human(value)} {what}"
        for value, what in ((history.get("size"), "pulled"), (history.get("uncompressed"), "unpacked"))
        if value
    ]
    return f"{history.get('flavour') or 'devel'}: " + ", ".join(figures)


def _link(path: Optional[str], report: Path) -> Optional[str]:
    """``path`` as a URL relative to the report, or None: never a URL with a scheme.

    A log named ``javascript:alert(1)`` (``--log`` takes any name, and the history any text)
    beside the report would otherwise become a link that runs script; every path segment is
    percent-encoded, so a ``:`` is never read as a scheme. A path the report cannot reach
    relatively (another drive) gets no link rather than a ``file:`` URL.
    """
    if not path or not path.isprintable():
        return None
    try:
        relative = os.path.relpath(path, report.resolve().parent)
    except ValueError:
        return None
    return "/".join(quote(part, safe="") for part in PurePath(relative).parts)


def render_html(cells: Sequence[GridCell], *, title: str, results_html: str = "") -> str:
    """The matrix page; ``results_html`` (mlcc.report.results) adds the results view."""
    benchmarks = list(dict.fromkeys(c.benchmark for c in cells))
    columns = sorted(dict.fromkeys(c.column for c in cells), key=_column_order)
    by_key: Dict[Tuple[str, str], List[GridCell]] = {}
    for cell in cells:
        by_key.setdefault((cell.benchmark, cell.column), []).append(cell)
    counts = {s: sum(1 for c in cells if c.status == s) for s in CELL_STATUSES}
    # as `mlcc matrix` counts them: rejected by the resolver, or the same stack as another cell
    counts["left out"] = counts["excluded"] + counts["duplicate"]
    newest = max((c.finished for c in cells if c.finished), default=None)
    template = environment().get_template("report.html.j2")
    return str(
        template.render(
            title=title,
            benchmarks=benchmarks,
            columns=columns,
            by_key=by_key,
            counts=counts,
            newest=newest,
            version=mlcc.__version__,
            escape=html.escape,
            results_html=results_html,
        )
    )
