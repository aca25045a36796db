"""The shape of each kind's fields that mlcc's lint rules read, checked once where an object enters.

The semantic rules of :mod:`.kube` walk into ``spec.strategy``, ``containers[].env[]``,
``mpiReplicaSpecs.Worker`` and so on. A hand-edited or hostile file can put any JSON type at
any of those nodes; rather than guard every read, each object is first validated against a
small JSON Schema of those paths (types only; null is left to KS002), and an object of the
wrong shape gets KS000 findings at the offending nodes instead of the semantic rules. The API
schemas (``--schema-dir``, KS001) say far more, but they are optional and hold no ``kind``
check of their own; these shapes always run.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import jsonschema

Schema = Dict[str, Any]

__all__ = ["shape_errors"]


def _mapping(properties: Optional[Schema] = None, *, values: Optional[Schema] = None) -> Schema:
    schema: Schema = {"type": ["object", "null"]}
    if properties:
        schema["properties"] = properties
    if values:
        schema["additionalProperties"] = values
    return schema


def _list_of(item: Schema) -> Schema:
    # Items are read with .get(): a null item is as fatal as a string, so no null here.
    return {"type": ["array", "null"], "items": {**item, "type": "object"}}


TEXT: Schema = {"type": ["string", "null"]}

_SECRET_WEBHOOK = _mapping({"secretReference": _mapping({"name": {}})})
_OBJECT_REFERENCE = _mapping({"kind": TEXT, "name": {}})

_POD_SPEC = _mapping(
    {
        "nodeSelector": _mapping(values=TEXT),
        "volumes": _list_of(_mapping({"name": TEXT, "emptyDir": _mapping({"medium": TEXT})})),
        "containers": _list_of(
            _mapping(
                {
                    "resources": _mapping({"limits": _mapping(), "requests": _mapping()}),
                    "env": _list_of(_mapping({"name": TEXT})),
                    "volumeMounts": _list_of(_mapping({"name": TEXT, "mountPath": TEXT})),
                }
            )
        ),
    }
)

_REPLICA = _mapping({"restartPolicy": TEXT, "template": _mapping({"spec": _POD_SPEC})})

_BUILD_SPEC = _mapping(
    {
        "strategy": _mapping(
            {
                "type": TEXT,
                "dockerStrategy": _mapping({"from": _OBJECT_REFERENCE, "imageOptimizationPolicy": TEXT}),
            }
        ),
        "source": _mapping({"type": TEXT}),
        "triggers": _list_of(
            _mapping(
                {
                    "type": TEXT,
                    "github": _SECRET_WEBHOOK,
                    "gitlab": _SECRET_WEBHOOK,
                    "bitbucket": _SECRET_WEBHOOK,
                    "generic": _SECRET_WEBHOOK,
                    "imageChange": _mapping({"from": _OBJECT_REFERENCE}),
                }
            )
        ),
        "output": _mapping(
            {
                "to": _OBJECT_REFERENCE,
                "pushSecret": _mapping(),
                "imageLabels": _list_of(_mapping()),
            }
        ),
        "runPolicy": TEXT,
        "nodeSelector": _mapping(values=TEXT),
    }
)

# Every object: a kind and an apiVersion (strings), metadata a mapping.
_COMMON: Schema = {
    "type": "object",
    "required": ["kind", "apiVersion"],
    "properties": {
        "kind": {"type": "string", "minLength": 1},
        "apiVersion": {"type": "string", "minLength": 1},
        "metadata": _mapping({"annotations": _mapping()}),
    },
}

_BY_KIND: Dict[str, Schema] = {
    "BuildConfig": {"properties": {"spec": _BUILD_SPEC}},
    "Pod": {"properties": {"spec": _POD_SPEC}},
    "Job": {"properties": {"spec": _mapping({"template": _mapping({"spec": _POD_SPEC})})}},
    "MPIJob": {
        "properties": {
            "spec": _mapping(
                {
                    "mpiReplicaSpecs": _mapping({"Launcher": _REPLICA, "Worker": _REPLICA}),
                    "runPolicy": _mapping(),
                }
            )
        }
    },
    "PyTorchJob": {
        "properties": {
            "spec": _mapping(
                {
                    "pytorchReplicaSpecs": _mapping({"Master": _REPLICA, "Worker": _REPLICA}),
                    "runPolicy": _mapping(),
                }
            )
        }
    },
    "ConfigMap": {"properties": {"data": _mapping()}},
    "List": {"properties": {"items": {"type": "array", "items": {"type": "object"}}}},
}

_VALIDATORS = {
    kind: jsonschema.Draft7Validator({"allOf": [_COMMON, schema]}) for kind, schema in _BY_KIND.items()
}
_COMMON_VALIDATOR = jsonschema.Draft7Validator(_COMMON)

_TYPE_NAMES = {"object": "a mapping", "array": "a list", "string": "a string"}


def shape_errors(obj: Any) -> List[Tuple[Tuple[Any, ...], str]]:
    """Each node of ``obj`` that mlcc's rules read and that has the wrong type: (path, message).

    Nulls are not reported here (KS002 reports every null), but they still make the object's
    shape wrong where a rule would read into them: the caller skips the rules then.
    """
    kind = obj.get("kind") if isinstance(obj, dict) else None
    validator = _VALIDATORS.get(kind) if isinstance(kind, str) else None
    errors = sorted((validator or _COMMON_VALIDATOR).iter_errors(obj), key=lambda e: list(e.absolute_path))
    return [(tuple(error.absolute_path), _message(error)) for error in errors]


def _message(error: jsonschema.ValidationError) -> str:
    where = "/".join(str(p) for p in error.absolute_path) or "(top)"
    if error.validator == "required":
        missing = str(error.message).split("'")[1] if "'" in str(error.message) else str(error.message)
        return f"{missing} is missing"
    if error.validator == "minLength":
        return f"{where} is missing (empty)"
    if error.validator == "type":
        wanted = error.validator_value
        wanted_types = [wanted] if isinstance(wanted, str) else wanted
        names = [_TYPE_NAMES[t] for t in wanted_types if t in _TYPE_NAMES]
        return f"{where} must be {' or '.join(names) or wanted}, found {_json_type(error.instance)}"
    return f"{where}: {error.message}"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "a mapping"
