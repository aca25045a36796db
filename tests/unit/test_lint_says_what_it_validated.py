"""`mlcc lint` without --schema-dir: Kubernetes' own kinds still meet their API schema, and every
other kind is named as not validated; `mlcc lint --json` prints one documented object."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Dict

import yaml

from mlcc.lint import lint_paths

REPO = Path(__file__).resolve().parents[2]
VARIANT = REPO / "buildconfigs" / "maskrcnn" / "cuda10.1-cudnn7-ubi8-x86_64"
SCHEMAS = REPO / "tests" / "schemas"


def test_without_schema_dir_each_unvalidated_kind_is_named_once() -> None:
    findings = lint_paths([VARIANT])
    notes = [f for f in findings if f.rule == "KS001"]
    assert all(f.severity == "warning" and "not validated against its API schema" in f.message for f in notes)
    named = sorted(f.message.split(":")[0].split()[0] for f in notes)
    # OpenShift's kinds and the MPIJob CRD have no schema here; Pod, Job, ConfigMap do
    assert named == ["BuildConfig", "ImageStream", "MPIJob"], notes
    assert all("no --schema-dir" in f.message for f in notes)


def test_with_the_schemas_nothing_is_left_unvalidated() -> None:
    assert lint_paths([VARIANT], schema_dir=SCHEMAS) == []


def _pod() -> Dict[str, Any]:
    pod: Dict[str, Any] = yaml.safe_load((VARIANT / "run" / "pod.yaml").read_text())
    return copy.deepcopy(pod)


def test_kubernetes_kinds_are_validated_without_schema_dir(tmp_path: Path) -> None:
    pod = _pod()
    pod["spec"]["containers"][0]["imagePullPolicy"] = 3
    pod["spec"]["containers"][0]["unknownField"] = True
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(pod, sort_keys=False))
    [finding] = [f for f in lint_paths([path]) if f.rule == "KS001"]
    assert finding.severity == "error" and "kubernetes-validate" in finding.message, finding
    assert finding.line > 1  # at the container, not the top of the file


def test_lint_json_is_one_documented_object(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pod = _pod()
    pod["kind"] = 5
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(pod, sort_keys=False))
    result = cli("lint", "--json", str(path), str(VARIANT / "run" / "mpijob.yaml"))
    assert result.code == 8, result
    report = json.loads(result.out)
    assert set(report) == {"schema", "findings", "errors", "warnings"}
    assert report["schema"] == "mlcc-lint/1"
    for row in report["findings"]:
        assert set(row) == {"path", "line", "rule", "severity", "message"}
        assert row["severity"] in ("error", "warning")
    kind = [row for row in report["findings"] if row["rule"] == "KS000"]
    assert kind and kind[0]["path"] == str(path) and "kind must be a string" in kind[0]["message"]
    assert report["errors"] == sum(row["severity"] == "error" for row in report["findings"])
    assert report["warnings"] == len(report["findings"]) - report["errors"] >= 1  # the MPIJob note
    assert "lint error(s)" in result.err


def test_lint_json_of_a_clean_tree_exits_zero(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("lint", "--json", "--schema-dir", str(SCHEMAS), str(VARIANT))
    assert result.code == 0, result
    assert json.loads(result.out) == {"schema": "mlcc-lint/1", "findings": [], "errors": 0, "warnings": 0}


def test_lint_json_refuses_rules(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("lint", "--json", "--rules")
    assert result.code == 2 and "--json" in result.err and "--rules" in result.err, result
