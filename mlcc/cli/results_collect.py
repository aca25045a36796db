"""``mlcc results collect``: the logs of a finished Job's or MPIJob's pods, read through the
Kubernetes API and stored as ``mlcc results add`` stores them (its own module: the
Kubernetes client loads only for this subcommand)."""

from __future__ import annotations

from typing import Any

import click

from mlcc.app.results_collect import CollectTarget, collect_results
from mlcc.cli.context import kb_of, round_option
from mlcc.cli.results import ROUND_HELP, RunsTarget, report_added, stack_source
from mlcc.cli.values import PATH
from mlcc.errors import UsageError
from mlcc.results.collect import Cluster
from mlcc.ui.safe_text import echo


@click.command("collect")
@click.option("--job", "job", metavar="NAME", help="A finished Job (batch/v1): its pods' logs.")
@click.option(
    "--mpijob", "mpijob", metavar="NAME", help="A finished MPIJob (kubeflow.org/v2beta1): its launcher's log."
)
@click.option("-n", "--namespace", metavar="NS", help="Its namespace (default: the kubeconfig context's).")
@click.option(
    "--kubeconfig",
    metavar="FILE",
    type=PATH,
    envvar="KUBECONFIG",
    help="Cluster and credentials (env KUBECONFIG).",
)
@click.option("--context", metavar="NAME", help="The kubeconfig context (default: the current one).")
@click.option("--container", metavar="NAME", help="The container whose log to read (default: the first).")
@stack_source
@round_option(ROUND_HELP)
@click.pass_context
def collect_command(
    ctx: click.Context,
    job: Any,
    mpijob: Any,
    namespace: Any,
    kubeconfig: Any,
    context: Any,
    container: Any,
    target: RunsTarget,
    round_name: Any,
) -> None:
    """Read the logs of a finished Job's or MPIJob's pods through the Kubernetes API and
    store their runs as mlcc results add does. Nodes and GPUs come from the job (pod
    nodes and nvidia.com/gpu limits) unless --nodes / --gpus say otherwise.

    \b
    Examples:
      mlcc results collect --job maskrcnn-cuda10-1-cudnn7-ubi8-x86-64 -n mlperf --image REF
      mlcc results collect --mpijob nccl-tests-cuda12-4-nccl2-21-ubi8-ppc64le --stack stack.json
    """

    if bool(job) == bool(mpijob):
        raise UsageError("give the finished run to collect: --job NAME or --mpijob NAME (one of them)")
    collect = CollectTarget("job" if job else "mpijob", job or mpijob, container)
    collected = collect_results(
        kb_of(ctx),
        collect,
        Cluster(kubeconfig=kubeconfig, context=context, namespace=namespace),
        target.source,
        target.placement,
        target.history_file,
        round_name,
    )
    found = collected.found
    echo(f"{collect.title} {found.outcome}: {len(found.logs)} pod log(s), {collected.runs} run(s)")
    report_added(collected.stored)
