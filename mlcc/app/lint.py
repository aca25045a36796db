"""`mlcc lint` as a use case: which paths, which schemas, and whether the findings fail."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence

from mlcc.errors import LintError, UsageError
from mlcc.lint import RULES, Finding, lint_paths

DEFAULT_TARGETS = (Path("dockerfiles"), Path("buildconfigs"))

__all__ = ["RULES", "Finding", "lint", "lint_error"]


def lint(paths: Sequence[str], *, schema_dir: Optional[str], openshift: Optional[str]) -> List[Finding]:
    """Lint the paths given, or dockerfiles/ and buildconfigs/ where they exist."""
    targets = [Path(p) for p in paths] or [p for p in DEFAULT_TARGETS if p.exists()]
    if not targets:
        raise UsageError("nothing to lint: give paths, or run where dockerfiles/ or buildconfigs/ exist")
    missing = [str(p) for p in targets if not p.exists()]
    if missing:
        raise UsageError(f"no such file or folder: {', '.join(missing)}")
    schemas = Path(schema_dir) if schema_dir else None
    if schemas is not None and not schemas.is_dir():
        raise UsageError(f"--schema-dir: {schema_dir} is not a folder", hint="a folder of JSON Schemas")
    return lint_paths(targets, schema_dir=schemas, openshift=openshift)


def lint_error(findings: Sequence[Finding]) -> Optional[LintError]:
    errors = [f for f in findings if f.severity == "error"]
    if not errors:
        return None
    return LintError(f"{len(errors)} lint error(s) in {len({f.path for f in errors})} file(s)")
