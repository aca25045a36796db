"""`mlcc lint` as a use case: which paths, which schemas, and whether the findings fail."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from mlcc.errors import LintError, UsageError
from mlcc.lint import RULES, Finding, lint_paths
from mlcc.lint.kube import SHIPPED_SCHEMAS
from mlcc.ui import Step

DEFAULT_TARGETS = (Path("dockerfiles"), Path("buildconfigs"))

__all__ = ["RULES", "Finding", "RecipesCheck", "lint", "lint_error", "lint_report"]

# What lints a recipes folder: its pins against the record the knowledge base's maintainer
# tools keep (mlcc.kbtools.offline.lint_pins, which `mlcc lint` passes). A parameter, not an
# import: the user-facing API does not depend on the maintainer tools.
RecipesCheck = Callable[[Path], List[Finding]]

# The --json document's schema name: bumped when a field changes meaning or goes away
# (fields may be added within a version).
JSON_SCHEMA = "mlcc-lint/1"


def lint(
    paths: Sequence[str],
    *,
    schema_dir: Optional[str],
    openshift: Optional[str],
    recipes_check: Optional[RecipesCheck] = None,
    step: Optional[Step] = None,
) -> List[Finding]:
    """Lint the paths given, or dockerfiles/ and buildconfigs/ where they exist.

    A folder holding ``matrix.yaml`` is a recipes folder: ``recipes_check`` lints it.

    Args:
        paths: Files and folders; empty: the default targets.
        schema_dir: A folder of JSON Schemas for the YAML (kubeconform layout), or None for
            the ones mlcc ships (:data:`mlcc.lint.kube.SHIPPED_SCHEMAS`).
        openshift: The OpenShift version to check against (``3.11``, ``4``), or None for
            the one each object was written for.
        recipes_check: What lints a recipes folder (``mlcc lint`` passes
            :func:`mlcc.kbtools.offline.lint_pins`, its pins checked offline); None: a
            recipes folder is refused.
        step: Told ``(phase, done, total)`` as files are checked (progress), or None.

    Returns:
        Every finding, errors and warnings (:func:`lint_error` decides whether they fail).

    Raises:
        UsageError: Nothing to lint, a path that does not exist, ``schema_dir`` not a
            folder, or a recipes folder without ``recipes_check``.
        RecipeError: A recipes folder given does not load.
    """
    targets = [Path(p) for p in paths] or [p for p in DEFAULT_TARGETS if p.exists()]
    if not targets:
        raise UsageError("nothing to lint: give paths, or run where dockerfiles/ or buildconfigs/ exist")
    missing = [str(p) for p in targets if not p.exists()]
    if missing:
        raise UsageError(f"no such file or folder: {', '.join(missing)}")
    schemas = Path(schema_dir) if schema_dir else SHIPPED_SCHEMAS
    if not schemas.is_dir():
        raise UsageError(f"--schema-dir: {schema_dir} is not a folder", hint="a folder of JSON Schemas")
    knowledge = [p for p in targets if (p / "matrix.yaml").is_file()]
    if knowledge and recipes_check is None:
        raise UsageError(
            f"{knowledge[0]} is a recipes folder: its pins are checked by the knowledge base's tools",
            hint="pass recipes_check=mlcc.kbtools.offline.lint_pins (what mlcc lint does)",
        )
    found = lint_paths(
        [p for p in targets if p not in knowledge], schema_dir=schemas, openshift=openshift, step=step
    )
    if recipes_check is not None:
        for recipes in knowledge:
            found += recipes_check(recipes)
    return found


def lint_error(findings: Sequence[Finding]) -> Optional[LintError]:
    """The error that fails ``mlcc lint`` (exit 8), if any finding is an error.

    Args:
        findings: What :func:`lint` found.

    Returns:
        A LintError counting errors and files, or None when there are only warnings.
    """
    errors = [f for f in findings if f.severity == "error"]
    if not errors:
        return None
    return LintError(f"{len(errors)} lint error(s) in {len({f.path for f in errors})} file(s)")


def lint_report(findings: Sequence[Finding]) -> Dict[str, Any]:
    """``mlcc lint --json``: the findings as one JSON object (docs/lint.md documents it).

    Args:
        findings: What :func:`lint` found, in its order (file, line, rule).

    Returns:
        ``{"schema": "mlcc-lint/1", "findings": [{"path", "line", "rule", "severity",
        "message"}...], "errors": n, "warnings": n}``.
    """
    rows = [
        {"path": f.path, "line": f.line, "rule": f.rule, "severity": f.severity, "message": f.message}
        for f in findings
    ]
    errors = sum(1 for f in findings if f.severity == "error")
    return {"schema": JSON_SCHEMA, "findings": rows, "errors": errors, "warnings": len(rows) - errors}
