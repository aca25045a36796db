"""The ``mlcc`` command line: a thin click layer over :mod:`mlcc.api`.

Only click is imported at start-up; each command imports what it needs when it runs, so
``mlcc resolve`` pays for the resolver and not for Jinja2, jsonschema or a container SDK.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, TypeVar

import click

from mlcc import __version__
from mlcc.errors import EXIT_INTERNAL, MlccError

if TYPE_CHECKING:
    from mlcc.api import Pins
    from mlcc.kb import KnowledgeBase

F = TypeVar("F", bound=Callable[..., Any])

EPILOG = """\b
Exit codes: 0 done, 2 usage or recipe error, 3 no compatible stack,
4 build failed, 5 registry error, 6 image drift, 7 generated files stale,
8 lint findings, 9 build history locked or damaged, 130 interrupted.
Docs and examples: README.md."""


class _Context:
    def __init__(self, recipes: Optional[str]) -> None:
        self.recipes = recipes
        self._kb: Optional[KnowledgeBase] = None

    @property
    def kb(self) -> KnowledgeBase:
        if self._kb is None:
            from mlcc.api import knowledge_base

            self._kb = knowledge_base(self.recipes)
        return self._kb


def _complete_benchmark(ctx: click.Context, param: click.Parameter, incomplete: str) -> List[str]:
    try:
        from mlcc.api import knowledge_base

        root = ctx.find_root()
        recipes = root.params.get("recipes") if root else None
        return [b for b in knowledge_base(recipes).benchmarks if b.startswith(incomplete)]
    except Exception:  # completion must never print a traceback into the shell
        return []


def _complete_base(ctx: click.Context, param: click.Parameter, incomplete: str) -> List[str]:
    try:
        from mlcc.api import knowledge_base

        return [b.name for b in knowledge_base(None).bases if b.name.startswith(incomplete)]
    except Exception:
        return []


def stack_options(func: F) -> F:
    """The pins every stack-producing command takes (resolve, gen, build, matrix)."""
    options = [
        click.option(
            "--cuda",
            metavar="VERSION",
            help="CUDA release: prefix (10.1), exact (10.1.243) or specifier ('>=10.1,<11').",
        ),
        click.option("--cudnn", metavar="VERSION", help="cuDNN version pin, e.g. 7 or 7.6.5."),
        click.option("--nccl", metavar="VERSION", help="NCCL version pin, e.g. 2.8."),
        click.option("--python", metavar="VERSION", help="Python version pin, e.g. 3.6."),
        click.option(
            "--gcc",
            metavar="VERSION",
            help="Host GCC pin, e.g. 8; picks a toolset when the system GCC does not match.",
        ),
        click.option(
            "--base",
            metavar="NAME",
            shell_complete=_complete_base,
            help="Base image name (mlcc list bases).",
        ),
        click.option(
            "--arch",
            metavar="ARCH",
            help="CPU architecture: x86_64, ppc64le or aarch64 (aliases amd64, ppc64el, arm64).",
        ),
        click.option(
            "--driver",
            metavar="VERSION",
            help="Host NVIDIA driver; only CUDA releases whose minimum driver it meets.",
        ),
        click.option("--cpu", is_flag=True, help="No CUDA: a CPU-only stack."),
        click.option(
            "--with",
            "with_",
            metavar="NAME=VERSION",
            multiple=True,
            help="Pin any other component, e.g. --with tensorflow=1.13 (repeatable).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def pins_from(kwargs: dict) -> Pins:  # type: ignore[type-arg]
    from mlcc.api import Pins

    names = ("cuda", "cudnn", "nccl", "python", "gcc", "base", "arch", "driver", "cpu", "with_")
    return Pins(**{name: kwargs.pop(name) for name in names})


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=EPILOG,
)
@click.version_option(__version__, "--version", "-V", prog_name="mlcc")
@click.option(
    "--recipes",
    metavar="DIR",
    envvar="MLCC_RECIPES",
    help="Knowledge base folder (default: the recipes/ shipped with mlcc). Env: MLCC_RECIPES.",
)
@click.pass_context
def cli(ctx: click.Context, recipes: Optional[str]) -> None:
    """mlcc: resolve, generate, build and verify ML benchmark container images
    for RHEL/UBI and OpenShift.

    \b
    Quick start:
      mlcc list benchmarks
      mlcc resolve maskrcnn --cuda 10.1
      mlcc gen maskrcnn --cuda 10.1           # Dockerfile + OpenShift objects
      mlcc build maskrcnn --cuda 10.1 --push --registry quay.io/me
      mlcc verify quay.io/me/maskrcnn:cuda10.1-cudnn7-ubi8-x86_64
      mlcc matrix --explain
    """
    ctx.obj = _Context(recipes)


@cli.command("list")
@click.argument(
    "what",
    type=click.Choice(["benchmarks", "bases", "cuda", "cudnn", "nccl", "frameworks", "arches"]),
    default="benchmarks",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array instead of a table.")
@click.pass_obj
def list_command(obj: _Context, what: str, as_json: bool) -> None:
    """List what the knowledge base knows: benchmarks (default), bases, cuda,
    cudnn, nccl, frameworks or arches."""
    from mlcc.api import list_rows
    from mlcc.cli.output import list_table

    rows = list_rows(obj.kb, what)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        click.echo(list_table(what, rows))


@cli.command("resolve")
@click.argument("benchmark", shell_complete=_complete_benchmark)
@stack_options
@click.option("--json", "as_json", is_flag=True, help="Print the stack (or the conflict) as one JSON object.")
@click.option("-v", "--verbose", is_flag=True, help="Show where each fact comes from.")
@click.pass_obj
def resolve_command(obj: _Context, /, benchmark: str, as_json: bool, verbose: bool, **kwargs: Any) -> None:
    """Resolve a compatible stack for BENCHMARK and the pins given.

    \b
    Examples:
      mlcc resolve maskrcnn --cuda 10.1
      mlcc resolve tf_cnn_benchmarks --cpu --base ubi9
      mlcc resolve minigo --with tensorflow=1.13 --arch ppc64le --json
      mlcc resolve nccl-tests --driver 450.80.02
    """
    from mlcc.api import request_for
    from mlcc.errors import ConflictError
    from mlcc.resolve import Resolver

    kb = obj.kb
    request = request_for(kb, benchmark, pins_from(kwargs))
    try:
        stack = Resolver(kb).resolve(request)
    except ConflictError as conflict:
        if as_json and hasattr(conflict, "to_dict"):
            click.echo(json.dumps(conflict.to_dict(), indent=2))
        raise
    if as_json:
        click.echo(json.dumps(stack.to_dict(), indent=2))
    else:
        from mlcc.cli.output import stack_table

        click.echo(stack_table(stack, verbose=verbose))


def openshift_options(func: F) -> F:
    """How the OpenShift objects and run manifests are written (gen, and build --backend openshift)."""
    options = [
        click.option(
            "--openshift",
            "openshift_version",
            type=click.Choice(["4", "3.11"]),
            default="4",
            show_default=True,
            help="OpenShift API to write for (3.11 wants status, triggers and a nodeSelector).",
        ),
        click.option(
            "--namespace", metavar="NS", help="Namespace of every object (default: the current project)."
        ),
        click.option(
            "--push-to",
            metavar="REPO",
            help="Push the benchmark image to this external repository (registry/namespace/name).",
        ),
        click.option("--push-secret", metavar="NAME", help="The dockerconfigjson Secret for --push-to."),
        click.option(
            "--webhook-secret",
            metavar="NAME",
            default="mlcc-webhook",
            show_default=True,
            help="Secret (key WebHookSecretKey) the Generic/GitHub webhook triggers reference.",
        ),
        click.option(
            "--git-uri",
            metavar="URL",
            help="Build from this Git repository (holding dockerfiles/) instead of inline Dockerfiles.",
        ),
        click.option(
            "--git-ref", metavar="REF", default="main", show_default=True, help="Branch, tag or commit."
        ),
        click.option(
            "--git-context",
            metavar="DIR",
            default="dockerfiles",
            show_default=True,
            help="Folder of the variant folders inside the Git repository.",
        ),
        click.option(
            "--chain",
            is_flag=True,
            help="Three chained builds: stack image, framework image, benchmark image.",
        ),
        click.option(
            "--build-cpu", metavar="QTY", default="2", show_default=True, help="CPU request of builds."
        ),
        click.option(
            "--build-memory", metavar="QTY", default="8Gi", show_default=True, help="Memory of builds."
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def run_options(func: F) -> F:
    """How the run manifests (Pod, Job, MPIJob) are written (gen only)."""
    options = [
        click.option(
            "--gpus", type=int, metavar="N", help="GPUs per pod (default: the benchmark's reference)."
        ),
        click.option("--nodes", type=int, default=2, show_default=True, metavar="N", help="MPIJob workers."),
        click.option(
            "--data-claim", metavar="NAME", help="PVC with the dataset (default: <benchmark>-data)."
        ),
        click.option(
            "--data-hostpath", metavar="PATH", help="Mount the dataset from this host path instead."
        ),
        click.option("--results-claim", metavar="NAME", help="PVC for the results (default: an emptyDir)."),
        click.option(
            "--nccl-env",
            metavar="NAME=VALUE",
            multiple=True,
            help="NCCL setting for the MPIJob, e.g. NCCL_P2P_LEVEL=NVL (repeatable; NCCL_DEBUG=INFO "
            "and NCCL_IB_DISABLE=0 by default).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


OPENSHIFT_KEYS = (
    "openshift_version",
    "namespace",
    "push_to",
    "push_secret",
    "webhook_secret",
    "git_uri",
    "git_ref",
    "git_context",
    "chain",
    "gpus",
    "nodes",
    "data_claim",
    "data_hostpath",
    "results_claim",
    "build_cpu",
    "build_memory",
    "nccl_env",
)


def cluster_from(values: dict) -> Any:  # type: ignore[type-arg]
    """Pop the OpenShift options out of a command's keyword arguments, checked."""
    from mlcc.errors import UsageError
    from mlcc.render.openshift import DEFAULT_CLUSTER, ClusterOptions, check_cluster_options

    defaults = {
        **DEFAULT_CLUSTER._asdict(),
        "openshift_version": DEFAULT_CLUSTER.openshift,
        "git_context": DEFAULT_CLUSTER.git_context_root,
    }
    given = {key: values.pop(key, defaults.get(key)) for key in OPENSHIFT_KEYS}
    nccl = []
    for item in given["nccl_env"]:
        name, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"--nccl-env {item!r}: expected NAME=VALUE, e.g. NCCL_P2P_LEVEL=NVL")
        nccl.append((name, value))
    return check_cluster_options(
        ClusterOptions(
            openshift=given["openshift_version"],
            namespace=given["namespace"],
            push_to=given["push_to"],
            push_secret=given["push_secret"],
            webhook_secret=given["webhook_secret"],
            git_uri=given["git_uri"],
            git_ref=given["git_ref"],
            git_context_root=given["git_context"],
            chain=given["chain"],
            gpus=given["gpus"],
            nodes=given["nodes"],
            data_claim=given["data_claim"],
            data_hostpath=given["data_hostpath"],
            results_claim=given["results_claim"],
            build_cpu=given["build_cpu"],
            build_memory=given["build_memory"],
            nccl_env=tuple(nccl),
        )
    )


@cli.command("gen")
@click.argument("benchmark", required=False, shell_complete=_complete_benchmark)
@stack_options
@click.option(
    "-o",
    "--output",
    "output",
    metavar="DIR",
    default="dockerfiles",
    show_default=True,
    help="Write the build files into DIR/<benchmark>/<variant>/.",
)
@click.option(
    "--openshift-output",
    metavar="DIR",
    default="buildconfigs",
    show_default=True,
    help="Write the OpenShift objects into DIR/<benchmark>/<variant>/.",
)
@click.option(
    "--only",
    type=click.Choice(["dockerfile", "openshift"]),
    help="Write only the build files, or only the OpenShift objects.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["dockerfile", "script", "singularity"]),
    default="dockerfile",
    show_default=True,
    help="Dockerfile, a bash script for bare-metal installs, or an Apptainer definition "
    "(the last two write no OpenShift objects unless --only openshift).",
)
@click.option("--base-image", metavar="REF", help="Build FROM this (mirrored) image instead of the base's.")
@click.option(
    "--mirror",
    metavar="URL",
    help="Fetch NVIDIA packages and files from URL instead of "
    "https://developer.download.nvidia.com (also a build arg: NVIDIA_MIRROR).",
)
@openshift_options
@run_options
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
@click.pass_obj
def gen_command(
    obj: _Context,
    /,
    benchmark: Optional[str],
    output: str,
    openshift_output: str,
    only: Optional[str],
    fmt: str,
    base_image: Optional[str],
    mirror: Optional[str],
    interactive: bool,
    all_: bool,
    check: bool,
    **kwargs: Any,
) -> None:
    """Generate the Dockerfile, stack.json and OpenShift objects for BENCHMARK and the pins given.

    \b
    Examples:
      mlcc gen maskrcnn --cuda 10.1
      mlcc gen maskrcnn --arch ppc64le --format script -o out/
      mlcc gen ssd --base-image registry.example.com/ubi8:8.10 --mirror https://mirror.example.com/nvidia
      mlcc gen maskrcnn --only openshift --openshift 3.11 --namespace mlperf --gpus 4
      mlcc gen nccl-tests --chain --push-to quay.io/acme/nccl-tests --push-secret quay-push
      mlcc gen --all --check
    """
    from pathlib import Path

    from mlcc import gen
    from mlcc.errors import UsageError

    options = gen.check_options(base_image, mirror)
    cluster = cluster_from(kwargs)
    openshift = only == "openshift" or (only is None and fmt == "dockerfile")
    roots = gen.Roots(
        build=None if only == "openshift" else Path(output),
        openshift=Path(openshift_output) if openshift else None,
    )
    if all_:
        if benchmark is not None or any(v not in (None, False, ()) for v in kwargs.values()):
            raise UsageError("--all regenerates the published set; it takes no benchmark or pins")
        generated = gen.generate_all(obj.kb, fmt=fmt, options=options, cluster=cluster if openshift else None)
        shown = " and ".join(str(r) for r in roots if r is not None)
        if check:
            gen.check_all(roots, generated)
            click.echo(f"{len(generated)} variants under {shown} are up to date")
            return
        _report(gen.write_all(roots, generated), shown)
        return
    if check:
        raise UsageError("--check goes with --all")
    from mlcc.api import request_for
    from mlcc.resolve import Resolver

    kb = obj.kb
    if interactive:
        if benchmark is not None or any(v not in (None, False, ()) for v in kwargs.values()):
            raise UsageError("-i asks for the benchmark and pins itself; give neither")
        stack = _ask_for_stack(kb)
    elif benchmark is None:
        raise UsageError("name a benchmark (mlcc list benchmarks), use -i to choose from menus, or --all")
    else:
        stack = Resolver(kb).resolve(request_for(kb, benchmark, pins_from(kwargs)))
    one = gen.generate(kb, stack, fmt=fmt, options=options, cluster=cluster if openshift else None)
    _report(gen.write(roots, [one]), " and ".join(str(r) for r in roots if r is not None))


def _ask_for_stack(kb: Any) -> Any:
    from mlcc.interactive import walk
    from mlcc.render import gen_command
    from mlcc.render.plan import DEFAULT_OPTIONS

    def ask(question: str, options: Sequence[str], default: str) -> str:
        click.echo(f"{question}: {', '.join(options)}", err=True)
        return str(
            click.prompt(
                f"  {question}",
                type=click.Choice(list(options)),
                default=default,
                show_choices=False,
                err=True,
            )
        )

    choice = walk(kb, ask)
    click.echo(
        f"the same without menus: {gen_command(choice.stack, DEFAULT_OPTIONS, 'dockerfile')}", err=True
    )
    return choice.stack


def _report(changes: Sequence[Any], root: Any) -> None:
    written = [c for c in changes if c.status != "unchanged"]
    for change in changes:
        click.echo(f"{change.status:9} {change.path}")
    if not written:
        click.echo(f"nothing changed under {root}")


@cli.command("build")
@click.argument("benchmark", required=False, shell_complete=_complete_benchmark)
@stack_options
@click.option(
    "--backend",
    type=click.Choice(["buildah", "podman", "docker", "openshift"]),
    help="Container engine (default: the first that works: buildah, podman, docker via DOCKER_HOST); "
    "openshift builds on the cluster of your kubeconfig.",
)
@click.option(
    "--registry", metavar="REGISTRY[/NS]", help="Where images go, e.g. quay.io/me or 127.0.0.1:5000."
)
@click.option("--push", is_flag=True, help="Push to --registry (and skip what it already holds).")
@click.option("--force", is_flag=True, help="Build even if the content tag already exists.")
@click.option(
    "--tls-verify/--no-tls-verify",
    "tls_verify",
    default=True,
    show_default=True,
    help="Verify the registry's TLS certificate (--no-tls-verify for a plain-HTTP test registry).",
)
@click.option("--no-cache", is_flag=True, help="Build without the engine's layer cache.")
@click.option("--network", metavar="MODE", help="Network mode of RUN steps (e.g. host).")
@click.option("--base-image", metavar="REF", help="Build FROM this (mirrored) image instead of the base's.")
@click.option("--mirror", metavar="URL", help="Fetch NVIDIA packages and files from URL (see mlcc gen).")
@click.option("--log", "log_file", metavar="FILE", help="Write the build output to FILE instead of stderr.")
@click.option("-q", "--quiet", is_flag=True, help="Do not show the build output.")
@openshift_options
@click.option(
    "--kubeconfig", metavar="FILE", help="With --backend openshift: the kubeconfig (default: KUBECONFIG)."
)
@click.option(
    "--context", "kube_context", metavar="NAME", help="With --backend openshift: the kubeconfig context."
)
@click.option(
    "--matrix",
    "matrix_build",
    is_flag=True,
    help="Build the published matrix (filtered by BENCHMARK, --base, --arch, --cuda).",
)
@click.option("--matrix-file", metavar="FILE", help="With --matrix: another matrix file.")
@click.option("-j", "--jobs", type=int, default=1, show_default=True, help="With --matrix: builds at once.")
@click.option(
    "--logs",
    metavar="DIR",
    default="mlcc-logs",
    show_default=True,
    help="With --matrix: one log per cell here.",
)
@click.option(
    "--history",
    "history_file",
    metavar="FILE",
    help="Build history database (default: MLCC_HISTORY or ~/.local/share/mlcc/history.sqlite).",
)
@click.option("--no-history", is_flag=True, help="Do not record this build in the history.")
@click.pass_obj
def build_command(
    obj: _Context,
    /,
    benchmark: str,
    backend: Optional[str],
    registry: Optional[str],
    push: bool,
    force: bool,
    tls_verify: bool,
    no_cache: bool,
    network: Optional[str],
    base_image: Optional[str],
    mirror: Optional[str],
    log_file: Optional[str],
    quiet: bool,
    kubeconfig: Optional[str],
    kube_context: Optional[str],
    matrix_build: bool,
    matrix_file: Optional[str],
    jobs: int,
    logs: str,
    history_file: Optional[str],
    no_history: bool,
    **kwargs: Any,
) -> None:
    """Build (and with --push, push) the image of BENCHMARK for the pins given, or with
    --matrix every published cell (-j N at once, past failures, one log per cell).

    Tags: <registry>/<benchmark>:<variant> and the content tag <registry>/<benchmark>:mlcc-<digest>.
    When the content tag already exists, nothing is built. --arch x86_64,ppc64le builds each
    arch (foreign ones under qemu) and pushes a manifest list <registry>/<benchmark>:<stack>.

    \b
    Examples:
      mlcc build maskrcnn --cuda 10.1 --push --registry quay.io/me
      mlcc build nccl-tests --cuda 12.4 --arch x86_64,ppc64le --push --registry 127.0.0.1:5000 --no-tls-verify
      mlcc build ssd --backend docker --force
      mlcc build maskrcnn --cuda 10.1 --backend openshift --namespace mlperf
      mlcc build --matrix --arch x86_64 -j 2 --push --registry quay.io/me
    """
    from pathlib import Path

    from mlcc import build, gen
    from mlcc.api import request_for
    from mlcc.errors import UsageError
    from mlcc.image.reference import parse_repository
    from mlcc.render import render
    from mlcc.resolve import Resolver

    options = build.BuildOptions(
        registry=parse_repository(registry) if registry else None,
        push=push,
        force=force,
        tls_verify=tls_verify,
        no_cache=no_cache,
        network=network,
    )
    render_options = gen.check_options(base_image, mirror)
    cluster = cluster_from(kwargs)
    if backend != "openshift" and (cluster != _default_cluster() or kubeconfig or kube_context):
        raise UsageError(
            "the OpenShift options (--namespace, --push-to, --chain ...) go with --backend openshift"
        )
    history = None if no_history else _history(history_file)
    if matrix_build:
        if backend == "openshift":
            raise UsageError("--matrix builds with a local engine: buildah, podman or docker")
        _build_matrix(
            obj.kb,
            benchmark,
            kwargs,
            matrix_file,
            options,
            render_options,
            backend,
            jobs,
            Path(logs),
            history,
        )
        return
    if benchmark is None:
        raise UsageError("name a benchmark (mlcc list benchmarks), or build the published set with --matrix")
    arches = [a.strip() for a in (kwargs.pop("arch") or "").split(",") if a.strip()] or [None]
    if len(arches) > 1 and not push:
        raise UsageError("a manifest list of several arches lives in a registry: add --push --registry R")
    kb = obj.kb
    resolver = Resolver(kb)
    targets = []
    for arch in arches:
        stack = resolver.resolve(request_for(kb, benchmark, pins_from({**kwargs, "arch": arch})))
        targets.append(build.target_for(render(stack, kb, options=render_options), options))
    if len(targets) > 1:
        build.manifest_list_tag(targets)  # refuse arches that resolved differently, before building
    log = build.file_log(Path(log_file)) if log_file else build.stderr_log(quiet)
    if backend == "openshift":
        if len(targets) > 1:
            raise UsageError("--backend openshift builds one arch per BuildConfig: give one --arch")
        _build_on_openshift(targets[0], cluster, options, kubeconfig, kube_context, log)
        return
    engine = build.engine_for(backend)
    if history is not None:
        history.check()
    outcomes = []
    for target in targets:
        click.echo(f"{benchmark} {target.variant}  ({target.rendered.platform}, {engine.name})")
        click.echo(f"  content tag {target.content}")
        outcome = _build_and_record(
            engine, target, options, log, history, Path(log_file) if log_file else None
        )
        outcomes.append(outcome)
        _report_build(outcome)
    if len(targets) > 1:
        digest = build.push_manifest_list(targets, outcomes, options)
        click.echo(f"manifest list {build.manifest_list_tag(targets)} -> {digest}")


def _history(path: Optional[str]) -> Any:
    from pathlib import Path

    from mlcc.history import History

    return History(Path(path) if path else None)


def _build_and_record(engine: Any, target: Any, options: Any, log: Any, history: Any, log_path: Any) -> Any:
    """One build; its outcome (a failure too) goes into the history."""
    import time

    from mlcc import build
    from mlcc.build.runner import record_single

    start = time.monotonic()
    try:
        outcome = build.build_target(engine, target, options, log)
    except MlccError as error:
        if history is not None:
            failed = build.Outcome(target, "failed", str(error).splitlines()[0], time.monotonic() - start)
            record_single(history, target, failed, engine.name, log_path)
        raise
    if history is not None:
        record_single(history, target, outcome, engine.name, log_path)
    return outcome


def _build_matrix(
    kb: Any,
    benchmark: Optional[str],
    pins: Dict[str, Any],
    matrix_file: Optional[str],
    options: Any,
    render_options: Any,
    backend: Optional[str],
    jobs: int,
    logs: Any,
    history: Any,
) -> None:
    from mlcc import build
    from mlcc.build.runner import Cell, failure, run_cells, summary_rows
    from mlcc.errors import UsageError
    from mlcc.render import render
    from mlcc.ui.table import render as table

    arch = pins.pop("arch")
    base = pins.pop("base")
    cuda = pins.pop("cuda")
    others = [name for name, value in pins.items() if value not in (None, False, ())]
    if others:
        raise UsageError(f"--matrix filters by BENCHMARK, --base, --arch and --cuda; not by --{others[0]}")
    if jobs < 1:
        raise UsageError(f"-j {jobs}: give at least 1 parallel build")
    filters = _filters(
        kb,
        [benchmark] if benchmark else [],
        [base] if base else [],
        [arch] if arch else [],
        [cuda] if cuda else [],
    )
    outcomes, _ = matrix_outcomes(kb, filters, matrix_file)
    published = [o for o in outcomes if o.published and o.stack is not None]
    if not published:
        raise UsageError("no cell of the matrix matches", hint="mlcc matrix --explain shows the cells")
    cells = [
        Cell(build.target_for(render(o.stack, kb, options=render_options), options), o.cell.label)
        for o in published
    ]
    engine = build.engine_for(backend)
    results = run_cells(engine, cells, options, jobs=jobs, logs=logs, history=history)
    click.echo(
        table(
            ("status", "cell", "variant", "time", "size", "digest", "log"), summary_rows(cells, results, logs)
        )
    )
    counts = {s: sum(1 for r in results if r.status == s) for s in ("built", "skipped", "failed")}
    click.echo(f"{counts['built']} built, {counts['skipped']} skipped, {counts['failed']} failed")
    problem = failure(results)
    if problem is not None:
        raise problem


def _default_cluster() -> Any:
    from mlcc.render.openshift import DEFAULT_CLUSTER

    return DEFAULT_CLUSTER


def _build_on_openshift(
    target: Any, cluster: Any, options: Any, kubeconfig: Optional[str], context: Optional[str], log: Any
) -> None:
    import time

    from mlcc.build.openshift_backend import OpenShift, build_on_cluster
    from mlcc.render.openshift import render_openshift
    from mlcc.render.openshift.names import object_name

    rendered = target.rendered
    objects = list(render_openshift(rendered, cluster).build_objects)
    configs = [o["metadata"]["name"] for o in objects if o["kind"] == "BuildConfig"]
    openshift = OpenShift(kubeconfig=kubeconfig, context=context, namespace=cluster.namespace)
    openshift.check()
    stream = object_name(rendered.stack.benchmark.name)
    click.echo(
        f"{rendered.stack.benchmark.name} {rendered.variant}  (OpenShift, namespace {openshift.namespace})"
    )
    built = (
        None if options.force or cluster.push_to else openshift.image_digest_label(stream, rendered.variant)
    )
    if built == rendered.digest:
        click.echo(
            f"  skipped: {stream}:{rendered.variant} already holds these build inputs; --force rebuilds"
        )
        return
    start = time.monotonic()
    if cluster.chain:
        openshift.apply(objects, log)
        first = openshift.start(configs[0])
        result = openshift.follow(first, log)
        if result.phase != "Complete":
            raise log.failure(f"OpenShift build {first} ended {result.phase}", result.message)
        click.echo(
            f"  built {configs[0]}; {', '.join(configs[1:])} follow through their ImageChange triggers"
        )
        click.echo(f"  watch them: oc get builds -w -n {openshift.namespace}")
        return
    result = build_on_cluster(openshift, objects, configs[-1], log)
    click.echo(f"  built in {time.monotonic() - start:.1f} s on the cluster: build {result.name}")


def _report_build(outcome: Any) -> None:
    target = outcome.target
    if outcome.status == "skipped":
        click.echo(f"  skipped: {outcome.reason}; --force rebuilds")
    else:
        click.echo(f"  built in {outcome.seconds:.1f} s: {target.readable}")
    if outcome.digest:
        click.echo(f"  in the registry as {outcome.digest}")


def image_options(func: F) -> F:
    options = [
        click.option(
            "--tls-verify/--no-tls-verify",
            "tls_verify",
            default=True,
            show_default=True,
            help="Verify the registry's TLS certificate.",
        ),
        click.option(
            "--arch", "image_arch", metavar="ARCH", help="The arch to read from a multi-arch image."
        ),
        click.option(
            "--backend",
            type=click.Choice(["buildah", "podman", "docker"]),
            help="Engine whose storage holds local:REF images.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@cli.command("inspect")
@click.argument("image")
@image_options
@click.option("--json", "as_json", is_flag=True, help="Print labels, stack.json and installed.json as JSON.")
def inspect_command(
    image: str, tls_verify: bool, image_arch: Optional[str], backend: Optional[str], as_json: bool
) -> None:
    """Show the software stack of IMAGE without running it: what was resolved
    (stack.json, labels) beside what the build recorded as installed.

    \b
    IMAGE is a registry reference (quay.io/me/maskrcnn:TAG), local:REF for an image in
    a local engine's storage, or oci-archive:PATH, docker-archive:PATH, oci:DIR.
    """
    from mlcc.image import open_image
    from mlcc.image.content import ARCHES, INSTALLED_FILE, STACK_FILE
    from mlcc.image.stack import summary
    from mlcc.ui.table import render

    contents = open_image(image, tls_verify=tls_verify, arch=image_arch, backend=backend)
    if as_json:
        documents = [
            {
                "reference": c.reference,
                "digest": c.digest,
                "platform": f"{c.os}/{c.arch}",
                "size": c.size,
                "labels": dict(sorted(c.labels.items())),
                "stack": c.json_file(STACK_FILE),
                "installed": c.json_file(INSTALLED_FILE),
            }
            for c in contents
        ]
        click.echo(json.dumps(documents[0] if len(documents) == 1 else documents, indent=2))
        return
    for content in contents:
        arch = ARCHES.get(content.arch or "", content.arch or "?")
        click.echo(
            f"{content.reference}  {content.os}/{arch}" + (f"  {content.digest}" if content.digest else "")
        )
        if STACK_FILE not in content.files:
            click.echo("  no /etc/mlcc/stack.json: not an mlcc image (labels below)")
            for name, value in sorted(content.labels.items()):
                click.echo(f"  {name}={value}")
            continue
        rows = [(r.component, r.resolved, r.installed) for r in summary(content)]
        click.echo(render(("component", "resolved", "installed (recorded by the build)"), rows))
        click.echo()


@cli.command("diff")
@click.argument("image_a")
@click.argument("image_b")
@image_options
def diff_command(
    image_a: str, image_b: str, tls_verify: bool, image_arch: Optional[str], backend: Optional[str]
) -> None:
    """Show the stacks of IMAGE_A and IMAGE_B side by side; * marks what differs."""
    from mlcc.errors import UsageError
    from mlcc.image import open_image
    from mlcc.image.stack import summary
    from mlcc.ui.table import render

    sides = []
    for text in (image_a, image_b):
        contents = open_image(text, tls_verify=tls_verify, arch=image_arch, backend=backend)
        if len(contents) != 1:
            raise UsageError(f"{text} is a multi-arch image: pick one with --arch")
        sides.append({r.component: (r.installed or r.resolved) for r in summary(contents[0])})
    names = list(dict.fromkeys([*sides[0], *sides[1]]))
    rows = []
    for name in names:
        a, b = sides[0].get(name, ""), sides[1].get(name, "")
        rows.append(("*" if a != b else "", name, a, b))
    click.echo(render(("", "component", image_a, image_b), rows))
    changed = sum(1 for r in rows if r[0])
    click.echo(f"{changed} component(s) differ" if changed else "the stacks are the same")


@cli.command("verify")
@click.argument("image")
@image_options
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
def verify_command(
    image: str, tls_verify: bool, image_arch: Optional[str], backend: Optional[str], as_json: bool
) -> None:
    """Check that IMAGE holds the stack it claims: what the build recorded as installed
    against stack.json and the labels. Exit 6 listing each mismatch.

    \b
    IMAGE is a registry reference, local:REF, or oci-archive:PATH / docker-archive:PATH / oci:DIR.
    """
    from mlcc.errors import DriftError
    from mlcc.image import open_image
    from mlcc.image.content import ARCHES
    from mlcc.image.stack import verify

    contents = open_image(image, tls_verify=tls_verify, arch=image_arch, backend=backend)
    drift = []
    report = []
    for content in contents:
        findings = verify(content)
        arch = ARCHES.get(content.arch or "", content.arch or "?")
        report.append(
            {"reference": content.reference, "arch": arch, "findings": [f._asdict() for f in findings]}
        )
        failing = [f for f in findings if f.severity == "drift"]
        drift += [f"{arch}: {f}" for f in failing]
        if not as_json:
            status = "DRIFT" if failing else "ok"
            click.echo(f"{content.reference} ({arch}): {status}")
            for finding in findings:
                click.echo(f"  {'drift' if finding.severity == 'drift' else 'note '}  {finding}")
    if as_json:
        click.echo(json.dumps(report if len(report) > 1 else report[0], indent=2))
    if drift:
        raise DriftError(f"{image} drifted from its stack: {len(drift)} mismatch(es)", details=drift[:30])


def matrix_filters(func: F) -> F:
    options = [
        click.option(
            "--benchmark",
            "f_benchmarks",
            metavar="NAME",
            multiple=True,
            help="Only this benchmark (repeatable).",
        ),
        click.option(
            "--base", "f_bases", metavar="NAME", multiple=True, help="Only cells on this base (repeatable)."
        ),
        click.option(
            "--arch", "f_arches", metavar="ARCH", multiple=True, help="Only cells for this arch (repeatable)."
        ),
        click.option(
            "--cuda",
            "f_cudas",
            metavar="VERSION",
            multiple=True,
            help="Only cells on this CUDA release prefix, or cpu.",
        ),
        click.option(
            "--matrix-file",
            "matrix_file",
            metavar="FILE",
            help="Another matrix file (default: recipes/matrix.yaml).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _filters(
    kb: Any, benchmarks: Sequence[str], bases: Sequence[str], arches: Sequence[str], cudas: Sequence[str]
) -> Any:
    from mlcc.errors import UsageError
    from mlcc.matrix import Filters
    from mlcc.resolve.request import did_you_mean

    for name in benchmarks:
        if name not in kb.benchmarks:
            raise UsageError(f"--benchmark {name!r}: unknown", hint=did_you_mean(name, kb.benchmarks))
    known_bases = {b.name for b in kb.bases}
    for name in bases:
        if name not in known_bases:
            raise UsageError(f"--base {name!r}: unknown", hint=did_you_mean(name, known_bases))
    resolved = tuple(kb.arch_aliases.get(a, a) for a in arches)
    for name in resolved:
        if name not in kb.arches:
            raise UsageError(f"--arch {name!r}: unknown", hint=f"arches: {', '.join(kb.arches)}")
    return Filters(tuple(benchmarks), tuple(bases), resolved, tuple(cudas))


def matrix_outcomes(kb: Any, filters: Any, matrix_file: Optional[str]) -> Any:
    from pathlib import Path

    from mlcc.matrix import evaluate, expand, load_matrix
    from mlcc.resolve import Resolver

    resolver = Resolver(kb)
    outcomes = evaluate(kb, expand(load_matrix(kb, Path(matrix_file) if matrix_file else None)), resolver)
    return [o for o in outcomes if filters.matches(o)], resolver


@cli.command("matrix")
@matrix_filters
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "github"]),
    default="table",
    show_default=True,
    help="A table, a JSON array of cells, or the object for GitHub Actions' strategy.matrix.",
)
@click.option(
    "--explain", is_flag=True, help="Also list the cells left out, each with the resolver's reason."
)
@click.option(
    "--parity", is_flag=True, help="For each x86_64 cell: its ppc64le counterpart, or why there is none."
)
@click.pass_obj
def matrix_command(
    obj: _Context,
    f_benchmarks: Sequence[str],
    f_bases: Sequence[str],
    f_arches: Sequence[str],
    f_cudas: Sequence[str],
    matrix_file: Optional[str],
    fmt: str,
    explain: bool,
    parity: bool,
) -> None:
    """The published matrix (recipes/matrix.yaml) after resolution: the cells that build.

    \b
    Examples:
      mlcc matrix
      mlcc matrix --explain --benchmark maskrcnn
      mlcc matrix --format github          # for strategy.matrix in a workflow
      mlcc matrix --parity
    """
    from mlcc.errors import UsageError
    from mlcc.matrix import github_matrix, row
    from mlcc.matrix import parity as parity_rows
    from mlcc.ui.table import render

    kb = obj.kb
    filters = _filters(kb, f_benchmarks, f_bases, f_arches, f_cudas)
    outcomes, resolver = matrix_outcomes(kb, filters, matrix_file)
    rows = [row(o) for o in outcomes]
    shown = rows if explain else [r for r in rows if r["status"] == "published"]
    if parity:
        found = parity_rows(kb, outcomes, resolver)
        if fmt != "table":
            click.echo(json.dumps(found, indent=2))
            return
        table = [(r["benchmark"], r["x86_64"], r["ppc64le"] or "none", r["reason"]) for r in found]
        click.echo(render(("benchmark", "x86_64", "ppc64le", "why not"), table))
        missing = sum(1 for r in found if not r["ppc64le"])
        click.echo(f"{missing} of {len(found)} x86_64 cells have no ppc64le counterpart")
        return
    if fmt == "github":
        click.echo(json.dumps(github_matrix(rows), indent=2))
        return
    if fmt == "json":
        click.echo(json.dumps(shown, indent=2))
        return
    if not shown:
        raise UsageError(
            "no cell of the matrix matches those filters"
            if filters
            else "the matrix has no cell that resolves",
            hint="mlcc matrix --explain shows every cell and why it is out",
        )
    lines: List[Sequence[str]] = []
    for r in shown:
        detail = r["framework"] or "-" if r["status"] == "published" else r["reason"]
        cells = [r["benchmark"], r["variant"] or "-", r["arch"] or "-", r["cuda"] or "-", r["base"] or "-"]
        lines.append([*cells, *([r["status"]] if explain else []), detail])
    headers = ["benchmark", "variant", "arch", "cuda", "base"]
    headers += ["status", "framework, or why not"] if explain else ["framework"]
    click.echo(render(headers, lines))
    published = sum(1 for r in rows if r["status"] == "published")
    click.echo(
        f"{published} cells build; {len(rows) - published} left out"
        + ("" if explain else " (--explain says why)")
    )


@cli.command("history")
@click.argument("benchmark", required=False)
@click.option("--variant", metavar="VARIANT", help="Only this variant.")
@click.option("--status", type=click.Choice(["built", "skipped", "failed"]), help="Only this outcome.")
@click.option(
    "--limit", type=int, default=50, show_default=True, help="At most this many rows, newest first."
)
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
@click.option(
    "--history",
    "history_file",
    metavar="FILE",
    help="The database (default: MLCC_HISTORY or ~/.local/share/mlcc/history.sqlite).",
)
def history_command(
    benchmark: Optional[str],
    variant: Optional[str],
    status: Optional[str],
    limit: int,
    as_json: bool,
    history_file: Optional[str],
) -> None:
    """Every build, skip and failure mlcc recorded, newest first."""
    from mlcc.errors import UsageError
    from mlcc.ui.table import render

    if limit < 1:
        raise UsageError(f"--limit {limit}: give at least 1")
    history = _history(history_file)
    rows = history.rows(benchmark=benchmark, variant=variant, status=status, limit=limit)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo(
            f"no builds recorded in {history.path}"
            + (" that match" if benchmark or variant or status else "")
        )
        return
    table = [
        (
            str(r["id"]),
            r["finished"],
            r["benchmark"],
            r["variant"],
            r["status"],
            f"{r['seconds']:.1f} s",
            r["backend"],
            (r["image_digest"] or "-")[:19],
            f"{r['size'] / 1e6:.1f} MB" if r["size"] else "-",
        )
        for r in rows
    ]
    click.echo(
        render(
            ("#", "finished", "benchmark", "variant", "status", "time", "backend", "digest", "size"), table
        )
    )


@cli.command("report")
@click.option("--html", "html_file", metavar="FILE", required=True, help="Write the page here.")
@matrix_filters
@click.option("--history", "history_file", metavar="FILE", help="The build history to colour the cells by.")
@click.option("--title", default="mlcc build matrix", show_default=True, help="The page's title.")
@click.pass_obj
def report_command(
    obj: _Context,
    html_file: str,
    f_benchmarks: Sequence[str],
    f_bases: Sequence[str],
    f_arches: Sequence[str],
    f_cudas: Sequence[str],
    matrix_file: Optional[str],
    history_file: Optional[str],
    title: str,
) -> None:
    """One self-contained HTML page: the matrix as a grid of benchmarks x stacks, each cell
    coloured by its latest build (linking the log), left-out cells greyed with the reason."""
    from pathlib import Path

    from mlcc.output import write_tree
    from mlcc.report import grid, render_html

    kb = obj.kb
    filters = _filters(kb, f_benchmarks, f_bases, f_arches, f_cudas)
    outcomes, _ = matrix_outcomes(kb, filters, matrix_file)
    target = Path(html_file)
    cells = grid(outcomes, _history(history_file).latest(), target)
    page = render_html(cells, title=title)
    write_tree(target.parent, [(target.name, page)])
    click.echo(f"wrote {target}: {len(cells)} cells")


@cli.command("lint")
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option(
    "--schema-dir",
    metavar="DIR",
    envvar="MLCC_SCHEMA_DIR",
    help="JSON Schemas of the API objects, kubeconform / openapi2jsonschema layout "
    "(env MLCC_SCHEMA_DIR). Without it YAML is checked by mlcc's own rules only.",
)
@click.option(
    "--openshift",
    "openshift_version",
    type=click.Choice(["4", "3.11"]),
    help="Validate OpenShift objects for this version (default: what each object was written for).",
)
@click.option("--rules", is_flag=True, help="List the rules and exit.")
def lint_command(
    paths: Sequence[str], schema_dir: Optional[str], openshift_version: Optional[str], rules: bool
) -> None:
    """Check Dockerfiles and OpenShift/Kubernetes YAML (default: dockerfiles/ and
    buildconfigs/). Dockerfiles: pinned base, pinned NVIDIA and pip packages, caches
    cleaned in the same layer, no blanket update, labels, non-root user. YAML: the API
    schemas, then the rules the API server and controllers apply. Exit 8 on any error.

    \b
    Examples:
      mlcc lint
      mlcc lint --schema-dir ../shared/schemas buildconfigs/maskrcnn
      mlcc lint --rules
    """
    from pathlib import Path

    from mlcc.errors import LintError, UsageError
    from mlcc.lint import RULES, lint_paths

    if rules:
        for rule, text in RULES.items():
            click.echo(f"{rule}  {text}")
        return
    targets = [Path(p) for p in paths] or [
        p for p in (Path("dockerfiles"), Path("buildconfigs")) if p.exists()
    ]
    if not targets:
        raise UsageError("nothing to lint: give paths, or run where dockerfiles/ or buildconfigs/ exist")
    missing = [str(p) for p in targets if not p.exists()]
    if missing:
        raise UsageError(f"no such file or folder: {', '.join(missing)}")
    schemas = Path(schema_dir) if schema_dir else None
    if schemas is not None and not schemas.is_dir():
        raise UsageError(f"--schema-dir: {schema_dir} is not a folder", hint="a folder of JSON Schemas")
    findings = lint_paths(targets, schema_dir=schemas, openshift=openshift_version)
    for finding in findings:
        click.echo(str(finding))
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        raise LintError(f"{len(errors)} lint error(s) in {len({f.path for f in errors})} file(s)")
    click.echo(f"lint: {len(findings)} warning(s), no errors")


@cli.command("completion")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion_command(shell: str) -> None:
    """Print the shell completion script: eval "$(mlcc completion bash)"."""
    from click.shell_completion import get_completion_class

    completion = get_completion_class(shell)
    assert completion is not None
    click.echo(completion(cli, {}, "mlcc", "_MLCC_COMPLETE").source())


def run(argv: Optional[Sequence[str]] = None) -> int:
    """Run the CLI; return the exit code instead of exiting (used by tests)."""
    try:
        result = cli.main(
            args=list(argv) if argv is not None else None, prog_name="mlcc", standalone_mode=False
        )
    except MlccError as error:
        click.echo(f"mlcc: error: {error}", err=True)
        return error.exit_code
    except click.exceptions.ClickException as error:
        error.show()
        return error.exit_code
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.exceptions.Abort:
        click.echo("mlcc: interrupted", err=True)
        return 130
    except KeyboardInterrupt:
        click.echo("mlcc: interrupted", err=True)
        return 130
    except BrokenPipeError:
        sys.stderr.close()  # `mlcc list | head` is not an error
        return 0
    except Exception as error:  # a bug: one clear line, the traceback only on request
        if os.environ.get("MLCC_DEBUG"):
            raise
        click.echo(
            f"mlcc: internal error: {type(error).__name__}: {error} "
            "(set MLCC_DEBUG=1 for a traceback, and please report it)",
            err=True,
        )
        return EXIT_INTERNAL
    return result if isinstance(result, int) else 0


def main() -> None:
    sys.exit(run())
