"""``mlcc matrix`` and ``mlcc report``: the published matrix as a table, JSON, or a page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional, Sequence

import click

from mlcc.app.history import open_history
from mlcc.app.kb import incomplete_message
from mlcc.app.matrix import MatrixFilters, cell_results, incomplete_benchmarks
from mlcc.app.report import report_document, write_report
from mlcc.cli.context import kb_of
from mlcc.cli.options import options
from mlcc.cli.values import FILE, NONEMPTY_TEXT, PATH
from mlcc.errors import UsageError
from mlcc.kb.model import Benchmark
from mlcc.matrix import github_matrix, parity, row
from mlcc.ui.safe_text import echo
from mlcc.ui.table import render
from mlcc.validate import path_flag


@click.command("matrix")
@options(MatrixFilters, "filters")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "github"]),
    default="table",
    show_default=True,
    help="A table, a JSON array of cells, or the object for GitHub Actions' strategy.matrix.",
)
@click.option(
    "--explain", is_flag=True, help="Also list the cells left out, each with the resolver's reason."
)
@click.option(
    "--parity",
    "show_parity",
    is_flag=True,
    help="For each x86_64 cell: its ppc64le counterpart, or why there is none.",
)
@click.pass_context
def matrix_command(
    ctx: click.Context, filters: MatrixFilters, fmt: str, explain: bool, show_parity: bool
) -> None:
    """The published matrix (recipes/matrix.yaml) after resolution: the cells that build.

    \b
    Examples:
      mlcc matrix
      mlcc matrix --explain --benchmark maskrcnn
      mlcc matrix --cuda '>=11'            # the same pin syntax as mlcc resolve
      mlcc matrix --format github          # for strategy.matrix in a workflow
      mlcc matrix --parity
    """
    kb = kb_of(ctx)
    results, resolver = cell_results(kb, filters)
    rows = [row(r) for r in results]
    shown = rows if explain else [r for r in rows if r["status"] == "published"]
    if show_parity:
        found = parity(kb, results, resolver)
        if fmt != "table":
            echo(json.dumps(found, indent=2))
            return
        table = [(r["benchmark"], r["x86_64"], r["ppc64le"] or "none", r["reason"]) for r in found]
        echo(render(("benchmark", "x86_64", "ppc64le", "why not"), table))
        missing = sum(1 for r in found if not r["ppc64le"])
        echo(f"{missing} of {len(found)} x86_64 cells have no ppc64le counterpart")
        return
    if fmt == "github":
        echo(json.dumps(github_matrix(rows), indent=2))
        return
    if fmt == "json":
        echo(json.dumps(shown, indent=2))
        return
    incomplete = incomplete_benchmarks(kb, filters) if explain else []
    if not shown and incomplete:
        _echo_incomplete(incomplete)
        return
    if not shown:
        raise UsageError(
            "no cell of the matrix matches those filters"
            if filters
            else "the matrix has no cell that resolves",
            hint="mlcc matrix --explain shows every cell and why it is out",
        )
    lines: List[Sequence[str]] = []
    for r in shown:
        detail = r["framework"] or "-" if r["status"] == "published" else r["reason"]
        cells = [r["benchmark"], r["variant"] or "-", r["arch"] or "-", r["cuda"] or "-", r["base"] or "-"]
        lines.append([*cells, *([r["status"]] if explain else []), detail])
    headers = ["benchmark", "variant", "arch", "cuda", "base"]
    headers += ["status", "framework, or why not"] if explain else ["framework"]
    echo(render(headers, lines))
    published = sum(1 for r in rows if r["status"] == "published")
    echo(
        f"{published} cells build; {len(rows) - published} left out"
        + ("" if explain else " (--explain says why)")
    )
    _echo_incomplete(incomplete)


def _echo_incomplete(benchmarks: Sequence[Benchmark]) -> None:
    """The benchmarks the matrix leaves out because their recipes say INCOMPLETE, and why."""
    for bench in benchmarks:
        echo(f"not in the matrix: {incomplete_message(bench)}")


@click.command("report")
@click.option("--html", "html_file", metavar="FILE", type=FILE, required=True, help="Write the page here.")
@options(MatrixFilters, "filters")
@click.option(
    "--history", "history_file", metavar="FILE", type=PATH, help="The build history to colour the cells by."
)
@click.option(
    "--title", type=NONEMPTY_TEXT, default="mlcc build matrix", show_default=True, help="The page's title."
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the page written and its cells as one JSON object (schema mlcc-report/1).",
)
@click.pass_context
def report_command(
    ctx: click.Context,
    html_file: str,
    filters: MatrixFilters,
    history_file: Optional[str],
    title: str,
    as_json: bool,
) -> None:
    """One self-contained HTML page: the matrix as a grid of benchmarks x stacks, each cell
    coloured by its latest build (linking the log), left-out cells greyed with the reason."""

    target = path_flag(html_file, "--html") or Path(html_file)
    cells = write_report(kb_of(ctx), filters, open_history(history_file), target, title=title)
    if as_json:
        echo(json.dumps(report_document(target, cells), indent=2, allow_nan=False))
        return
    echo(f"wrote {target}: {len(cells)} cells")
