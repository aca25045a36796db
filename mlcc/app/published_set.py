"""`mlcc gen --all`: the published set (recipes/matrix.yaml) rendered, written and checked.

Apart from :mod:`mlcc.app.generate` because it needs the matrix (its YAML, schema and
resolution of every cell), which generating one variant does not: ``mlcc gen BENCHMARK``
starts without importing it.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from mlcc.app.generate import (
    BUILD_FLAG,
    OPENSHIFT_FLAG,
    Generated,
    Roots,
    benchmark_lists,
    build_files,
    check_roots,
    generate,
    named_roots,
    openshift_files,
)
from mlcc.errors import StaleError
from mlcc.kb.model import KnowledgeBase
from mlcc.matrix import CellResult, evaluate, expand, load_matrix
from mlcc.output import Change, compare_tree, refuse_symlinks, remove_folder, write_tree
from mlcc.render import DEFAULT_OPTIONS, Options
from mlcc.render.openshift import ClusterOptions


def published(kb: KnowledgeBase) -> List[CellResult]:
    """Every cell of ``recipes/matrix.yaml``, resolved.

    Args:
        kb: The knowledge base.

    Returns:
        One result per cell: its stack, whether it is published, or why it is left out.

    Raises:
        RecipeError: The matrix file is malformed.
    """
    return evaluate(kb, expand(load_matrix(kb)))


def generate_all(
    kb: KnowledgeBase,
    *,
    fmt: str = "dockerfile",
    options: Options = DEFAULT_OPTIONS,
    cluster: Optional[ClusterOptions] = None,
) -> List[Generated]:
    """Render every published cell in memory (``mlcc gen --all``).

    Args:
        kb: The knowledge base.
        fmt: ``dockerfile``, ``script`` or ``singularity``.
        options: The base image and mirrors.
        cluster: The OpenShift options, or None for no OpenShift objects.

    Returns:
        One rendered variant per published cell.

    Raises:
        RecipeError: The matrix file is malformed.
        UsageError: A cluster option a published stack cannot serve.
    """
    return [
        generate(
            kb,
            o.stack,
            fmt=fmt,
            options=options,
            cluster=cluster,
            request=o.cell.pins().request(kb, o.cell.benchmark),
        )
        for o in published(kb)
        if o.published and o.stack
    ]


def write_all(roots: Roots, generated: Sequence[Generated]) -> List[Change]:
    """Write the published set and remove variant folders the set no longer has.

    Args:
        roots: Where each kind of output goes.
        generated: What :func:`generate_all` rendered.

    Returns:
        One change per file: created, updated, unchanged or removed.

    Raises:
        OutputError: A root or file cannot be written, or a symbolic link is in the way.
        UsageError: The roots overlap.
    """
    check_roots(roots, generated)
    benchmarks = sorted({g.folder.split("/")[0] for g in generated})
    for root, option in named_roots(roots):
        refuse_symlinks(root, [g.folder for g in generated] + benchmarks, option)
        refuse_symlinks(root, _variant_folders(root, benchmarks), option)
    changes: List[Change] = []
    for root, files in _all_files(roots, generated):
        option = BUILD_FLAG if root == roots.build else OPENSHIFT_FLAG
        changes += write_tree(root, files, prune=[g.folder for g in generated], flag=option)
        changes += _remove_unpublished(root, generated)
    return changes


def _variant_folders(root: Path, benchmarks: Sequence[str]) -> List[str]:
    """Every entry under each benchmark folder on disk (clean-up may visit any of them)."""
    found: List[str] = []
    for bench in benchmarks:
        directory = root / bench
        if directory.is_dir() and not directory.is_symlink():
            found += [f"{bench}/{p.name}" for p in sorted(directory.iterdir())]
    return found


def _all_files(roots: Roots, generated: Sequence[Generated]) -> List[Tuple[Path, List[Tuple[str, str]]]]:
    found: List[Tuple[Path, List[Tuple[str, str]]]] = []
    if roots.build is not None:
        found.append((roots.build, build_files(generated)))
    if roots.openshift is not None:
        files = openshift_files(generated) + benchmark_lists(generated, roots.openshift, from_disk=False)
        found.append((roots.openshift, files))
    return found


def _remove_unpublished(root: Path, generated: Sequence[Generated]) -> List[Change]:
    keep = {g.folder for g in generated}
    changes: List[Change] = []
    for bench in sorted({g.folder.split("/")[0] for g in generated}):
        directory = root / bench
        if not directory.is_dir():
            continue
        for folder in sorted(p for p in directory.iterdir() if p.is_dir() and not p.is_symlink()):
            if f"{bench}/{folder.name}" not in keep:
                changes += remove_folder(folder)
    return changes


def check_all(roots: Roots, generated: Sequence[Generated]) -> None:
    """Compare the files on disk with a fresh rendering; change nothing (``gen --all --check``).

    Args:
        roots: Where the published set lives.
        generated: What :func:`generate_all` rendered.

    Raises:
        StaleError: A file is stale, missing, foreign or wrongly moded (exit 7); the error
            lists up to 40 of them.
    """
    benchmarks = sorted({g.folder.split("/")[0] for g in generated})
    problems: List[str] = []
    for root, files in _all_files(roots, generated):
        problems += compare_tree(root, files, folders=benchmarks)
    if problems:
        shown = problems[:40] + ([f"... and {len(problems) - 40} more"] if len(problems) > 40 else [])
        raise StaleError(
            f"{len(problems)} generated file(s) differ from the recipes",
            details=shown,
            hint="run `mlcc gen --all` and commit the result",
        )
