"""``mlcc advise``: the known stacks for a benchmark on a GPU, ranked by score, with their
evidence. Parses flags and prints; the use case is :mod:`mlcc.app.advise`."""

from __future__ import annotations

import json
from typing import Any, Optional

import click

from mlcc.app.advise import Advice, advise
from mlcc.cli.context import benchmark_argument, kb_of, round_option
from mlcc.cli.history import HISTORY_HELP
from mlcc.cli.values import PATH
from mlcc.ui.safe_text import echo
from mlcc.ui.table import render

# the rounds come from the records (recipes/rounds/), listed when --help is asked
ADVISE_ROUND_HELP = "Only this MLPerf round's recipe (`mlcc list rounds`)."


@click.command("advise")
@benchmark_argument()
@click.option(
    "--gpu", required=True, metavar="NAME", help="The GPU generation (mlcc list gpus): a100, h100, ..."
)
@round_option(ADVISE_ROUND_HELP)
@click.option("--history", "history_file", metavar="FILE", type=PATH, help=HISTORY_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def advise_command(
    ctx: click.Context, benchmark: str, gpu: str, round_name: Optional[str], history_file: Any, as_json: bool
) -> None:
    """Which known stack is fastest for BENCHMARK on a GPU: the stacks whose runs are stored
    in the history (mlcc results add) and the reference results the rounds' recipes record
    for that GPU, ranked by score, each with its evidence (runs, spread, where it came
    from); the stack mlcc would build for it per round; and what is unknown. No number is
    estimated: a GPU without runs is "unknown".

    \b
    Examples:
      mlcc advise maskrcnn --gpu a100
      mlcc advise bert --gpu h100 --json
    """
    found = advise(kb_of(ctx), benchmark, gpu, round_name=round_name, history_file=history_file)
    if as_json:
        echo(json.dumps(found.as_json(), indent=2, allow_nan=False))
        return
    _print(found)


def _minutes(value: Optional[float]) -> str:
    return "unknown" if value is None else f"{value:.2f}"


def _state(state: str) -> str:
    return "" if state in ("complete", "published") else f" ({state})"


def _print(found: Advice) -> None:
    echo(f"{found.benchmark} on {found.gpu}: known stacks, fastest first")
    rows = [
        (
            str(rank),
            known.stack,
            known.round or "-",
            _minutes(known.score_minutes)
            + ("" if known.state in ("complete", "published") else f" ({known.state})"),
            "unknown" if known.evidence.runs is None else str(known.evidence.runs),
            "unknown" if known.evidence.spread_percent is None else f"{known.evidence.spread_percent:.1f} %",
            known.evidence.kind,
        )
        for rank, known in enumerate(found.known, 1)
    ]
    if rows:
        echo(render(("#", "stack", "round", "score (min)", "runs", "spread", "evidence"), rows))
        for rank, known in enumerate(found.known, 1):
            echo(f"  {rank}: from {known.evidence.source}")
            for note in known.notes:
                echo(f"  {rank}: {note}")
    else:
        echo("  none: no stored runs and no reference result on this GPU")
    echo()
    echo(f"mlcc would build for {found.gpu}:")
    echo(
        render(
            ("benchmark", "round", "stack"),
            [(b.benchmark, b.round or "-", b.variant or b.summary) for b in found.builds],
        )
    )
    if found.unknown:
        echo()
        echo("unknown:")
        for line in found.unknown:
            echo(f"  {line}")
