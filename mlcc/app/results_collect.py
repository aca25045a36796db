"""``mlcc results collect`` as a use case: the logs of a finished Job's or MPIJob's pods,
read through the Kubernetes API and stored as :func:`mlcc.app.results.add_results` stores
them. Its own module: the Kubernetes client loads only for this use case.

    collected = collect_results(kb, CollectTarget("job", "maskrcnn"), Cluster(namespace="mlperf"),
                                StackSource(image="quay.io/me/maskrcnn:TAG"))
"""

from __future__ import annotations

import math
from typing import List, NamedTuple, Optional, Sequence

from mlcc.app.results import StackSource, Stored, load_stack, log_problems, store_runs
from mlcc.errors import UsageError
from mlcc.kb.model import KnowledgeBase
from mlcc.results.collect import Cluster, ClusterError, Collected, collect
from mlcc.results.parse import Run
from mlcc.results.store import Placement

KINDS = {"job": "Job", "mpijob": "MPIJob"}
# No MLPerf training run takes a month; a log from a cluster that says so (or that it
# stopped before it started) has forged or broken timestamps.
MAX_RUN_SECONDS = 31 * 24 * 3600.0


class CollectTarget(NamedTuple):
    """The finished Job or MPIJob whose pods' logs ``mlcc results collect`` reads."""

    kind: str  # "job" (batch/v1) or "mpijob" (kubeflow.org/v2beta1)
    name: str
    container: Optional[str] = None  # whose log to read (default: the pod's first)

    @property
    def title(self) -> str:
        """How messages name it, e.g. ``Job maskrcnn-cuda10-1``."""
        return f"{KINDS.get(self.kind, self.kind)} {self.name}"


class CollectedRuns(NamedTuple):
    found: Collected  # the pods' logs, the job's outcome, nodes and GPUs
    runs: int
    stored: Stored


def collect_results(
    kb: KnowledgeBase,
    target: CollectTarget,
    cluster: Cluster,
    source: StackSource,
    placement: Optional[Placement] = None,
    history_file: Optional[str] = None,
    round_name: Optional[str] = None,
) -> CollectedRuns:
    """Read the finished job's pod logs and store their runs with the stack they ran on.

    Nodes and GPUs come from the job (pod nodes, ``nvidia.com/gpu`` limits) unless
    ``placement`` names them.

    Args:
        kb: The knowledge base.
        target: The Job or MPIJob (an MPIJob's launcher holds the log).
        cluster: The connection to the cluster (kubeconfig, context, namespace).
        source: The image or stack.json the runs ran on.
        placement: The system, GPUs and nodes, where they override the job's.
        history_file: ``--history FILE``, or None for the default database.
        round_name: ``--round``: the MLPerf round whose rules score the runs (default: the
            round the log's format, benchmark or folder imply), as ``mlcc results add`` takes it.

    Returns:
        What the cluster gave, how many runs, and what was stored.

    Raises:
        UsageError: An unknown kind, a job or namespace that is not found, no MLPerf run in
            the logs, or a stack that cannot be read.
        RegistryError: The cluster (ClusterError) or the image's registry could not be
            reached or refused.
        HistoryError: The database is locked or damaged.
    """
    if target.kind not in KINDS:
        raise UsageError(f"cannot collect from a {target.kind!r}", hint="a job or an mpijob")
    stack = load_stack(source)
    found = collect(cluster, target.kind, target.name, target.container)
    runs = [run for log in found.logs for run in log.runs]
    if not runs:
        raise UsageError(
            f"{target.title} {found.outcome}: {len(found.logs)} pod log(s) hold no MLPerf runs "
            "(no :::MLL or :::MLPv0.5.0 lines); nothing stored",
            hint="does the benchmark log to stdout? if it writes files under /results, copy them out "
            "and use mlcc results add",
        )
    _check_times(runs)
    placement = placement or Placement()
    placement = Placement(
        placement.system,
        placement.nodes if placement.nodes is not None else found.nodes,
        placement.gpus if placement.gpus is not None else found.gpus,
    )
    added, history = store_runs(kb, runs, stack, placement, history_file, round_name)
    notes: List[str] = log_problems(found.logs)
    return CollectedRuns(found, len(runs), Stored(added, stack, history, notes))


def _check_times(runs: Sequence[Run]) -> None:
    """Refuse the pods' runs when one has an impossible time: nothing is stored."""
    for run in runs:
        where = run.file if run.position == 0 else f"{run.file} (run {run.position + 1})"
        times = [t for t in (run.start, run.stop, run.result_seconds) if t is not None]
        if not all(math.isfinite(t) for t in times):
            raise ClusterError(f"{where}: a time that is not a finite number; nothing stored")
        if run.result_seconds is not None and not 0 <= run.result_seconds <= MAX_RUN_SECONDS:
            raise ClusterError(
                f"{where}: a run of {run.result_seconds:g} s is impossible (0 to 31 days); nothing stored"
            )
        if run.start is not None and run.stop is not None:
            took = run.stop - run.start
            if not 0 <= took <= MAX_RUN_SECONDS:
                raise ClusterError(
                    f"{where}: run_stop is {took:g} s after run_start, an impossible run time "
                    "(0 to 31 days); nothing stored"
                )
