"""``mlcc results``: score MLPerf result logs, store them with the image's stack, compare.

Loaded only when ``mlcc results`` runs. Parses flags and prints; the use cases are
:mod:`mlcc.app.results` (and :mod:`mlcc.app.results_collect`, whose Kubernetes client only
``collect`` loads).
"""

from __future__ import annotations

import functools
import json
from typing import Any, Callable, List, NamedTuple, Optional, Sequence, TypeVar

import click

from mlcc.app.results import (
    ResultFilters,
    StackSource,
    Stored,
    add_results,
    added_document,
    compare_results,
    score_logs,
    write_results_page,
)
from mlcc.cli import LazyGroup
from mlcc.cli.context import complete_benchmark, kb_of, round_option
from mlcc.cli.history import HISTORY_HELP
from mlcc.cli.images import image_option_list
from mlcc.cli.values import FILE, NONEMPTY_TEXT, PATH, POSITIVE
from mlcc.report.results import spread_text
from mlcc.results.compare import different_benchmarks, ratio_text, reference_label
from mlcc.results.parse import log_text
from mlcc.results.store import Placement
from mlcc.ui.safe_text import echo
from mlcc.ui.table import render

F = TypeVar("F", bound=Callable[..., Any])

# subcommand -> "module:attribute": collect needs the Kubernetes client (most of a second
# to import), so it lives in its own module and the others never load it.
RESULTS_COMMANDS = {
    "score": "mlcc.cli.results:score_command",
    "add": "mlcc.cli.results:add_command",
    "collect": "mlcc.cli.results_collect:collect_command",
    "compare": "mlcc.cli.results:compare_command",
}


@click.group("results", cls=LazyGroup, commands=RESULTS_COMMANDS)
def results_group() -> None:
    """Score MLPerf training logs, keep each score with the image's stack, compare stacks.

    \b
    Workflow:
      mlcc results score logs/                       # time to train, MLPerf score
      mlcc results add logs/*.txt --image REF        # store with the image's stamped stack
      mlcc results collect --job maskrcnn -n mlperf --image REF   # from a finished Job's pods
      mlcc results compare                           # stacks side by side, and the reference
    """


SCORE_ROUND_HELP = (
    "Score by this MLPerf round's rules (`mlcc list rounds`); default: the round the log's format"
    " and benchmark (or folder) imply."
)


@click.command("score")
@click.argument("paths", nargs=-1, required=True, type=PATH, metavar="DIR|LOG...")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list, one object per benchmark.")
@round_option(SCORE_ROUND_HELP)
@click.pass_context
def score_command(ctx: click.Context, paths: Sequence[str], as_json: bool, round_name: Any) -> None:
    """Time to train of each run and the MLPerf score of each benchmark: the mean after
    dropping the fastest and the slowest run, by the rules of the log's round. A run that
    missed the target counts as the slowest; unfinished runs and missing runs mark the
    score partial.

    \b
    Reads :::MLL (v0.6) and :::MLLOG (v0.7 and later) logs, each scored by the rules of
    the round record (mlcc list rounds) that writes its format and holds its benchmark
    (llama31_8b: v5.1), or that a folder of its path is named for (training_results_v5.1)
    where several do, unless --round names one; the output names the round whose rules
    it used (scaling.json applied from v2.0).
    Runs are grouped by benchmark, submitter and platform (from the submission_* lines).
    Examples:
      mlcc results score training_results_v0.6/NVIDIA/results
      mlcc results score training_results_v2.1/NVIDIA/results/dgxh100_preview/maskrcnn
      mlcc results score run1.txt run2.txt run3.txt --json
    """

    scored = score_logs(kb_of(ctx), paths, round_name)
    if as_json:
        echo(json.dumps([s.as_json() for s in scored.scores], indent=2, allow_nan=False))
        return
    _print_scores(scored.scores)
    for line in scored.notes:
        echo(f"note: {line}", err=True)


def _print_scores(scores: Sequence[Any]) -> None:

    for index, found in enumerate(scores):
        if index:
            echo()
        value = f"{found.score_minutes:.2f} min" if found.score_minutes is not None else "no score"
        echo(
            f"{found.benchmark}  {found.submitter} · {found.platform}: {value} "
            f"({found.runs} run(s), {found.state})"
        )
        rows = [
            (
                r.file,
                f"{r.minutes:.2f}" if r.minutes is not None else "-",
                r.status,
                _quality(r.quality),
            )
            for r in found.results
        ]
        echo(render(("log", "minutes", "status", "quality reached"), rows))
        for note in found.notes:
            echo(f"  {note}")
        if found.round:
            echo(f"  scored by the {found.round} rules: {found.rules}")


def _quality(value: Any) -> str:

    return log_text(_quality_text(value), 60)


def _quality_text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        flat = value.get("accuracy", value)
        if isinstance(flat, dict):
            return " ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in flat.items())
    return str(value)[:40]


class RunsTarget(NamedTuple):
    """What ``results add`` and ``results collect`` store runs with: the stack they ran on
    (--image or --stack), the system they ran on, and the history they go into."""

    source: StackSource
    placement: Placement
    history_file: Optional[str]


# the parameters the options of :func:`stack_source` hand the command it wraps
_RUNS_TARGET_PARAMETERS = (
    "image",
    "stack_file",
    "tls_verify",
    "image_arch",
    "backend",
    "system",
    "nodes",
    "gpus",
    "history_file",
)


def stack_source(command: F) -> F:
    """Add the options that say which stack runs ran on, where, and which history stores
    them; the command receives them as one ``target: RunsTarget`` argument."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name) for name in _RUNS_TARGET_PARAMETERS}
        kwargs["target"] = RunsTarget(
            StackSource(
                values["image"],
                values["stack_file"],
                values["tls_verify"],
                values["image_arch"],
                values["backend"],
            ),
            Placement(values["system"], values["nodes"], values["gpus"]),
            values["history_file"],
        )
        return command(*args, **kwargs)

    options = [
        click.option("--image", metavar="REF", help="The image the runs ran: its stamped stack is stored."),
        click.option(
            "--stack", "stack_file", metavar="FILE", type=PATH, help="Or a stack.json (mlcc gen writes one)."
        ),
        *image_option_list(),
        click.option(
            "--system",
            metavar="NAME",
            type=NONEMPTY_TEXT,
            help="The system's name (default: the log's platform).",
        ),
        click.option(
            "--nodes", type=POSITIVE, help="Nodes (default: what the log or its system description says)."
        ),
        click.option(
            "--gpus", type=POSITIVE, help="GPUs in all (default: from the log or its system description)."
        ),
        click.option("--history", "history_file", metavar="FILE", type=PATH, help=HISTORY_HELP),
    ]
    decorated: Any = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return decorated  # type: ignore[no-any-return]


def report_added(stored: Stored) -> None:
    added, stack, history = stored.added, stored.stack, stored.history
    if added.stored:
        benchmarks = ", ".join(sorted({r.benchmark or "unknown" for r in added.stored}))
        echo(f"stored {len(added.stored)} run(s) of {benchmarks} with {stack.label} in {history.path}")
        for result in added.stored:
            minutes = f"{result.minutes:.2f} min" if result.minutes is not None else "-"
            echo(f"  {result.file}: {result.status}, {minutes}")
    for result, other in added.already:
        echo(f"already stored, not added again: {result.file} (with {other})")
    if not added.stored and not added.already:
        echo("no runs to store")
    for line in stored.notes:
        echo(f"note: {line}", err=True)


ROUND_HELP = (
    "The runs' MLPerf round (`mlcc list rounds`); default: the round the log's format and"
    " benchmark (or folder) imply."
)


@click.command("add")
@click.argument("paths", nargs=-1, required=True, type=PATH, metavar="LOG...")
@stack_source
@round_option(ROUND_HELP)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print what was stored as one JSON object (schema mlcc-results-add/1).",
)
@click.pass_context
def add_command(
    ctx: click.Context,
    paths: Sequence[str],
    target: RunsTarget,
    round_name: Any,
    as_json: bool,
) -> None:
    """Store the runs of LOG... in the history with the stack of the image they ran on
    (its /etc/mlcc/stack.json, read as mlcc inspect reads it), the system, GPU and node
    count. A run already stored is not stored again.

    \b
    Examples:
      mlcc results add logs/result_*.txt --image quay.io/me/maskrcnn:cuda10.1-cudnn7-ubi8-x86_64
      mlcc results add run.log --stack dockerfiles/ssd/VARIANT/stack.json --gpus 8 --nodes 1
    """

    stored = add_results(
        kb_of(ctx),
        paths,
        target.source,
        target.placement,
        target.history_file,
        round_name,
    )
    if as_json:
        echo(json.dumps(added_document(stored), indent=2, allow_nan=False))
        return
    report_added(stored)


@click.command("compare")
@click.option(
    "-b",
    "--benchmark",
    "benchmarks",
    multiple=True,
    metavar="NAME",
    help="Only this benchmark (repeat).",
    shell_complete=complete_benchmark,
)
@click.option(
    "--stack", "stacks", multiple=True, metavar="TEXT", help="Only stacks whose name holds TEXT (repeat)."
)
@click.option(
    "--system", "systems", multiple=True, metavar="TEXT", help="Only systems whose name holds TEXT."
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list, one object per benchmark.")
@click.option(
    "--html",
    "html_file",
    metavar="FILE",
    type=FILE,
    help="Also write the results view: one plot per benchmark.",
)
@click.option(
    "--title", type=NONEMPTY_TEXT, default="mlcc results", show_default=True, help="The HTML page's title."
)
@click.option("--history", "history_file", metavar="FILE", type=PATH, help=HISTORY_HELP)
@click.pass_context
def compare_command(
    ctx: click.Context,
    benchmarks: Sequence[str],
    stacks: Sequence[str],
    systems: Sequence[str],
    as_json: bool,
    html_file: Any,
    title: str,
    history_file: Any,
) -> None:
    """Per benchmark, the stored stacks side by side: the MLPerf round of their runs, the
    score by that round's rules, runs, spread (fastest .. slowest run), and the ratio to the
    published reference result its recipe records (NVIDIA's MLPerf v0.6 time). Fastest
    stack first.

    \b
    Examples:
      mlcc results compare
      mlcc results compare -b maskrcnn --stack cuda10.2 --json
      mlcc results compare --html results.html
    """

    filters = ResultFilters(tuple(benchmarks), tuple(stacks), tuple(systems))
    comparisons, history = compare_results(kb_of(ctx), filters, history_file)
    if html_file:
        write_results_page(html_file, comparisons, title)
    if as_json:
        echo(json.dumps([c.as_json() for c in comparisons], indent=2))
        return
    if not comparisons:
        filtered = " that match" if benchmarks or stacks or systems else ""
        echo(
            f"no results stored in {history.path}{filtered}; mlcc results add LOG... --image REF stores some"
        )
        return
    apart = different_benchmarks(comparisons) if len(set(benchmarks)) > 1 else None
    if apart:
        echo(apart)
        echo()
    _print_comparisons(comparisons)
    if html_file:
        echo(f"wrote {html_file}: {len(comparisons)} plot(s)")


def _other_references(comparison: Any) -> List[Any]:
    """The references the stacks stand beside other than the benchmark's own (another round's,
    another GPU's), each once, in the order of the stacks."""
    found: List[Any] = []
    for stack in comparison.stacks:
        if stack.reference and stack.reference != comparison.reference and stack.reference not in found:
            found.append(stack.reference)
    return found


def _print_comparisons(comparisons: Sequence[Any]) -> None:

    for index, comparison in enumerate(comparisons):
        if index:
            echo()
        reference = comparison.reference
        line = comparison.title
        if reference:
            line += f"  reference {reference.minutes:.2f} min ({reference.system})"
        echo(line)
        for other in _other_references(comparison):
            echo(f"  {reference_label(other)} reference {other.minutes:.2f} min ({other.system})")
        rows = []
        for stack in comparison.stacks:
            score = f"{stack.score_minutes:.2f}" if stack.score_minutes is not None else "no score"
            # each stack beside the reference of its own round and GPU, as the lines above say
            ratio = ratio_text(stack, reference)
            where = (
                f"{', '.join(stack.systems) or '-'}; {'/'.join(map(str, stack.gpus)) or '-'} GPUs;"
                f" {'/'.join(map(str, stack.nodes)) or '-'} node(s)"
            )
            state = "" if stack.state == "complete" else f" ({stack.state})"
            rows.append(
                (
                    stack.stack,
                    stack.round or "-",
                    score + state,
                    str(stack.runs),
                    spread_text(stack),
                    ratio,
                    where,
                )
            )
        echo(render(("stack", "round", "score (min)", "runs", "spread", "vs ref", "system"), rows))
        for stack in comparison.stacks:
            for note in stack.notes:
                echo(f"  {stack.stack}: {note}")
        for note in comparison.notes:
            echo(f"  {note}")
