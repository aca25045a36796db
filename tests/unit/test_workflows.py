"""The GitHub workflows: valid against the workflow schema check-jsonschema vendors, and
built on `mlcc matrix` and `mlcc build` the way the README says."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, List

import jsonschema
import pytest
import yaml

from mlcc.app.build import GITHUB_LEVELS, Planned, build_after, github_levels, matrix_jobs
from mlcc.app.matrix import MatrixFilters
from mlcc.engines.base import BuildPolicy
from mlcc.kb import load
from mlcc.render import Options
from mlcc.resolve.pins import Pins
from tests.conftest import REPO

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))


class _Loader(yaml.SafeLoader):
    """YAML 1.2 booleans: GitHub reads `on:` as a key, PyYAML's 1.1 rules as True."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|false)$"), list("tf"))


def _load(path: Path) -> Dict[str, Any]:
    data: Dict[str, Any] = yaml.load(path.read_text(), Loader=_Loader)
    return data


@pytest.fixture(scope="module")
def schema() -> Dict[str, Any]:
    import check_jsonschema

    path = Path(check_jsonschema.__file__).parent / "builtin_schemas" / "vendor" / "github-workflows.json"
    loaded: Dict[str, Any] = json.loads(path.read_text())
    return loaded


def test_there_are_workflows() -> None:
    assert {p.name for p in WORKFLOWS} >= {"checks.yml", "build-matrix.yml"}


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_validates_against_the_github_schema(path: Path, schema: Dict[str, Any]) -> None:
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(_load(path)), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]


def test_the_schema_catches_a_broken_workflow(schema: Dict[str, Any]) -> None:
    broken = _load(REPO / ".github" / "workflows" / "checks.yml")
    broken["jobs"]["checks"]["runs-on"] = None
    del broken["jobs"]["checks"]["steps"]
    assert list(jsonschema.Draft7Validator(schema).iter_errors(broken))


def _steps(workflow: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


def test_pull_requests_run_lint_tests_generated_files_and_a_matrix_dry_run() -> None:
    workflow = _load(REPO / ".github" / "workflows" / "checks.yml")
    assert "pull_request" in workflow["on"]
    scripts = "\n".join(step.get("run", "") for step in _steps(workflow))
    for command in (
        "ruff check",
        "mypy",
        "mlcc gen --all --check",
        "mlcc lint",
        "pytest",
        "mlcc matrix",
        "tests/run",
    ):
        assert command in scripts, command


def test_the_matrix_build_plans_with_the_registry_and_builds_level_by_level() -> None:
    workflow = _load(REPO / ".github" / "workflows" / "build-matrix.yml")
    assert set(workflow["on"]) >= {"push", "schedule"}
    plan = workflow["jobs"]["plan"]
    script = "\n".join(s.get("run", "") for s in plan["steps"])
    assert "mlcc build --matrix --chain --dry-run --format github" in script and "--registry" in script
    levels = [name for name in workflow["jobs"] if name.startswith("level-")]
    assert levels == [f"level-{k}" for k in range(GITHUB_LEVELS)]
    for k, name in enumerate(levels):
        job = workflow["jobs"][name]
        assert job["uses"] == "./.github/workflows/build-cells.yml"
        assert f"levels)[{k}]" in job["with"]["cells"] and f"levels)[{k}].include[0] != null" in job["if"]
        if k:  # after the level before, even where one of its cells failed
            assert job["needs"] == ["plan", f"level-{k - 1}"] and "!cancelled()" in job["if"]


def test_a_level_builds_each_cell_on_the_stage_images_in_the_registry() -> None:
    workflow = _load(REPO / ".github" / "workflows" / "build-cells.yml")
    assert "workflow_call" in workflow["on"]
    build_job = workflow["jobs"]["build"]
    assert build_job["strategy"]["matrix"] == "${{ fromJSON(inputs.cells) }}"
    assert build_job["strategy"]["fail-fast"] is False
    run = "\n".join(s.get("run", "") for s in build_job["steps"])
    assert 'build "$BENCHMARK" "${pins[@]}" --backend buildah' in run and "--push" in run
    assert "--chain" in run and "--cache-repo" not in run  # the stage images carry what cells share
    assert "qemu-user-static" in run
    # matrix values reach the script through env, never by ${{ }} inside `run:`
    assert "${{ matrix" not in run
    assert "secrets.MLCC_REGISTRY_PASSWORD" in json.dumps(build_job["env"])
    uploads = [s for s in build_job["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    assert (
        uploads
        and "stack-manifest.json" in uploads[0]["with"]["path"]
        and "cell.log" in uploads[0]["with"]["path"]
    )


def test_the_plans_cells_have_the_keys_the_workflow_uses(cli) -> None:  # type: ignore[no-untyped-def]
    kb = load()
    jobs = matrix_jobs(kb, MatrixFilters.from_pins(None, Pins(), None), BuildPolicy(), Options())
    plan = [Planned(after, job, None) for job, after in zip(jobs, build_after(jobs))]
    cells = [cell for level in github_levels(plan)["levels"] for cell in level["include"]]
    assert len(cells) == len(jobs)
    workflow = (REPO / ".github" / "workflows" / "build-cells.yml").read_text()
    for key in set(re.findall(r"(?<![.\w])matrix\.(\w+)", workflow)) - {"yml", "yaml"}:  # not file names
        assert all(key in cell for cell in cells), key
    published = {
        (c["benchmark"], c["pins"]) for c in json.loads(cli("matrix", "--format", "github").out)["include"]
    }
    assert {(c["benchmark"], c["pins"]) for c in cells} == published  # the same cells, the same flags
