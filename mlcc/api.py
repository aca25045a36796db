"""The Python API in one namespace: a re-export of the use cases in :mod:`mlcc.app`.

>>> from mlcc import api
>>> stack = api.resolve("maskrcnn", cuda="10.1")
>>> stack.variant
'cuda10.1-cudnn7-ubi8-x86_64'
"""

from __future__ import annotations

from typing import Optional, Sequence

from mlcc.app import kb as _kb
from mlcc.app.advise import advise
from mlcc.app.build import (
    manifest_list_tag,
    matrix_jobs,
    push_manifest_list,
    run_job,
    run_jobs,
    single_jobs,
)
from mlcc.app.generate import Generated, Roots, SourceFlags, generate, write
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
from mlcc.kb import KnowledgeBase
from mlcc.render.openshift import ClusterOptions
from mlcc.resolve import Request, Stack
from mlcc.resolve.pins import Pins
from mlcc.stackfile.document import StackManifest


def request_for(kb: KnowledgeBase, benchmark: str, pins: Pins) -> Request:
    return pins.request(kb, benchmark)


def resolve(
    benchmark: str,
    *,
    kb: Optional[KnowledgeBase] = None,
    recipes: Optional[str] = None,
    cuda: Optional[str] = None,
    cudnn: Optional[str] = None,
    nccl: Optional[str] = None,
    python: Optional[str] = None,
    gcc: Optional[str] = None,
    base: Optional[str] = None,
    arch: Optional[str] = None,
    driver: Optional[str] = None,
    cpu: bool = False,
    with_: Sequence[str] = (),
    gpu: Optional[str] = None,
) -> Stack:
    """Resolve ``benchmark`` with the pins as keyword arguments (``with_=[...]``)."""
    pins = Pins(cuda, cudnn, nccl, python, gcc, base, arch, driver, cpu, tuple(with_), gpu=gpu)
    return _kb.resolve(kb or knowledge_base(recipes), benchmark, pins)


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
