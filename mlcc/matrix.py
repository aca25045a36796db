"""The published matrix: recipes/matrix.yaml expanded into cells, resolved, deduplicated.

A cell is a benchmark plus pins (base, arch, cuda, python, gpu). The axes' product is taken per
benchmark (``overrides`` replace an axis for one benchmark), ``exclude`` removes the
cells it matches, ``include`` adds cells. Every cell is resolved; those that resolve form
the published set (``mlcc gen --all``), those that do not carry the resolver's reason.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from mlcc.errors import ConflictError, RecipeError
from mlcc.kb import schema_check
from mlcc.kb.model import KnowledgeBase
from mlcc.kb.text_rules import check_text
from mlcc.kb.yamlsrc import line_of, load_yaml
from mlcc.resolve import Resolver, Stack
from mlcc.resolve.pins import Pins
from mlcc.resolve.request import did_you_mean

AXES = ("benchmark", "base", "arch", "cuda", "python", "gpu")
DEFAULT = "default"  # leave the component to the resolver
CPU = "cpu"  # cuda axis value: a CPU-only stack


class MatrixCell(NamedTuple):
    benchmark: str
    base: Optional[str] = None
    arch: Optional[str] = None
    cuda: Optional[str] = None
    python: Optional[str] = None
    gpu: Optional[str] = None  # the GPU the image must run on (--gpu): its code and its host arch

    @property
    def label(self) -> str:
        parts = [self.benchmark]
        parts += [
            f"{axis}={getattr(self, axis)}" for axis in AXES[1:] if getattr(self, axis) not in (None, DEFAULT)
        ]
        return " ".join(parts)

    def pins(self) -> Pins:
        def axis(value: Optional[str]) -> Optional[str]:
            return None if value in (None, DEFAULT, CPU) else value

        return Pins(
            base=axis(self.base),
            arch=axis(self.arch),
            python=axis(self.python),
            cuda=axis(self.cuda),
            cpu=self.cuda == CPU,
            gpu=axis(self.gpu),
        )


class Matrix(NamedTuple):
    axes: Dict[str, Tuple[str, ...]]
    overrides: Dict[str, Dict[str, Tuple[str, ...]]]
    exclude: Tuple[Dict[str, str], ...]
    include: Tuple[MatrixCell, ...]
    path: str


class CellResult(NamedTuple):
    cell: MatrixCell
    stack: Optional[Stack]
    conflict: Optional[ConflictError]
    duplicate_of: Optional[MatrixCell] = None

    @property
    def published(self) -> bool:
        return self.stack is not None and self.duplicate_of is None


def load_matrix(kb: KnowledgeBase, path: Optional[Path] = None) -> Matrix:
    path = path or Path(kb.root) / "matrix.yaml"
    display = "recipes/matrix.yaml" if path == Path(kb.root) / "matrix.yaml" else str(path)
    if path.is_dir():
        raise RecipeError(
            display,
            None,
            "is a folder, not a matrix file",
            hint="give --matrix-file the matrix YAML file itself",
        )
    if not path.is_file():
        raise RecipeError(display, None, "missing: the published matrix is defined there")
    data, lines = load_yaml(path, display)
    if not isinstance(data, dict):
        raise RecipeError(display, 1, "must be a mapping with 'kind: matrix' at the top")
    check_text(data, display, lines)
    schema_check.validate("matrix", data, display, lines)

    def check(where: Tuple[Any, ...], cell: Dict[str, Any]) -> None:
        known = {
            "benchmark": set(kb.benchmarks),
            "base": {b.name for b in kb.bases} | {DEFAULT},
            "arch": set(kb.arch_aliases) | {DEFAULT},
            "gpu": set(kb.gpus) | {DEFAULT},
        }
        for axis, allowed in known.items():
            values = cell.get(axis)
            for index, value in enumerate(values if isinstance(values, list) else [values] if values else []):
                if value not in allowed:
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
        include=tuple(MatrixCell(**c) for c in data.get("include", [])),
        path=display,
    )


def expand(matrix: Matrix) -> List[MatrixCell]:
    cells: List[MatrixCell] = []
    for benchmark in matrix.axes["benchmark"]:
        axes = {**matrix.axes, **matrix.overrides.get(benchmark, {})}
        values = [axes.get(axis, (DEFAULT,)) for axis in AXES[1:]]
        for combo in itertools.product(*values):
            cell = MatrixCell(benchmark, *(None if v == DEFAULT else v for v in combo))
            if not any(_matches(cell, rule) for rule in matrix.exclude):
                cells.append(cell)
    for cell in matrix.include:
        if cell not in cells:
            cells.append(cell)
    return cells


def _matches(cell: MatrixCell, rule: Dict[str, str]) -> bool:
    return all((getattr(cell, axis) or DEFAULT) == value for axis, value in rule.items())


def evaluate(
    kb: KnowledgeBase, cells: Sequence[MatrixCell], resolver: Optional[Resolver] = None
) -> List[CellResult]:
    """Resolve every cell; a cell whose stack another cell already publishes is a duplicate."""
    resolver = resolver or Resolver(kb)
    outcomes: List[CellResult] = []
    seen: Dict[Tuple[str, str], MatrixCell] = {}
    for cell in cells:
        request = cell.pins().request(kb, cell.benchmark)
        try:
            stack = resolver.resolve(request)
        except ConflictError as conflict:
            outcomes.append(CellResult(cell, None, conflict))
            continue
        key = (cell.benchmark, stack.variant)
        outcomes.append(CellResult(cell, stack, None, seen.get(key)))
        seen.setdefault(key, cell)
    return outcomes


# ----------------------------------------------------------------------------- views


def conflict_reason(conflict: Optional[ConflictError]) -> str:
    """The failed rules of a conflict on one line (alternatives are left out)."""
    if conflict is None:
        return ""
    failures = getattr(conflict, "failures", ())
    reasons = [f"[{f.rule}] {f.message}" for f in failures[:1]]  # the rule that decided it
    note = getattr(conflict, "note", None)
    if note:
        reasons.append(str(note))
    return "; ".join(reasons) or str(conflict).splitlines()[0]


def row(outcome: CellResult) -> Dict[str, Any]:
    """One cell as the table, JSON and the report show it."""
    cell, stack = outcome.cell, outcome.stack
    found: Dict[str, Any] = {
        "benchmark": cell.benchmark,
        "cell": cell.label,
        "pins": cell_flags(cell),
    }
    if stack is None:
        found.update(status="excluded", reason=conflict_reason(outcome.conflict))
        found.update(variant=None, arch=cell.arch, base=cell.base, cuda=cell.cuda)
        return found
    found.update(
        status="published" if outcome.duplicate_of is None else "duplicate",
        reason=f"the same stack as {outcome.duplicate_of.label}" if outcome.duplicate_of else "",
        variant=stack.variant,
        arch=stack.arch.name,
        platform=f"linux/{stack.arch.oci}",
        base=stack.base.name,
        cuda=stack.cuda.version if stack.cuda else CPU,
        cudnn=stack.cudnn.version if stack.cudnn else None,
        nccl=stack.nccl.version if stack.nccl else None,
        python=stack.python.version if stack.python else None,
        framework=f"{stack.framework.framework} {stack.framework.version}" if stack.framework else None,
    )
    return found


def cell_flags(cell: MatrixCell) -> str:
    """The cell's pins as flags, in the matrix's axis order (the workflows read this)."""
    pins = cell.pins()
    parts = [f"--{axis} {getattr(pins, axis)}" for axis in ("base", "arch", "python") if getattr(pins, axis)]
    if pins.cpu:
        parts.append("--cpu")
    elif pins.cuda:
        parts.append(f"--cuda {pins.cuda}")
    if pins.gpu:
        parts.append(f"--gpu {pins.gpu}")
    return " ".join(parts)


def github_matrix(rows: Sequence[Dict[str, Any]]) -> Dict[str, List[Dict[str, Any]]]:
    """``strategy.matrix`` for GitHub Actions: one entry per published cell."""
    keys = ("benchmark", "variant", "arch", "platform", "cuda", "base", "pins")
    return {"include": [{k: r[k] for k in keys} for r in rows if r["status"] == "published"]}


def parity(kb: KnowledgeBase, outcomes: Sequence[CellResult], resolver: Resolver) -> List[Dict[str, Any]]:
    """For each published x86_64 cell: its ppc64le counterpart, or why there is none."""
    found = []
    for outcome in outcomes:
        stack = outcome.stack
        if not outcome.published or stack is None or stack.arch.name != "x86_64":
            continue
        pins = replace(outcome.cell.pins(), arch="ppc64le")
        try:
            other = resolver.resolve(pins.request(kb, outcome.cell.benchmark))
        except ConflictError as conflict:
            found.append(
                {
                    "benchmark": outcome.cell.benchmark,
                    "x86_64": stack.variant,
                    "ppc64le": None,
                    "reason": conflict_reason(conflict),
                }
            )
            continue
        found.append(
            {
                "benchmark": outcome.cell.benchmark,
                "x86_64": stack.variant,
                "ppc64le": other.variant,
                "reason": "",
            }
        )
    return found
