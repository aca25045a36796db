"""``mlcc lint`` costs the validation of each object, not a reload of its schema: Kubernetes'
schemas (kubernetes-validate's, a 2 MB definitions file) are parsed once per kind, where they
were parsed for every object (~20 ms each: a 4.5 MB file of 60,000 ConfigMaps took 20
minutes). The timing itself is perf's business; this counts the loads."""

from __future__ import annotations

from pathlib import Path

import pytest
from kubernetes_validate import utils

from mlcc.lint import kube


def _configmaps(count: int, bad: int) -> str:
    docs = [
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\ndata:\n  a: x\n" for i in range(count)
    ]
    docs[bad] += "bogus: 1\n"
    return "---\n".join(docs)


def test_many_objects_of_one_kind_load_its_schema_once(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    loads = []
    real = utils.schema_contents

    def counted(filename: str, version: str):  # type: ignore[no-untyped-def]
        loads.append(filename)
        return real(filename, version)

    monkeypatch.setattr(utils, "schema_contents", counted)
    kube._kubernetes_validator.cache_clear()
    path = tmp_path / "many.yaml"
    path.write_text(_configmaps(300, bad=250))
    result = cli("lint", str(path))
    assert result.code == 8, result  # the bad object is still found, on its own line
    assert "many.yaml:" in result.out and "'bogus' was unexpected" in result.out
    assert len(loads) <= 2, loads  # the kind's schema and the definitions, once


def test_many_objects_of_one_kind_look_for_its_schema_file_once(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """The schema folder is searched (a dozen is_file calls) once per kind, not per object."""
    looked = []
    real = kube.SchemaStore._find

    def counted(self, api_version: str, kind: str, openshift: str):  # type: ignore[no-untyped-def]
        looked.append((api_version, kind))
        return real(self, api_version, kind, openshift)

    monkeypatch.setattr(kube.SchemaStore, "_find", counted)
    path = tmp_path / "many.yaml"
    path.write_text(_configmaps(300, bad=250))
    assert cli("lint", str(path)).code == 8
    assert looked == [("v1", "ConfigMap")], looked
