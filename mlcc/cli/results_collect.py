"""``mlcc results collect``: the logs of a finished Job's or MPIJob's pods, read through the
Kubernetes API and stored as ``mlcc results add`` stores them (its own module: the
Kubernetes client loads only for this subcommand)."""

from __future__ import annotations

from typing import Any

import click

from mlcc import __version__
from mlcc.app.history import open_history
from mlcc.cli.context import kb_of
from mlcc.cli.results import check_benchmarks, load_stack, problems, report_added, stack_source
from mlcc.errors import UsageError
from mlcc.results.collect import Cluster, collect
from mlcc.results.store import Placement, add_runs


@click.command("collect")
@click.option("--job", "job", metavar="NAME", help="A finished Job (batch/v1): its pods' logs.")
@click.option(
    "--mpijob", "mpijob", metavar="NAME", help="A finished MPIJob (kubeflow.org/v2beta1): its launcher's log."
)
@click.option("-n", "--namespace", metavar="NS", help="Its namespace (default: the kubeconfig context's).")
@click.option(
    "--kubeconfig", metavar="FILE", envvar="KUBECONFIG", help="Cluster and credentials (env KUBECONFIG)."
)
@click.option("--context", metavar="NAME", help="The kubeconfig context (default: the current one).")
@click.option("--container", metavar="NAME", help="The container whose log to read (default: the first).")
@stack_source
@click.pass_context
def collect_command(
    ctx: click.Context,
    job: Any,
    mpijob: Any,
    namespace: Any,
    kubeconfig: Any,
    context: Any,
    container: Any,
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
    stack = load_stack(image, stack_file, tls_verify, image_arch, backend)
    cluster = Cluster(kubeconfig=kubeconfig, context=context, namespace=namespace)
    found = collect(cluster, "job" if job else "mpijob", job or mpijob, container)
    runs = [run for log in found.logs for run in log.runs]
    click.echo(
        f"{'Job' if job else 'MPIJob'} {job or mpijob} {found.outcome}: {len(found.logs)} pod log(s), "
        f"{len(runs)} run(s)"
    )
    if not runs:
        raise UsageError(
            "the pods' logs hold no MLPerf runs (no :::MLL or :::MLPv0.5.0 lines); nothing stored",
            hint="does the benchmark log to stdout? if it writes files under /results, copy them out "
            "and use mlcc results add",
        )
    runs = check_benchmarks(kb_of(ctx), runs, stack)
    history = open_history(history_file)
    placement = Placement(
        system, nodes if nodes is not None else found.nodes, gpus if gpus is not None else found.gpus
    )
    report_added(add_runs(history, runs, stack, placement, __version__), stack, history)
    for line in problems(found.logs):
        click.echo(f"note: {line}", err=True)
