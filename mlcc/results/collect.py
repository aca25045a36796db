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
"""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError

from mlcc.errors import RegistryError, UsageError
from mlcc.render.openshift.run import GPU
from mlcc.results.parse import LogFile, parse_stream
from mlcc.validate import count

MPI_GROUP, MPI_VERSION, MPI_PLURAL = "kubeflow.org", "v2beta1", "mpijobs"
MPI_NAME = "training.kubeflow.org/job-name"
MPI_ROLE = "training.kubeflow.org/job-role"
DONE_JOB = ("Complete", "Failed")
DONE_MPIJOB = ("Succeeded", "Failed")


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
            configuration = client.Configuration()
            try:
                config.load_kube_config(  # type: ignore[no-untyped-call]
                    config_file=self.kubeconfig, context=self.context, client_configuration=configuration
                )
                if self._namespace is None:
                    _, current = config.list_kube_config_contexts(  # type: ignore[no-untyped-call]
                        config_file=self.kubeconfig
                    )
                    self._namespace = (current or {}).get("context", {}).get("namespace")
            except (config.ConfigException, OSError, TypeError) as error:
                raise UsageError(
                    f"no usable kubeconfig ({error})",
                    hint="oc login writes one; or pass --kubeconfig FILE (or set KUBECONFIG)",
                ) from None
            self._api = client.ApiClient(configuration=configuration)
        return self._api

    @property
    def namespace(self) -> str:
        _ = self.api
        if not self._namespace:
            raise UsageError("no namespace", hint="pass --namespace NS, or oc project NS")
        return self._namespace

    def _call(self, what: str, func: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ApiException as error:
            hint = None
            if error.status in (401, 403):
                hint = "log in again (oc login) or check your rights in the namespace"
            if error.status == 404:
                raise UsageError(f"{what}: not found in namespace {self.namespace}") from None
            raise ClusterError(f"{what}: {error.status} {error.reason}", hint=hint) from None
        except (HTTPError, OSError) as error:
            raise ClusterError(f"{what}: cannot reach the cluster ({type(error).__name__})") from None

    def job(self, kind: str, name: str) -> Dict[str, Any]:
        if kind == "job":
            api = client.BatchV1Api(self.api)
            found = self._call(f"Job {name}", api.read_namespaced_job, name, self.namespace)
            return dict(self.api.sanitize_for_serialization(found))
        custom = client.CustomObjectsApi(self.api)
        return dict(
            self._call(
                f"MPIJob {name}",
                custom.get_namespaced_custom_object,
                MPI_GROUP,
                MPI_VERSION,
                self.namespace,
                MPI_PLURAL,
                name,
            )
        )

    def pods(self, selector: str) -> List[Dict[str, Any]]:
        core = client.CoreV1Api(self.api)
        found = self._call("pods", core.list_namespaced_pod, self.namespace, label_selector=selector)
        items = self.api.sanitize_for_serialization(found).get("items") or []
        return sorted(items, key=lambda p: p["metadata"]["name"])

    def pod_log(self, pod: str, container: Optional[str]) -> LogFile:
        core = client.CoreV1Api(self.api)
        label = f"{self.namespace}/{pod}" + (f"/{container}" if container else "")
        response = self._call(
            f"log of pod {pod}",
            core.read_namespaced_pod_log,
            pod,
            self.namespace,
            container=container,
            _preload_content=False,
        )
        try:
            runs, problems, lines = parse_stream(response, f"pod/{label}")
        finally:
            response.release_conn()
        return LogFile(path=f"pod/{label}", size=0, lines=lines, runs=runs, problems=problems)


def _condition(document: Dict[str, Any], types: Tuple[str, ...]) -> Optional[str]:
    for condition in (document.get("status") or {}).get("conditions") or []:
        if condition.get("type") in types and str(condition.get("status")) == "True":
            return str(condition["type"])
    return None


def _gpus(spec: Dict[str, Any]) -> int:
    total = 0
    for container in spec.get("containers") or []:
        limits = (container.get("resources") or {}).get("limits") or {}
        # a count a cluster reports: ASCII digits, not negative (int() took "-8" and "٤")
        total += count(str(limits.get(GPU, 0))) or 0
    return total


def _first_container(pod: Dict[str, Any]) -> Optional[str]:
    containers = (pod.get("spec") or {}).get("containers") or []
    return str(containers[0]["name"]) if containers else None


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
        nodes: Optional[int] = len({p.get("spec", {}).get("nodeName") for p in pods} - {None}) or None
        gpus: Optional[int] = sum(_gpus(p.get("spec") or {}) for p in pods) or None
    else:
        pods = cluster.pods(f"{MPI_NAME}={name},{MPI_ROLE}=launcher")
        worker = ((document.get("spec") or {}).get("mpiReplicaSpecs") or {}).get("Worker") or {}
        replicas = count(worker.get("replicas") or 0) or 0
        per_worker = _gpus((worker.get("template") or {}).get("spec") or {})
        nodes = replicas or None
        gpus = replicas * per_worker or None
    if not pods:
        raise UsageError(
            f"{what} {name} finished ({outcome}) but its pods are gone: no logs to read",
            hint="keep the pods (ttlSecondsAfterFinished, cleanPodPolicy) or add the saved logs with "
            "mlcc results add",
        )
    logs = [cluster.pod_log(p["metadata"]["name"], container or _first_container(p)) for p in pods]
    return Collected(logs, outcome, nodes, gpus)
