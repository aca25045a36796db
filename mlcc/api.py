"""The Python API in one namespace: a re-export of the use cases in :mod:`mlcc.app`.

>>> from mlcc import api
>>> stack = api.resolve("maskrcnn", api.Pins(cuda="10.1"))
>>> stack.variant
'cuda10.1-cudnn7-ubi8-x86_64'
>>> api.resolve("maskrcnn", round="v2.1", flavour="devel").benchmark.name
'maskrcnn-v2.1'
"""

from __future__ import annotations

from typing import Any, List, Optional

from mlcc.app import generate as _generate
from mlcc.app import kb as _kb
from mlcc.app.advise import advise
from mlcc.app.build import (
    failure,
    manifest_list_tag,
    matrix_jobs,
    prepare,
    push_manifest_list,
    run_job,
    run_jobs,
    single_jobs,
)
from mlcc.app.generate import Generated, Roots, SourceFlags, write
from mlcc.app.history import history_rows, open_history
from mlcc.app.images import (
    attach_sbom,
    diff_rows,
    drift_error,
    inspect_document,
    open_image,
    sbom_document,
    verify_image,
)
from mlcc.app.kb import LISTABLE, knowledge_base, list_rows
from mlcc.app.lint import lint, lint_error
from mlcc.app.matrix import MatrixFilters, cell_results
from mlcc.app.published_set import check_all, generate_all, write_all
from mlcc.app.report import write_report
from mlcc.app.results import ResultFilters, StackSource, add_results, compare_results, score_logs
from mlcc.app.select import Selection, walk
from mlcc.engines import create as create_engine
from mlcc.engines.base import BuildJob, BuildPolicy, BuildResult, EngineSettings, Log
from mlcc.history import History
from mlcc.kb import KnowledgeBase
from mlcc.render import DEFAULT_OPTIONS, Options
from mlcc.render.openshift import ClusterOptions
from mlcc.resolve import Request, Resolver, Stack
from mlcc.resolve.pins import Pins
from mlcc.stackfile.document import StackManifest


def request_for(kb: KnowledgeBase, benchmark: str, pins: Pins) -> Request:
    """The validated request the pins make for ``benchmark`` (what the resolver reads).

    Args:
        kb: The knowledge base.
        benchmark: The benchmark's name.
        pins: The pins.

    Returns:
        The request.

    Raises:
        UsageError: An unknown benchmark, round, name or flavour, or a malformed pin.
    """
    return pins.request(kb, benchmark)


def resolve(
    benchmark: str,
    pins: Optional[Pins] = None,
    *,
    kb: Optional[KnowledgeBase] = None,
    recipes: Optional[str] = None,
    **pin_values: Any,
) -> Stack:
    """Resolve ``benchmark`` for the pins ``mlcc resolve`` takes.

    Args:
        benchmark: The benchmark's name, e.g. ``maskrcnn``.
        pins: The pins (:class:`Pins`: round, flavour, newest, GPU, every version pin).
        kb: The knowledge base (default: loaded from ``recipes``).
        recipes: The recipes folder when ``kb`` is not given (default: the shipped one).
        **pin_values: Pins by field name (``round="v2.1"``, ``with_=["pytorch=1.1"]``),
            set over ``pins``.

    Returns:
        The immutable stack.

    Raises:
        TypeError: A keyword that is not a field of :class:`Pins`, or a value of the wrong type.
        UsageError: An unknown benchmark, round, name or flavour, or a malformed pin: what
            the CLI refuses, with the same message.
        ConflictError: No stack fits; the error names the nearest changes that would.
    """
    return _kb.resolve(kb or knowledge_base(recipes), benchmark, (pins or Pins()).updated(**pin_values))


def generate(
    benchmark: str,
    pins: Optional[Pins] = None,
    *,
    kb: Optional[KnowledgeBase] = None,
    recipes: Optional[str] = None,
    fmt: str = "dockerfile",
    options: Options = DEFAULT_OPTIONS,
    cluster: Optional[ClusterOptions] = None,
    **pin_values: Any,
) -> Generated:
    """Render ``benchmark``'s variant for the pins, in memory (``mlcc gen``; :func:`write`
    writes it).

    Args:
        benchmark: The benchmark's name.
        pins: The pins, as :func:`resolve` takes them.
        kb: The knowledge base (default: loaded from ``recipes``).
        recipes: The recipes folder when ``kb`` is not given.
        fmt: ``dockerfile``, ``script`` or ``singularity``.
        options: The base image and mirrors.
        cluster: The OpenShift options, or None for no OpenShift objects.
        **pin_values: Pins by field name, set over ``pins``.

    Returns:
        The rendered files and their folder ``<benchmark>/<variant>``.

    Raises:
        TypeError: A keyword that is not a pin.
        UsageError: What :func:`resolve` refuses, or a cluster option the stack cannot serve.
        ConflictError: No stack fits.
    """
    knowledge = kb or knowledge_base(recipes)
    chosen = (pins or Pins()).updated(**pin_values)
    request = chosen.request(knowledge, benchmark)
    stack = Resolver(knowledge).resolve(request)
    return _generate.generate(knowledge, stack, fmt=fmt, options=options, cluster=cluster, request=request)


def build(
    benchmark: str,
    pins: Optional[Pins] = None,
    *,
    kb: Optional[KnowledgeBase] = None,
    recipes: Optional[str] = None,
    backend: Optional[str] = None,
    policy: Optional[BuildPolicy] = None,
    settings: Optional[EngineSettings] = None,
    options: Options = DEFAULT_OPTIONS,
    log: Optional[Log] = None,
    history: Optional[History] = None,
    **pin_values: Any,
) -> List[BuildResult]:
    """Build ``benchmark``'s image for the pins (``mlcc build BENCHMARK``): one per arch of
    ``arch="x86_64,ppc64le"``, and their manifest list when there are several.

    Args:
        benchmark: The benchmark's name.
        pins: The pins, as :func:`resolve` takes them (``arch`` may list several).
        kb: The knowledge base (default: loaded from ``recipes``).
        recipes: The recipes folder when ``kb`` is not given.
        backend: The engine (``buildah``, ``podman``, ``docker``, ``openshift``, a plugin);
            None: the first local one that works.
        policy: Where images go and how they are built (default: ``BuildPolicy()``).
        settings: What the engine needs to connect (default: none).
        options: The render options (base image, mirrors).
        log: Receives the build output (default: only its tail is kept, for errors).
        history: The build history to record in, or None.
        **pin_values: Pins by field name, set over ``pins``.

    Returns:
        Each arch's result, ``built`` or ``skipped``.

    Raises:
        TypeError: A keyword that is not a pin.
        UsageError: What :func:`resolve` refuses, and what ``mlcc build`` refuses
            (:func:`mlcc.app.build.prepare`): several arches without a push or on an engine
            that builds one, ``chain`` or ``cache_repo`` on an engine that cannot, an engine
            that cannot run here.
        ConflictError: No stack fits.
        BuildError: A build failed (one arch: its own error and exit code).
        RegistryError: A registry could not be reached or refused.
    """
    knowledge = kb or knowledge_base(recipes)
    # the CLI's refusals (--chain or --cache-repo on an engine that cannot, several arches on
    # a one-arch engine, OpenShift options on a local one) are mlcc.app.build.prepare's
    engine, jobs, chosen = prepare(
        knowledge,
        benchmark,
        (pins or Pins()).updated(**pin_values),
        backend=backend,
        policy=policy,
        options=options,
        connection=settings,
    )
    sink = log or Log()
    results = run_jobs(engine, jobs, chosen, history=history, log_for=lambda job: sink)
    problem = failure(results)
    if problem is not None:
        raise problem
    if len(jobs) > 1:
        push_manifest_list(jobs, results, chosen)
    return results


__all__ = [
    "LISTABLE",
    "BuildJob",
    "BuildPolicy",
    "BuildResult",
    "ClusterOptions",
    "EngineSettings",
    "Generated",
    "Log",
    "MatrixFilters",
    "Pins",
    "ResultFilters",
    "Roots",
    "Selection",
    "SourceFlags",
    "StackManifest",
    "StackSource",
    "add_results",
    "advise",
    "attach_sbom",
    "build",
    "cell_results",
    "check_all",
    "compare_results",
    "create_engine",
    "diff_rows",
    "drift_error",
    "generate",
    "generate_all",
    "history_rows",
    "inspect_document",
    "knowledge_base",
    "lint",
    "lint_error",
    "list_rows",
    "manifest_list_tag",
    "matrix_jobs",
    "open_history",
    "open_image",
    "push_manifest_list",
    "request_for",
    "resolve",
    "run_job",
    "run_jobs",
    "sbom_document",
    "score_logs",
    "single_jobs",
    "verify_image",
    "walk",
    "write",
    "write_all",
    "write_report",
]
