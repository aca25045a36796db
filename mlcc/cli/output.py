"""Human-readable renderings of knowledge-base rows and resolved stacks."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from mlcc.resolve.request import Request
from mlcc.resolve.stack import Stack, pinned
from mlcc.ui.table import render

_LIST_COLUMNS: Dict[str, Sequence[str]] = {
    "benchmarks": ("name", "round", "framework", "arches", "accelerators", "title"),
    "bases": ("name", "image", "package_manager", "arches", "pythons", "gcc"),
    "cuda": ("version", "label", "min_driver", "host_gcc", "repos"),
    "cudnn": ("version", "cuda", "repo_distro", "arches", "method"),
    "nccl": ("version", "cuda", "repo_distro", "arches", "method"),
    "frameworks": ("framework", "version", "variant", "arches", "python", "cuda"),
    "arches": ("name", "aliases", "oci", "nvidia_repo", "debian"),
    "gpus": ("name", "title", "architecture", "sm", "min_cuda", "min_driver"),
    "rounds": ("name", "year", "default", "systems", "benchmarks"),
}


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ",".join(map(str, value)) or "-"
    if isinstance(value, dict):
        return " ".join(f"{k}:{_cell(v)}" for k, v in value.items())
    return str(value)


def _held(contents: Dict[str, Any]) -> str:
    """An image base's contents in one line: NGC 25.09, CUDA 13.0.1.012, cuDNN ..., pytorch ..."""
    parts = [f"NGC {contents['release']}", f"CUDA {contents['cuda']}"]
    parts += [f"{title} {contents[key]}" for key, title in _HELD if contents.get(key)]
    parts += [f"{name} {version}" for name, version in contents["frameworks"].items()]
    parts.append(contents["os"])
    return ", ".join(parts)


_HELD = (("cudnn", "cuDNN"), ("nccl", "NCCL"), ("cublas", "cuBLAS"), ("dali", "DALI"), ("python", "Python"))


def list_table(what: str, rows: List[Dict[str, Any]]) -> str:
    columns = _LIST_COLUMNS[what]
    body = [
        [_cell(row[c]) + ("" if c != columns[0] or row.get("verified", True) else " *") for c in columns]
        for row in rows
    ]
    table = render([c.replace("_", " ") for c in columns], body)
    weak = sum(1 for row in rows if not row.get("verified", True))
    if weak:
        table += f"\n\n* rests on unconfirmed evidence ({weak} of {len(rows)}); see the recipe's note"
    holding = [row for row in rows if row.get("contents")]
    if holding:
        table += "\n\nImages that hold a stack (a build on one installs none of it):"
        for row in holding:
            table += f"\n  {row['name']}: {_held(row['contents'])}"
    unavailable = [row for row in rows if row.get("unavailable")]
    if unavailable:
        table += "\n\nNo stack can be built for:"
        for row in unavailable:
            table += f"\n  {row['name']} ({row['round']}): {row['unavailable']}"
    incomplete = [row for row in rows if row.get("incomplete")]
    if incomplete:
        table += "\n\nINCOMPLETE (a stack resolves, but its image does not yet run the benchmark):"
        for row in incomplete:
            table += f"\n  {row['name']} ({row['round']}): {row['incomplete']}"
    return table


def stack_table(
    stack: Stack, *, verbose: bool = False, request: Optional[Request] = None, notes: Sequence[str] = ()
) -> str:
    header = f"{stack.benchmark.name}  {stack.variant}"
    flags = []
    if stack.reference:
        flags.append("reference framework build")
    if not stack.verified:
        flags.append("rests partly on unconfirmed facts (marked *)")
    if flags:
        header += "  (" + "; ".join(flags) + ")"
    rows = []
    for choice in stack.choices:
        weak = not choice.verified or bool(choice.unverified_fields)
        version = (choice.version or "-") + (" *" if weak else "")
        reason = choice.reason
        if weak and choice.unverified_fields:
            reason += f" [unconfirmed: {', '.join(choice.unverified_fields)}]"
        if verbose:
            reason += f" [{choice.origin}]"
            if choice.sources:
                reason += " sources: " + " | ".join(choice.sources)
        rows.append([choice.component, version, reason])
    table = header + "\n\n" + render(["component", "version", "why"], rows)
    chose = pinned(request, stack) if request is not None else {}
    if request is not None and request.pins():
        # the request beside the stack: the stack (and its image) is the same without it
        table += f"\n\nrequest: {request.flags()}"
        if chose:
            table += " (chose " + ", ".join(f"{name} {version}" for name, version in chose.items()) + ")"
    for note in notes:
        table += f"\nnote: {note}"
    return table
