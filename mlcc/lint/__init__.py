"""`mlcc lint`: check generated (or hand-written) build files against mlcc's rules."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, List

from mlcc.lint.dockerfile import RULES, Finding, lint_dockerfile

__all__ = ["RULES", "Finding", "lint_paths"]


def _is_dockerfile(path: Path) -> bool:
    return path.name == "Dockerfile" or path.name.startswith("Dockerfile.") or path.suffix == ".Dockerfile"


def lint_paths(paths: Iterable[Path]) -> List[Finding]:
    findings: List[Finding] = []
    for path in paths:
        candidates = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for candidate in candidates:
            if _is_dockerfile(candidate):
                findings += lint_dockerfile(candidate)
    return findings
