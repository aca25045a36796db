"""Collect the result logs of a finished Job's or MPIJob's pods through the Kubernetes API.

Through the official ``kubernetes`` client, with the cluster and credentials of a
kubeconfig (``--kubeconfig`` / ``KUBECONFIG`` / ``~/.kube/config``, as ``oc login``
writes it). Each pod's log is streamed straight into the parser, so a long log never sits
in memory. The token never reaches a message.

Which pods: a Job's pods carry ``job-name=<job>``; an MPIJob's (kubeflow.org/v2beta1,
mpi-operator) carry ``training.kubeflow.org/job-name=<job>``, and the launcher
(``training.kubeflow.org/job-role=launcher``) is the one whose output holds mpirun's
rank 0 lines. GPUs are summed from the pods' ``nvidia.com/gpu`` limits (an MPIJob's from
its workers); nodes are the distinct nodes a Job's pods ran on, or an MPIJob's workers.

What the cluster sends is outside input: every request has a time limit (an API server
that never answers does not hold mlcc), objects are read as JSON of a checked shape (not
through the client's models, which raise on unexpected ones), their size and the number
of pods are bounded, and node and GPU counts must be counts a cluster can have.
"""

from __future__ import annotations

import time
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from kubernetes import client
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError

from mlcc import kubeconfig
from mlcc.errors import RegistryError, UsageError
from mlcc.image import untrusted
from mlcc.render.openshift.run import GPU
from mlcc.results.parse import LogFile, parse_stream
from mlcc.ui.safe_text import printable

MPI_GROUP, MPI_VERSION, MPI_PLURAL = "kubeflow.org", "v2beta1", "mpijobs"
MPI_NAME = "training.kubeflow.org/job-name"
MPI_ROLE = "training.kubeflow.org/job-role"
DONE_JOB = ("Complete", "Failed")
DONE_MPIJOB = ("Succeeded", "Failed")
REQUEST_TIMEOUT = (15.0, 60.0)  # (connect, each read) seconds for every API request
OBJECT_DEADLINE = 120.0  # a whole object or pod list
LOG_DEADLINE = 3600.0  # a whole pod log
MAX_OBJECT_BYTES = 64 * 1024 * 1024
MAX_LOG_BYTES = 4 * 1024 * 1024 * 1024
MAX_PODS = 4096
# Counts a cluster can have: beyond them a value is forged or broken, not a big cluster.
MAX_CLUSTER_NODES = 100_000
MAX_GPUS_PER_CONTAINER = 1024


class ClusterError(RegistryError):
    """The cluster refused or could not answer (exit 5, as registries do)."""


class Collected(NamedTuple):
    logs: List[LogFile]
    outcome: str  # "Complete", "Failed", "Succeeded"
    nodes: Optional[int]
    gpus: Optional[int]


class Cluster:
    def __init__(
        self,
        *,
        kubeconfig: Optional[str] = None,
        context: Optional[str] = None,
        namespace: Optional[str] = None,
    ) -> None:
        self.kubeconfig = kubeconfig
        self.context = context
        self._namespace = namespace
        self._api: Any = None

    @property
    def api(self) -> Any:
        if self._api is None:
            document, configuration = kubeconfig.load(
                self.kubeconfig, self.context, client.Configuration(), "results collect"
            )
            if self._namespace is None:
                self._namespace = kubeconfig.current_namespace(document, self.context)
            self._api = client.ApiClient(configuration=configuration)
        return self._api

    @property
    def namespace(self) -> str:
        _ = self.api
        if not self._namespace:
            raise UsageError("no namespace", hint="pass --namespace NS, or oc project NS")
        return self._namespace

    def _call(self, what: str, func: Any, *args: Any, **kwargs: Any) -> Any:
        """``func``'s raw response (never the client's models), within REQUEST_TIMEOUT."""
        try:
            return func(*args, _preload_content=False, _request_timeout=REQUEST_TIMEOUT, **kwargs)
        except ApiException as error:
            hint = None
            if error.status in (401, 403):
                hint = "log in again (oc login) or check your rights in the namespace"
            if error.status == 404:
                raise UsageError(f"{what}: not found in namespace {self.namespace}") from None
            reason = printable(str(error.reason))[:100]
            raise ClusterError(f"{what}: {error.status} {reason}", hint=hint) from None
        except (HTTPError, OSError) as error:
            raise ClusterError(f"{what}: cannot reach the cluster ({type(error).__name__})") from None

    def _object(self, what: str, func: Any, *args: Any, **kwargs: Any) -> Dict[str, Any]:
        """A JSON object from the API, bounded in time and size and checked to be an object."""
        response = self._call(what, func, *args, **kwargs)
        try:
            data = _Bounded(response, what, MAX_OBJECT_BYTES, OBJECT_DEADLINE).read_all()
        finally:
            response.release_conn()
        return untrusted.json_object(data, f"{what}: the API server's answer", ClusterError)

    def job(self, kind: str, name: str) -> Dict[str, Any]:
        if kind == "job":
            api = client.BatchV1Api(self.api)
            return self._object(f"Job {name}", api.read_namespaced_job, name, self.namespace)
        custom = client.CustomObjectsApi(self.api)
        return self._object(
            f"MPIJob {name}",
            custom.get_namespaced_custom_object,
            MPI_GROUP,
            MPI_VERSION,
            self.namespace,
            MPI_PLURAL,
            name,
        )

    def pods(self, selector: str) -> List[Dict[str, Any]]:
        core = client.CoreV1Api(self.api)
        found = self._object("pods", core.list_namespaced_pod, self.namespace, label_selector=selector)
        items = found.get("items") or []
        if not isinstance(items, list) or len(items) > MAX_PODS:
            raise ClusterError(f"pods: the API server's pod list is not a list of at most {MAX_PODS} pods")
        for pod in items:
            _pod_name(pod)
        return sorted(items, key=_pod_name)

    def pod_log(self, pod: str, container: Optional[str]) -> LogFile:
        core = client.CoreV1Api(self.api)
        label = f"{self.namespace}/{pod}" + (f"/{container}" if container else "")
        what = f"log of pod {pod}"
        response = self._call(what, core.read_namespaced_pod_log, pod, self.namespace, container=container)
        try:
            runs, problems, lines = parse_stream(
                _Bounded(response, what, MAX_LOG_BYTES, LOG_DEADLINE), f"pod/{label}"
            )
        finally:
            response.release_conn()
        return LogFile(path=f"pod/{label}", size=0, lines=lines, runs=runs, problems=problems)


class _Bounded:
    """A response read within a deadline in all and up to a size, else a ClusterError."""

    def __init__(self, response: Any, what: str, limit: int, deadline: float) -> None:
        self._response = response
        self._what = what
        self._limit = limit
        self._deadline = deadline
        self._end = time.monotonic() + deadline
        self._read = 0

    def read(self, n: int = -1) -> bytes:
        if time.monotonic() > self._end:
            raise ClusterError(f"{self._what}: not complete after {self._deadline:g} s; refused")
        size = 65536 if n is None or n < 0 else min(n, 65536)
        # read1: what has arrived; read() waits for all ``size`` bytes, so a server that
        # drips a byte at a time would hold it past the deadline
        read = getattr(self._response, "read1", None) or self._response.read
        try:
            chunk: bytes = read(size)
        except (HTTPError, OSError) as error:
            raise ClusterError(
                f"{self._what}: the cluster stopped answering ({type(error).__name__})"
            ) from None
        self._read += len(chunk)
        if self._read > self._limit:
            raise ClusterError(f"{self._what}: larger than {self._limit} bytes; refused")
        return chunk

    def read_all(self) -> bytes:
        chunks: List[bytes] = []
        while True:
            chunk = self.read(65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


def _pod_name(pod: Any) -> str:
    name = (
        pod.get("metadata", {}).get("name")
        if isinstance(pod, dict) and isinstance(pod.get("metadata"), dict)
        else None
    )
    if not isinstance(name, str) or not name or len(name) > 253 or not name.isprintable():
        raise ClusterError("pods: the API server sent a pod without a valid metadata.name")
    return name


def _mapping(value: Any, what: str) -> Dict[str, Any]:
    """An object of the API's answer ({} when absent); any other type is a ClusterError."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ClusterError(f"{what} is not an object as the Kubernetes API sends it; nothing stored")
    return value


def _list(value: Any, what: str) -> List[Any]:
    """A list of the API's answer ([] when absent), at most MAX_PODS long."""
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_PODS:
        raise ClusterError(f"{what} is not a list as the Kubernetes API sends it; nothing stored")
    return value


def _count(value: Any, what: str, most: int) -> int:
    """A count the cluster gave: a non-negative integer (or its decimal text) up to ``most``."""
    if isinstance(value, bool):
        value = None
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    if not isinstance(value, int) or not 0 <= value <= most:
        shown = printable(str(value))[:40]
        raise ClusterError(f"{what} is {shown!r}, not a count from 0 to {most}; nothing stored")
    return value


def _condition(document: Dict[str, Any], types: Tuple[str, ...]) -> Optional[str]:
    status = _mapping(document.get("status"), "the job's status")
    for condition in _list(status.get("conditions"), "the job's status.conditions"):
        condition = _mapping(condition, "a condition of the job")
        kind = condition.get("type")
        if isinstance(kind, str) and kind in types and str(condition.get("status")) == "True":
            return kind
    return None


def _gpus(spec: Dict[str, Any], what: str) -> int:
    total = 0
    for container in _list(spec.get("containers"), f"{what}: spec.containers"):
        resources = _mapping(
            _mapping(container, f"{what}: a container").get("resources"), f"{what}: resources"
        )
        limits = _mapping(resources.get("limits"), f"{what}: resources.limits")
        total += _count(limits.get(GPU, 0), f"{what}: a container's {GPU} limit", MAX_GPUS_PER_CONTAINER)
    return total


def _first_container(pod: Dict[str, Any]) -> Optional[str]:
    what = f"pod {_pod_name(pod)}"
    containers = _list(
        _mapping(pod.get("spec"), f"{what}: spec").get("containers"), f"{what}: spec.containers"
    )
    name = _mapping(containers[0], f"{what}: a container").get("name") if containers else None
    if containers and (not isinstance(name, str) or not name.isprintable() or not name):
        raise ClusterError(f"pod {_pod_name(pod)}: its first container has no valid name")
    return name


def collect(cluster: Cluster, kind: str, name: str, container: Optional[str] = None) -> Collected:
    """The logs of a finished job's pods (an MPIJob's launcher), with its nodes and GPUs."""
    document = cluster.job(kind, name)
    outcome = _condition(document, DONE_JOB if kind == "job" else DONE_MPIJOB)
    what = "Job" if kind == "job" else "MPIJob"
    if outcome is None:
        raise UsageError(
            f"{what} {name} has not finished: its pods are still writing their logs",
            hint="collect once it has finished (oc get " + kind + f" {name} shows its state)",
        )
    if kind == "job":
        pods = cluster.pods(f"job-name={name}")
        # a list, not a set: a hostile API may send an unhashable nodeName, which counts as none
        placed = [_mapping(p.get("spec"), f"pod {_pod_name(p)}: spec").get("nodeName") for p in pods]
        nodes: Optional[int] = len({n for n in placed if isinstance(n, str) and n}) or None
        gpus: Optional[int] = (
            sum(
                _gpus(_mapping(p.get("spec"), f"pod {_pod_name(p)}: spec"), f"pod {_pod_name(p)}")
                for p in pods
            )
            or None
        )
    else:
        pods = cluster.pods(f"{MPI_NAME}={name},{MPI_ROLE}=launcher")
        spec = _mapping(document.get("spec"), f"MPIJob {name}'s spec")
        replica_specs = _mapping(spec.get("mpiReplicaSpecs"), f"MPIJob {name}'s mpiReplicaSpecs")
        worker = _mapping(replica_specs.get("Worker"), f"MPIJob {name}'s Worker")
        replicas = _count(worker.get("replicas") or 0, f"MPIJob {name}'s Worker replicas", MAX_CLUSTER_NODES)
        template = _mapping(worker.get("template"), f"MPIJob {name}'s Worker template")
        per_worker = _gpus(
            _mapping(template.get("spec"), f"MPIJob {name}'s Worker spec"), f"MPIJob {name}'s Worker"
        )
        nodes = replicas or None
        gpus = replicas * per_worker or None
    if not pods:
        raise UsageError(
            f"{what} {name} finished ({outcome}) but its pods are gone: no logs to read",
            hint="keep the pods (ttlSecondsAfterFinished, cleanPodPolicy) or add the saved logs with "
            "mlcc results add",
        )
    logs = [cluster.pod_log(_pod_name(p), container or _first_container(p)) for p in pods]
    return Collected(logs, outcome, nodes, gpus)
