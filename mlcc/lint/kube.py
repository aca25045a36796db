"""Lint for OpenShift and Kubernetes YAML: the real API schemas, then the server's rules.

The schemas (openapi2jsonschema "standalone-strict" files and kubeconform-layout CRD
schemas) catch unknown fields and wrong types but hold no enums and accept null nearly
everywhere; the semantic rules below add what the API server and the controllers check
(openshift-apiserver build validation, mpi-operator validation, the GPU device plugin).
"""

from __future__ import annotations

import importlib.util
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

import jsonschema
import yaml

from mlcc.errors import RecipeError, UsageError
from mlcc.kb.yamlsrc import LineMap, line_of, parse_yaml_all
from mlcc.lint.dockerfile import Finding
from mlcc.lint.shapes import shape_errors
from mlcc.render.openshift.run import GPU, GPU_COUNT_ENV
from mlcc.safeio import UnreadableFile, read_text

Obj = Dict[str, Any]
Key = Tuple[Any, ...]

# The schemas of the OpenShift kinds and the MPIJob CRD mlcc generates, shipped in the package
# (SOURCES.md there names each file's upstream and licence): `mlcc lint` validates them
# without --schema-dir, in a pip install as in a checkout.
SHIPPED_SCHEMAS = Path(__file__).parent / "schemas"

KUBE_RULES: Dict[str, str] = {
    "KS000": "the object has the shape of an API object: kind and apiVersion strings, and every "
    "field mlcc's rules read (spec, containers, triggers ...) of its API type",
    "KS001": "the object validates against its API schema (--schema-dir, default the OpenShift and "
    "MPIJob schemas mlcc ships; Kubernetes' own kinds by kubernetes-validate; a warning names each "
    "kind left unvalidated)",
    "KS002": "no null values (the OpenShift schemas accept null almost everywhere)",
    "KS003": "object names are valid Kubernetes names (Pods and MPIJobs: DNS labels)",
    "KS004": "BuildConfig strategy: a known type with exactly its own sub-struct",
    "KS005": "BuildConfig source: type matches content, Git and Binary exclusive, Docker builds "
    "have a source, inline Dockerfile <= 60000 bytes, relative contextDir and dockerfilePath",
    "KS006": "BuildConfig triggers: known types, webhook secrets by secretReference (never inline), "
    "allowEnv only on Generic, ImageChange needs an ImageStreamTag, no duplicate ImageChange",
    "KS007": "BuildConfig output: ImageStreamTag name:tag, or DockerImage with a pushSecret; "
    "imageLabels unique and valid",
    "KS008": "BuildConfig policy: runPolicy, history limits, completionDeadlineSeconds, "
    "imageOptimizationPolicy within what the server accepts",
    "KS009": "nodeSelector kubernetes.io/arch names a known architecture",
    "KS010": "GPUs: nvidia.com/gpu a positive whole number in limits (requests equal), GPU counts "
    "in the environment agree, /dev/shm memory-backed and CPU and memory requested where GPUs "
    "are used (a BestEffort pod is the first a node evicts)",
    "KS011": "MPIJob: replica specs Launcher (1) and Worker (>= 1), restartPolicy Never or OnFailure, "
    "cleanPodPolicy set, slotsPerWorker equal to each worker's GPUs",
    "KS012": "ConfigMap: keys valid, data at most 1 MiB",
    "KS013": "PyTorchJob: replica specs Master (1) and Worker (>= 1, optional), restartPolicy Never or "
    "OnFailure, cleanPodPolicy set, the container the operator configures named pytorch, "
    "nprocPerNode equal to each replica's GPUs",
}
KUBE_WARNINGS = {"KS001-missing"}

STRATEGIES = {
    "Docker": "dockerStrategy",
    "Source": "sourceStrategy",
    "Custom": "customStrategy",
    "JenkinsPipeline": "jenkinsPipelineStrategy",
}
SOURCE_TYPES = {"Git", "Dockerfile", "Binary", "Image", "None"}
TRIGGER_KEYS = {
    "GitHub": "github",
    "GitLab": "gitlab",
    "Bitbucket": "bitbucket",
    "Generic": "generic",
    "ImageChange": "imageChange",
    "ConfigChange": None,
}
RUN_POLICIES = {"Serial", "SerialLatestOnly", "Parallel"}
IMAGE_OPTIMIZATION = {"None", "SkipLayers", "SkipLayersAndWarn"}
NODE_ARCHES = {"amd64", "arm64", "ppc64le", "s390x"}
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_LABEL_NAME = re.compile(r"^[-._a-zA-Z0-9]+\Z")
_CONFIGMAP_KEY = re.compile(r"^[-._a-zA-Z0-9]+\Z")


class Located(NamedTuple):
    """A finding inside an object: the rule, the message, and the path to the value."""

    rule: str
    message: str
    path: Key = ()


# ----------------------------------------------------------------------------- schemas


class SchemaStore:
    """Finds and caches the JSON Schema of a kind in a kubeconform-style folder.

    Accepted layouts: ``<dir>[/<version-folder>]/<kind>-<group>-<version>.json`` as
    openapi2jsonschema writes them (core kinds ``<kind>-<version>.json``), and
    ``<dir>/<group>/<kind>_<version>.json`` for CRDs (datreeio/CRDs-catalog). Without a
    folder (no ``--schema-dir``) nothing is found there; Kubernetes' own kinds are then still
    validated when kubernetes-validate is installed (:func:`_kubernetes_findings`).
    """

    def __init__(self, root: Optional[Path]) -> None:
        self.root = root
        self.unmatched: set[Tuple[str, str]] = set()  # kinds without a schema, reported once
        folders = (p for p in root.iterdir() if p.is_dir()) if root is not None else ()
        self.folders = sorted(folders, key=lambda p: _version_key(p.name))
        self._found: Dict[Tuple[str, str, str], Optional[Path]] = {}  # asked once per kind

    def find(self, api_version: str, kind: str, openshift: str) -> Optional[Path]:
        key = (api_version, kind, openshift)
        if key not in self._found:  # a file of many objects of one kind: one lookup
            self._found[key] = self._find(api_version, kind, openshift)
        return self._found[key]

    def _find(self, api_version: str, kind: str, openshift: str) -> Optional[Path]:
        if self.root is None:
            return None
        group, _, version = api_version.rpartition("/")
        lower = kind.lower()
        flat = f"{lower}-{group.split('.')[0]}-{version}.json" if group else f"{lower}-{version}.json"
        candidates = [self.root / flat]
        prefix = "v3.11" if openshift == "3.11" else "v4."
        preferred = [f for f in reversed(self.folders) if f.name.startswith(prefix)]
        others = [f for f in reversed(self.folders) if f not in preferred]
        candidates += [f / flat for f in preferred + others]
        if group:
            candidates.append(self.root / group / f"{lower}_{version}.json")
        return next((c for c in candidates if c.is_file()), None)


def _version_key(name: str) -> Tuple[Tuple[int, ...], str]:
    numbers = tuple(int(n) for n in re.findall(r"\d+", name))
    return numbers, name


@lru_cache(maxsize=32)
def _validator(path: str) -> Any:

    try:
        schema = json.loads(read_text(Path(path)))
        jsonschema.Draft7Validator.check_schema(schema)
    except (UnreadableFile, ValueError, jsonschema.SchemaError) as error:
        message = getattr(error, "message", None) or str(error)
        raise UsageError(
            f"--schema-dir: {path} is not a usable JSON Schema: {message}",
            hint="point --schema-dir at kubeconform / openapi2jsonschema output",
        ) from None
    # The files declare "http://json-schema.org/schema#", which jsonschema does not map to a
    # draft; openapi2jsonschema writes draft-4/7-compatible schemas, so name Draft 7.
    return jsonschema.Draft7Validator(schema)


def schema_findings(obj: Obj, store: Optional[SchemaStore], openshift: str) -> List[Located]:
    """The object against its API schema: the one under ``--schema-dir``, else Kubernetes'
    own (kubernetes-validate), else one KS001-missing note per kind naming what was not
    validated. ``store`` None: no schema validation at all (mlcc's rules only)."""
    if store is None:
        return []
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if not isinstance(kind, str) or not isinstance(api_version, str):
        return []  # KS000 names them
    path = store.find(api_version, kind, openshift)
    if path is None:
        kubernetes = _kubernetes_findings(obj, openshift)
        if kubernetes is not None:
            return kubernetes
        if (api_version, kind) in store.unmatched:
            return []
        store.unmatched.add((api_version, kind))
        return [Located("KS001-missing", _unvalidated(api_version, kind, store))]
    found = []
    for error in sorted(_validator(str(path)).iter_errors(obj), key=lambda e: list(e.absolute_path))[:20]:
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        found.append(
            Located(
                "KS001",
                f"{where}: {error.message} ({path.parent.name}/{path.name})",
                tuple(error.absolute_path),
            )
        )
    return found


# The Kubernetes release whose API an OpenShift release serves (OpenShift 4.17: Kubernetes
# 1.30, the version the tests pin). OpenShift 3.11's Kubernetes 1.11 is older than any schema
# kubernetes-validate ships, so 3.11 objects are not given a newer API's verdict.
KUBERNETES_OF_OPENSHIFT = {"4": "1.30"}


def _kubernetes_findings(obj: Obj, openshift: str) -> Optional[List[Located]]:
    """kubernetes-validate's strict verdict on a Kubernetes kind, or None when it has no
    schema for the kind (OpenShift's, CRDs), the version, or is not installed."""
    version = KUBERNETES_OF_OPENSHIFT.get(openshift)
    if version is None or not kubernetes_validate_installed():
        return None
    validator = _kubernetes_validator(version, str(obj["apiVersion"]), str(obj["kind"]))
    if validator is None:
        return None
    error = jsonschema.exceptions.best_match(validator.iter_errors(obj))
    if error is None:
        return []
    where = "/".join(str(p) for p in error.absolute_path) or "(top)"
    message = f"{where}: {error.message} (Kubernetes {version}, kubernetes-validate)"
    return [Located("KS001", message, tuple(error.absolute_path))]


@lru_cache(maxsize=64)
def _kubernetes_validator(version: str, api_version: str, kind: str) -> Any:
    """kubernetes-validate's strict schema of a kind, as its ``validate`` builds it, made once.

    Its ``validate`` parses the kind's schema and the 2 MB definitions file on every call
    (~20 ms an object: a file of 60,000 ConfigMaps took 20 minutes); this keeps the validator
    per kind, so lint stays linear in the objects at the cost of the validation itself.
    None: no schema for the kind or the version.
    """
    from kubernetes_validate import utils  # the library's own file lookup and loader
    from referencing import Registry, Resource

    known = [v for v in utils.all_versions() if utils.major_minor(v) <= utils.major_minor(version)]
    if not known:
        return None
    schema_dir = f"v{known[-1]}-local-strict"
    group = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)  # rbac.authorization.k8s.io/v1 -> rbac-v1
    try:
        schema = utils.schema_contents(
            f"kubernetes-json-schema/{schema_dir}/{kind.lower()}-{group}.json", version
        )
        definitions = utils.schema_contents(f"kubernetes-json-schema/{schema_dir}/_definitions.json", version)
    except (FileNotFoundError, utils.VersionNotSupportedError):
        return None
    registry: Any = Resource.from_contents(definitions) @ (Resource.from_contents(schema) @ Registry())
    return jsonschema.validators.Draft202012Validator(schema, registry=registry)


def kubernetes_validate_installed() -> bool:
    return importlib.util.find_spec("kubernetes_validate") is not None


def _unvalidated(api_version: str, kind: str, store: SchemaStore) -> str:
    where = f"no schema for {api_version} {kind} under {store.root}" if store.root else "no --schema-dir"
    if kubernetes_validate_installed():
        also = "kubernetes-validate knows Kubernetes' own kinds only"
    else:
        also = "install kubernetes-validate for Kubernetes' own kinds"
    return f"{kind} not validated against its API schema ({where}; {also}): mlcc's rules only"


# ----------------------------------------------------------------------------- rules


def _nulls(value: Any, path: Key) -> Iterator[Located]:
    if value is None:
        yield Located("KS002", f"{'/'.join(map(str, path)) or '(top)'} is null", path)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _nulls(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _nulls(item, (*path, index))


def _name(obj: Obj) -> Iterator[Located]:
    name = (obj.get("metadata") or {}).get("name")
    label_kinds = {"Pod", "MPIJob", "Job"}
    if not isinstance(name, str):
        yield Located("KS003", "metadata.name is missing", ("metadata",))
        return
    if obj.get("kind") in label_kinds:
        if len(name) > 63 or not _LABEL.match(name):
            yield Located("KS003", f"{name!r} is not a DNS-1123 label (Pod names)", ("metadata", "name"))
    elif len(name) > 253 or not _SUBDOMAIN.match(name):
        yield Located("KS003", f"{name!r} is not a DNS-1123 subdomain", ("metadata", "name"))


def _build_config(obj: Obj) -> Iterator[Located]:
    spec = obj.get("spec") or {}
    yield from _strategy(spec)
    yield from _source(spec)
    yield from _triggers(spec)
    yield from _output(spec)
    yield from _policy(spec)
    yield from _node_selector(spec, ("spec",))


def _strategy(spec: Obj) -> Iterator[Located]:
    strategy = spec.get("strategy") or {}
    kind = strategy.get("type")
    present = [k for k in STRATEGIES.values() if k in strategy]
    if kind not in STRATEGIES:
        yield Located(
            "KS004", f"strategy type {kind!r} is not one of {', '.join(STRATEGIES)}", ("spec", "strategy")
        )
    elif present != [STRATEGIES[kind]]:
        yield Located(
            "KS004",
            f"strategy {kind} needs exactly {STRATEGIES[kind]}, found {present}",
            ("spec", "strategy"),
        )


def _source(spec: Obj) -> Iterator[Located]:
    source = spec.get("source") or {}
    where: Key = ("spec", "source")
    kind = source.get("type")
    if source and kind not in SOURCE_TYPES:
        yield Located("KS005", f"source type {kind!r} is not one of {', '.join(sorted(SOURCE_TYPES))}", where)
    if "git" in source and "binary" in source:
        yield Located("KS005", "git and binary sources exclude each other", where)
    expected = {"Git": "git", "Dockerfile": "dockerfile", "Binary": "binary"}.get(kind or "")
    if expected and expected not in source:
        yield Located("KS005", f"source type {kind} without {expected}", where)
    docker = (spec.get("strategy") or {}).get("type") == "Docker"
    if docker and not any(k in source for k in ("git", "binary", "dockerfile", "images")):
        yield Located("KS005", "a Docker build needs a source: git, binary, dockerfile or images", where)
    dockerfile = source.get("dockerfile")
    if isinstance(dockerfile, str) and len(dockerfile.encode()) > 60000:
        yield Located(
            "KS005",
            f"inline Dockerfile is {len(dockerfile.encode())} bytes (at most 60000)",
            (*where, "dockerfile"),
        )
    paths = [("contextDir", source.get("contextDir"))]
    paths.append(
        ("dockerfilePath", ((spec.get("strategy") or {}).get("dockerStrategy") or {}).get("dockerfilePath"))
    )
    for field, value in paths:
        if isinstance(value, str) and (value.startswith("/") or ".." in value.split("/")):
            yield Located("KS005", f"{field} {value!r} must be relative, without '..'", where)


def _triggers(spec: Obj) -> Iterator[Located]:
    triggers = spec.get("triggers") or []
    seen_image: List[str] = []
    strategy_from = ((spec.get("strategy") or {}).get("dockerStrategy") or {}).get("from") or {}
    for index, trigger in enumerate(triggers):
        where: Key = ("spec", "triggers", index)
        kind = trigger.get("type")
        if kind not in TRIGGER_KEYS:
            yield Located("KS006", f"trigger type {kind!r} is not one of {', '.join(TRIGGER_KEYS)}", where)
            continue
        key = TRIGGER_KEYS[kind]
        body = trigger.get(key) if key else None
        if kind in ("GitHub", "GitLab", "Bitbucket", "Generic"):
            body = body or {}
            if "secret" in body:
                yield Located("KS006", f"{kind} webhook with an inline secret: use secretReference", where)
            elif not (body.get("secretReference") or {}).get("name"):
                yield Located("KS006", f"{kind} webhook without secretReference.name", where)
            if body.get("allowEnv") and kind != "Generic":
                yield Located("KS006", "allowEnv is only allowed on Generic webhooks", where)
        if kind == "ImageChange":
            source = (body or {}).get("from")
            if source is None:
                if strategy_from.get("kind") != "ImageStreamTag":
                    yield Located(
                        "KS006",
                        "ImageChange without from needs the strategy to build FROM an ImageStreamTag",
                        where,
                    )
                tag = str(strategy_from.get("name"))
            else:
                if source.get("kind") != "ImageStreamTag":
                    yield Located("KS006", "ImageChange from must be an ImageStreamTag", where)
                tag = str(source.get("name"))
            if tag in seen_image:
                yield Located("KS006", f"two ImageChange triggers on {tag}", where)
            seen_image.append(tag)


def _output(spec: Obj) -> Iterator[Located]:
    output = spec.get("output") or {}
    to = output.get("to")
    where: Key = ("spec", "output")
    if to:
        kind, name = to.get("kind"), str(to.get("name", ""))
        if kind == "ImageStreamTag" and ":" not in name:
            yield Located("KS007", f"ImageStreamTag output {name!r} needs name:tag", where)
        elif kind == "DockerImage" and not (output.get("pushSecret") or {}).get("name"):
            yield Located("KS007", f"DockerImage output {name!r} without a pushSecret", where)
        elif kind not in ("ImageStreamTag", "DockerImage"):
            yield Located("KS007", f"output kind {kind!r} is not ImageStreamTag or DockerImage", where)
    names = [label.get("name") for label in output.get("imageLabels") or []]
    for index, name in enumerate(names):
        if not isinstance(name, str) or not _LABEL_NAME.match(name):
            yield Located("KS007", f"imageLabels name {name!r} is not valid", (*where, "imageLabels", index))
        elif names.index(name) != index:
            yield Located("KS007", f"imageLabels name {name!r} appears twice", (*where, "imageLabels", index))


def _policy(spec: Obj) -> Iterator[Located]:
    policy = spec.get("runPolicy")
    if policy is not None and policy not in RUN_POLICIES:
        yield Located(
            "KS008",
            f"runPolicy {policy!r} is not one of {', '.join(sorted(RUN_POLICIES))}",
            ("spec", "runPolicy"),
        )
    for field in ("successfulBuildsHistoryLimit", "failedBuildsHistoryLimit"):
        value = spec.get(field)
        if isinstance(value, int) and value < 0:
            yield Located("KS008", f"{field} is negative", ("spec", field))
    deadline = spec.get("completionDeadlineSeconds")
    if isinstance(deadline, int) and deadline <= 0:
        yield Located("KS008", "completionDeadlineSeconds must be > 0", ("spec", "completionDeadlineSeconds"))
    optimization = ((spec.get("strategy") or {}).get("dockerStrategy") or {}).get("imageOptimizationPolicy")
    if optimization is not None and optimization not in IMAGE_OPTIMIZATION:
        yield Located("KS008", f"imageOptimizationPolicy {optimization!r} is unknown", ("spec", "strategy"))


def _node_selector(spec: Obj, where: Key) -> Iterator[Located]:
    arch = (spec.get("nodeSelector") or {}).get("kubernetes.io/arch")
    if arch is not None and arch not in NODE_ARCHES:
        yield Located(
            "KS009",
            f"kubernetes.io/arch {arch!r} is not one of {', '.join(sorted(NODE_ARCHES))}",
            (*where, "nodeSelector"),
        )


def _pod_spec(spec: Obj, where: Key, *, expect_slots: Optional[int] = None) -> Iterator[Located]:
    yield from _node_selector(spec, where)
    memory_volumes = {
        v.get("name")
        for v in spec.get("volumes") or []
        if ((v.get("emptyDir") or {}).get("medium") == "Memory")
    }
    for index, container in enumerate(spec.get("containers") or []):
        here: Key = (*where, "containers", index)
        resources = container.get("resources") or {}
        limit = (resources.get("limits") or {}).get(GPU)
        request = (resources.get("requests") or {}).get(GPU)
        if request is not None and limit is None:
            yield Located(
                "KS010", f"{GPU} in requests only: GPUs are requested through limits", (*here, "resources")
            )
        if limit is None:
            continue
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            yield Located(
                "KS010", f"{GPU} limit {limit!r} is not a positive whole number", (*here, "resources")
            )
            continue
        if request is not None and request != limit:
            yield Located(
                "KS010", f"{GPU} request {request} differs from the limit {limit}", (*here, "resources")
            )
        for env in container.get("env") or []:
            if env.get("name") in GPU_COUNT_ENV and str(env.get("value")) != str(limit):
                yield Located(
                    "KS010",
                    f"{env.get('name')}={env.get('value')} but the container has {limit} GPU(s)",
                    (*here, "env"),
                )
        asked = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
        missing = [k for k in ("cpu", "memory") if k not in asked]
        if missing:
            yield Located(
                "KS010",
                f"GPUs without a {' or '.join(missing)} request: "
                "the pod is BestEffort, the first a node evicts",
                (*here, "resources"),
            )
        mounts = {m.get("mountPath"): m.get("name") for m in container.get("volumeMounts") or []}
        if mounts.get("/dev/shm") not in memory_volumes:
            yield Located(
                "KS010", "GPUs without a memory-backed /dev/shm (the 64 MiB default starves NCCL)", here
            )
        if expect_slots is not None and limit != expect_slots:
            yield Located(
                "KS011", f"slotsPerWorker is {expect_slots} but each worker has {limit} GPU(s)", here
            )


def _workload(obj: Obj) -> Iterator[Located]:
    kind = obj.get("kind")
    if kind == "Pod":
        yield from _pod_spec(obj.get("spec") or {}, ("spec",))
    elif kind == "Job":
        template = (obj.get("spec") or {}).get("template") or {}
        yield from _pod_spec(template.get("spec") or {}, ("spec", "template", "spec"))


def _mpijob(obj: Obj) -> Iterator[Located]:
    spec = obj.get("spec") or {}
    replicas = spec.get("mpiReplicaSpecs") or {}
    where: Key = ("spec", "mpiReplicaSpecs")
    if set(replicas) != {"Launcher", "Worker"}:
        yield Located(
            "KS011", f"mpiReplicaSpecs keys are {sorted(replicas)}, expected Launcher and Worker", where
        )
    launcher = replicas.get("Launcher") or {}
    worker = replicas.get("Worker") or {}
    if launcher and launcher.get("replicas", 1) != 1:
        yield Located("KS011", "the Launcher has exactly 1 replica", (*where, "Launcher"))
    if worker and (not isinstance(worker.get("replicas"), int) or worker.get("replicas", 0) < 1):
        yield Located("KS011", "Worker replicas must be a whole number >= 1", (*where, "Worker"))
    for role, replica in (("Launcher", launcher), ("Worker", worker)):
        policy = replica.get("restartPolicy")
        if replica and policy not in ("Never", "OnFailure"):
            yield Located(
                "KS011", f"{role} restartPolicy {policy!r} is not Never or OnFailure", (*where, role)
            )
        template_spec = (replica.get("template") or {}).get("spec") or {}
        slots = spec.get("slotsPerWorker") if role == "Worker" else None
        yield from _pod_spec(template_spec, (*where, role, "template", "spec"), expect_slots=slots)
    if not (spec.get("runPolicy") or {}).get("cleanPodPolicy"):
        yield Located(
            "KS011",
            "runPolicy.cleanPodPolicy is not set (the CRD and the controller disagree on its default)",
            ("spec",),
        )


def _pytorchjob(obj: Obj) -> Iterator[Located]:
    """Kubeflow's training operator configures the container named ``pytorch`` (its
    PET_* variables, the master's address); torchrun starts nprocPerNode processes a pod."""
    spec = obj.get("spec") or {}
    replicas = spec.get("pytorchReplicaSpecs") or {}
    where: Key = ("spec", "pytorchReplicaSpecs")
    if "Master" not in replicas or not set(replicas) <= {"Master", "Worker"}:
        yield Located(
            "KS013", f"pytorchReplicaSpecs keys are {sorted(replicas)}, expected Master [and Worker]", where
        )
    master = replicas.get("Master") or {}
    if master and master.get("replicas", 1) != 1:
        yield Located("KS013", "the Master has exactly 1 replica", (*where, "Master"))
    worker = replicas.get("Worker")
    if worker is not None and (not isinstance(worker.get("replicas"), int) or worker.get("replicas", 0) < 1):
        yield Located("KS013", "Worker replicas must be a whole number >= 1", (*where, "Worker"))
    per_node = spec.get("nprocPerNode")
    for role, replica in (("Master", master), ("Worker", worker or {})):
        if not replica:
            continue
        policy = replica.get("restartPolicy")
        if policy not in ("Never", "OnFailure"):
            yield Located(
                "KS013", f"{role} restartPolicy {policy!r} is not Never or OnFailure", (*where, role)
            )
        template_spec = (replica.get("template") or {}).get("spec") or {}
        here: Key = (*where, role, "template", "spec")
        containers = template_spec.get("containers") or []
        if not any(isinstance(c, dict) and c.get("name") == "pytorch" for c in containers):
            yield Located("KS013", "no container is named pytorch (the one the operator configures)", here)
        yield from _pod_spec(template_spec, here)
        for container in containers:
            limit = ((container.get("resources") or {}).get("limits") or {}).get(GPU)
            if per_node is not None and limit is not None and str(limit) != str(per_node):
                yield Located("KS013", f"nprocPerNode is {per_node} but each pod has {limit} GPU(s)", here)
    if not (spec.get("runPolicy") or {}).get("cleanPodPolicy"):
        yield Located("KS013", "runPolicy.cleanPodPolicy is not set", ("spec",))


def _configmap(obj: Obj) -> Iterator[Located]:
    data = obj.get("data") or {}
    size = 0
    for key, value in data.items():
        if not _CONFIGMAP_KEY.match(str(key)):
            yield Located("KS012", f"ConfigMap key {key!r} is not valid", ("data", key))
        if not isinstance(value, str):
            yield Located("KS012", f"ConfigMap value of {key!r} is not a string", ("data", key))
        else:
            size += len(str(key)) + len(value.encode())
    if size > 1024 * 1024:
        yield Located("KS012", f"ConfigMap data is {size} bytes (at most 1 MiB)", ("data",))


_BY_KIND: Dict[str, Sequence[Callable[[Obj], Iterator[Located]]]] = {
    "BuildConfig": (_build_config,),
    "Pod": (_workload,),
    "Job": (_workload,),
    "MPIJob": (_mpijob,),
    "PyTorchJob": (_pytorchjob,),
    "ConfigMap": (_configmap,),
}


def object_findings(obj: Obj, store: Optional[SchemaStore], openshift: str) -> List[Located]:
    """Every finding of one object; mlcc's rules run only on an object of the right shape."""
    shape = shape_errors(obj)
    found = [Located("KS000", message, path) for path, message in shape if _value_at(obj, path) is not None]
    found += schema_findings(obj, store, openshift)
    found += _nulls(obj, ())
    if shape:  # the rules below read into the nodes the shape names: they would misread them
        return found
    found += _name(obj)
    for check in _BY_KIND.get(str(obj.get("kind")), ()):
        found += check(obj)
    return found


def _value_at(obj: Any, path: Key) -> Any:
    for key in path:
        obj = obj[key]
    return obj


# ----------------------------------------------------------------------------- files


def lint_yaml(path: Path, store: Optional[SchemaStore], *, openshift: Optional[str] = None) -> List[Finding]:
    """Every object of a YAML file (Lists unwrapped), with file:line for each finding."""

    display = str(path)
    try:
        documents = parse_yaml_all(read_text(path), display)
    except UnreadableFile as error:
        return [Finding(display, 1, "KS001", str(error))]
    except RecipeError as error:
        return [Finding(display, error.line or 1, "KS001", str(error).split(": ", 1)[-1])]
    except (OSError, yaml.YAMLError) as error:
        return [Finding(display, 1, "KS001", f"cannot read: {error}")]
    findings: List[Finding] = []
    for data, lines in documents:
        if data is None or path.name == "kustomization.yaml":
            continue
        if not isinstance(data, dict):
            kind = type(data).__name__.replace("str", "a string").replace("list", "a list")
            findings.append(
                Finding(display, line_of(lines, ()) or 1, "KS001", f"{kind} is not an API object")
            )
            continue
        findings += _list_items_findings(data, lines, display)
        for obj, prefix in _objects(data):
            version = openshift or _target(obj)
            for located in object_findings(obj, store, version):
                rule = "KS001" if located.rule == "KS001-missing" else located.rule
                line = line_of(lines, (*prefix, *located.path)) or 1
                findings.append(
                    Finding(
                        display,
                        line,
                        rule,
                        f"{_obj_label(obj)}: {located.message}",
                        warning=located.rule in KUBE_WARNINGS,
                    )
                )
    return findings


def _objects(data: Obj) -> Iterator[Tuple[Obj, Key]]:
    """The objects of a document: a List's items that are mappings, or the document (a List
    whose items are not a list included, for KS000 to name)."""
    items = data.get("items")
    if data.get("kind") != "List" or not isinstance(items, list):
        yield data, ()
        return
    for index, item in enumerate(items):
        if isinstance(item, dict):
            yield item, ("items", index)


def _list_items_findings(data: Obj, lines: LineMap, display: str) -> Iterator[Finding]:
    """A List's items that are not objects (the items that are get their own findings)."""
    items = data.get("items")
    if data.get("kind") != "List" or not isinstance(items, list):
        return
    for index, item in enumerate(items):
        if item is not None and not isinstance(item, dict):
            line = line_of(lines, ("items", index)) or 1
            yield Finding(display, line, "KS000", f"List: items/{index} is not an API object (a mapping)")
        elif item is None:
            line = line_of(lines, ("items", index)) or 1
            yield Finding(display, line, "KS002", f"List: items/{index} is null")


def _target(obj: Obj) -> str:
    """The OpenShift version an object was written for: 3.11 objects carry status/lastVersion."""
    metadata = obj.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    version = annotations.get("mlcc.io/openshift") if isinstance(annotations, dict) else None
    return version if version in ("3.11", "4") else "4"


def _obj_label(obj: Obj) -> str:
    """``Kind name`` for messages, whatever types the fields have."""
    kind, metadata = obj.get("kind"), obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    kind_text = kind if isinstance(kind, str) and kind else "(no kind)"
    return f"{kind_text} {name if isinstance(name, str) else '?'}"
