"""``mlcc build``: one image, several arches, the matrix, or a build on OpenShift.

All of them take the one path of :mod:`mlcc.app.build` (lock, skip-if-built, engine,
history); this module only turns flags into its arguments and prints what happened.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import click

from mlcc import engines
from mlcc.app import build as building
from mlcc.app.generate import SourceFlags
from mlcc.app.history import open_history
from mlcc.app.matrix import MatrixFilters
from mlcc.cli.context import benchmark_argument, kb_of
from mlcc.cli.live import LiveView
from mlcc.cli.options import options
from mlcc.cli.values import PATH, POSITIVE
from mlcc.engines.base import BuildJob, BuildPolicy, BuildResult, EngineSettings, Log
from mlcc.errors import UsageError
from mlcc.history import History
from mlcc.image.sizes import ImageSizes, human, layer_lines, summary_line
from mlcc.render import ClusterOptions
from mlcc.resolve.pins import Pins
from mlcc.ui.safe_text import echo
from mlcc.ui.table import render

OPENSHIFT_BUILD_GROUPS = ("",)  # the run-manifest options (group "run") belong to gen


def complete_backend(ctx: click.Context, param: click.Parameter, incomplete: str) -> List[str]:
    """Here, not with the other completers: only build needs the engines' entry points, and
    the commands that share mlcc.cli.context (resolve, gen) must not import the engines."""
    try:  # the entry points of installed engines, plugins included
        return [name for name in engines.names() if name.startswith(incomplete)]
    except Exception:  # completion must never print a traceback into the shell
        return []


@click.command("build")
@benchmark_argument(required=False)
@options(Pins, "pins")
@click.option(
    "--backend",
    metavar="ENGINE",
    shell_complete=complete_backend,
    help="Container engine: buildah, podman, docker, openshift, or one a plugin adds (default: the "
    "first that works of buildah, podman, docker via DOCKER_HOST); openshift builds on the cluster "
    "of your kubeconfig.",
)
@options(BuildPolicy, "policy")
@options(SourceFlags, "source")
@click.option(
    "--log", "log_file", metavar="FILE", type=PATH, help="Write the build output to FILE instead of stderr."
)
@click.option("-q", "--quiet", is_flag=True, help="Do not show the build output.")
@options(ClusterOptions, "cluster", groups=OPENSHIFT_BUILD_GROUPS)
@options(EngineSettings, "connection")
@click.option(
    "--matrix",
    "matrix_build",
    is_flag=True,
    help="Build the published matrix (filtered by BENCHMARK, --base, --arch, --cuda).",
)
@click.option("--matrix-file", metavar="FILE", type=PATH, help="With --matrix: another matrix file.")
@click.option(
    "-j", "--jobs", type=POSITIVE, default=1, show_default=True, help="With --matrix: builds at once."
)
@click.option(
    "--logs",
    metavar="DIR",
    type=PATH,
    default="mlcc-logs",
    show_default=True,
    help="With --matrix: one log per cell here.",
)
@click.option(
    "--history",
    "history_file",
    metavar="FILE",
    type=PATH,
    help="Build history database (default: MLCC_HISTORY or ~/.local/share/mlcc/history.sqlite).",
)
@click.option("--no-history", is_flag=True, help="Do not record this build in the history.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the plan (build order, groups that share layers, what is already built and "
    "what would build) and build nothing.",
)
@click.option(
    "--format",
    "plan_format",
    type=click.Choice(["table", "github"]),
    default="table",
    show_default=True,
    help="With --dry-run --matrix: the plan as a table, or as JSON for GitHub Actions (one "
    "strategy.matrix per level of the build order, without what the registry holds).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print each image's result (status, content tag, digest) as one JSON object (schema "
    "mlcc-build/1, docs/building.md) on stdout, after the builds; the same exit code.",
)
@click.pass_context
def build_command(
    ctx: click.Context,
    benchmark: Optional[str],
    pins: Pins,
    backend: Optional[str],
    policy: BuildPolicy,
    source: SourceFlags,
    log_file: Optional[str],
    quiet: bool,
    cluster: ClusterOptions,
    connection: EngineSettings,
    matrix_build: bool,
    matrix_file: Optional[str],
    jobs: int,
    logs: str,
    history_file: Optional[str],
    no_history: bool,
    dry_run: bool,
    plan_format: str,
    as_json: bool,
) -> None:
    """Build (and with --push, push) the image of BENCHMARK for the pins given, or with
    --matrix every published cell (-j N at once, past failures, one log per cell).

    Tags: <registry>/<benchmark>:<variant> and the content tag <registry>/<benchmark>:mlcc-<digest>.
    When the content tag already exists, nothing is built. --arch x86_64,ppc64le builds each
    arch (foreign ones under qemu) and pushes a manifest list <registry>/<benchmark>:<stack>.
    --chain builds the shared stages (base+CUDA+cuDNN+NCCL+Python, then the framework) as
    images of their own, <registry>/mlcc-stack and <registry>/mlcc-framework, tagged by
    content: a stage the registry holds is pulled, so another machine builds only the
    benchmark's steps.

    \b
    Examples:
      mlcc build maskrcnn --cuda 10.1 --push --registry quay.io/me
      mlcc build nccl-tests --cuda 12.4 --arch x86_64,ppc64le --push --registry 127.0.0.1:5000 --no-tls-verify
      mlcc build ssd --backend docker --force
      mlcc build maskrcnn --cuda 10.1 --backend openshift --namespace mlperf
      mlcc build --matrix --arch x86_64 -j 2 --push --registry quay.io/me
      mlcc build maskrcnn --cuda 10.1 --chain --push --registry quay.io/me
      mlcc build --matrix --dry-run --push --registry quay.io/me
      mlcc build --matrix --dry-run --format github --push --registry quay.io/me
    """
    _check_output_flags(plan_format, dry_run=dry_run, matrix_build=matrix_build, as_json=as_json)
    filters = MatrixFilters.from_pins(benchmark, pins, matrix_file) if matrix_build else None
    engine, todo, policy = building.prepare(
        kb_of(ctx),
        benchmark,
        pins,
        backend=backend,
        policy=policy,
        options=source.options(),
        cluster=cluster,
        connection=connection,
        matrix=filters,
        dry_run=dry_run,
    )
    if dry_run:
        _print_dry_run(engine, todo, policy, plan_format, jobs if matrix_build else 1)
        return
    history = None if no_history else open_history(history_file)
    if matrix_build:
        _build_matrix(engine, todo, policy, jobs, Path(logs), history, as_json=as_json)
        return
    log_to = Path(log_file) if log_file else None
    _build_image(engine, todo, policy, history, benchmark, log_to, quiet=quiet, as_json=as_json)


def _check_output_flags(plan_format: str, *, dry_run: bool, matrix_build: bool, as_json: bool) -> None:
    """Refuse the output flags that say nothing for this kind of build."""
    if plan_format != "table" and not (dry_run and matrix_build):
        raise UsageError("--format github goes with --dry-run --matrix")
    if as_json and dry_run:
        raise UsageError(
            "--json reports builds; --dry-run builds nothing", hint="--dry-run --matrix --format github"
        )


def _print_dry_run(
    engine: engines.Engine, todo: Sequence[BuildJob], policy: BuildPolicy, plan_format: str, parallel: int
) -> None:
    """--dry-run: the plan as a table, or as GitHub Actions' JSON (--format github)."""
    plan = building.plan_jobs(engine, todo, policy)
    if plan_format == "github":
        echo(json.dumps(building.github_levels(plan), indent=2))
    else:
        _print_plan(plan, engine, parallel)


def _build_image(
    engine: engines.Engine,
    todo: Sequence[BuildJob],
    policy: BuildPolicy,
    history: Optional[History],
    benchmark: Optional[str],
    log_file: Optional[Path],
    *,
    quiet: bool,
    as_json: bool,
) -> None:
    """Build one benchmark's image (one job per arch), then the manifest list of its arches;
    print each result as it comes, or with --json all of them at the end."""
    log = building.file_log(log_file) if log_file else _stderr_log(quiet)

    def started(index: int, job: BuildJob) -> None:  # with --json, stdout holds the JSON only
        echo(f"{benchmark} {job.variant}  ({job.rendered.platform}, {engine.describe()})", err=as_json)
        echo(f"  content tag {job.content}", err=as_json)

    results = building.run_jobs(
        engine,
        todo,
        policy,
        history=history,
        log_for=lambda job: log,
        log_path=lambda job: log_file,
        started=started,
        finished=lambda index, result: None if as_json else _echo_result(result, engine),
    )
    problem = building.failure(results)
    if problem is not None:
        if as_json:
            _echo_json(results)
        raise problem
    if len(todo) > 1:
        digest = building.push_manifest_list(todo, results, policy)
        if not as_json:
            echo(f"manifest list {building.manifest_list_tag(todo)} -> {digest}")
    if as_json:
        manifest_list = (str(building.manifest_list_tag(todo)), digest) if len(todo) > 1 else None
        _echo_json(results, manifest_list)


def _echo_json(results: Sequence[BuildResult], manifest_list: Optional[Tuple[str, str]] = None) -> None:
    """``--json``: one object, schema mlcc-build/1 (docs/building.md)."""
    document: Dict[str, Any] = {
        "schema": "mlcc-build/1",
        "images": [
            {
                "label": r.job.label,
                "variant": r.job.variant,
                "platform": r.job.rendered.platform,
                "status": r.status,
                "reason": r.reason,
                "content_tag": str(r.job.content),
                "tag": str(r.job.readable),
                "digest": r.digest,
                "image": r.image,
                "seconds": r.seconds if math.isfinite(r.seconds) else None,
            }
            for r in results
        ],
    }
    if manifest_list is not None:
        document["manifest_list"] = {"tag": manifest_list[0], "digest": manifest_list[1]}
    echo(json.dumps(document, indent=2, allow_nan=False))


def _print_plan(plan: Sequence[building.Planned], engine: engines.Engine, parallel: int) -> None:
    why = (
        "the one that builds a stage image it lacks (after)"
        if any(entry.stages for entry in plan)
        else "the one it shares the most build steps with (after), whose layers it reuses"
    )
    echo(
        f"plan for {engine.describe()}: {len(plan)} image(s), {parallel} at a time (-j); "
        f"an image starts after {why}"
    )
    # one reason shared by many rows (offline: the registry cannot be reached) is said once
    reasons = list(dict.fromkeys(entry.unknown for entry in plan if entry.unknown))
    rows = [
        [
            str(number),
            "-" if entry.after is None else str(entry.after + 1),
            entry.job.label,
            entry.job.variant,
            str(entry.job.content),
            "built" if entry.built else ("unknown" if entry.unknown else "would build"),
            entry.built or (f"cannot tell [{reasons.index(entry.unknown) + 1}]" if entry.unknown else "-"),
        ]
        for number, entry in enumerate(plan, 1)
    ]
    echo(render(("#", "after", "cell", "variant", "content tag", "plan", "why"), rows))
    for number, reason in enumerate(reasons, 1):
        echo(f"[{number}] cannot tell: {reason}")
    stages = building.distinct_stages(plan)
    if stages:
        echo("stage images (--chain): each built once, by the first image that needs it")
        stage_rows = [
            [
                item["stage"],
                item["readable"],
                item["content"],
                "built" if item["built"] else "would build",
                "-" if item["built"] else str(item["built_by"] or "-"),
                str(item["used_by"]),
            ]
            for item in stages
        ]
        echo(render(("stage", "image", "content tag", "plan", "built by", "used by"), stage_rows))
    built = sum(1 for entry in plan if entry.built)
    unknown = sum(1 for entry in plan if entry.unknown)
    echo(
        f"{len(plan) - built - unknown} would build, {built} already built, {unknown} unknown; "
        "nothing was built (--dry-run)"
    )


def _stderr_log(quiet: bool) -> Log:
    if quiet:
        return Log(None)

    def sink(line: str) -> None:
        if line.startswith("mlcc: error: "):
            return  # the job's error ends the command, which prints it once
        echo(f"  | {line}", err=True)

    return Log(sink)


def _echo_result(result: BuildResult, engine: engines.Engine) -> None:
    if result.status == "skipped":
        echo(f"  skipped: {result.reason}; --force rebuilds")
    elif result.status == "built" and engine.multi_arch:
        echo(f"  built in {result.seconds:.1f} s: {result.job.readable}")
    elif result.status == "built":  # a cluster: the reason names its Build object
        echo(f"  built in {result.seconds:.1f} s on {engine.describe()}: {result.reason}")
    if result.digest:
        echo(f"  in the registry as {result.digest}")
    if result.sizes is not None:
        _echo_sizes(result.sizes, "  ")


def _echo_sizes(sizes: ImageSizes, indent: str) -> None:
    """The image's totals and largest layers (an image's instructions are untrusted text:
    echo escapes them)."""
    echo(f"{indent}size: {summary_line(sizes)}")
    for line in layer_lines(sizes):
        echo(f"{indent}  {line}")


def log_path(logs: Path, job: BuildJob) -> Path:
    return logs / job.rendered.stack.benchmark.name / f"{job.variant}.log"


def _build_matrix(
    engine: engines.Engine,
    todo: Sequence[BuildJob],
    policy: BuildPolicy,
    parallel: int,
    logs: Path,
    history: Optional[History],
    *,
    as_json: bool = False,
) -> None:
    try:  # before any build: an unusable --logs must not surface as a failure mid-matrix
        logs.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UsageError(
            f"--logs {logs}: cannot create it: {error.strerror or error}", hint="give a writable folder"
        ) from None
    view = LiveView(todo)
    with view:
        results = building.run_jobs(
            engine,
            todo,
            policy,
            history=history,
            log_for=lambda job: view.log_for(job, log_path(logs, job)),
            log_path=lambda job: log_path(logs, job),
            parallel=parallel,
            started=view.started,
            finished=view.finished,
        )
    if as_json:
        _echo_json(results)
        problem = building.failure(results)
        if problem is not None:
            raise problem
        return
    echo(
        render(
            ("status", "cell", "variant", "flavour", "time", "pulled", "unpacked", "digest", "log"),
            _summary(todo, results, logs),
        )
    )
    for total in building.totals_by_flavour(todo, results):
        echo(
            f"{total.flavour}: {total.images} image(s), {human(total.compressed)} pulled, "
            f"{human(total.uncompressed)} unpacked"
        )
    for job, result in zip(todo, results):
        if result.sizes is not None and result.sizes.layers:
            echo(f"largest layers of {job.label} {job.variant}:")
            _echo_sizes(result.sizes, "  ")
    counts = {s: sum(1 for r in results if r.status == s) for s in ("built", "skipped", "failed")}
    echo(f"{counts['built']} built, {counts['skipped']} skipped, {counts['failed']} failed")
    problem = building.failure(results)
    if problem is not None:
        raise problem


def _summary(todo: Sequence[BuildJob], results: Sequence[BuildResult], logs: Path) -> List[List[str]]:
    return [
        [
            result.status,
            job.label,
            job.variant,
            building.flavour_of(job),
            f"{result.seconds:.1f} s",
            human(result.sizes.compressed) if result.sizes else "-",
            human(result.sizes.uncompressed) if result.sizes else "-",
            (result.digest or "-")[:19],
            str(log_path(logs, job)),
        ]
        for job, result in zip(todo, results)
    ]
