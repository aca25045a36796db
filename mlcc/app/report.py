"""`mlcc report` as a use case: the filtered matrix, coloured by the history, as one page."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Dict, List

from mlcc.app.matrix import MatrixFilters, cell_results
from mlcc.history import History
from mlcc.kb.model import KnowledgeBase
from mlcc.output import write_tree
from mlcc.report import GridCell, grid, render_html
from mlcc.report.results import results_view


def write_report(
    kb: KnowledgeBase, filters: MatrixFilters, history: History, target: Path, *, title: str
) -> List[GridCell]:
    """Write the filtered matrix, coloured by the history, as one self-contained HTML page.

    Args:
        kb: The knowledge base.
        filters: Which cells (``--benchmark``, ``--base``, ``--arch``, ``--cuda``).
        history: The build history that colours each cell; its results add the results view.
        target: The HTML file to write.
        title: The page's title.

    Returns:
        The cells of the grid, as drawn.

    Raises:
        UsageError: A filter names something unknown.
        HistoryError: The history database is locked or damaged.
        OutputError: The page cannot be written.
    """
    results, _ = cell_results(kb, filters)
    cells = grid(results, history.latest(), target)
    page = render_html(cells, title=title, results_html=results_view(kb, history))
    write_tree(target.parent, [(target.name, page)], flag="--html FILE")
    return cells


def report_document(target: Path, cells: List[GridCell]) -> Dict[str, Any]:
    """``mlcc report --json``: the page written and each cell as drawn.

    Args:
        target: The HTML file written.
        cells: :func:`write_report`'s cells.

    Returns:
        ``{"schema": "mlcc-report/1", "html", "cells": [{"benchmark", "column", "status",
        "variant", "reason", "finished", "seconds", "digest", "log"}]}``; a figure that is
        not finite is null.
    """
    rows = [
        {
            "benchmark": cell.benchmark,
            "column": cell.column,
            "status": cell.status,
            "variant": cell.variant,
            "reason": cell.reason,
            "finished": cell.finished,
            "seconds": cell.seconds if cell.seconds is not None and math.isfinite(cell.seconds) else None,
            "digest": cell.digest,
            "log": cell.log,
        }
        for cell in cells
    ]
    return {"schema": "mlcc-report/1", "html": str(target), "cells": rows}
