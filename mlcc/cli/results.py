"""``mlcc results``: score MLPerf result logs, store them with the image's stack, compare.

Only click is imported here; each command imports what it needs when it runs.
"""

from __future__ import annotations

import json
from typing import Any, List, Sequence

import click

HISTORY_HELP = "The database (default: MLCC_HISTORY or ~/.local/share/mlcc/history.sqlite)."


@click.group("results")
def results_group() -> None:
    """Score MLPerf training logs, keep each score with the image's stack, compare stacks.

    \b
    Workflow:
      mlcc results score logs/                       # time to train, MLPerf score
      mlcc results add logs/*.txt --image REF        # store with the image's stamped stack
      mlcc results collect --job maskrcnn -n mlperf --image REF   # from a finished Job's pods
      mlcc results compare                           # stacks side by side, and the reference
    """


def _kb(ctx: click.Context) -> Any:
    root = ctx.find_root()
    return root.obj.kb


def _parse(paths: Sequence[str]) -> Any:
    from pathlib import Path

    from mlcc.errors import UsageError
    from mlcc.results.parse import parse_file
    from mlcc.results.score import log_files

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


def _problems(logs: Sequence[Any]) -> List[str]:
    lines = []
    for log in logs:
        lines += [f"{log.path}: {p}" for p in log.problems]
        for run in log.runs:
            lines += [f"{log.path}: {p}" for p in run.problems]
    return lines


@results_group.command("score")
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
    from mlcc.errors import UsageError
    from mlcc.results.reference import required_runs
    from mlcc.results.score import score

    logs = _parse(paths)
    scores, notes = score(logs, required_runs(_kb(ctx)))
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
    for line in notes + _problems(logs):
        click.echo(f"note: {line}", err=True)


def _print_scores(scores: Sequence[Any]) -> None:
    from mlcc.ui.table import render

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
    from mlcc.results.parse import printable

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
