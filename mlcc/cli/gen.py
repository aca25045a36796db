"""``mlcc gen``: Dockerfiles (or scripts, Apptainer files), stack.json and OpenShift objects."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Optional, Sequence

import click

from mlcc.app import generate as gen
from mlcc.app.kb import resolve
from mlcc.cli.context import benchmark_argument, kb_of
from mlcc.cli.options import options
from mlcc.errors import UsageError
from mlcc.flags import given_flags
from mlcc.kb.model import KnowledgeBase
from mlcc.output import Change, change_lines
from mlcc.render import gen_command as regenerate_command
from mlcc.render.openshift import ClusterOptions, check_cluster_options
from mlcc.render.plan import DEFAULT_OPTIONS
from mlcc.resolve.pins import Pins
from mlcc.ui.safe_text import echo, printable

if TYPE_CHECKING:
    from mlcc.app.select import Selection


def _refuse_ignored_cluster_flags(out: gen.OutputFlags, cluster: ClusterOptions) -> None:
    """Flags that shape the OpenShift objects are an error when none are written: a silently
    ignored --gpus or --namespace looks as if it had been applied."""
    ignored = given_flags(cluster)  # (--openshift-output only says where: scripts pass it always)
    if not ignored:
        return
    why = "--only dockerfile" if out.only == "dockerfile" else f"--format {out.fmt}"
    raise UsageError(
        f"{', '.join(ignored)}: {why} writes no OpenShift objects, which "
        + ("this option shapes" if len(ignored) == 1 else "these options shape"),
        hint="drop "
        + ("it" if len(ignored) == 1 else "them")
        + ", or write the objects too (--format dockerfile without --only, or --only openshift)",
    )


@click.command("gen")
@benchmark_argument(required=False)
@options(Pins, "pins")
@options(gen.OutputFlags, "out")
@options(gen.SourceFlags, "source")
@options(ClusterOptions, "cluster")
@click.option(
    "-i",
    "--interactive",
    is_flag=True,
    help="Choose benchmark, arch, base, CUDA and framework version from menus of what resolves.",
)
@click.option("--all", "all_", is_flag=True, help="Regenerate the published set (recipes/matrix.yaml).")
@click.option(
    "--check", is_flag=True, help="With --all: change nothing, exit 7 if the files on disk are stale."
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the files written (or checked) as one JSON object (schema mlcc-gen/1, docs/generating.md).",
)
@click.pass_context
def gen_command(
    ctx: click.Context,
    benchmark: Optional[str],
    pins: Pins,
    out: gen.OutputFlags,
    source: gen.SourceFlags,
    cluster: ClusterOptions,
    interactive: bool,
    all_: bool,
    check: bool,
    as_json: bool,
) -> None:
    """Generate the Dockerfile, stack.json and OpenShift objects for BENCHMARK and the pins given.

    \b
    Examples:
      mlcc gen maskrcnn --cuda 10.1
      mlcc gen maskrcnn --arch ppc64le --format script -o out/
      mlcc gen ssd --base-image registry.example.com/ubi8:8.10 --mirror https://mirror.example.com/nvidia
      mlcc gen ssd --git-mirror https://git.example.com/github --pip-index-url https://pypi.example.com/simple
      mlcc gen maskrcnn --only openshift --openshift 3.11 --namespace mlperf --gpus 4
      mlcc gen nccl-tests --chain --push-to quay.io/acme/nccl-tests --push-secret quay-push
      mlcc gen --all --check
    """
    render_options = source.options()
    cluster = check_cluster_options(cluster)
    roots = out.roots()
    fmt = out.fmt
    openshift = roots.openshift is not None
    if not openshift:
        _refuse_ignored_cluster_flags(out, cluster)
    shown = gen.roots_shown(roots)
    kb = kb_of(ctx)
    if all_:
        if benchmark is not None or pins:
            raise UsageError("--all regenerates the published set; it takes no benchmark or pins")
        # the matrix and its schema check serve --all only: one variant's gen never reads them
        from mlcc.app import published_set

        generated = published_set.generate_all(
            kb, fmt=fmt, options=render_options, cluster=cluster if openshift else None
        )
        if check:
            published_set.check_all(roots, generated)
            if as_json:
                echo_json(gen.changes_document(roots, [], variants=len(generated)))
            else:
                echo(f"{len(generated)} variants under {shown} are up to date")
            return
        changes = published_set.write_all(roots, generated)
        if as_json:
            echo_json(gen.changes_document(roots, changes, variants=len(generated)))
        else:
            echo_changes(changes, shown)
        return
    if check:
        raise UsageError("--check goes with --all")
    if interactive:
        if benchmark is not None or pins:
            raise UsageError("-i asks for the benchmark and pins itself; give neither")
        selection = _ask_for_stack(kb)
        stack, request = selection.stack, selection.pins.request(kb, selection.benchmark)
    elif benchmark is None:
        raise UsageError("name a benchmark (mlcc list benchmarks), use -i to choose from menus, or --all")
    else:
        stack, request = resolve(kb, benchmark, pins), pins.request(kb, benchmark)
    one = gen.generate(
        kb, stack, fmt=fmt, options=render_options, cluster=cluster if openshift else None, request=request
    )
    changes = gen.write(roots, [one])
    if as_json:
        echo_json(gen.changes_document(roots, changes, variants=1))
    else:
        echo_changes(changes, shown)


MAX_ANSWERS = 5  # wrong answers per question before giving up (piped garbage must end)
MAX_ANSWER_LENGTH = 200


def _ask_for_stack(kb: KnowledgeBase) -> Selection:
    # the menus (and the matrix's CPU value they offer) serve -i only
    from mlcc.app.select import walk

    if sys.stdin is None:  # started with file descriptor 0 closed
        raise UsageError(
            "gen -i: standard input is closed, so there is no one to answer the questions",
            hint="run it in a terminal, pipe the answers in, "
            "or give the benchmark and pins as flags: mlcc gen BENCHMARK",
        )

    def ask(question: str, offered: Sequence[str], default: str) -> str:
        echo(f"{question}: {', '.join(offered)}", err=True)
        for _ in range(MAX_ANSWERS):
            echo(f"  {question} [{default}]: ", err=True, nl=False)
            line = sys.stdin.readline(MAX_ANSWER_LENGTH + 1)
            if not line:
                raise UsageError(
                    f"gen -i: the input ended at the question {question!r}",
                    hint="answer each question, or give the benchmark and pins as flags: mlcc gen BENCHMARK",
                )
            if len(line) > MAX_ANSWER_LENGTH:
                sys.stdin.readline()  # the rest of an overlong line is not another answer
            answer = line.strip() or default
            if answer in offered:
                return answer
            echo(f"  {printable(answer[:60])!r} is not one of the choices", err=True)
        raise UsageError(f"gen -i: no valid answer to {question!r} in {MAX_ANSWERS} tries")

    selection = walk(kb, ask)
    request = selection.pins.request(kb, selection.benchmark)
    same = regenerate_command(selection.stack, DEFAULT_OPTIONS, "dockerfile", request)
    echo(f"the same without menus: {same}", err=True)
    return selection


def echo_json(document: object) -> None:
    echo(json.dumps(document, indent=2, allow_nan=False))


def echo_changes(changes: Sequence[Change], root: str) -> None:
    for line in change_lines(changes, root):
        echo(line)
