"""`mlcc lint` without --schema-dir: the OpenShift and MPIJob schemas mlcc ships validate its
kinds, Kubernetes' own kinds still meet their API schema, and every other kind is named as not
validated; `mlcc lint --json` prints one documented object."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Dict

import yaml

from mlcc.lint import lint_paths

REPO = Path(__file__).resolve().parents[2]
VARIANT = REPO / "buildconfigs" / "maskrcnn" / "cuda10.1-cudnn7-ubi8-x86_64"
SCHEMAS = REPO / "mlcc" / "lint" / "schemas"


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
    widget = tmp_path / "widget.yaml"  # a kind no schema knows: one KS001 warning
    widget.write_text("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n")
    result = cli("lint", "--json", str(path), str(widget))
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
    assert report["warnings"] == len(report["findings"]) - report["errors"] >= 1  # the Widget note
    assert "lint error(s)" in result.err


def test_lint_json_of_a_clean_tree_exits_zero(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("lint", "--json", "--schema-dir", str(SCHEMAS), str(VARIANT))
    assert result.code == 0, result
    assert json.loads(result.out) == {"schema": "mlcc-lint/1", "findings": [], "errors": 0, "warnings": 0}


def test_lint_json_refuses_rules(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("lint", "--json", "--rules")
    assert result.code == 2 and "--json" in result.err and "--rules" in result.err, result


def test_a_plain_lint_validates_openshift_kinds_with_the_shipped_schemas(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # a pip user has no schema folder: lint must still refuse a BuildConfig the API refuses
    build = yaml.safe_load((VARIANT / "build.yaml").read_text())
    config = next(item for item in build["items"] if item["kind"] == "BuildConfig")
    config["spec"]["unknownField"] = True
    path = tmp_path / "build.yaml"
    path.write_text(yaml.safe_dump(build, sort_keys=False))
    result = cli("lint", "--json", str(path), str(VARIANT / "run"))
    assert result.code == 8, result
    findings = json.loads(result.out)["findings"]
    [error] = [f for f in findings if f["rule"] == "KS001"]
    assert error["severity"] == "error" and "unknownField" in error["message"], findings
    assert not [f for f in findings if f["severity"] == "warning"], findings  # the MPIJob validated too


def test_schema_dir_still_overrides_the_shipped_schemas(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    empty = tmp_path / "schemas"
    empty.mkdir()
    result = cli("lint", "--json", "--schema-dir", str(empty), str(VARIANT / "build.yaml"))
    assert result.code == 0, result
    notes = json.loads(result.out)["findings"]
    assert {f["message"].split()[0] for f in notes} == {"BuildConfig", "ImageStream"}, notes


def test_the_shipped_schemas_are_those_of_the_kinds_mlcc_generates() -> None:
    generated = set()
    for path in (REPO / "buildconfigs").rglob("*.yaml"):
        for document in yaml.safe_load_all(path.read_text()):
            for item in document.get("items", [document]):
                generated.add((item["apiVersion"].rpartition("/")[0], item["kind"].lower()))
    shipped = set()
    for path in SCHEMAS.rglob("*.json"):
        if "_" in path.name:  # <group>/<kind>_<version>.json (CRDs)
            shipped.add((path.parent.name, path.name.split("_")[0]))
        else:  # <kind>-<group's first word>-<version>.json
            kind, group, _ = path.name.split("-")
            shipped.add((group, kind))
    wanted = {
        (group.split(".")[0] if group.endswith("openshift.io") else group, kind) for group, kind in generated
    }
    assert shipped <= wanted, shipped - wanted  # nothing mlcc does not generate
    kubernetes = {group for group, _ in wanted if "." not in group}  # core and batch: kubernetes-validate
    assert {w for w in wanted if w[0] not in kubernetes} <= shipped


def test_each_shipped_licence_is_there_in_full() -> None:
    sources = (SCHEMAS / "SOURCES.md").read_text()
    licences = {
        name: SCHEMAS / "LICENSES" / text
        for name, text in (("Apache-2.0", "Apache-2.0.txt"), ("MIT", "MIT-datreeio-CRDs-catalog.txt"))
    }
    for name, path in licences.items():
        assert f"| {name} |" in sources
        assert path.is_file() and len(path.read_text()) > 900, path
    assert "Copyright (c) 2022 datree.io" in licences["MIT"].read_text()
