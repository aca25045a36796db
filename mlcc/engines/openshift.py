"""Building on an OpenShift cluster: apply the generated objects, instantiate the
BuildConfig once (what ``oc start-build`` does), follow the build log, report the result.

The generated BuildConfigs carry no ConfigChange trigger, so applying them starts no
build by itself: the one explicit instantiate is the only build a ``mlcc build`` starts.

Through the official ``kubernetes`` client's dynamic client, with the cluster and
credentials from a kubeconfig (``--kubeconfig`` / ``KUBECONFIG`` / ``~/.kube/config``, as
``oc login`` writes it). Objects are created, or merge-patched when they exist, so that
applying works on OpenShift 3.11 as well as 4.x. The token never reaches a message.

Skip-if-built: the output ImageStreamTag is asked for its image's ``io.mlcc.digest`` label;
when it is this variant's digest, nothing is built. With ``--push-to`` the external
registry is asked for the content tag, as the local engines ask it (credentials from the
environment or auth files); after a cluster build mlcc writes that tag onto the pushed
image, once its label shows it is this build's.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from kubernetes import client, dynamic
from kubernetes.dynamic.exceptions import NotFoundError

from mlcc import kubeconfig
from mlcc.engines.base import (
    BuildJob,
    BuildPolicy,
    BuildResult,
    Engine,
    EngineSettings,
    Log,
    content_tag,
    find_in_registry,
    pushed,
    registry_for,
)
from mlcc.errors import BuildError, Interrupted, RegistryError, UsageError
from mlcc.image.reference import Reference, parse_reference
from mlcc.image.registry import Manifest, Registry
from mlcc.render import DEFAULT_CLUSTER, DIGEST_LABEL, ClusterOptions, object_name, render_openshift

Obj = Dict[str, Any]
TERMINAL = ("Complete", "Failed", "Error", "Cancelled")
POLL_SECONDS = 2.0


class ClusterBuild(NamedTuple):
    """A Build object's final state on the cluster."""

    name: str  # the Build object, e.g. maskrcnn-cuda10-1-cudnn7-ubi8-x86-64-3
    phase: str
    message: str


class OpenShift(Engine):
    """One cluster connection and namespace."""

    name = "openshift"

    def __init__(self, settings: EngineSettings, *, poll_seconds: float = POLL_SECONDS) -> None:
        """Keep the settings; the cluster is reached on first use.

        Args:
            settings: The kubeconfig, its context and the cluster options (namespace,
                ``--push-to``, ``--chain``, ...) the objects are rendered with.
            poll_seconds: How often ``follow`` asks for the build's phase.
        """
        super().__init__(settings)
        self.kubeconfig = settings.kubeconfig
        self.context = settings.context
        self.cluster: ClusterOptions = settings.cluster if settings.cluster is not None else DEFAULT_CLUSTER
        self._namespace = self.cluster.namespace
        self.poll_seconds = poll_seconds
        self._client: Any = None
        self._stop = threading.Event()  # Ctrl-C: stop following the cluster's builds

    def interrupt(self) -> None:
        """Stop following the cluster's builds (Ctrl-C): each build followed ends with
        :class:`~mlcc.errors.Interrupted` naming the Build, which runs on in the cluster
        (``oc cancel-build`` stops it), and no further build is started."""
        self._stop.set()

    # ------------------------------------------------------------------ connection

    @property
    def client(self) -> Any:
        """The dynamic Kubernetes client, from the kubeconfig, on first use.

        Raises:
            UsageError: No usable kubeconfig (missing, malformed, unknown context).
            BuildError: The cluster cannot be reached.
        """
        if self._client is None:
            # read as checked input: a FIFO would block the client's loader, a binary file crash it
            document, configuration = kubeconfig.load(
                self.kubeconfig, self.context, client.Configuration(), "--backend openshift"
            )
            if self._namespace is None:
                self._namespace = kubeconfig.current_namespace(document, self.context)
            try:
                self._client = dynamic.DynamicClient(client.ApiClient(configuration=configuration))
            except Exception as error:
                raise self._failure("cannot reach the cluster", error) from None
        return self._client

    @property
    def namespace(self) -> str:
        """The namespace: ``--namespace``, else the kubeconfig context's.

        Raises:
            UsageError: Neither names one (or no usable kubeconfig).
        """
        _ = self.client
        if not self._namespace:
            raise UsageError(
                "--backend openshift: no namespace", hint="pass --namespace NS, or oc project NS"
            )
        return self._namespace

    def check(self) -> None:
        """Read the kubeconfig and the namespace before any build.

        Raises:
            UsageError: No usable kubeconfig, or no namespace.
            BuildError: The cluster cannot be reached.
        """
        _ = self.namespace

    def describe(self) -> str:
        """The line printed before a build.

        Returns:
            ``OpenShift, namespace <ns>``.

        Raises:
            UsageError: No usable kubeconfig, or no namespace.
        """
        return f"OpenShift, namespace {self.namespace}"

    # ------------------------------------------------------------------ the Engine interface

    def find_built(self, job: BuildJob, policy: BuildPolicy) -> Optional[BuildResult]:
        """Whether this content is already built where the BuildConfig's output goes.

        The output ImageStreamTag's image carries this digest label, or with ``--push-to`` the
        external registry holds the content tag (asked as the local engines ask it; a readable
        tag whose image carries the digest label gets the content tag written).

        Args:
            job: The variant to build.
            policy: How to talk to the ``--push-to`` registry.

        Returns:
            A ``"skipped"`` result, or None.

        Raises:
            BuildError: The cluster refused to show the ImageStreamTag.
            RegistryError: The ``--push-to`` registry could not be asked.
        """
        if self.cluster.push_to:
            return self._find_pushed(job, policy)
        stream = object_name(job.rendered.stack.benchmark.name)
        if self.image_digest_label(stream, job.variant) != job.digest:
            return None
        reason = f"{stream}:{job.variant} already holds these build inputs"
        return BuildResult(job, "skipped", reason, 0.0)

    def build(self, job: BuildJob, policy: BuildPolicy, log: Log) -> BuildResult:
        """Apply the variant's objects, start its build, stream its log and wait for it.

        With ``--chain`` the stack stage is started; the framework and benchmark builds follow
        through their ImageChange triggers. With ``--push-to`` the pushed image then gets its
        content tag, so the next build of the same inputs is skipped.

        Args:
            job: The variant to build.
            policy: How to talk to the ``--push-to`` registry.
            log: Receives the apply lines and the build's log.

        Returns:
            A ``"built"`` result naming the cluster's Build (and the pushed digest).

        Raises:
            BuildError: An object could not be applied, the build not started, or it ended
                other than Complete (with the end of its log).
        """
        # a runtime image's BuildConfig names its build stage's parent by its pull spec,
        # which names the namespace: the one this connection works in
        options = dataclasses.replace(self.cluster, namespace=self.namespace)
        objects = list(render_openshift(job.rendered, options).build_objects)
        configs = [o["metadata"]["name"] for o in objects if o["kind"] == "BuildConfig"]
        if self.cluster.chain:
            for config in _runtime_stages(objects):  # FROM the base: no other stage triggers it
                build_on_cluster(self, objects, config, log)
            # the first stage only: the later ones follow through their ImageChange triggers
            result = build_on_cluster(self, objects, configs[0], log)
            reason = (
                f"build {result.name}; {', '.join(configs[1:])} follow through their ImageChange"
                f" triggers (oc get builds -w -n {self.namespace})"
            )
            return BuildResult(job, "built", reason, 0.0, image=result.name)
        result = build_on_cluster(self, objects, configs[-1], log)
        digest = self._tag_pushed(job, policy, log) if self.cluster.push_to else None
        return BuildResult(job, "built", f"build {result.name}", 0.0, digest=digest, image=result.name)

    # ------------------------------------------------------------------ --push-to

    def pushed_image(self, job: BuildJob, policy: BuildPolicy) -> Optional[Reference]:
        """With ``--push-to``, the readable tag the cluster's build pushes to.

        Args:
            job: The variant being built.
            policy: Unused: the cluster options decide.

        Returns:
            The reference, or None when the image stays in the cluster's ImageStream.
        """
        return self._pushed_refs(job)[1] if self.cluster.push_to else None

    def is_built(self, job: BuildJob, policy: BuildPolicy) -> Optional[str]:
        if self.cluster.push_to:
            content, readable = self._pushed_refs(job)
            registry = registry_for(content, policy)
            if registry.exists(content.repository, content.tag or "") is not None:
                return f"{content} is in the registry"
            manifest = registry.manifest(readable.repository, readable.tag or "")
            if manifest is not None and _digest_label(registry, readable, manifest) == job.digest:
                return f"{readable} already holds these build inputs"
            return None
        stream = object_name(job.rendered.stack.benchmark.name)
        if self.image_digest_label(stream, job.variant) == job.digest:
            return f"{stream}:{job.variant} already holds these build inputs"
        return None

    def _pushed_refs(self, job: BuildJob) -> Tuple[Reference, Reference]:
        """(content tag, readable tag) in the --push-to repository."""
        repository = self.cluster.push_to
        return (
            parse_reference(f"{repository}:{content_tag(job.digest)}"),
            parse_reference(f"{repository}:{job.variant}"),
        )

    def _find_pushed(self, job: BuildJob, policy: BuildPolicy) -> Optional[BuildResult]:
        content, readable = self._pushed_refs(job)
        found = find_in_registry(job, content, readable, policy)
        if found is not None:
            return found
        # pushed by a cluster build whose content tag was never written: its label decides
        registry = registry_for(readable, policy)
        manifest = registry.manifest(readable.repository, readable.tag or "")
        if manifest is None or _digest_label(registry, readable, manifest) != job.digest:
            return None
        registry.put_manifest(content.repository, content.tag or "", manifest.body, manifest.media_type)
        reason = f"{readable} already holds these build inputs"
        return BuildResult(job, "skipped", reason, 0.0, manifest.digest, sizes=pushed(registry, content)[1])

    def _tag_pushed(self, job: BuildJob, policy: BuildPolicy, log: Log) -> Optional[str]:
        """Give the image the cluster pushed its content tag, so the next build of the same
        inputs is skipped; only when the pushed image carries this build's digest label
        (another build may have pushed the readable tag meanwhile)."""
        content, readable = self._pushed_refs(job)
        registry = registry_for(readable, policy)
        try:
            manifest = registry.manifest(readable.repository, readable.tag or "")
            if manifest is None:
                log(f"mlcc: {readable} is not in its registry after the build: no content tag written")
                return None
            if _digest_label(registry, readable, manifest) != job.digest:
                log(f"mlcc: {readable} holds another build's image now: no content tag written")
                return None
            registry.put_manifest(content.repository, content.tag or "", manifest.body, manifest.media_type)
        except RegistryError as error:
            # the image is built and pushed; only the next skip is lost (--force reaches here
            # when this machine cannot reach the registry the cluster pushes to)
            log(f"mlcc: no content tag written ({error}); the next build of these inputs will not skip")
            return None
        log(f"mlcc: tagged {content}")
        return manifest.digest

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
        """Create each object, or merge-patch it when it exists (as ``oc apply`` does).

        Args:
            objects: The objects ``mlcc gen`` writes for the variant.
            log: Receives one line per object (created, configured).

        Raises:
            BuildError: The cluster refused an object, or does not serve its kind.
        """
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
        """The io.mlcc.digest label of the image an ImageStreamTag points at, if any.

        Args:
            stream: The ImageStream's name.
            tag: The tag, the variant's name.

        Returns:
            The label's value, or None when the tag or label is missing.

        Raises:
            BuildError: The cluster refused to show the ImageStreamTag.
        """
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
        """Start a build: POST ``buildconfigs/<name>/instantiate`` (``oc start-build``).

        Args:
            build_config: The BuildConfig's name.
            build_args: ``(name, value)`` pairs to override the Docker strategy's build args.

        Returns:
            The new Build's name.

        Raises:
            BuildError: The cluster refused to start it.
        """
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
        """Stream the build's log, then wait for its final phase.

        Args:
            build: The Build's name.
            log: Receives the build's log lines.
            clock: The clock polling is measured by.

        Returns:
            The build's final phase and message (Complete, Failed, Error or Cancelled).

        Raises:
            BuildError: The cluster refused to show the build.
            Interrupted: Ctrl-C (:meth:`interrupt`): mlcc stopped following; the build runs on.
        """
        self._stream_log(build, log)
        resource = self._resource("build.openshift.io/v1", "Build")
        while True:
            self._stop_following(build)
            try:
                status = resource.get(name=build, namespace=self.namespace).to_dict().get("status") or {}
            except Exception as error:
                raise self._failure(f"cannot read build {build}", error) from None
            phase = str(status.get("phase", ""))
            if phase in TERMINAL:
                return ClusterBuild(build, phase, str(status.get("message") or status.get("reason") or ""))
            self._stop.wait(self.poll_seconds)  # a Ctrl-C ends the wait at once

    def stop_if_interrupted(self, what: str, hint: Optional[str] = None) -> None:
        """Raise Interrupted once :meth:`interrupt` was called.

        Args:
            what: What is left undone, for the message.
            hint: What the user can do about it.

        Raises:
            Interrupted: Ctrl-C asked the builds to stop.
        """
        if self._stop.is_set():
            raise Interrupted(f"interrupted (Ctrl-C): {what}", hint=hint)

    def _stop_following(self, build: str) -> None:
        self.stop_if_interrupted(
            f"stopped following build {build}, which runs on in the cluster",
            hint=f"stop it with: oc cancel-build {build} -n {self.namespace}",
        )

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
            self._stop_following(build)
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                log(line.decode(errors="replace"))
        if pending:
            log(pending.decode(errors="replace"))


def _digest_label(registry: Registry, ref: Reference, manifest: Manifest) -> Optional[str]:
    """The io.mlcc.digest label of a pushed single-arch image (a cluster pushes no index)."""
    if manifest.is_index:
        return None
    config = manifest.data.get("config")
    digest = config.get("digest") if isinstance(config, dict) else None
    if not isinstance(digest, str):
        return None
    image_config = registry.blob_json(ref.repository, digest).get("config")
    labels = image_config.get("Labels") if isinstance(image_config, dict) else None
    label = labels.get(DIGEST_LABEL) if isinstance(labels, dict) else None
    return label if isinstance(label, str) else None


def _chunks(response: Any) -> Any:
    """The body of a urllib3 response as it arrives (or at once, if already read)."""
    data = getattr(response, "_body", None)
    if data:
        return [data]
    try:
        return response.stream(4096)
    except Exception:
        return [response.data or b""]


def _runtime_stages(objects: List[Obj]) -> List[str]:
    """The BuildConfigs of a runtime image's runtime stack stage among ``objects``."""
    return [
        o["metadata"]["name"]
        for o in objects
        if o["kind"] == "BuildConfig"
        and o["metadata"]["labels"].get("app.kubernetes.io/name") == "mlcc-runtime"
    ]


def build_on_cluster(cluster: OpenShift, objects: List[Obj], build_config: str, log: Log) -> ClusterBuild:
    """Apply, start, follow: one build on the cluster.

    Args:
        cluster: The connected engine.
        objects: The objects to apply first.
        build_config: The BuildConfig to start.
        log: Receives the apply lines and the build's log.

    Returns:
        The completed build.

    Raises:
        BuildError: Applying or starting failed, or the build ended other than Complete
            (with the end of its log).
    """
    cluster.apply(objects, log)
    cluster.stop_if_interrupted(f"{build_config} was not started")  # a chain's next stage
    name = cluster.start(build_config)
    log(f"build {name} started")
    result = cluster.follow(name, log)
    if result.phase != "Complete":
        raise log.failure(f"OpenShift build {name} ended {result.phase}", result.message)
    return result
