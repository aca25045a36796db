"""The published matrix as a use case: expand, resolve, filter.

:class:`MatrixFilters` keeps the cells whose benchmark, base, arch or CUDA match; each value
is read the way :class:`~mlcc.resolve.pins.Pins` reads it (``--cuda 10`` is a release prefix,
``--cuda '>=10.1'`` a specifier, ``--arch amd64`` an alias), against the resolved stack
or, for a cell that does not resolve, against what the cell pinned.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from mlcc.errors import UsageError
from mlcc.flags import flag
from mlcc.kb.model import Benchmark, KnowledgeBase
from mlcc.matrix import CPU, CellResult, evaluate, expand, load_matrix
from mlcc.resolve import Resolver
from mlcc.resolve.pins import Pins
from mlcc.resolve.request import did_you_mean
from mlcc.versions import VersionPin, parse_pin, parse_version


@dataclass(frozen=True)
class MatrixFilters:
    """Which cells of the matrix a command looks at; each filter repeatable (any may match)."""

    benchmarks: Tuple[str, ...] = flag(
        "--benchmark", "Only this benchmark (repeatable).", default=(), metavar="NAME", multiple=True
    )
    bases: Tuple[str, ...] = flag(
        "--base", "Only cells on this base (repeatable).", default=(), metavar="NAME", multiple=True
    )
    arches: Tuple[str, ...] = flag(
        "--arch", "Only cells for this arch (repeatable).", default=(), metavar="ARCH", multiple=True
    )
    cudas: Tuple[str, ...] = flag(
        "--cuda",
        "Only cells whose CUDA meets this pin (10.1, 10.1.243, '>=10.1'), or cpu (repeatable).",
        default=(),
        metavar="VERSION",
        multiple=True,
    )
    matrix_file: Optional[str] = flag(
        "--matrix-file", "Another matrix file (default: recipes/matrix.yaml).", default=None, metavar="FILE"
    )

    def __bool__(self) -> bool:
        return bool(self.benchmarks or self.bases or self.arches or self.cudas)

    @classmethod
    def from_pins(
        cls, benchmark: Optional[str], pins: Pins, matrix_file: Optional[str] = None
    ) -> MatrixFilters:
        """The filters of ``mlcc build --matrix``: BENCHMARK and the pins that name a matrix axis.

        Args:
            benchmark: Only this benchmark, or None.
            pins: The pins given; only ``--base``, ``--arch`` (comma-separated), ``--cuda`` and
                ``--cpu`` filter.
            matrix_file: Another matrix file, or None.

        Returns:
            The filters (not checked yet: :meth:`checked`).

        Raises:
            UsageError: Another pin was given.
        """
        others = [name for name in pins.names_given() if name not in ("--base", "--arch", "--cuda", "--cpu")]
        if others:
            raise UsageError(f"--matrix filters by BENCHMARK, --base, --arch and --cuda; not by {others[0]}")
        cudas = (pins.cuda,) if pins.cuda else (CPU,) if pins.cpu else ()
        return cls(
            benchmarks=(benchmark,) if benchmark else (),
            bases=(pins.base,) if pins.base else (),
            arches=tuple(a.strip() for a in (pins.arch or "").split(",") if a.strip()),
            cudas=cudas,
            matrix_file=matrix_file,
        )

    def checked(self, kb: KnowledgeBase) -> MatrixFilters:
        """The filters with unknown names refused, arch aliases made canonical, CUDA pins parsed.

        Args:
            kb: The knowledge base that names the benchmarks, bases and arches.

        Returns:
            The same filters, arches by their canonical names.

        Raises:
            UsageError: An unknown benchmark, base or arch, or a malformed CUDA pin.
        """
        for name in self.benchmarks:
            if name not in kb.benchmarks:
                raise UsageError(f"--benchmark {name!r}: unknown", hint=did_you_mean(name, kb.benchmarks))
        known_bases = {b.name for b in kb.bases}
        for name in self.bases:
            if name not in known_bases:
                raise UsageError(f"--base {name!r}: unknown", hint=did_you_mean(name, known_bases))
        arches = tuple(kb.arch_aliases.get(a.strip().lower(), a) for a in self.arches)
        for name in arches:
            if name not in kb.arches:
                raise UsageError(f"--arch {name!r}: unknown", hint=f"arches: {', '.join(kb.arches)}")
        for text in self.cudas:
            _cuda_pin(text)
        return replace(self, arches=arches)

    def matches(self, result: CellResult) -> bool:
        """Whether a cell passes every filter (on its resolved values where it resolved).

        Args:
            result: A resolved cell.

        Returns:
            True when it passes.
        """
        cell, stack = result.cell, result.stack
        if self.benchmarks and cell.benchmark not in self.benchmarks:
            return False
        base = stack.base.name if stack else cell.base
        if self.bases and base not in self.bases:
            return False
        arch = stack.arch.name if stack else cell.arch
        if self.arches and arch not in self.arches:
            return False
        if self.cudas:
            cuda = (stack.cuda.version if stack.cuda else CPU) if stack else (cell.cuda or "")
            return any(_cuda_matches(text, cuda) for text in self.cudas)
        return True


def _cuda_pin(text: str) -> Optional[VersionPin]:
    return None if text == CPU else parse_pin(text, flag="--cuda")


def _cuda_matches(text: str, cuda: str) -> bool:
    pin = _cuda_pin(text)
    if pin is None or cuda in (CPU, ""):
        return pin is None and cuda == CPU
    try:
        parse_version(cuda)
    except ValueError:
        return False
    return pin.matches(cuda)


def cell_results(kb: KnowledgeBase, filters: MatrixFilters) -> Tuple[List[CellResult], Resolver]:
    """Every cell of the matrix, resolved, that the filters keep.

    Args:
        kb: The knowledge base.
        filters: Which cells, and which matrix file.

    Returns:
        The kept cells, and the resolver used (it explains the cells left out).

    Raises:
        UsageError: A filter names something unknown.
        RecipeError: The matrix file is malformed.
    """
    checked = filters.checked(kb)
    resolver = Resolver(kb)
    path = Path(checked.matrix_file) if checked.matrix_file else None
    results = evaluate(kb, expand(load_matrix(kb, path)), resolver)
    return [r for r in results if checked.matches(r)], resolver


def published(results: Sequence[CellResult]) -> List[CellResult]:
    """The cells that build: published and resolved.

    Args:
        results: Resolved cells (:func:`cell_results`).

    Returns:
        Those with a stack that the matrix publishes.
    """
    return [r for r in results if r.published and r.stack is not None]


def incomplete_benchmarks(kb: KnowledgeBase, filters: MatrixFilters) -> List[Benchmark]:
    """The benchmarks whose recipes say INCOMPLETE, which the matrix leaves out until their
    images run the benchmark (``mlcc matrix --explain`` names them and the recipes' reasons).

    Args:
        kb: The knowledge base.
        filters: Only ``--benchmark`` applies: a benchmark has no base, arch or CUDA of its own.

    Returns:
        The benchmarks, by id, that the filters keep.
    """
    return [
        b
        for name, b in sorted(kb.benchmarks.items())
        if b.incomplete is not None and (not filters.benchmarks or name in filters.benchmarks)
    ]
