"""`mlcc lint` as a use case: which paths, which schemas, and whether the findings fail."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from mlcc.app.kb_offline import (
    RECORD_FILE,
    load_record,
    load_wheel_record,
    offline_pin_errors,
    unrecorded_pages,
)
from mlcc.errors import LintError, UsageError
from mlcc.kb import load
from mlcc.lint import RULES, Finding, lint_paths
from mlcc.lint.kube import SHIPPED_SCHEMAS
from mlcc.ui import Step

DEFAULT_TARGETS = (Path("dockerfiles"), Path("buildconfigs"))

__all__ = ["RULES", "Finding", "lint", "lint_error", "lint_report"]

# The --json document's schema name: bumped when a field changes meaning or goes away
# (fields may be added within a version).
JSON_SCHEMA = "mlcc-lint/1"


def lint(
    paths: Sequence[str],
    *,
    schema_dir: Optional[str],
    openshift: Optional[str],
    step: Optional[Step] = None,
) -> List[Finding]:
    """Lint the paths given, or dockerfiles/ and buildconfigs/ where they exist.

    A folder holding ``matrix.yaml`` is a recipes folder: its pins are checked offline
    (:func:`lint_pins`).

    Args:
        paths: Files and folders; empty: the default targets.
        schema_dir: A folder of JSON Schemas for the YAML (kubeconform layout), or None for
            the ones mlcc ships (:data:`mlcc.lint.kube.SHIPPED_SCHEMAS`).
        openshift: The OpenShift version to check against (``3.11``, ``4``), or None for
            the one each object was written for.
        step: Told ``(phase, done, total)`` as files are checked (progress), or None.

    Returns:
        Every finding, errors and warnings (:func:`lint_error` decides whether they fail).

    Raises:
        UsageError: Nothing to lint, a path that does not exist, or ``schema_dir`` not a
            folder.
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
    found = lint_paths(
        [p for p in targets if p not in knowledge], schema_dir=schemas, openshift=openshift, step=step
    )
    for recipes in knowledge:
        found += lint_pins(recipes)
    return found


def lint_pins(recipes: Path) -> List[Finding]:
    """A recipes folder's pins against the index record ``mlcc kb check --record`` keeps there.

    Offline; without a record, one warning.

    Args:
        recipes: The recipes folder.

    Returns:
        KB001 findings at the recipe lines of pins the index never offered for the stack.

    Raises:
        RecipeError: The recipes do not load.
    """
    data = load_record(str(recipes))
    if data is None:
        message = f"no {RECORD_FILE}: pins are checked online only (mlcc kb check --record writes it)"
        return [Finding(str(recipes / RECORD_FILE), 0, "KB001", message, warning=True)]
    kb = load(str(recipes))
    findings = []
    missing = unrecorded_pages(kb, data)
    if missing:
        message = (
            f"{len(missing)} pinned project(s) not in the record, not checked offline "
            f"({', '.join(missing[:3])} ...): run mlcc kb check --record"
        )
        findings.append(Finding(str(recipes / RECORD_FILE), 0, "KB001", message, warning=True))
    for fact in offline_pin_errors(kb, data, load_wheel_record(str(recipes))):
        path, _, line = fact.origin.rpartition(":")
        where = path if path else fact.origin
        findings.append(
            Finding(where, int(line) if line.isdigit() else 0, "KB001", f"{fact.subject}: {fact.message}")
        )
    return findings


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
