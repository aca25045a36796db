"""`mlcc lint`: check generated (or hand-written) build files against mlcc's rules.

Dockerfiles go through hadolint (:mod:`.hadolint`) and, when mlcc generated them, mlcc's
own rules on the structure dockerfile-parse reads (:mod:`.dockerfile`); YAML files are split
into objects and checked against the real API schemas and the server's rules
(:mod:`.kube`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Iterable, List, Optional

from mlcc.lint.dockerfile import DOCKERFILE_RULES, Finding, lint_dockerfile
from mlcc.lint.hadolint import run_hadolint
from mlcc.lint.kube import KUBE_RULES, SchemaStore, lint_yaml
from mlcc.ui import Step

__all__ = ["RULES", "Finding", "lint_paths"]


RULES: Dict[str, str] = {
    **DOCKERFILE_RULES,
    **KUBE_RULES,
    # `mlcc lint recipes` (mlcc.app.lint): the offline half of `mlcc kb check`
    "KB001": "a pip pin of the published set has no distribution for the stack's Python and arch "
    "(checked against recipes/index-files.json, the record `mlcc kb check --record` writes)",
}


def _is_dockerfile(path: Path) -> bool:
    return path.name == "Dockerfile" or path.name.startswith("Dockerfile.") or path.suffix == ".Dockerfile"


def _is_yaml(path: Path) -> bool:
    return path.suffix in (".yaml", ".yml")


def lint_paths(
    paths: Iterable[Path],
    *,
    schema_dir: Optional[Path] = None,
    openshift: Optional[str] = None,
    step: Optional[Step] = None,
) -> List[Finding]:
    store = SchemaStore(schema_dir)
    findings: List[Finding] = []
    dockerfiles: List[Path] = []
    found = [sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path] for path in paths]
    checked = [c for candidates in found for c in candidates if _is_dockerfile(c) or _is_yaml(c)]
    for done, candidate in enumerate(checked, 1):
        if _is_dockerfile(candidate):
            dockerfiles.append(candidate)
            findings += lint_dockerfile(candidate)
        else:
            findings += lint_yaml(candidate, store, openshift=openshift)
        if step is not None:
            step("lint: files", done, len(checked))
    findings += run_hadolint(dockerfiles, step=step)
    return sorted(findings, key=lambda f: (f.path, f.line, f.rule))
