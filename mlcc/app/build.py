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
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Callable

import mlcc
from mlcc.app.images import attach_sbom, repository_types
from mlcc.app.matrix import MatrixFilters, cell_results, published
from mlcc.engines.base import (
    BuildJob,
    BuildPolicy,
    BuildResult,
    Engine,
    ImageEngine,
    Log,
    job_for,
    registry_for,
)
from mlcc.errors import BuildError, MlccError, UsageError
from mlcc.flags import replace
from mlcc.history import History, Record
from mlcc.image.base import mismatch, resolve_base
from mlcc.image.reference import Reference, parse_reference
from mlcc.kb.loader import cache_dir
from mlcc.kb.model import KnowledgeBase
from mlcc.render import Options, render
from mlcc.resolve import Resolver
from mlcc.resolve.pins import Pins

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, Iterator, List, Optional, Sequence

# Called when a job starts and when it ends (for a live view); both optional.
Started = Callable[[int, BuildJob], None]
Finished = Callable[[int, BuildResult], None]


def single_jobs(
    kb: KnowledgeBase, benchmark: str, pins: Pins, policy: BuildPolicy, options: Options
) -> List[BuildJob]:
    """One job per arch of ``--arch a,b`` (one job without it); the arches must agree."""
    arches: List[Optional[str]] = [a.strip() for a in (pins.arch or "").split(",") if a.strip()]
    arches = arches or [None]
    if len(arches) > 1 and not policy.push:
        raise UsageError("a manifest list of several arches lives in a registry: add --push --registry R")
    resolver = Resolver(kb)
    jobs = []
    for arch in arches:
        request = replace(pins, arch=arch).request(kb, benchmark)
        stack = resolver.resolve(request)
        label = request.flags() or benchmark  # the request, in the build history
        jobs.append(job_for(render(stack, options=options, request=request), policy, label))
    if len(jobs) > 1:
        manifest_list_tag(jobs)  # refuse arches that resolved differently, before building
    return jobs


def matrix_jobs(
    kb: KnowledgeBase, filters: MatrixFilters, policy: BuildPolicy, options: Options
) -> List[BuildJob]:
    """One job per published cell the filters keep."""
    results, _ = cell_results(kb, filters)
    cells = published(results)
    if not cells:
        raise UsageError("no cell of the matrix matches", hint="mlcc matrix --explain shows the cells")
    return [
        job_for(
            render(cell.stack, options=options, request=cell.cell.pins().request(kb, cell.cell.benchmark)),
            policy,
            cell.cell.label,
        )
        for cell in cells
        if cell.stack is not None
    ]


# ----------------------------------------------------------------------------- one job


def run_job(
    engine: Engine, job: BuildJob, policy: BuildPolicy, log: Log, history: Optional[History] = None
) -> BuildResult:
    """Pin the base, lock, skip what is built, build, and where the image was pushed
    (--push, or OpenShift's --push-to: ``engine.pushed_image``) put its SBOM beside it (a
    skipped image too, when the registry lacks its SBOM); a failure raises (run_jobs turns
    it into a result)."""
    start = time.monotonic()
    job = pin_base(engine, job, policy, log)
    with content_lock(job.digest, log):
        found = None if policy.force else engine.find_built(job, policy)
        if found is None:
            moved = base_moved(job, history)
            if moved:
                log(f"mlcc: {moved}: rebuilding")
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
    """Resolve the base image's digest for the job's arch and refuse a base that is not
    the stack's OS release or arch; local engines then build FROM that digest."""
    if job.base is not None or not isinstance(engine, ImageEngine):
        return job  # pinned already; a cluster resolves its own FROM (ImageStream, pull secret)
    stack = job.rendered.stack
    reference = job.rendered.plan.base_image
    base = resolve_base(reference, stack.arch.name, tls_verify=policy.tls_verify)
    why = mismatch(
        base, arch=stack.arch.name, family=stack.base.family, release=stack.base.tag, name=stack.base.name
    )
    if why is not None:
        raise UsageError(
            f"base image {reference} cannot serve this {stack.base.name} {stack.arch.name} stack: {why}",
            hint=f"give --base-image a mirror of {stack.base.ref} (or pick the --base it really is)",
        )
    log(f"base image {reference} is {base.digest}")
    return job._replace(base=base)


def base_moved(job: BuildJob, history: Optional[History]) -> Optional[str]:
    """'base image X moved from A to B' when the same generated inputs were last built
    on another base digest (the tag moved under them)."""
    if history is None or job.base is None:
        return None
    stack = job.rendered.stack
    before = history.base_before(stack.benchmark.name, job.variant, job.rendered.digest)
    if before is None or before == job.base.digest:
        return None
    return f"base image {job.base.reference} moved from {before} to {job.base.digest}"


@contextlib.contextmanager
def content_lock(digest: str, log: Log) -> Iterator[None]:
    """One build per content at a time on this machine; the OS drops it if we die."""

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
    engine: Engine, job: BuildJob, policy: BuildPolicy, log: Log, history: Optional[History]
) -> BuildResult:
    start = time.monotonic()
    try:
        return run_job(engine, job, policy, log, history)
    except MlccError as error:
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
    """Build every job; failures are results too (status "failed"), never an exception.

    Every result is recorded in ``history`` (when given) as it arrives.
    """
    if parallel < 1:
        raise UsageError(f"-j {parallel}: give at least 1 parallel build")
    if history is not None:
        history.check()  # a build should not run only to fail recording
    results: Dict[int, BuildResult] = {}
    done = threading.Lock()

    def one(index: int) -> None:
        job = jobs[index]
        log = log_for(job)
        try:  # first, so that the content tag shown when the job starts is the real one
            job = pin_base(engine, job, policy, log)
        except MlccError as error:
            log(f"mlcc: error: {error}")
            result = BuildResult(job, "failed", str(error).splitlines()[0], 0.0, error=error)
        else:
            if started is not None:
                started(index, job)
            result = _guarded(engine, job, policy, log, history)
        with done:
            results[index] = result
            if history is not None:
                history.record(record_of(result, engine.name, log_path(job)))
            if finished is not None:
                finished(index, result)

    def work(group: Sequence[int]) -> None:
        for index in group:  # in order: the first builds the shared layers, the rest reuse them
            one(index)

    with ThreadPoolExecutor(max_workers=parallel) as pool:
        for future in as_completed([pool.submit(work, group) for group in prefix_groups(jobs)]):
            future.result()
    return [results[i] for i in range(len(jobs))]


def prefix_groups(jobs: Sequence[BuildJob]) -> List[List[int]]:
    """Jobs whose images share leading layers (same stack prefix, build args and platform),
    grouped: one worker builds a group in order so the later jobs reuse the first one's
    layers, while groups with nothing in common build in parallel. Largest groups first."""
    groups: Dict[str, List[int]] = {}
    for index, job in enumerate(jobs):
        groups.setdefault(prefix_key(job), []).append(index)
    return sorted(groups.values(), key=lambda g: (-len(g), g[0]))


def prefix_key(job: BuildJob) -> str:
    rendered = job.rendered
    prefix = [list(step) for step in rendered.plan.steps if step.stage == "stack"]
    data = json.dumps([prefix, list(rendered.build_args), rendered.platform], sort_keys=True)
    return hashlib.sha256(data.encode()).hexdigest()


def record_of(result: BuildResult, backend: str, log: Optional[Path]) -> Record:
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
    )


def failure(results: Sequence[BuildResult]) -> Optional[MlccError]:
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
    """``<repo>:<variant without its arch>``; every arch must have resolved the same stack."""
    stems = {j.variant.rsplit("-", 1)[0] for j in jobs}
    if len(stems) != 1:
        raise UsageError(
            "the arches resolved to different stacks: " + ", ".join(sorted(j.variant for j in jobs)),
            hint="pin the components that differ (e.g. --cuda) so every arch gets the same stack",
        )
    return parse_reference(f"{jobs[0].repository}:{stems.pop()}")


def push_manifest_list(jobs: Sequence[BuildJob], results: Sequence[BuildResult], policy: BuildPolicy) -> str:
    """An OCI index over the per-arch images, written through the registry API."""
    tag = manifest_list_tag(jobs)
    registry = registry_for(tag, policy)
    entries = []
    for result in results:
        job = result.job  # as built: its content tag names the base digest it was built on
        digest = result.digest or registry.exists(job.content.repository, job.content.tag or "")
        manifest = registry.manifest(job.content.repository, digest or "")
        if manifest is None:
            raise UsageError(f"{job.content} is not in the registry; cannot list it")
        config = registry.blob_json(job.content.repository, manifest.data["config"]["digest"])
        entries.append((manifest, config.get("os", "linux"), config.get("architecture", "")))
    return registry.put_index(tag.repository, tag.tag or "", entries)


def file_log(path: Path) -> Log:

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
