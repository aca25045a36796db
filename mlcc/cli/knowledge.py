"""``mlcc list`` and ``mlcc resolve``: what the knowledge base knows, and one stack."""

from __future__ import annotations

import json

import click

from mlcc.app.kb import LISTABLE, ResolveView, list_rows, request_notes, resolve, resolved_json
from mlcc.cli.context import benchmark_argument, kb_of
from mlcc.cli.options import options
from mlcc.cli.output import list_table, stack_table
from mlcc.errors import ConflictError
from mlcc.resolve.pins import Pins
from mlcc.ui.safe_text import echo


@click.command("list")
@click.argument("what", type=click.Choice(list(LISTABLE)), default="benchmarks")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array instead of a table.")
@click.pass_context
def list_command(ctx: click.Context, what: str, as_json: bool) -> None:
    """List what the knowledge base knows: benchmarks (default), bases, cuda,
    cudnn, nccl, frameworks, arches, gpus or rounds (the MLPerf rounds, each with its
    benchmarks; default: yes marks the round a name in several rounds means)."""
    rows = list_rows(kb_of(ctx), what)
    if as_json:
        echo(json.dumps(rows, indent=2))
    else:
        echo(list_table(what, rows))


@click.command("resolve")
@benchmark_argument()
@options(Pins, "pins")
@options(ResolveView, "view")
@click.pass_context
def resolve_command(ctx: click.Context, benchmark: str, pins: Pins, view: ResolveView) -> None:
    """Resolve a compatible stack for BENCHMARK and the pins given.

    \b
    Examples:
      mlcc resolve maskrcnn --cuda 10.1
      mlcc resolve tf_cnn_benchmarks --cpu --base ubi9
      mlcc resolve minigo --with tensorflow=1.13 --arch ppc64le --json
      mlcc resolve nccl-tests --driver 450.80.02
    """
    kb = kb_of(ctx)
    try:
        stack = resolve(kb, benchmark, pins)
    except ConflictError as conflict:
        if view.json and hasattr(conflict, "to_dict"):
            echo(json.dumps(conflict.to_dict(), indent=2))
        raise
    request = pins.request(kb, benchmark)
    notes = request_notes(kb, request, stack)
    if view.json:
        echo(resolved_json(stack, request, notes))
    else:
        echo(stack_table(stack, verbose=view.verbose, request=request, notes=notes))
