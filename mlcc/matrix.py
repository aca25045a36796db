"""The published matrix: recipes/matrix.yaml expanded into cells, resolved, deduplicated.

A cell is a benchmark plus pins (base, arch, cuda, python). The axes' product is taken per
benchmark (``overrides`` replace an axis for one benchmark), ``exclude`` removes the
cells it matches, ``include`` adds cells. Every cell is resolved; those that resolve form
the published set (``mlcc gen --all``), those that do not carry the resolver's reason.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from mlcc.errors import ConflictError, RecipeError
from mlcc.kb.model import KnowledgeBase
from mlcc.resolve import Resolver, Stack, build_request

AXES = ("benchmark", "base", "arch", "cuda", "python")
DEFAULT = "default"  # leave the component to the resolver
CPU = "cpu"  # cuda axis value: a CPU-only stack


class Cell(NamedTuple):
    benchmark: str
    base: Optional[str] = None
    arch: Optional[str] = None
    cuda: Optional[str] = None
    python: Optional[str] = None

    @property
    def label(self) -> str:
        parts = [self.benchmark]
        parts += [
            f"{axis}={getattr(self, axis)}" for axis in AXES[1:] if getattr(self, axis) not in (None, DEFAULT)
        ]
        return " ".join(parts)

    def pins(self) -> Dict[str, Any]:
        pins: Dict[str, Any] = {}
        for axis in ("base", "arch", "python"):
            value = getattr(self, axis)
            if value not in (None, DEFAULT):
                pins[axis] = value
        if self.cuda == CPU:
            pins["cpu"] = True
        elif self.cuda not in (None, DEFAULT):
            pins["cuda"] = self.cuda
        return pins


class Matrix(NamedTuple):
    axes: Dict[str, Tuple[str, ...]]
    overrides: Dict[str, Dict[str, Tuple[str, ...]]]
    exclude: Tuple[Dict[str, str], ...]
    include: Tuple[Cell, ...]
    path: str


class Outcome(NamedTuple):
    cell: Cell
    stack: Optional[Stack]
    conflict: Optional[ConflictError]
    duplicate_of: Optional[Cell] = None

    @property
    def published(self) -> bool:
        return self.stack is not None and self.duplicate_of is None


def load_matrix(kb: KnowledgeBase, path: Optional[Path] = None) -> Matrix:
    from mlcc.kb import schema_check
    from mlcc.kb.yamlsrc import line_of, load_yaml

    path = path or Path(kb.root) / "matrix.yaml"
    display = "recipes/matrix.yaml" if path == Path(kb.root) / "matrix.yaml" else str(path)
    if not path.is_file():
        raise RecipeError(display, None, "missing: the published matrix is defined there")
    data, lines = load_yaml(path, display)
    if not isinstance(data, dict):
        raise RecipeError(display, 1, "must be a mapping with 'kind: matrix' at the top")
    schema_check.validate("matrix", data, display, lines)

    def check(where: Tuple[Any, ...], cell: Dict[str, Any]) -> None:
        known = {
            "benchmark": set(kb.benchmarks),
            "base": {b.name for b in kb.bases} | {DEFAULT},
            "arch": set(kb.arch_aliases) | {DEFAULT},
        }
        for axis, allowed in known.items():
            values = cell.get(axis)
            for index, value in enumerate(values if isinstance(values, list) else [values] if values else []):
                if value not in allowed:
                    from mlcc.resolve.request import did_you_mean

                    line = line_of(
                        lines, (*where, axis, index) if isinstance(values, list) else (*where, axis)
                    )
                    raise RecipeError(
                        display,
                        line,
                        f"unknown {axis} {value!r}",
                        hint=did_you_mean(value, allowed) or f"known: {', '.join(sorted(allowed))}",
                    )

    check(("axes",), data["axes"])
    for name, axes in data.get("overrides", {}).items():
        if name not in kb.benchmarks:
            raise RecipeError(display, line_of(lines, ("overrides", name)), f"unknown benchmark {name!r}")
        check(("overrides", name), axes)
    for index, cell in enumerate(data.get("exclude", [])):
        check(("exclude", index), cell)
    for index, cell in enumerate(data.get("include", [])):
        check(("include", index), cell)
        if "benchmark" not in cell:
            raise RecipeError(
                display, line_of(lines, ("include", index)), "an included cell needs a benchmark"
            )
    if "benchmark" not in data["axes"]:
        raise RecipeError(display, line_of(lines, ("axes",)), "axes need a benchmark list")
    return Matrix(
        axes={k: tuple(v) for k, v in data["axes"].items()},
        overrides={
            b: {k: tuple(v) for k, v in axes.items()} for b, axes in data.get("overrides", {}).items()
        },
        exclude=tuple(dict(c) for c in data.get("exclude", [])),
        include=tuple(Cell(**c) for c in data.get("include", [])),
        path=display,
    )


def expand(matrix: Matrix) -> List[Cell]:
    cells: List[Cell] = []
    for benchmark in matrix.axes["benchmark"]:
        axes = {**matrix.axes, **matrix.overrides.get(benchmark, {})}
        values = [axes.get(axis, (DEFAULT,)) for axis in AXES[1:]]
        for combo in itertools.product(*values):
            cell = Cell(benchmark, *(None if v == DEFAULT else v for v in combo))
            if not any(_matches(cell, rule) for rule in matrix.exclude):
                cells.append(cell)
    for cell in matrix.include:
        if cell not in cells:
            cells.append(cell)
    return cells


def _matches(cell: Cell, rule: Dict[str, str]) -> bool:
    return all((getattr(cell, axis) or DEFAULT) == value for axis, value in rule.items())


def evaluate(kb: KnowledgeBase, cells: Sequence[Cell], resolver: Optional[Resolver] = None) -> List[Outcome]:
    """Resolve every cell; a cell whose stack another cell already publishes is a duplicate."""
    resolver = resolver or Resolver(kb)
    outcomes: List[Outcome] = []
    seen: Dict[Tuple[str, str], Cell] = {}
    for cell in cells:
        request = build_request(kb, cell.benchmark, **cell.pins())
        try:
            stack = resolver.resolve(request)
        except ConflictError as conflict:
            outcomes.append(Outcome(cell, None, conflict))
            continue
        key = (cell.benchmark, stack.variant)
        outcomes.append(Outcome(cell, stack, None, seen.get(key)))
        seen.setdefault(key, cell)
    return outcomes
