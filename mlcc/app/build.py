"""Building: one path for a single image, several arches, a matrix and OpenShift.

Every build job goes through :func:`run_job`: the lock per content, skip-if-built (unless
``--force``), the engine's build, and one history record -- whichever engine and however
many jobs. :func:`run_jobs` runs many in parallel, past failures; :func:`push_manifest_list`
joins the arches of one stack. Every image gets two tags: a readable one
(``<registry>/<benchmark>:<variant>``) and an immutable content tag
(``<registry>/<benchmark>:mlcc-<digest>``) named after the digest of the build inputs.

    results = run_jobs(engine, jobs, policy, history=History(), log_for=lambda job: Log(print))
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from dockerfile_parse import DockerfileParser

import mlcc
from mlcc import engines
from mlcc.app.images import attach_sbom, repository_types
from mlcc.app.kb import warn_if_incomplete
from mlcc.app.matrix import MatrixFilters, cell_results, published
from mlcc.engines.base import (
    BuildJob,
    BuildPolicy,
    BuildResult,
    Engine,
    EngineSettings,
    ImageEngine,
    Log,
    StageJob,
    job_for,
    registry_for,
    stage_jobs,
)
from mlcc.errors import BuildError, Interrupted, MlccError, RegistryError, UsageError
from mlcc.flags import given
from mlcc.history import History, Record
from mlcc.image.base import mismatch, resolve_base
from mlcc.image.reference import Reference, parse_reference
from mlcc.image.sizes import ImageSizes
from mlcc.kb.loader import cache_dir
from mlcc.kb.model import KnowledgeBase
from mlcc.matrix import cell_flags
from mlcc.render import (
    DEFAULT_CLUSTER,
    DEFAULT_OPTIONS,
    RUNTIME,
    ClusterOptions,
    Options,
    check_cluster_options,
    render,
)
from mlcc.resolve import Resolver
from mlcc.resolve.pins import Pins

# Called when a job starts and when it ends (for a live view); both optional.
Started = Callable[[int, BuildJob], None]
Finished = Callable[[int, BuildResult], None]


def single_jobs(
    kb: KnowledgeBase, benchmark: str, pins: Pins, policy: BuildPolicy, options: Options
) -> List[BuildJob]:
    """The jobs of ``mlcc build BENCHMARK [pins]``: one per arch of ``--arch a,b``.

    Args:
        kb: The knowledge base.
        benchmark: The benchmark's name.
        pins: The pins; ``arch`` may list several arches, comma-separated.
        policy: Where images go and how they are built.
        options: The render options (base image, mirrors).

    Returns:
        One job per arch (one job without ``--arch``), not built yet.

    Raises:
        UsageError: Several arches without ``--push`` (a manifest list lives in a registry),
            arches that resolved to different stacks, or an unknown name or malformed pin.
        ConflictError: An arch has no stack for the pins.
    """
    arches: List[Optional[str]] = [a.strip() for a in (pins.arch or "").split(",") if a.strip()]
    arches = arches or [None]
    if len(arches) > 1 and not policy.push:
        raise UsageError("a manifest list of several arches lives in a registry: add --push --registry R")
    resolver = Resolver(kb)
    jobs = []
    for arch in arches:
        request = replace(pins, arch=arch).request(kb, benchmark)
        stack = resolver.resolve(request)
        warn_if_incomplete(stack.benchmark)
        label = request.flags() or benchmark  # the request, in the build history
        jobs.append(job_for(render(stack, options=options, request=request), policy, label))
    if len(jobs) > 1:
        manifest_list_tag(jobs)  # refuse arches that resolved differently, before building
    return jobs


def matrix_jobs(
    kb: KnowledgeBase, filters: MatrixFilters, policy: BuildPolicy, options: Options
) -> List[BuildJob]:
    """The jobs of ``mlcc build --matrix``: one per published cell the filters keep.

    Args:
        kb: The knowledge base.
        filters: Which cells.
        policy: Where images go and how they are built.
        options: The render options (base image, mirrors).

    Returns:
        One job per cell, in the matrix's order.

    Raises:
        UsageError: A filter names something unknown, or no cell matches.
    """
    results, _ = cell_results(kb, filters)
    cells = published(results)
    if not cells:
        raise UsageError("no cell of the matrix matches", hint="mlcc matrix --explain shows the cells")
    return [
        job_for(
            render(cell.stack, options=options, request=cell.cell.pins().request(kb, cell.cell.benchmark)),
            policy,
            cell.cell.label,
            cell_flags(cell.cell),
        )
        for cell in cells
        if cell.stack is not None
    ]


class Prepared(NamedTuple):
    """A build checked and ready to run: the engine, its jobs and the policy they build under."""

    engine: Engine
    jobs: List[BuildJob]
    policy: BuildPolicy  # with --chain on a local engine, ``chain`` set


def prepare(
    kb: KnowledgeBase,
    benchmark: Optional[str],
    pins: Pins,
    *,
    backend: Optional[str] = None,
    policy: Optional[BuildPolicy] = None,
    options: Options = DEFAULT_OPTIONS,
    cluster: ClusterOptions = DEFAULT_CLUSTER,
    connection: Optional[EngineSettings] = None,
    matrix: Optional[MatrixFilters] = None,
    dry_run: bool = False,
) -> Prepared:
    """What ``mlcc build`` builds, refused before anything runs when the combination is not
    one mlcc can build: the same refusals for the CLI and a Python caller.

    Args:
        kb: The knowledge base.
        benchmark: The benchmark (None only with ``matrix``).
        pins: The pins (``arch`` may list several arches, comma-separated).
        backend: The engine's name (``--backend``); None tries the local engines in turn.
        policy: Where images go and how they are built (default: local storage).
        options: The render options (base image, mirrors).
        cluster: The OpenShift options; with a local engine only ``chain`` may be set.
        connection: The kubeconfig and its context (OpenShift only; default: none).
        matrix: Build the published matrix cells these filters keep, instead of one benchmark.
        dry_run: Only plan: several arches on an engine that builds one are not refused.

    Returns:
        The engine (checked), the jobs and the policy.

    Raises:
        UsageError: OpenShift options with a local engine, no benchmark and no matrix,
            ``--chain`` or ``--cache-repo`` on an engine that cannot do it, several arches on
            an engine that builds one, or what the pins, the matrix filters or the engine's
            check refuse.
        ConflictError: An arch has no stack for the pins.
    """
    policy, settings = engine_settings(
        backend, policy or BuildPolicy(), cluster, connection or EngineSettings()
    )
    if matrix is not None:
        todo = matrix_jobs(kb, matrix, policy, options)
    elif benchmark is None:
        raise UsageError("name a benchmark (mlcc list benchmarks), or build the published set with --matrix")
    else:
        todo = single_jobs(kb, benchmark, pins, policy, options)
    engine = engines.create(backend, settings)
    check_engine(engine, policy, todo, several_arches=matrix is None and not dry_run)
    return Prepared(engine, todo, policy)


def engine_settings(
    backend: Optional[str], policy: BuildPolicy, cluster: ClusterOptions, connection: EngineSettings
) -> Tuple[BuildPolicy, EngineSettings]:
    """The policy and engine settings of a build: the cluster options go to OpenShift; a
    local engine takes only ``--chain`` of them (it builds the stage images itself).

    Args:
        backend: The engine's name, or None (a local engine).
        policy: Where images go and how they are built.
        cluster: The OpenShift options as given.
        connection: The kubeconfig and context as given.

    Returns:
        The policy (``chain`` set for a local engine's ``--chain``) and the settings.

    Raises:
        UsageError: An OpenShift option with a local engine, or a malformed one;
            ``--no-sbom`` without a push (no SBOM is pushed then).
    """
    if not policy.sbom and not (policy.push or cluster.push_to):
        raise UsageError(
            "--no-sbom has no effect without --push (OpenShift: --push-to): no SBOM is pushed then"
        )
    cluster = check_cluster_options(cluster)
    if backend != "openshift":
        if given(replace(cluster, chain=False)) or given(connection):
            raise UsageError(
                "the OpenShift options (--namespace, --push-to, --git-uri ...) go with --backend openshift"
            )
        policy = replace(policy, chain=cluster.chain)
        cluster = replace(cluster, chain=False)
    return policy, replace(connection, cluster=cluster)


def check_engine(engine: Engine, policy: BuildPolicy, jobs: Sequence[BuildJob], several_arches: bool) -> None:
    """Refuse what the engine cannot do with these jobs, before any of them runs.

    Args:
        engine: The engine.
        policy: Where images go and how they are built (``chain``, ``cache_repo``).
        jobs: The jobs.
        several_arches: Whether several jobs are the arches of one image (a manifest list).

    Raises:
        UsageError: ``--chain`` on an engine that builds no stage images, ``--cache-repo``
            on one that shares no build steps, several arches on one that builds one.
    """
    if policy.chain and not isinstance(engine, ImageEngine):
        raise UsageError(
            f"--chain: the {engine.name} engine cannot build stage images",
            hint="use --backend buildah, podman or docker (or openshift, which chains on the cluster)",
        )
    if policy.cache_repo and not engine.registry_cache:
        raise UsageError(
            f"--cache-repo: the {engine.name} engine cannot share build steps through a registry",
            hint="use --backend buildah or --backend podman",
        )
    if several_arches and len(jobs) > 1 and not engine.multi_arch:
        raise UsageError(f"--backend {engine.name} builds one arch per build: give one --arch")


# ----------------------------------------------------------------------------- one job


def run_job(
    engine: Engine,
    job: BuildJob,
    policy: BuildPolicy,
    log: Log,
    history: Optional[History] = None,
    stop: Optional[threading.Event] = None,
) -> BuildResult:
    """Build one job: pin the base, lock, skip what is built, build, attach the SBOM.

    Where the image was pushed (``--push``, or OpenShift's ``--push-to``:
    ``engine.pushed_image``) its SBOM goes beside it, a skipped image's too when the
    registry lacks it.

    Args:
        engine: The engine that builds.
        job: The variant to build.
        policy: Where images go and how they are built (``--force`` never skips).
        log: Receives the engine's output and mlcc's own lines.
        history: Tells whether the base moved since the last build of these inputs.
        stop: Set on Ctrl-C (:func:`run_jobs`): no further stage or build starts.

    Returns:
        The result, ``"built"`` or ``"skipped"``, with its duration.

    Raises:
        UsageError: The base image is not the stack's OS release or arch, or mlcc's cache
            folder (where the per-content locks live) is not writable.
        BuildError: The build failed.
        RegistryError: A registry could not be reached or refused (base, push, SBOM).
        Interrupted: ``stop`` was set before the build (or a stage) started, or Ctrl-C
            stopped the engine.
    """
    start = time.monotonic()
    job = pin_base(engine, job, policy, log)
    with content_lock(job.digest, log):
        found = None if policy.force else engine.find_built(job, policy)
        if found is None:
            moved = base_moved(job, history)
            if moved:
                log(f"mlcc: {moved}: rebuilding")
            if policy.chain and isinstance(engine, ImageEngine):
                job = build_stages(engine, job, policy, log, history, stop)
            stop_if_asked(stop, f"{job.variant} was not built")
            result = engine.build(job, policy, log)
            result = result._replace(reason=f"{moved}; {result.reason}") if moved else result
        else:
            result = found
        pushed_to = engine.pushed_image(job, policy)
        if pushed_to is not None and policy.sbom and result.digest:
            types = repository_types(job.rendered.stack.hosts)
            attached = attach_sbom(registry_for(pushed_to, policy), pushed_to, result.digest, types)
            state = "pushed" if attached.pushed else "already in the registry"
            log(f"SBOM {attached.tag} {state} ({attached.digest})")
    return result._replace(seconds=time.monotonic() - start)


def pin_base(engine: Engine, job: BuildJob, policy: BuildPolicy, log: Log) -> BuildJob:
    """Resolve the base image's digest for the job's arch, and refuse a base that does not fit.

    Local engines then build FROM that digest; a cluster resolves its own FROM.

    Args:
        engine: The engine that builds.
        job: The variant to build.
        policy: How to talk to the base's registry.
        log: Receives the digest found.

    Returns:
        The job with its base pinned (unchanged when pinned already or for a cluster).

    Raises:
        UsageError: The base image is not the stack's OS release or arch.
        RegistryError: The base's registry could not be reached or refused.
    """
    if job.base is not None or not isinstance(engine, ImageEngine):
        return job  # pinned already; a cluster resolves its own FROM (ImageStream, pull secret)
    stack = job.rendered.stack
    reference = job.rendered.plan.base_image
    base = resolve_base(reference, stack.arch.name, tls_verify=policy.tls_verify)
    why = mismatch(
        base,
        arch=stack.arch.name,
        family=stack.base.family,
        release=stack.base.os_release,
        name=stack.base.name,
    )
    if why is not None:
        raise UsageError(
            f"base image {reference} cannot serve this {stack.base.name} {stack.arch.name} stack: {why}",
            hint=f"give --base-image a mirror of {stack.base.ref} (or pick the --base it really is)",
        )
    log(f"base image {reference} is {base.digest}")
    return job._replace(base=base)


def stop_if_asked(stop: Optional[threading.Event], what: str) -> None:
    """Raise Interrupted when Ctrl-C asked the builds to stop.

    Args:
        stop: Set by :func:`run_jobs` on Ctrl-C; None: never asked.
        what: What is left undone, for the message.

    Raises:
        Interrupted: ``stop`` is set.
    """
    if stop is not None and stop.is_set():
        raise Interrupted(f"interrupted (Ctrl-C): {what}")


def build_stages(
    engine: ImageEngine,
    job: BuildJob,
    policy: BuildPolicy,
    log: Log,
    history: Optional[History] = None,
    stop: Optional[threading.Event] = None,
) -> BuildJob:
    """``--chain``: find or build each shared stage image, each FROM the one before.

    A stage already built where images go (the registry with ``--push``, else the engine's
    storage) is taken as it is, by digest: a machine with an empty storage pulls the stack
    and framework stages and runs only the benchmark's steps. ``--force`` builds them again.

    Args:
        engine: The local engine that builds.
        job: The variant, its base pinned.
        policy: Where images go and how they are built.
        log: Told which stage is taken and which is built.
        history: Where each stage built or taken is recorded (benchmark ``mlcc-stack`` or
            ``mlcc-framework``, variant the stage's tag), so that the hours a shared stage
            takes, and what it weighs, show in ``mlcc history``; None records nothing. A
            stage Ctrl-C stopped is recorded as failed, "interrupted".
        stop: Set on Ctrl-C (:func:`run_jobs`): the chain ends with the stage it is in.

    Returns:
        The job with ``built`` naming each stage image: its build is the benchmark
        stage's steps FROM the last devel one, and the image keeps the job's content tag.

    Raises:
        UsageError: mlcc's cache folder (the per-content locks) is not writable.
        BuildError: A stage's build failed.
        RegistryError: A registry could not be reached or refused.
        Interrupted: Ctrl-C stopped a stage, or ``stop`` was set before one started.
    """
    built: Dict[str, str] = {}  # each stage image found or built, by kind: what the next is FROM
    for stage in stage_jobs(job, policy):
        stage = stage._replace(built=tuple(built.items()))
        what = f"{stage.stage.kind} stage {stage.readable.tag}"
        stop_if_asked(stop, f"the {what} and the stages after it were not built")
        with content_lock(stage.digest, log):  # two jobs on one stage: the second takes it
            start = time.monotonic()
            found = None if policy.force else engine.stage_image(stage, policy)
            if found is None:
                log(f"mlcc: building the {what} ({stage.content})")
                found = _build_stage(engine, job, stage, policy, log, history, stop)
                status, reason = "built", f"built with {engine.name}"
            else:
                log(f"mlcc: the {what} is built already: building FROM {found}")
                status, reason = "skipped", f"{stage.content} is built already"
            if history is not None:
                seconds = time.monotonic() - start
                history.record(_stage_record(engine, job, stage, status, reason, seconds, found))
        built[stage.stage.kind] = found
    job = job._replace(built=tuple(built.items()))
    bound = job.bound
    if bound.runtime_parent is not None:
        runtime = bound.runtime_parent
        log(f"mlcc: building the benchmark stage FROM {bound.parent}, its runtime stage FROM {runtime}")
    else:
        log(f"mlcc: building the benchmark stage FROM {bound.parent}")
    return job


def _build_stage(
    engine: ImageEngine,
    job: BuildJob,
    stage: StageJob,
    policy: BuildPolicy,
    log: Log,
    history: Optional[History],
    stop: Optional[threading.Event],
) -> str:
    """Build one stage image; one Ctrl-C stopped is recorded as interrupted and ends the chain."""
    start = time.monotonic()
    try:
        return engine.build_stage(stage, policy, log)
    except MlccError as error:
        if not isinstance(error, Interrupted) and not (stop is not None and stop.is_set()):
            raise
        what = f"the {stage.stage.kind} stage {stage.readable.tag}"
        log(f"mlcc: interrupted (Ctrl-C) while building {what}: no further stage is built")
        if history is not None:
            seconds = time.monotonic() - start
            history.record(_stage_record(engine, job, stage, "failed", "interrupted (Ctrl-C)", seconds, ""))
        raise Interrupted(f"interrupted (Ctrl-C) while building {what}") from None


def _stage_record(
    engine: ImageEngine, job: BuildJob, stage: StageJob, status: str, reason: str, seconds: float, image: str
) -> Record:
    """The history row of a shared stage built or taken for ``job``."""
    stack = job.rendered.stack
    sizes = engine.layer_sizes(str(stage.content)) if status == "built" else None
    return Record(
        benchmark=stage.stage.repository,
        variant=stage.readable.tag or stage.stage.tag,
        content_digest=stage.digest,
        backend=engine.name,
        status=status,
        seconds=round(seconds, 3),
        arch=stack.arch.name,
        cuda=stack.cuda.version if stack.cuda else "cpu",
        base=stack.base.name,
        cell=job.label,
        image_digest=image.rpartition("@")[2] if "@" in image else None,
        mlcc_version=mlcc.__version__,
        reason=reason,
        reference=str(stage.readable),
        uncompressed=sizes.uncompressed if sizes else None,
        flavour="runtime" if stage.stage.kind == RUNTIME else "devel",
        largest_layers=_largest_json(sizes),
    )


def base_moved(job: BuildJob, history: Optional[History]) -> Optional[str]:
    """Whether the base tag moved under the same generated inputs since their last build.

    Args:
        job: The variant, its base pinned.
        history: The build history, or None.

    Returns:
        ``base image X moved from A to B``, or None.

    Raises:
        HistoryError: The database is locked or damaged.
    """
    if history is None or job.base is None:
        return None
    stack = job.rendered.stack
    before = history.base_before(stack.benchmark.name, job.variant, job.rendered.digest)
    if before is None or before == job.base.digest:
        return None
    return f"base image {job.base.reference} moved from {before} to {job.base.digest}"


@contextlib.contextmanager
def content_lock(digest: str, log: Log) -> Iterator[None]:
    """One build per content at a time on this machine; the OS drops the lock if mlcc dies.

    Args:
        digest: The job's content digest, which names the lock file.
        log: Told when the lock is held by another build and this one waits.

    Yields:
        While the lock is held.

    Raises:
        UsageError: mlcc's cache folder (``MLCC_CACHE_DIR``) is not writable.
    """

    folder = Path(cache_dir()) / "locks"
    path = folder / f"{digest.split(':', 1)[1][:32]}.lock"
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle = path.open("a")
    except OSError as error:
        raise UsageError(
            f"cannot use mlcc's cache folder {folder}: {error.strerror or error}",
            hint="set MLCC_CACHE_DIR (or XDG_CACHE_HOME) to a writable folder",
        ) from None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f"waiting for another mlcc build of the same content (lock {path})")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _guarded(
    engine: Engine,
    job: BuildJob,
    policy: BuildPolicy,
    log: Log,
    history: Optional[History],
    stop: Optional[threading.Event] = None,
) -> BuildResult:
    start = time.monotonic()
    try:
        return run_job(engine, job, policy, log, history, stop)
    except MlccError as error:
        if stop is not None and stop.is_set() and not isinstance(error, Interrupted):
            # the engine failed because Ctrl-C stopped it: that is why, not its exit code
            error = Interrupted(f"interrupted (Ctrl-C): {error.message}")
        log(f"mlcc: error: {error}")
        return BuildResult(job, "failed", str(error).splitlines()[0], time.monotonic() - start, error=error)
    except Exception as error:  # a bug in one job must not stop the others
        log(f"mlcc: internal error: {type(error).__name__}: {error}")
        return BuildResult(job, "failed", f"internal error: {error}", time.monotonic() - start)


# ----------------------------------------------------------------------------- many jobs


def run_jobs(
    engine: Engine,
    jobs: Sequence[BuildJob],
    policy: BuildPolicy,
    *,
    history: Optional[History],
    log_for: Callable[[BuildJob], Log],
    log_path: Callable[[BuildJob], Optional[Path]] = lambda job: None,
    parallel: int = 1,
    started: Optional[Started] = None,
    finished: Optional[Finished] = None,
) -> List[BuildResult]:
    """Build every job; failures are results too (status ``"failed"``), never an exception.

    Jobs sharing leading layers go to one worker in order (:func:`prefix_groups`); every
    result is recorded in ``history`` (when given) as it arrives.

    Ctrl-C (SIGINT, which Python raises in the main thread only) stops the builds: the
    engine's running programs are stopped (:meth:`Engine.interrupt`), no further job, stage
    or step starts, the jobs that were running are recorded as failed, "interrupted", and
    KeyboardInterrupt is raised again once they have ended. Jobs not started are not recorded.

    Args:
        engine: The engine that builds.
        jobs: The jobs.
        policy: Where images go and how they are built.
        history: The build history, or None for none.
        log_for: The log of each job.
        log_path: The log file of each job, recorded in the history.
        parallel: How many groups build at once (``-j``).
        started: Called when a job starts (its base pinned).
        finished: Called with each result.

    Returns:
        The results, in the jobs' order.

    Raises:
        UsageError: ``parallel`` is below 1.
        HistoryError: The history cannot be written (checked before any build).
        KeyboardInterrupt: Ctrl-C, once the running builds have stopped and been recorded.
    """
    if parallel < 1:
        raise UsageError(f"-j {parallel}: give at least 1 parallel build")
    if history is not None:
        history.check()  # a build should not run only to fail recording
    results: Dict[int, BuildResult] = {}
    done = threading.Lock()
    stop = threading.Event()  # Ctrl-C: the workers start nothing more

    def one(index: int) -> None:
        job = jobs[index]
        if stop.is_set():
            return  # never started: not recorded
        log = log_for(job)
        try:  # first, so that the content tag shown when the job starts is the real one
            job = pin_base(engine, job, policy, log)
        except MlccError as error:
            log(f"mlcc: error: {error}")
            result = BuildResult(job, "failed", str(error).splitlines()[0], 0.0, error=error)
        else:
            if started is not None:
                started(index, job)
            result = _guarded(engine, job, policy, log, history, stop)
        with done:
            results[index] = result
            if history is not None:
                history.record(record_of(result, engine.name, log_path(job)))
            if finished is not None:
                finished(index, result)

    def interrupt() -> None:
        stop.set()  # before the engine is stopped: its failure is then read as interrupted
        engine.interrupt()

    _run_in_build_order(jobs, parallel, one, results, interrupt)
    return [results[i] for i in range(len(jobs))]


def _run_in_build_order(
    jobs: Sequence[BuildJob],
    parallel: int,
    one: Callable[[int], None],
    results: Mapping[int, BuildResult],
    interrupt: Callable[[], None],
) -> None:
    """Call ``one`` with each job's index, ``parallel`` at a time, each once the job it
    builds after (:func:`build_after`) has its result in ``results``. On Ctrl-C,
    ``interrupt`` runs, then the running calls are waited for, then KeyboardInterrupt is
    raised again."""
    after = build_after(jobs)
    waiting = list(range(len(jobs)))
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        running: Dict[Future[None], int] = {}
        try:
            while waiting or running:
                # a job starts once the job it shares the most layers with is done (its layers
                # are in the engine's cache then), so every shared step runs once
                ready = [i for i in waiting if after[i] is None or after[i] in results]
                for index in ready[: parallel - len(running)]:
                    waiting.remove(index)
                    running[pool.submit(one, index)] = index
                finished_now, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished_now:
                    running.pop(future)
                    future.result()
        except KeyboardInterrupt:
            interrupt()
            wait(running)  # the running jobs end (and are recorded) before mlcc exits
            raise


def layer_chain(job: BuildJob) -> List[Tuple[str, bool]]:
    """The job's Dockerfile as a chain of cache keys, one per instruction, each standing for
    everything before it too (base, platform, build args): two jobs share a layer exactly
    where their chains agree, as the engine's layer cache sees it. The flag marks a RUN,
    the instructions that cost build time.

    A COPY of other files under the same instruction text counts as shared here: such jobs
    wait for each other without need, which costs parallelism, never a second build."""
    rendered = job.rendered
    text = dict(rendered.files).get("Dockerfile", "")
    root = json.dumps([rendered.plan.base_image, rendered.platform, list(rendered.build_args)])
    key = hashlib.sha256(root.encode()).hexdigest()
    chain = []
    for item in DockerfileParser(fileobj=io.BytesIO(text.encode("utf-8"))).structure:
        if item["instruction"] == "COMMENT":
            continue
        line = f"{key}\n{item['instruction']} {item['value']}"
        key = hashlib.sha256(line.encode()).hexdigest()
        chain.append((key, item["instruction"] == "RUN"))
    return chain


def shared_runs(first: List[Tuple[str, bool]], second: List[Tuple[str, bool]]) -> int:
    """How many RUN steps two layer chains share from their start."""
    shared = 0
    for (key, is_run), (other, _) in zip(first, second):
        if key != other:
            break
        shared += is_run
    return shared


def build_after(jobs: Sequence[BuildJob]) -> List[Optional[int]]:
    """For each job, the earlier job it shares the most RUN steps with (None: it shares
    none): the job it waits for, so that a shared step is built once and then taken from
    the cache. Earlier jobs only, so the waits form a tree and every job starts."""
    chains = [layer_chain(job) for job in jobs]
    after: List[Optional[int]] = []
    for index, chain in enumerate(chains):
        shared = [(shared_runs(chain, chains[earlier]), -earlier) for earlier in range(index)]
        best = max(shared, default=(0, 0))
        after.append(-best[1] if best[0] > 0 else None)
    return after


class Planned(NamedTuple):
    """One job of a dry run: its place in the build order, and whether it would build."""

    after: Optional[int]  # the job (its index) it waits for: the one it shares most layers with
    job: BuildJob  # its base pinned where that could be read, so its content tag is final
    built: Optional[str]  # where its content already is; None when it would build
    unknown: Optional[str] = None  # why mlcc cannot tell (then it counts as one to build)
    # --chain: each shared stage image and where it is built already (None: it would build)
    stages: Tuple[Tuple[StageJob, Optional[str]], ...] = ()


def plan_jobs(engine: Engine, jobs: Sequence[BuildJob], policy: BuildPolicy) -> List[Planned]:
    """What :func:`run_jobs` would do, building and tagging nothing.

    Args:
        engine: the engine the build would use; asked only through ``Engine.is_built``.
        jobs: the jobs, as ``matrix_jobs`` or ``single_jobs`` make them.
        policy: ``--push``, ``--registry`` and ``--force`` as the build would take them.

    Returns:
        One entry per job, in the order of ``jobs`` (the order ``-j 1`` builds in), each
        naming the job it waits for (:func:`build_after`).

    Errors reading a base image, a registry or a cluster do not raise: the entry says why
    mlcc cannot tell (``unknown``).

    With ``--chain`` on a local engine each entry lists its stage images too, and an image
    waits for the first earlier one that builds a stage it lacks (:func:`stage_after`),
    none when the stages it needs are built already.
    """
    plan = [_plan_one(engine, job, policy, after) for job, after in zip(jobs, build_after(jobs))]
    if policy.chain and isinstance(engine, ImageEngine) and not policy.force:
        plan = stage_after(_with_stages(engine, plan, policy))
    return plan


def _with_stages(engine: ImageEngine, plan: Sequence[Planned], policy: BuildPolicy) -> List[Planned]:
    known: Dict[str, Optional[str]] = {}  # a stage's digest -> where it is: asked once per stage
    found = []
    for entry in plan:
        if entry.job.base is None:  # the base could not be read: its stages cannot be named
            found.append(entry)
            continue
        stages = []
        for stage in stage_jobs(entry.job, policy):
            if stage.digest not in known:
                try:
                    known[stage.digest] = engine.stage_image(stage, policy)
                except MlccError:
                    known[stage.digest] = None  # a stage mlcc cannot see is one to build
            stages.append((stage, known[stage.digest]))
        found.append(entry._replace(stages=tuple(stages)))
    return found


def stage_after(plan: Sequence[Planned]) -> List[Planned]:
    """Each image that would build waits for the first earlier one that builds a stage it
    lacks (the deepest such stage first), or for nothing: a stage the registry holds is
    pulled, and a stage built by an earlier image is taken from it once that one is done.

    Args:
        plan: The plan, each entry with its stages (:func:`plan_jobs` with ``--chain``).

    Returns:
        The same entries, ``after`` by stage images instead of shared layers; entries
        without stages keep theirs.
    """
    found = list(plan)
    for index, entry in enumerate(plan):
        if entry.built or not entry.stages:
            continue
        missing = [stage.digest for stage, where in reversed(entry.stages) if where is None]
        builders = [
            next((j for j in range(index) if _builds_stage(plan[j], digest)), None) for digest in missing
        ]
        found[index] = entry._replace(after=next((j for j in builders if j is not None), None))
    return found


def _builds_stage(entry: Planned, digest: str) -> bool:
    return not entry.built and any(stage.digest == digest and where is None for stage, where in entry.stages)


# The build-matrix workflow has one job per level; a deeper plan must not pass unnoticed.
GITHUB_LEVELS = 4


def levels(plan: Sequence[Planned]) -> List[Optional[int]]:
    """The level of each job that would build (None: built already): 0 when it waits for
    nothing that builds, else one more than the job it waits for. A CI job per level, each
    after the one before, builds a shared step once; the later levels take it through
    ``--cache-repo``."""
    found: List[Optional[int]] = []
    for entry in plan:
        if entry.built:
            found.append(None)
            continue
        before = found[entry.after] if entry.after is not None else None
        found.append(0 if before is None else before + 1)
    return found


def github_levels(plan: Sequence[Planned]) -> Dict[str, Any]:
    """The plan for GitHub Actions: ``levels[k]`` is the ``strategy.matrix`` of level k's job
    (the cells still to build), ``built`` the cells the registry already holds.

    A cell whose state cannot be told carries ``unknown`` (why); when no cell's can, the
    plan is refused: it would be a silent build of everything.

    Raises:
        UsageError: the plan is deeper than the workflow's GITHUB_LEVELS jobs.
        RegistryError: whether the registry holds any cell cannot be told.
    """
    if plan and all(entry.unknown for entry in plan):
        raise RegistryError(
            f"cannot tell whether the registry holds any of the {len(plan)} cells ({plan[0].unknown}): "
            "the plan would build every one",
            hint="check --registry, the network and the credentials, then plan again",
        )
    found = levels(plan)
    if any(level is not None and level >= GITHUB_LEVELS for level in found):
        raise UsageError(
            f"the build plan has {max(level for level in found if level is not None) + 1} levels; "
            f"the workflow builds {GITHUB_LEVELS}",
            hint="add level jobs to .github/workflows/build-matrix.yml and raise GITHUB_LEVELS",
        )

    def cell(entry: Planned) -> Dict[str, Any]:
        stack = entry.job.rendered.stack
        found: Dict[str, Any] = {
            "benchmark": stack.benchmark.name,
            "variant": entry.job.variant,
            "arch": stack.arch.name,
            "platform": entry.job.rendered.platform,
            "label": entry.job.label,
            "pins": entry.job.pins,
            "content": str(entry.job.content),
        }
        if entry.unknown:  # counted as one to build, and said so
            found["unknown"] = entry.unknown
        if entry.stages:  # --chain: which stage images the registry holds already
            found["stages"] = [
                {"stage": stage.stage.kind, "content": str(stage.content), "built": where is not None}
                for stage, where in entry.stages
            ]
        return found

    return {
        "levels": [
            {"include": [cell(e) for e, level in zip(plan, found) if level == k]}
            for k in range(GITHUB_LEVELS)
        ],
        "built": [cell(e) for e in plan if e.built],
        "stages": distinct_stages(plan),
    }


def distinct_stages(plan: Sequence[Planned]) -> List[Dict[str, Any]]:
    """Each stage image of a ``--chain`` plan once: built already, or which image builds it
    (the first that would build and needs it) and how many others take it after that.

    Args:
        plan: The plan.

    Returns:
        ``{"stage", "readable", "content", "built", "built_by", "used_by"}`` per distinct
        stage image, in the plan's order; empty without ``--chain``.
    """
    found: Dict[str, Dict[str, Any]] = {}
    for entry in plan:
        for stage, where in entry.stages:
            item = found.setdefault(
                stage.digest,
                {
                    "stage": stage.stage.kind,
                    "readable": str(stage.readable),
                    "content": str(stage.content),
                    "built": where is not None,
                    "built_by": None,
                    "used_by": 0,
                },
            )
            item["used_by"] += 1
            if where is None and item["built_by"] is None and not entry.built:
                item["built_by"] = entry.job.label
    return list(found.values())


def _plan_one(engine: Engine, job: BuildJob, policy: BuildPolicy, after: Optional[int]) -> Planned:
    if policy.force:
        return Planned(after, job, None)
    try:
        job = pin_base(engine, job, policy, Log(None))
        return Planned(after, job, engine.is_built(job, policy))
    except NotImplementedError:
        return Planned(after, job, None, f"the {engine.name} engine cannot look without building")
    except MlccError as error:
        return Planned(after, job, None, str(error).splitlines()[0])


def record_of(result: BuildResult, backend: str, log: Optional[Path]) -> Record:
    """The history row of a build result.

    Args:
        result: The result.
        backend: The engine's name.
        log: The job's log file, or None.

    Returns:
        The record.
    """
    job = result.job
    stack = job.rendered.stack
    return Record(
        benchmark=stack.benchmark.name,
        variant=job.variant,
        content_digest=job.digest,
        backend=backend,
        status=result.status,
        seconds=round(result.seconds, 3),
        arch=stack.arch.name,
        cuda=stack.cuda.version if stack.cuda else "cpu",
        base=stack.base.name,
        cell=job.label,
        image_digest=result.digest,
        size=result.size,
        log_path=str(log.resolve()) if log else None,
        mlcc_version=mlcc.__version__,
        reason=result.reason,
        reference=str(job.readable),
        inputs_digest=job.rendered.digest,
        base_digest=job.base.digest if job.base else None,
        uncompressed=result.sizes.uncompressed if result.sizes else None,
        flavour=flavour_of(job),
        largest_layers=_largest_json(result.sizes),
    )


def flavour_of(job: BuildJob) -> str:
    """The image's flavour, as its stage graph says (a single-stage image carries its
    build tools: ``devel``).

    Args:
        job: The build job.

    Returns:
        ``devel`` or ``runtime``.
    """
    return job.stages.flavour


class FlavourTotal(NamedTuple):
    """What the images of one flavour weigh together; a figure some image lacks is None
    (a sum of the known ones would understate what the nodes pull)."""

    flavour: str
    images: int
    compressed: Optional[int]
    uncompressed: Optional[int]


def totals_by_flavour(jobs: Sequence[BuildJob], results: Sequence[BuildResult]) -> List[FlavourTotal]:
    """Per flavour: how many images were built or found, and their summed compressed and
    uncompressed bytes (the matrix summary's last lines).

    Args:
        jobs: The jobs, in order.
        results: Their results, in the same order.

    Returns:
        One total per flavour of a job that did not fail, by flavour name; a sum is None
        when any of its images lacks that figure (an image not pushed has no compressed size).
    """
    found: Dict[str, List[Optional[ImageSizes]]] = {}
    for job, result in zip(jobs, results):
        if result.status != "failed":
            found.setdefault(flavour_of(job), []).append(result.sizes)
    return [
        FlavourTotal(
            name, len(found[name]), *(_sum(found[name], field) for field in ("compressed", "uncompressed"))
        )
        for name in sorted(found)
    ]


def _sum(sizes: Sequence[Optional[ImageSizes]], field: str) -> Optional[int]:
    values = [getattr(size, field) if size is not None else None for size in sizes]
    return None if any(value is None for value in values) else sum(v for v in values if v is not None)


def _largest_json(sizes: Optional[ImageSizes]) -> Optional[str]:
    if sizes is None or not sizes.layers:
        return None
    return json.dumps([layer._asdict() for layer in sizes.largest()], sort_keys=True)


def failure(results: Sequence[BuildResult]) -> Optional[MlccError]:
    """The error that fails ``mlcc build`` (exit 4), if any job failed.

    Args:
        results: Every job's result.

    Returns:
        One job: its own error, with its own exit code; several: a BuildError listing the
        failed cells; None when nothing failed.
    """
    failed = [r for r in results if r.status == "failed"]
    if not failed:
        return None
    details = [f"{r.job.rendered.stack.benchmark.name} {r.job.variant}: {r.reason}" for r in failed]
    if len(results) == 1 and failed[0].error is not None:
        return failed[0].error  # one build: its own error, with its own exit code
    return BuildError(
        f"{len(failed)} of {len(results)} cells failed", details=details, hint="see each cell's log"
    )


# ----------------------------------------------------------------------------- multi-arch


def manifest_list_tag(jobs: Sequence[BuildJob]) -> Reference:
    """The tag of the manifest list over the jobs' arches: ``<repo>:<variant without its arch>``.

    Args:
        jobs: One job per arch.

    Returns:
        The reference.

    Raises:
        UsageError: The arches resolved to different stacks.
    """
    stems = {j.variant.rsplit("-", 1)[0] for j in jobs}
    if len(stems) != 1:
        raise UsageError(
            "the arches resolved to different stacks: " + ", ".join(sorted(j.variant for j in jobs)),
            hint="pin the components that differ (e.g. --cuda) so every arch gets the same stack",
        )
    return parse_reference(f"{jobs[0].repository}:{stems.pop()}")


def push_manifest_list(jobs: Sequence[BuildJob], results: Sequence[BuildResult], policy: BuildPolicy) -> str:
    """Push an OCI index over the per-arch images, through the registry API.

    Args:
        jobs: One job per arch.
        results: Their results, as built or skipped.
        policy: How to talk to the registry.

    Returns:
        The index's digest.

    Raises:
        UsageError: The arches resolved to different stacks, or an image is not in the
            registry.
        RegistryError: The registry could not be reached or refused.
    """
    tag = manifest_list_tag(jobs)
    registry = registry_for(tag, policy)
    entries = []
    for result in results:
        job = result.job  # as built: its content tag names the base digest it was built on
        digest = result.digest or registry.exists(job.content.repository, job.content.tag or "")
        manifest = registry.manifest(job.content.repository, digest or "")
        if manifest is None:
            raise UsageError(f"{job.content} is not in the registry; cannot list it")
        config = registry.blob_json(job.content.repository, manifest.config_digest())
        entries.append((manifest, config.get("os", "linux"), config.get("architecture", "")))
    return registry.put_index(tag.repository, tag.tag or "", entries)


def file_log(path: Path) -> Log:
    """A log that appends every line to a file (``--log FILE``).

    Args:
        path: The file.

    Returns:
        The log.

    Raises:
        UsageError: The file cannot be written.
    """
    try:
        handle = path.open("a", encoding="utf-8")
    except OSError as error:
        raise UsageError(
            f"--log {path}: cannot write it: {error.strerror or error}", hint="give a writable file"
        ) from None

    def sink(line: str) -> None:
        handle.write(line + "\n")
        handle.flush()

    return Log(sink)
