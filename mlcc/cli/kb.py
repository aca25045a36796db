"""``mlcc kb``: maintainer commands for the knowledge base."""

from __future__ import annotations

import json
import os
from typing import Optional

import click

from mlcc.app.kb_check import published_stacks, run, sampled_stacks
from mlcc.app.kb_offline import RECORD_FILE, checked_pins, write_record
from mlcc.app.kb_offline import record as record_of
from mlcc.cli.context import kb_of
from mlcc.errors import FactError
from mlcc.kb.index import IndexClient
from mlcc.kb.loader import recipes_root
from mlcc.kb.wheel import WheelReader


@click.group("kb")
def kb_group() -> None:
    """Maintainer commands for the knowledge base (recipes/)."""


@kb_group.command("check")
@click.option(
    "--index-url",
    metavar="URL",
    envvar="PIP_INDEX_URL",
    help="Simple index to ask (PEP 503/691), e.g. a mirror. Env: PIP_INDEX_URL. Default: PyPI.",
)
@click.option("--refresh", is_flag=True, help="Ignore cached index answers and ask again.")
@click.option(
    "--ttl",
    type=click.FloatRange(min=0),
    default=24.0,
    show_default=True,
    metavar="HOURS",
    help="Reuse cached index answers this long.",
)
@click.option(
    "--sample",
    type=click.IntRange(min=0),
    default=60,
    show_default=True,
    metavar="N",
    help="Also check up to N stacks of the full cross product (benchmark x framework build x "
    "arch x CUDA line), chosen deterministically; 0: the published set only.",
)
@click.option(
    "--record",
    is_flag=True,
    help=f"Also write recipes/{RECORD_FILE}: the file names the index offers for each pinned "
    "version, which `mlcc lint recipes` checks the pins against offline.",
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
    as_json: bool,
    verbose: bool,
) -> None:
    """Check every pip pin, wheel URL, find-links page, conda pin and download of the
    stacks recipes/matrix.yaml publishes (and a sample of the cross product) against the
    package index: a distribution must exist for the stack's Python and CPU arch. Each pip
    framework build's `bundles:` claim (the CUDA runtime, cuDNN and NCCL it loads itself) is
    checked against its wheel, read with range requests. Findings name the recipe's
    file:line. Exit 10 on errors, 5 when the index cannot be reached.

    \b
    Examples:
      mlcc kb check
      mlcc kb check --refresh --sample 0
      mlcc kb check --record     # then: mlcc lint recipes (offline)
      PIP_INDEX_URL=https://mirror.example/simple mlcc kb check --json
    """
    kb = kb_of(ctx)
    client = IndexClient(index_url, ttl=ttl * 3600, refresh=refresh)
    stacks = published_stacks(kb) + sampled_stacks(kb, sample)
    wheels = WheelReader(
        cache=os.path.join(client.cache, "wheels") if client.cache else "", ttl=ttl * 3600, refresh=refresh
    )
    report = run(kb, stacks, client, wheels=wheels)
    if record:
        written = write_record(
            recipes_root(ctx.find_root().params.get("recipes")), record_of(client, checked_pins(kb, stacks))
        )
        click.echo(f"recorded the index's files of the pinned versions in {written}", err=True)
    if as_json:
        click.echo(
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
                click.echo(finding.line())
        click.echo(report.summary())
    if report.errors:
        raise FactError(
            f"kb check: {len(report.errors)} pin(s) the package index contradicts",
            hint="fix the recipe lines named above; each says what the index offers instead",
        )
