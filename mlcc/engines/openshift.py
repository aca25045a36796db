"""Building on an OpenShift cluster: apply the generated objects, instantiate the
BuildConfig once (what ``oc start-build`` does), follow the build log, report the result.

The generated BuildConfigs carry no ConfigChange trigger, so applying them starts no
build by itself: the one explicit instantiate is the only build a ``mlcc build`` starts.

Through the official ``kubernetes`` client's dynamic client, with the cluster and
credentials from a kubeconfig (``--kubeconfig`` / ``KUBECONFIG`` / ``~/.kube/config``, as
``oc login`` writes it). Objects are created, or merge-patched when they exist, so that
applying works on OpenShift 3.11 as well as 4.x. The token never reaches a message.

Skip-if-built: the output ImageStreamTag (or the external repository's tag) is asked for
its image's ``io.mlcc.digest`` label; when it is this variant's digest, nothing is built.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence

import yaml
from kubernetes import client, config, dynamic
from kubernetes.dynamic.exceptions import NotFoundError

from mlcc.engines.base import BuildJob, BuildPolicy, BuildResult, Engine, EngineSettings, Log
from mlcc.errors import BuildError, UsageError
from mlcc.render.openshift import render_openshift
from mlcc.render.openshift.names import object_name

Obj = Dict[str, Any]
TERMINAL = ("Complete", "Failed", "Error", "Cancelled")
POLL_SECONDS = 2.0


class ClusterBuild(NamedTuple):
    name: str  # the Build object, e.g. maskrcnn-cuda10-1-cudnn7-ubi8-x86-64-3
    phase: str
    message: str


class OpenShift(Engine):
    """One cluster connection and namespace."""

    name = "openshift"

    def __init__(self, settings: EngineSettings, *, poll_seconds: float = POLL_SECONDS) -> None:
        super().__init__(settings)
        self.kubeconfig = settings.kubeconfig
        self.context = settings.context
        self._namespace = settings.cluster.namespace
        self.poll_seconds = poll_seconds
        self._client: Any = None

    # ------------------------------------------------------------------ connection

    @property
    def client(self) -> Any:
        if self._client is None:
            configuration = client.Configuration()
            try:
                config.load_kube_config(
                    config_file=self.kubeconfig, context=self.context, client_configuration=configuration
                )
                if self._namespace is None:
                    _, current = config.list_kube_config_contexts(config_file=self.kubeconfig)
                    self._namespace = (current or {}).get("context", {}).get("namespace")
            except (
                config.ConfigException,
                OSError,
                TypeError,
                ValueError,
                AttributeError,
                yaml.YAMLError,
            ) as error:
                raise UsageError(
                    f"--backend openshift: no usable kubeconfig ({error})",
                    hint="oc login writes one; or pass --kubeconfig FILE (or set KUBECONFIG)",
                ) from None
            try:
                self._client = dynamic.DynamicClient(client.ApiClient(configuration=configuration))
            except Exception as error:
                raise self._failure("cannot reach the cluster", error) from None
        return self._client

    @property
    def namespace(self) -> str:
        _ = self.client
        if not self._namespace:
            raise UsageError(
                "--backend openshift: no namespace", hint="pass --namespace NS, or oc project NS"
            )
        return self._namespace

    def check(self) -> None:
        _ = self.namespace

    def describe(self) -> str:
        return f"OpenShift, namespace {self.namespace}"

    # ------------------------------------------------------------------ the Engine interface

    def find_built(self, job: BuildJob, policy: BuildPolicy) -> Optional[BuildResult]:
        """The output ImageStreamTag already holds an image of this content (its label says so).

        With --push-to the image leaves the cluster; its registry is not asked, so it rebuilds.
        """
        if self.settings.cluster.push_to:
            return None
        stream = object_name(job.rendered.stack.benchmark.name)
        if self.image_digest_label(stream, job.variant) != job.digest:
            return None
        reason = f"{stream}:{job.variant} already holds these build inputs"
        return BuildResult(job, "skipped", reason, 0.0)

    def build(self, job: BuildJob, policy: BuildPolicy, log: Log) -> BuildResult:
        objects = list(render_openshift(job.rendered, self.settings.cluster).build_objects)
        configs = [o["metadata"]["name"] for o in objects if o["kind"] == "BuildConfig"]
        if self.settings.cluster.chain:
            # the first stage only: the later ones follow through their ImageChange triggers
            result = build_on_cluster(self, objects, configs[0], log)
            reason = (
                f"build {result.name}; {', '.join(configs[1:])} follow through their ImageChange"
                f" triggers (oc get builds -w -n {self.namespace})"
            )
            return BuildResult(job, "built", reason, 0.0, image=result.name)
        result = build_on_cluster(self, objects, configs[-1], log)
        return BuildResult(job, "built", f"build {result.name}", 0.0, image=result.name)

    def _resource(self, api_version: str, kind: str) -> Any:
        try:
            return self.client.resources.get(api_version=api_version, kind=kind)
        except Exception as error:
            raise self._failure(
                f"the cluster does not serve {api_version} {kind} (is it OpenShift?)", error
            ) from None

    def _failure(self, what: str, error: Exception) -> BuildError:
        status = getattr(error, "status", None)
        reason = getattr(error, "reason", None) or str(error).splitlines()[0]
        hint = None
        if status in (401, 403):
            hint = "log in again (oc login) or check the service account's rights in the namespace"
        return BuildError(f"OpenShift: {what}: {status or ''} {reason}".replace("  ", " ").strip(), hint=hint)

    # ------------------------------------------------------------------ objects

    def apply(self, objects: Sequence[Obj], log: Log) -> None:
        """Create each object, or merge-patch it when it exists."""
        for obj in objects:
            resource = self._resource(obj["apiVersion"], obj["kind"])
            name = obj["metadata"]["name"]
            body = {**obj, "metadata": {**obj["metadata"], "namespace": self.namespace}}
            body.pop("status", None)
            try:
                try:
                    resource.get(name=name, namespace=self.namespace)
                except NotFoundError:
                    resource.create(body=body, namespace=self.namespace)
                    log(f"{obj['kind']} {name} created")
                    continue
                resource.patch(
                    body=body,
                    name=name,
                    namespace=self.namespace,
                    content_type="application/merge-patch+json",
                )
                log(f"{obj['kind']} {name} configured")
            except BuildError:
                raise
            except Exception as error:
                raise self._failure(f"cannot apply {obj['kind']} {name}", error) from None

    def image_digest_label(self, stream: str, tag: str) -> Optional[str]:
        """The io.mlcc.digest label of the image an ImageStreamTag points at, if any."""
        resource = self._resource("image.openshift.io/v1", "ImageStreamTag")
        try:
            found = resource.get(name=f"{stream}:{tag}", namespace=self.namespace).to_dict()
        except NotFoundError:
            return None
        except Exception as error:
            raise self._failure(f"cannot read ImageStreamTag {stream}:{tag}", error) from None
        metadata = ((found.get("image") or {}).get("dockerImageMetadata") or {}).get("Config") or {}
        labels = metadata.get("Labels") or {}
        return labels.get("io.mlcc.digest")

    # ------------------------------------------------------------------ builds

    def start(self, build_config: str, build_args: Sequence[tuple] = ()) -> str:  # type: ignore[type-arg]
        """POST buildconfigs/<name>/instantiate (oc start-build); the new Build's name."""
        resource = self._resource("build.openshift.io/v1", "BuildConfig")
        request: Obj = {
            "kind": "BuildRequest",
            "apiVersion": "build.openshift.io/v1",
            "metadata": {"name": build_config},
            "triggeredBy": [{"message": "mlcc build"}],
        }
        if build_args:
            request["dockerStrategyOptions"] = {"buildArgs": [{"name": n, "value": v} for n, v in build_args]}
        try:
            build = resource.subresources["instantiate"].create(
                body=request, name=build_config, namespace=self.namespace
            )
        except Exception as error:
            raise self._failure(f"cannot start a build of {build_config}", error) from None
        return str(build.metadata.name)

    def follow(self, build: str, log: Log, *, clock: Callable[[], float] = time.monotonic) -> ClusterBuild:
        """Stream the build's log, then wait for its final phase."""
        self._stream_log(build, log)
        resource = self._resource("build.openshift.io/v1", "Build")
        while True:
            try:
                status = resource.get(name=build, namespace=self.namespace).to_dict().get("status") or {}
            except Exception as error:
                raise self._failure(f"cannot read build {build}", error) from None
            phase = str(status.get("phase", ""))
            if phase in TERMINAL:
                return ClusterBuild(build, phase, str(status.get("message") or status.get("reason") or ""))
            time.sleep(self.poll_seconds)

    def _stream_log(self, build: str, log: Log) -> None:
        path = f"/apis/build.openshift.io/v1/namespaces/{self.namespace}/builds/{build}/log"
        try:
            response = self.client.request(
                "GET",
                path,
                query_params=[("follow", "true")],
                header_params={"Accept": "text/plain"},
                serialize=False,
            )
        except Exception as error:
            log(f"(no build log: {getattr(error, 'reason', None) or error})")
            return
        pending = b""
        for chunk in _chunks(response):
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                log(line.decode(errors="replace"))
        if pending:
            log(pending.decode(errors="replace"))


def _chunks(response: Any) -> Any:
    """The body of a urllib3 response as it arrives (or at once, if already read)."""
    data = getattr(response, "_body", None)
    if data:
        return [data]
    try:
        return response.stream(4096)
    except Exception:
        return [response.data or b""]


def build_on_cluster(cluster: OpenShift, objects: List[Obj], build_config: str, log: Log) -> ClusterBuild:
    """Apply, start, follow; a failed build raises BuildError with the end of its log."""
    cluster.apply(objects, log)
    name = cluster.start(build_config)
    log(f"build {name} started")
    result = cluster.follow(name, log)
    if result.phase != "Complete":
        raise log.failure(f"OpenShift build {name} ended {result.phase}", result.message)
    return result
