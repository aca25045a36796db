"""``mlcc kb``: maintainer commands for the knowledge base."""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Optional, TypeVar

import click

from mlcc.cli import StrictGroup
from mlcc.cli.context import kb_of
from mlcc.cli.values import COUNT, HOURS
from mlcc.errors import FactError
from mlcc.kb.index import IndexClient
from mlcc.kb.loader import recipes_root
from mlcc.kb.wheel import WheelReader
from mlcc.kbtools.check import published_stacks, run, sampled_stacks
from mlcc.kbtools.lock import image_base_stacks, lock, matrix_stacks, ubi_alternative_stacks, verify, write
from mlcc.kbtools.offline import (
    RECORD_FILE,
    WHEEL_RECORD_FILE,
    checked_pins,
    load_wheel_record,
    wheel_record,
    write_record,
)
from mlcc.kbtools.offline import record as record_of
from mlcc.ui.progress import ProgressReport
from mlcc.ui.safe_text import echo

F = TypeVar("F", bound=Callable[..., Any])


def index_options(command: F) -> F:
    """--index-url, --refresh and --ttl: how `kb check` and `kb lock` reach the index."""
    command = click.option(
        "--ttl",
        type=HOURS,
        default=24.0,
        show_default=True,
        metavar="HOURS",
        help="Reuse cached index answers this long.",
    )(command)
    refresh_help = "Ignore cached index answers and ask again."
    command = click.option("--refresh", is_flag=True, help=refresh_help)(command)
    return click.option(
        "--index-url",
        metavar="URL",
        envvar="PIP_INDEX_URL",
        help="Simple index to ask (PEP 503/691), e.g. a mirror. Env: PIP_INDEX_URL. Default: PyPI.",
    )(command)


def sample_option(help_text: str) -> Callable[[F], F]:
    """--sample N: how many stacks of the cross product `kb check` and `kb lock` add to the
    published set; one option, so that both take the same sample by default."""
    return click.option("--sample", type=COUNT, default=60, show_default=True, metavar="N", help=help_text)


@click.group("kb", cls=StrictGroup)
def kb_group() -> None:
    """Maintainer commands for the knowledge base (recipes/)."""


@kb_group.command("check")
@index_options
@sample_option(
    "Also check up to N stacks of the full cross product (benchmark x framework build x "
    "arch x CUDA line), chosen deterministically; 0: the published set only."
)
@click.option(
    "--record",
    is_flag=True,
    help=f"Also write recipes/{RECORD_FILE} (the file names the index offers for each pinned "
    f"version) and recipes/{WHEEL_RECORD_FILE} (what the framework wheels link and bring), "
    "which `mlcc lint recipes` checks the recipes against offline.",
)
@click.option(
    "--wheels",
    "wheel_budget",
    type=COUNT,
    default=12,
    show_default=True,
    metavar="N",
    help=f"Read the shared libraries (a few hundred MB each) of at most N framework wheels "
    f"recipes/{WHEEL_RECORD_FILE} lacks; 0: judge the recorded ones only.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the findings as one JSON object.")
@click.option("-v", "--verbose", is_flag=True, help="Also list notes (pins that build from source).")
@click.pass_context
def check_command(
    ctx: click.Context,
    index_url: Optional[str],
    refresh: bool,
    ttl: float,
    sample: int,
    record: bool,
    wheel_budget: int,
    as_json: bool,
    verbose: bool,
) -> None:
    """Check every pip pin, wheel URL, find-links page, conda pin and download of the
    stacks recipes/matrix.yaml publishes (and the recipes NGC-only benchmarks name as their
    nearest stack on UBI, and a sample of the cross product) against the package index: a
    distribution must exist for the stack's Python and CPU arch. Each pip
    framework build's `bundles:` claim (the CUDA runtime, cuDNN and NCCL it loads itself),
    its Pythons and arches (the wheels' tags) and its cuda/cudnn claims (the sonames its
    shared libraries link, DT_NEEDED) are checked against its wheel, read with range
    requests. Findings name the recipe's file:line. Exit 10 on errors, 5 when the index
    cannot be reached.

    \b
    Examples:
      mlcc kb check
      mlcc kb check --refresh --sample 0
      mlcc kb check --record     # then: mlcc lint recipes (offline)
      mlcc kb check --wheels 0   # no library downloads: the recorded wheels only
      PIP_INDEX_URL=https://mirror.example/simple mlcc kb check --json
    """
    kb = kb_of(ctx)
    client = IndexClient(index_url, ttl=ttl * 3600, refresh=refresh)
    published = published_stacks(kb)
    stacks = published + ubi_alternative_stacks(kb, published) + sampled_stacks(kb, sample)
    wheels = WheelReader(
        cache=os.path.join(client.cache, "wheels") if client.cache else "", ttl=ttl * 3600, refresh=refresh
    )
    recipes = recipes_root(ctx.find_root().params.get("recipes"))
    # a recorded wheel still at the same URL is not downloaded again (--refresh: read anew)
    recorded = None if refresh else load_wheel_record(recipes)
    with ProgressReport() as step:  # the index and the wheels take about a minute
        report = run(
            kb, stacks, client, wheels=wheels, recorded_wheels=recorded, wheel_budget=wheel_budget, step=step
        )
    if record:
        written = write_record(recipes, record_of(client, checked_pins(kb, stacks)))
        echo(f"recorded the index's files of the pinned versions in {written}", err=True)
        written = write_record(recipes, wheel_record(report.wheels), WHEEL_RECORD_FILE)
        echo(f"recorded what the framework wheels hold in {written}", err=True)
    if as_json:
        echo(
            json.dumps(
                {
                    "index": report.index_url,
                    "stacks": report.stacks,
                    "pins": report.pins,
                    "findings": [f._asdict() for f in report.findings],
                },
                indent=2,
                sort_keys=True,
            )
        )
    else:
        for finding in report.findings:
            if verbose or finding.severity != "note":
                echo(finding.line())
        echo(report.summary())
    if report.errors:
        raise FactError(
            f"kb check: {len(report.errors)} pin(s) the package index contradicts",
            hint="fix the recipe lines named above; each says what the index offers instead",
        )


@kb_group.command("lock")
@index_options
@click.option(
    "--verify",
    "verify_only",
    is_flag=True,
    help="Write nothing: check that every install has a lock, every locked file is still on "
    "the index with the same sha256 and every sdist_requires fact matches its sdist's setup.py; "
    "exit 10 if not.",
)
@sample_option(
    "Also lock up to N stacks of the full cross product, the same deterministic sample "
    "`mlcc kb check --sample N` checks; 0: the matrix only."
)
@click.option(
    "--upgrade",
    is_flag=True,
    help="Resolve every requirement afresh (the newest releases its specifier allows) instead "
    "of keeping the versions recipes/locks/ already locks.",
)
@click.option(
    "--prune",
    is_flag=True,
    help="Drop the installs of recipes/locks/ that no stack of this run asks for (by default "
    "they are kept as they are: stacks outside the sample and the golden cases use them).",
)
@click.pass_context
def lock_command(
    ctx: click.Context,
    index_url: Optional[str],
    refresh: bool,
    ttl: float,
    verify_only: bool,
    sample: int,
    upgrade: bool,
    prune: bool,
) -> None:
    """Hash-lock the pip installs of every stack recipes/matrix.yaml resolves (and of every
    benchmark built on an NGC base, on each of its bases and arches, of the recipe each names as
    its nearest stack on UBI, and a sample of the cross product): resolve each install's
    requirements and their dependencies for the stack's Python, CPU arch and glibc against the
    index, and write the sha256 of each file pip takes to recipes/locks/ (one JSON file per
    target). What is locked is kept: a
    requirement that is not an exact pin keeps the version recipes/locks/ locks for it while
    its specifier allows it and the index still has its file for the target (not yanked), so
    a run on an unchanged tree rewrites nothing; a project the lock lacks, or one whose locked
    version the specifier no longer allows, resolves afresh, and --upgrade resolves every
    requirement afresh (the newest releases). An install of recipes/locks/ no stack of the
    run asks for is kept as it is, unless --prune. Generated images then
    install with --require-hashes. Installs that cannot be locked (VCS checkouts,
    unreachable hosts) are recorded with the reason. Nothing from the index is run: an
    sdist's dependencies are read from its static metadata or egg-info, else from
    recipes/tools.yaml sdist_requires, checked against the sdist's setup.py (a mismatch
    writes nothing, exit 10). --verify checks the committed locks instead (CI): exit 10
    when an install has none, a locked file changed on the index or an sdist_requires fact
    no longer matches its sdist.

    \b
    Examples:
      mlcc kb lock && mlcc gen --all
      mlcc kb lock --upgrade && mlcc gen --all   # take the newest releases
      mlcc kb lock --verify
    """
    kb = kb_of(ctx)
    client = IndexClient(index_url, ttl=ttl * 3600, refresh=refresh)
    matrix = matrix_stacks(kb)
    stacks = matrix + image_base_stacks(kb) + ubi_alternative_stacks(kb, matrix) + sampled_stacks(kb, sample)
    if verify_only:
        problems, checked = verify(kb.root, stacks, client, kb.sdist_requires)
        for problem in problems:
            echo(problem)
        echo(f"{checked} locked files checked against the index: {len(problems)} problems")
        if problems:
            raise FactError("the pip locks do not hold", hint="run `mlcc kb lock && mlcc gen --all`")
        return
    locker, report = lock(kb, stacks, client, upgrade=upgrade, prune=prune)
    if locker.problems:
        for problem in dict.fromkeys(locker.problems):
            echo(problem)
        raise FactError(
            "a recipe's sdist_requires does not match its sdist's setup.py: nothing written",
            hint="correct recipes/tools.yaml from the sdist's setup.py, then run `mlcc kb lock` again",
        )
    documents = locker.documents()
    summary = (
        f"{report.installs} pip installs of {report.stacks} stacks: {report.locked} hash-locked "
        f"({report.packages} files), {report.unlocked} unlocked with a recorded reason; "
        f"{report.kept} installs no stack of this run asks for kept; "
        f"{len(documents)} lock files ({report.requests} index requests)"
    )
    write(kb.root, documents)
    echo(summary)
