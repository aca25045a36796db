"""The API schemas the tests validate generated objects against, each from its maintainers.

OpenShift's kinds (BuildConfig, ImageStream; 3.11 and 4.17) and the Kubeflow
MPIJob live under mlcc/lint/schemas/, copied byte for byte (mlcc/lint/schemas/SOURCES.md names the
upstream repository, commit, path and licence of each file); `mlcc lint` reads them
unless --schema-dir names another folder. Kubernetes' own kinds (Pod, Job, ConfigMap, PersistentVolumeClaim)
are checked by the kubernetes-validate package, strict, at Kubernetes 1.30, the API that
OpenShift 4.17 ships: its bundled schemas resolve `$ref`s into a shared definitions file,
which `mlcc lint`'s standalone-schema reader does not follow, so the tests ask the package.
"""

from __future__ import annotations

from typing import Any, Dict, List

import kubernetes_validate

from mlcc.lint.kube import SchemaStore, object_findings
from tests.conftest import REPO

SCHEMAS = REPO / "mlcc" / "lint" / "schemas"
KUBERNETES = "1.30"  # OpenShift 4.17 = Kubernetes 1.30
KUBERNETES_KINDS = frozenset({"Pod", "Job", "ConfigMap", "PersistentVolumeClaim"})


def schema_store() -> SchemaStore:
    return SchemaStore(SCHEMAS)


def kubernetes_errors(obj: Dict[str, Any]) -> List[str]:
    """kubernetes-validate's verdict on a Kubernetes kind (strict: unknown fields fail)."""
    try:
        kubernetes_validate.validate(obj, KUBERNETES, strict=True)
    except kubernetes_validate.ValidationError as error:
        return [f"kubernetes {KUBERNETES}: {error.message}"]
    return []


def object_errors(obj: Dict[str, Any], store: SchemaStore, openshift: str = "4") -> List[str]:
    """Every problem with one API object: mlcc's lint (the schemas under mlcc/lint/schemas, then
    its rules) and, for a Kubernetes kind, Kubernetes' own schema. A kind with no schema in
    either place is a problem too: nothing may go unvalidated."""
    kubernetes = obj.get("kind") in KUBERNETES_KINDS
    found = [
        f"{f.rule}: {f.message}"
        for f in object_findings(obj, store, openshift)
        if not (kubernetes and f.rule == "KS001-missing")
    ]
    return found + (kubernetes_errors(obj) if kubernetes else [])
