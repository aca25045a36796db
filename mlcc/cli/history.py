"""``mlcc history``: every build, skip and failure recorded, newest first."""

from __future__ import annotations

import json
from typing import Optional

import click

from mlcc.app.history import history_rows, open_history
from mlcc.cli.values import COUNT, PATH
from mlcc.image.sizes import human
from mlcc.ui.safe_text import echo
from mlcc.ui.table import render

HISTORY_HELP = "The database (default: MLCC_HISTORY or ~/.local/share/mlcc/history.sqlite)."


@click.command("history")
@click.argument("benchmark", required=False)
@click.option("--variant", metavar="VARIANT", help="Only this variant.")
@click.option("--status", type=click.Choice(["built", "skipped", "failed"]), help="Only this outcome.")
@click.option(
    "--limit", type=COUNT, default=50, show_default=True, help="At most this many rows, newest first."
)
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
@click.option("--history", "history_file", metavar="FILE", type=PATH, help=HISTORY_HELP)
def history_command(
    benchmark: Optional[str],
    variant: Optional[str],
    status: Optional[str],
    limit: int,
    as_json: bool,
    history_file: Optional[str],
) -> None:
    """Every build, skip and failure mlcc recorded, newest first."""
    history = open_history(history_file)
    rows = history_rows(history, benchmark=benchmark, variant=variant, status=status, limit=limit)
    if as_json:
        echo(json.dumps(rows, indent=2))
        return
    if not rows:
        echo(
            f"no builds recorded in {history.path}"
            + (" that match" if benchmark or variant or status else "")
        )
        return
    table = [
        (
            str(r["id"]),
            r["finished"],
            r["benchmark"],
            r["variant"],
            r["status"],
            f"{r['seconds']:.1f} s" if r["seconds"] is not None else "-",
            r["backend"],
            (r["image_digest"] or "-")[:19],
            r["flavour"] or "-",
            human(r["size"]) if r["size"] else "-",
            human(r["uncompressed"]) if r["uncompressed"] else "-",
        )
        for r in rows
    ]
    echo(
        render(
            (
                "#",
                "finished",
                "benchmark",
                "variant",
                "status",
                "time",
                "backend",
                "digest",
                "flavour",
                "pulled",
                "unpacked",
            ),
            table,
        )
    )
