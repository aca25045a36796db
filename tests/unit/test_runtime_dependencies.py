"""Every runtime dependency pyproject.toml declares is imported by mlcc: a declared package
nothing imports (semver was one) is an install every user pays for and a version constraint
that constrains nothing."""

from __future__ import annotations

import ast
from importlib.metadata import packages_distributions
from pathlib import Path
from typing import Dict, List, Set

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import REPO

tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11's tomllib")


def _declared() -> List[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return sorted(canonicalize_name(Requirement(line).name) for line in project["dependencies"])


def _imported_by(package: Path) -> Set[str]:
    """The top-level names every module imports, at any depth (late imports count)."""
    found: Set[str] = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return found


def _import_names() -> Dict[str, Set[str]]:
    """Installed distribution (canonical name) -> the top-level modules it provides."""
    names: Dict[str, Set[str]] = {}
    for module, distributions in packages_distributions().items():
        for distribution in distributions:
            names.setdefault(canonicalize_name(distribution), set()).add(module)
    return names


def test_the_map_from_distribution_to_module_sees_renamed_packages() -> None:
    provided = _import_names()
    assert "yaml" in provided["pyyaml"] and "elftools" in provided["pyelftools"]


def test_every_declared_runtime_dependency_is_imported() -> None:
    imported = _imported_by(REPO / "mlcc")
    provided = _import_names()
    missing = [name for name in _declared() if name not in provided]
    assert missing == [], f"declared but not installed (pip install -e .): {missing}"
    unused = [name for name in _declared() if not provided[name] & imported]
    assert unused == [], f"declared in pyproject.toml but imported nowhere in mlcc/: {unused}"
