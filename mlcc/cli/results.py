"""``mlcc results``: score MLPerf result logs, store them with the image's stack, compare.

Loaded only when ``mlcc results`` runs. Reading an image (engines, registry client) and
writing HTML (Jinja2) are imported where they are used, so ``mlcc results score`` stays a
file-read-speed command.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, List, Sequence

import click

from mlcc import __version__
from mlcc.app.history import open_history
from mlcc.app.images import open_image
from mlcc.cli import LazyGroup
from mlcc.cli.context import kb_of
from mlcc.cli.history import HISTORY_HELP
from mlcc.cli.images import image_option_list
from mlcc.errors import UsageError
from mlcc.image.content import STACK_FILE
from mlcc.output import write_tree
from mlcc.report.results import render_results_html, spread_text
from mlcc.results.compare import compare
from mlcc.results.parse import parse_file, printable
from mlcc.results.reference import published, required_runs
from mlcc.results.score import log_files, score
from mlcc.results.store import Placement, add_runs, stack_info, stored_runs
from mlcc.ui.table import render

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


def _parse(paths: Sequence[str]) -> Any:

    files, missing = log_files([Path(p) for p in paths])
    if missing:
        raise UsageError(
            f"no such file or folder: {', '.join(missing)}", hint="give result logs or folders of them"
        )
    if not files:
        raise UsageError(f"no files under {', '.join(paths)}", hint="give result logs or folders of them")
    logs = []
    for path in files:
        try:
            logs.append(parse_file(path))
        except OSError as error:
            raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    return logs


def problems(logs: Sequence[Any]) -> List[str]:
    lines = []
    for log in logs:
        lines += [f"{log.path}: {p}" for p in log.problems]
        for run in log.runs:
            lines += [f"{log.path}: {p}" for p in run.problems]
    return lines


@click.command("score")
@click.argument("paths", nargs=-1, required=True, metavar="DIR|LOG...")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list, one object per benchmark.")
@click.pass_context
def score_command(ctx: click.Context, paths: Sequence[str], as_json: bool) -> None:
    """Time to train of each run and the MLPerf score of each benchmark: the mean after
    dropping the fastest and the slowest run. A run that missed the target counts as the
    slowest; unfinished runs and missing runs mark the score partial.

    \b
    Runs are grouped by benchmark, submitter and platform (from the submission_* lines).
    Examples:
      mlcc results score ../shared/data/mlperf-v0.6-logs
      mlcc results score run1.txt run2.txt run3.txt --json
    """

    logs = _parse(paths)
    scores, notes = score(logs, required_runs(kb_of(ctx)))
    if not scores:
        raise UsageError(
            f"no MLPerf runs in {len(logs)} file(s): no :::MLL or :::MLPv0.5.0 lines",
            details=notes[:10],
            hint="give the result_N.txt logs a training run wrote",
        )
    if as_json:
        click.echo(json.dumps([s.as_json() for s in scores], indent=2))
        return
    _print_scores(scores)
    for line in notes + problems(logs):
        click.echo(f"note: {line}", err=True)


def _print_scores(scores: Sequence[Any]) -> None:

    for index, found in enumerate(scores):
        if index:
            click.echo()
        value = f"{found.score_minutes:.2f} min" if found.score_minutes is not None else "no score"
        click.echo(
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
        click.echo(render(("log", "minutes", "status", "quality reached"), rows))
        for note in found.notes:
            click.echo(f"  {note}")


def _quality(value: Any) -> str:

    return printable(_quality_text(value), 60)


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


def stack_source(func: Any) -> Any:
    options = [
        click.option("--image", metavar="REF", help="The image the runs ran: its stamped stack is stored."),
        click.option("--stack", "stack_file", metavar="FILE", help="Or a stack.json (mlcc gen writes one)."),
        *image_option_list(),
        click.option("--system", metavar="NAME", help="The system's name (default: the log's platform)."),
        click.option(
            "--nodes", type=click.IntRange(min=1), help="Nodes (default: the log's submission_entry)."
        ),
        click.option("--gpus", type=click.IntRange(min=0), help="GPUs in all (default: from the log)."),
        click.option("--history", "history_file", metavar="FILE", help=HISTORY_HELP),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def load_stack(image: Any, stack_file: Any, tls_verify: bool, image_arch: Any, backend: Any) -> Any:
    """The StackInfo of --image (read as mlcc inspect reads it) or of --stack FILE."""

    if bool(image) == bool(stack_file):
        raise UsageError(
            "give the stack the runs ran on: --image REF or --stack stack.json (one of them)",
            hint="mlcc results add logs/*.txt --image quay.io/me/maskrcnn:TAG",
        )
    if stack_file:
        try:
            document = json.loads(Path(stack_file).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"--stack {stack_file}: cannot read it ({error})") from None
        except ValueError as error:
            raise UsageError(f"--stack {stack_file}: not JSON ({error})") from None
        return stack_info(document, origin=f"--stack {stack_file}")

    contents = open_image(image, tls_verify=tls_verify, arch=image_arch, backend=backend)
    if len(contents) != 1:
        raise UsageError(f"{image} is a multi-arch image: pick the arch the runs ran on with --arch")
    content = contents[0]
    return stack_info(
        content.json_file(STACK_FILE),
        image=content.reference,
        image_digest=content.digest,
        labels=content.labels,
        origin=image,
    )


def check_benchmarks(kb: Any, runs: Sequence[Any], stack: Any) -> List[Any]:
    """Runs of one benchmark must not be stored with an image built for another; a run
    whose log never names its benchmark takes the image's."""
    if stack.benchmark is None:
        return list(runs)
    names = {ref.log_name: ref.recipe for ref in published(kb).values()}
    wrong = [r for r in runs if r.benchmark and names.get(r.benchmark, r.benchmark) != stack.benchmark]
    if wrong:
        first = wrong[0]
        raise UsageError(
            f"{first.file} is a {first.benchmark} run, but the stack was built for {stack.benchmark}",
            details=[f"{r.file}: {r.benchmark}" for r in wrong[1:10]],
            hint="give the image the runs ran on; nothing was stored",
        )
    log_name = {ref.recipe: ref.log_name for ref in published(kb).values()}.get(
        stack.benchmark, stack.benchmark
    )
    return [r if r.benchmark else r._replace(benchmark=log_name) for r in runs]


def report_added(added: Any, stack: Any, history: Any) -> None:
    stored = added.stored
    if stored:
        benchmarks = ", ".join(sorted({r.benchmark or "unknown" for r in stored}))
        click.echo(f"stored {len(stored)} run(s) of {benchmarks} with {stack.label} in {history.path}")
        for result in stored:
            minutes = f"{result.minutes:.2f} min" if result.minutes is not None else "-"
            click.echo(f"  {result.file}: {result.status}, {minutes}")
    for result, other in added.already:
        click.echo(f"already stored, not added again: {result.file} (with {other})")
    if not stored and not added.already:
        click.echo("no runs to store")


@click.command("add")
@click.argument("paths", nargs=-1, required=True, metavar="LOG...")
@stack_source
@click.pass_context
def add_command(
    ctx: click.Context,
    paths: Sequence[str],
    image: Any,
    stack_file: Any,
    tls_verify: bool,
    image_arch: Any,
    backend: Any,
    system: Any,
    nodes: Any,
    gpus: Any,
    history_file: Any,
) -> None:
    """Store the runs of LOG... in the history with the stack of the image they ran on
    (its /etc/mlcc/stack.json, read as mlcc inspect reads it), the system, GPU and node
    count. A run already stored is not stored again.

    \b
    Examples:
      mlcc results add logs/result_*.txt --image quay.io/me/maskrcnn:cuda10.1-cudnn7-ubi8-x86_64
      mlcc results add run.log --stack dockerfiles/ssd/VARIANT/stack.json --gpus 8 --nodes 1
    """

    logs = _parse(paths)
    runs = [run for log in logs for run in log.runs]
    if not runs:
        raise UsageError(
            f"no MLPerf runs in {len(logs)} file(s): no :::MLL or :::MLPv0.5.0 lines; nothing stored"
        )
    stack = load_stack(image, stack_file, tls_verify, image_arch, backend)
    runs = check_benchmarks(kb_of(ctx), runs, stack)
    history = open_history(history_file)
    added = add_runs(history, runs, stack, Placement(system, nodes, gpus), __version__)
    report_added(added, stack, history)
    for line in problems(logs):
        click.echo(f"note: {line}", err=True)


@click.command("compare")
@click.option(
    "-b", "--benchmark", "benchmarks", multiple=True, metavar="NAME", help="Only this benchmark (repeat)."
)
@click.option(
    "--stack", "stacks", multiple=True, metavar="TEXT", help="Only stacks whose name holds TEXT (repeat)."
)
@click.option(
    "--system", "systems", multiple=True, metavar="TEXT", help="Only systems whose name holds TEXT."
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list, one object per benchmark.")
@click.option(
    "--html", "html_file", metavar="FILE", help="Also write the results view: one plot per benchmark."
)
@click.option("--title", default="mlcc results", show_default=True, help="The HTML page's title.")
@click.option("--history", "history_file", metavar="FILE", help=HISTORY_HELP)
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
    """Per benchmark, the stored stacks side by side: MLPerf score, runs, spread (fastest ..
    slowest run), and the ratio to the published reference result its recipe records
    (NVIDIA's MLPerf v0.6 time). Fastest stack first.

    \b
    Examples:
      mlcc results compare
      mlcc results compare -b maskrcnn --stack cuda10.2 --json
      mlcc results compare --html results.html
    """

    history = open_history(history_file)
    names = {**{ref.recipe: ref.log_name for ref in published(kb_of(ctx)).values()}}
    wanted = [names.get(b, b) for b in benchmarks]  # recipe names (resnet50) or log names (resnet)
    rows = stored_runs(history, benchmarks=wanted, stacks=stacks, systems=systems)
    comparisons = compare(rows, published(kb_of(ctx)))
    if html_file:
        _write_results_page(html_file, comparisons, title)
    if as_json:
        click.echo(json.dumps([c.as_json() for c in comparisons], indent=2))
        return
    if not comparisons:
        filtered = " that match" if benchmarks or stacks or systems else ""
        click.echo(
            f"no results stored in {history.path}{filtered}; mlcc results add LOG... --image REF stores some"
        )
        return
    _print_comparisons(comparisons)
    if html_file:
        click.echo(f"wrote {html_file}: {len(comparisons)} plot(s)")


def _write_results_page(html_file: str, comparisons: Sequence[Any], title: str) -> None:

    target = Path(html_file)
    write_tree(target.parent, [(target.name, render_results_html(comparisons, title=title))])


def _print_comparisons(comparisons: Sequence[Any]) -> None:

    for index, comparison in enumerate(comparisons):
        if index:
            click.echo()
        reference = comparison.reference
        line = f"{comparison.benchmark}"
        if reference:
            line += f"  reference {reference.minutes:.2f} min ({reference.system})"
        click.echo(line)
        rows = []
        for stack in comparison.stacks:
            score = f"{stack.score_minutes:.2f}" if stack.score_minutes is not None else "no score"
            ratio = (
                f"{stack.score_minutes / reference.minutes:.2f}x"
                if reference and stack.score_minutes is not None
                else "-"
            )
            where = f"{', '.join(stack.systems) or '-'}; {'/'.join(map(str, stack.gpus)) or '-'} GPUs"
            state = "" if stack.state == "complete" else f" ({stack.state})"
            rows.append((stack.stack, score + state, str(stack.runs), spread_text(stack), ratio, where))
        click.echo(render(("stack", "score (min)", "runs", "spread", "vs ref", "system"), rows))
        for stack in comparison.stacks:
            for note in stack.notes:
                click.echo(f"  {stack.stack}: {note}")
