"""The engine interface every backend implements (repo2docker's idea: one small abstract
class, engines behind it, found through entry points), and what a build is asked to do.

An :class:`Engine` answers two questions for a :class:`BuildJob`: is this content already
built (``find_built``), and build it (``build``). Everything around that -- the lock per
content, ``--force``, the history, manifest lists -- lives once in :mod:`mlcc.app.build`.
:class:`ImageEngine` is the shared half of the local engines (buildah, podman, docker):
they build into local storage, tag, and push through their own client; the registry is
asked over its HTTP API whether a content tag exists.
"""

from __future__ import annotations

import collections
import hashlib
import re
import tempfile
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar, Deque, Dict, List, NamedTuple, Optional, Tuple

from mlcc.errors import BuildError, MlccError, RegistryError, UsageError
from mlcc.flags import flag
from mlcc.image.auth import Credentials, credentials_for
from mlcc.image.base import ResolvedBase
from mlcc.image.reference import Reference, parse_reference, parse_repository
from mlcc.image.registry import Registry
from mlcc.image.sizes import ImageSizes, combined, from_manifest
from mlcc.output import write_tree
from mlcc.render import (
    BASE,
    SOURCE_DATE_EPOCH,
    Bound,
    Rendered,
    Stage,
    StageGraph,
    chain_graph,
    with_base_digest,
)

LOCAL_REGISTRY = "localhost/mlcc"
CONTENT_PREFIX = "mlcc-"


def content_tag(digest: str) -> str:
    """The content tag of a build-inputs digest: ``mlcc-`` and the first 32 hex digits.

    Args:
        digest: A ``sha256:<hex>`` digest (``BuildJob.digest``).

    Returns:
        The tag, e.g. ``mlcc-2d0709b63793ff21e67fd9fc82fe3117``.

    Raises:
        IndexError: ``digest`` has no ``algorithm:`` prefix.
    """
    return CONTENT_PREFIX + digest.split(":", 1)[1][:32]


def _registry(text: Optional[str]) -> Optional[Reference]:
    return parse_repository(text) if text else None


def cache_repository(policy: BuildPolicy) -> Optional[Reference]:
    """``--cache-repo`` as a repository (a registry and a path, no tag), or None."""
    if not policy.cache_repo:
        return None
    found = parse_repository(policy.cache_repo, what="--cache-repo")
    if not found.repository:
        raise UsageError(
            f"--cache-repo {policy.cache_repo}: name a repository, not only a registry",
            hint=f"e.g. --cache-repo {found.registry}/mlcc-cache",
        )
    return found


@dataclass(frozen=True)
class BuildPolicy:
    """Where images go and how they are built; the same for every engine and command."""

    registry: Optional[str] = flag(
        "--registry",
        "Where images go, e.g. quay.io/me or 127.0.0.1:5000.",
        default=None,
        metavar="REGISTRY[/NS]",
    )
    push: bool = flag(
        "--push", "Push to --registry (and skip what it already holds).", default=False, is_flag=True
    )
    force: bool = flag(
        "--force", "Build even if the content tag already exists.", default=False, is_flag=True
    )
    tls_verify: bool = flag(
        "--tls-verify",
        "Verify the registry's TLS certificate (--no-tls-verify for a plain-HTTP test registry).",
        default=True,
        secondary="--no-tls-verify",
        show_default=True,
    )
    sbom: bool = flag(
        "--sbom",
        "With --push (OpenShift: --push-to): push the image's SBOM (CycloneDX) beside it,"
        " tagged sha256-<hex>.sbom.",
        default=True,
        secondary="--no-sbom",
        show_default=True,
    )
    no_cache: bool = flag(
        "--no-cache", "Build without the engine's layer cache.", default=False, is_flag=True
    )
    network: Optional[str] = flag(
        "--network", "Network mode of RUN steps (e.g. host).", default=None, metavar="MODE"
    )
    cache_repo: Optional[str] = flag(
        "--cache-repo",
        "Share build steps through this registry repository, e.g. quay.io/me/mlcc-cache (buildah"
        " and podman: --cache-from/--cache-to): a build on another machine, or a later CI job,"
        " takes the steps one built here instead of running them again.",
        default=None,
        metavar="REGISTRY/REPO",
    )
    # --chain on a local engine (the flag is the cluster options', which OpenShift reads itself):
    # the shared stages are images of their own in --registry (mlcc.app.build.build_stages)
    chain: bool = False

    def __post_init__(self) -> None:
        if self.registry is not None and not self.registry.strip():  # '' would mean localhost/mlcc
            raise UsageError("--registry: empty value", hint="give REGISTRY[/NAMESPACE], e.g. quay.io/me")
        _registry(self.registry)  # a malformed --registry is refused before anything runs
        cache_repository(self)
        if self.push and self.registry is None:
            raise UsageError("--push needs --registry REGISTRY[/NAMESPACE], e.g. --registry quay.io/me")
        # handed to the engine as an argument: an option-looking value would become a flag
        if self.network is not None and not re.match(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}\Z", self.network):
            raise UsageError(
                f"--network: {self.network[:60]!r} is not a network mode",
                hint="host, none, bridge, private, or a network name",
            )

    @property
    def repository_root(self) -> str:
        """Where images go: ``--registry`` without a trailing slash, else ``localhost/mlcc``."""
        found = _registry(self.registry)
        return str(found).rstrip("/") if found else LOCAL_REGISTRY


class BuildJob(NamedTuple):
    """One variant to build, with the names it will carry."""

    rendered: Rendered
    repository: str  # <registry>[/<namespace>]/<benchmark>
    label: str  # what the user asked for, e.g. "maskrcnn base=ubi8 arch=x86_64"
    # The base image's manifest digest, resolved when the build starts (pin_base): the
    # build pulls exactly it, and it is part of the content digest.
    base: Optional[ResolvedBase] = None
    pins: str = ""  # a matrix cell's pins as flags (``--base ubi8 --arch x86_64``), for CI
    # The images the build makes: the rendering's one stage, or with --chain on a local
    # engine the chained stages (job_for renders them once, here)
    graph: Optional[StageGraph] = None
    # --chain: each shared stage image built or found, pinned by kind
    # (``{"framework": "<registry>/mlcc-framework@sha256:..."}``); the build is then the
    # benchmark stage's steps FROM them. Empty: the whole Dockerfile.
    built: Tuple[Tuple[str, str], ...] = ()

    @property
    def variant(self) -> str:
        """The variant's name, e.g. ``cuda10.1-cudnn7-ubi8-x86_64``."""
        return self.rendered.variant

    @property
    def stages(self) -> StageGraph:
        """The stage graph the job builds (the rendering's own when none was given)."""
        return self.graph if self.graph is not None else self.rendered.graph

    @property
    def parent(self) -> Optional[str]:
        """--chain, once its stages are built: the stage image the final stage is FROM."""
        return self.bound.parent if self.built else None

    @property
    def bound(self) -> Bound:
        """The image's stage bound to the pinned base: with its stage images built, the
        chain's benchmark stage FROM them, else the flat image (data: each stage was
        rendered once, by ``render`` and ``job_for``)."""
        graph = self.stages if self.built else self.rendered.graph
        base = self.base.pinned if self.base is not None else None
        return graph.bind(graph.final, base=base, built=dict(self.built))

    @property
    def digest(self) -> str:
        """The build inputs: the generated files and build args, and the base's digest.

        Once the base is pinned by its manifest digest, that digest says which base is
        built on, wherever it is pulled from: the files are hashed as they name the
        stack's own base reference (``Rendered.base_free_digest``), so ``--base-image`` of a
        mirror that serves the same manifest gets the published content tag and
        skip-if-built finds the image."""
        if self.base is None:
            return self.rendered.digest
        data = f"{self.rendered.base_free_digest}\nbase {self.base.digest}\n".encode()
        return "sha256:" + hashlib.sha256(data).hexdigest()

    @property
    def build_args(self) -> Tuple[Tuple[str, str], ...]:
        """The build args, ``BASE_IMAGE`` naming the base by digest once it is pinned (with
        its stages built: the stage image, and only the mirror args the benchmark stage
        declares)."""
        if not self.built and self.base is None:
            return self.rendered.build_args
        return self.bound.build_args

    @property
    def labels(self) -> Tuple[Tuple[str, str], ...]:
        """Labels set at build time: the OCI annotation for the base's digest (the OS base,
        chained or not); chained, ``io.mlcc.stage`` names the benchmark stage over the one
        the stage image it is built on carries."""
        found: Tuple[Tuple[str, str], ...] = ()
        if self.base is not None:
            found = (("org.opencontainers.image.base.digest", self.base.digest),)
        if self.built:
            found += (("io.mlcc.stage", "benchmark"),)
        return found

    @property
    def files(self) -> Tuple[Tuple[str, str], ...]:
        """The build context: the generated files, stack.json naming the base's digest;
        with its stages built, the Dockerfile is the benchmark stage's (its digest label
        stamped)."""
        files = self.rendered.files
        if self.built:
            final = self.bound.dockerfile
            files = tuple((n, final if n == self.rendered.main_file else c) for n, c in files)
        if self.base is None:
            return files
        return tuple(
            (name, with_base_digest(content, self.base.digest) if name == "stack.json" else content)
            for name, content in files
        )

    @property
    def readable(self) -> Reference:
        """``<repository>:<variant>``: the tag people read."""
        return parse_reference(f"{self.repository}:{self.variant}")

    @property
    def content(self) -> Reference:
        """``<repository>:mlcc-<digest>``: the immutable tag named after the build inputs."""
        return parse_reference(f"{self.repository}:{content_tag(self.digest)}")


def job_for(rendered: Rendered, policy: BuildPolicy, label: str, pins: str = "") -> BuildJob:
    """The job that builds a rendered variant under the policy's registry.

    Args:
        rendered: The variant as :func:`mlcc.render.render` made it.
        policy: Where images go (``--registry``) and how they are built.
        label: What the user asked for, shown in logs and the history
            (e.g. ``maskrcnn --cuda 10.1``).
        pins: A matrix cell's pins as flags (``--base ubi8 --arch x86_64``), for CI plans.

    Returns:
        The job, its repository ``<registry>/<benchmark>`` (``_`` becomes ``-``), with
        ``policy.chain`` its chained stages; the base is not pinned yet
        (:func:`mlcc.app.build.pin_base` does that).
    """
    benchmark = rendered.stack.benchmark.name.replace("_", "-")
    # --chain renders the stages once: what the stage images are FROM is the stack's own
    # base reference, whatever --base-image names (a mirror serving the same manifest
    # shares them); the build binds the pinned base
    graph = chain_graph(rendered, rendered.stack.base.ref) if policy.chain else None
    return BuildJob(rendered, f"{policy.repository_root}/{benchmark}", label, pins=pins, graph=graph)


class StageJob(NamedTuple):
    """One shared stage image of a chained build (``--chain`` on a local engine).

    Its content digest stands for the stage's Dockerfile and everything under it: the
    base's manifest digest for the stack stage, the stack stage's content digest for the
    framework stage. Two jobs that share it build it once; a machine that finds it in the
    registry pulls it instead of building it."""

    stage: Stage
    graph: StageGraph
    repository: str  # <registry>[/<namespace>]/mlcc-<stage>
    platform: str
    under: str  # what it is built on: the base's manifest digest, or the stage before's digest
    base: str  # the base as the build pulls it (pinned by digest)
    built: Tuple[Tuple[str, str], ...] = ()  # the stage images it is built on, found or built

    @property
    def digest(self) -> str:
        """sha256 of the stage's Dockerfile digest, what it is built on and the platform."""
        data = f"mlcc stage v1\n{self.stage.digest}\non {self.under}\nplatform {self.platform}\n"
        return "sha256:" + hashlib.sha256(data.encode()).hexdigest()

    @property
    def content(self) -> Reference:
        """``<repository>:mlcc-<digest>``: the immutable tag named after what it is."""
        return parse_reference(f"{self.repository}:{content_tag(self.digest)}")

    @property
    def readable(self) -> Reference:
        """``<repository>:<readable>-<8 hex of its Dockerfile digest>``, as OpenShift tags it."""
        return parse_reference(f"{self.repository}:{self.stage.tag}")

    @property
    def bound(self) -> Bound:
        """The stage bound to the pinned base and the stage images it is built on."""
        return self.graph.bind(self.stage, base=self.base, built=dict(self.built))


def stage_jobs(job: BuildJob, policy: BuildPolicy) -> List[StageJob]:
    """The shared stage images of a chained job, in build order, each on its parent.

    Args:
        job: The variant, its base pinned.
        policy: Where the stage images go: ``<--registry>/mlcc-stack``, ``.../mlcc-framework``.

    Returns:
        The shared stages of the job's graph (``job_for`` renders it with ``--chain``:
        :func:`mlcc.render.chain_graph`): the stack stage, the framework stage when the
        variant has one, a runtime image's runtime stage; none for a flat job. None is
        built yet (``built`` is filled as the build finds or builds them).

    Raises:
        UsageError: The base is not pinned yet (a stage's name depends on its digest).
    """
    if job.base is None:
        raise UsageError("a chained build names its stages after the base's digest: pin the base first")
    graph = job.stages  # a flat job's graph has no shared stage
    found: List[StageJob] = []
    digests: Dict[str, str] = {BASE: job.base.digest}
    for stage in graph.shared:
        repository = f"{policy.repository_root}/{stage.repository}"
        found.append(
            StageJob(stage, graph, repository, job.rendered.platform, digests[stage.parent], job.base.pinned)
        )
        digests[stage.kind] = found[-1].digest
    return found


class BuildResult(NamedTuple):
    job: BuildJob
    status: str  # "built" | "skipped" | "failed"
    reason: str
    seconds: float
    digest: Optional[str] = None  # the manifest digest in the registry, when pushed
    image: Optional[str] = None  # the local image id (or the cluster's Build), when built
    sizes: Optional[ImageSizes] = None  # the registry's and the engine's figures, where known
    error: Optional[MlccError] = None  # why it failed, when it did

    @property
    def size(self) -> Optional[int]:
        """Compressed layers plus config in the registry (what a node pulls), when pushed."""
        return self.sizes.compressed if self.sizes else None


@dataclass(frozen=True)
class EngineSettings:
    """What an engine may need to connect; local engines need none of it."""

    kubeconfig: Optional[str] = flag(
        "--kubeconfig",
        "With --backend openshift: the kubeconfig (default: KUBECONFIG).",
        default=None,
        metavar="FILE",
    )
    context: Optional[str] = flag(
        "--context", "With --backend openshift: the kubeconfig context.", default=None, metavar="NAME"
    )
    # A cluster engine's own options, which it reads itself (the OpenShift engine's:
    # mlcc.render.ClusterOptions); the generic interface does not look into them.
    cluster: Any = None


class EngineBuild(NamedTuple):
    """One image for a local engine to build from a context folder."""

    context: Path
    platform: str  # linux/amd64, linux/ppc64le ...
    build_args: Tuple[Tuple[str, str], ...] = ()
    labels: Tuple[Tuple[str, str], ...] = ()
    dockerfile: str = "Dockerfile"
    no_cache: bool = False
    network: Optional[str] = None  # e.g. "host" when the builder's default network is none
    # --cache-repo: where build steps are shared between machines (pulled and pushed)
    cache_repo: Optional[Reference] = None
    tls_verify: bool = True
    cache_credentials: Optional[Credentials] = None
    # Seconds since the epoch every engine that can stamps as the image's and its files'
    # times (buildah/podman --timestamp); None: the clock.
    source_date_epoch: Optional[int] = None


class Log:
    """Where build output goes: a callback per line, plus the tail kept for error messages."""

    def __init__(self, sink: Optional[Callable[[str], None]] = None, keep: int = 40) -> None:
        """Keep the output's tail, and pass each line on.

        Args:
            sink: Called with every non-empty output line (none: lines are only kept).
            keep: How many of the last lines to keep for error messages.
        """
        self.sink = sink
        self.tail: Deque[str] = collections.deque(maxlen=keep)

    def __call__(self, line: str) -> None:
        line = line.rstrip("\n")
        if not line:
            return
        self.tail.append(line)
        if self.sink is not None:
            self.sink(line)

    def failure(self, what: str, detail: str = "") -> BuildError:
        """A BuildError naming the step that failed (as the engine printed it) and the output's end.

        Args:
            what: What failed, e.g. ``buildah build``.
            detail: The engine's own message, appended after a colon.

        Returns:
            The error to raise: the failed step and the last 15 lines kept are its details.
        """
        step = next(
            (line for line in reversed(self.tail) if "STEP" in line or line.startswith("Step ")), None
        )
        if step is not None:
            step = step.removeprefix("Error: ").removeprefix("error ").removeprefix("building at ")
        details = [*([f"failed at {step}"] if step else []), *list(self.tail)[-15:]]
        return BuildError(f"{what}{': ' + detail if detail else ''}", details=details)


class Engine(ABC):
    """A place images are built: knows whether a content is built, and builds it.

    Engines raise BuildError for a failed build and RegistryError for a failed push, with
    the engine's own message attached; ``find_built`` returns a "skipped" result or None.
    """

    name: ClassVar[str]
    # Local engines build several arches of one stack into a manifest list; a cluster does not.
    multi_arch: ClassVar[bool] = False
    # Takes and shares build steps through a registry repository (--cache-repo).
    registry_cache: ClassVar[bool] = False

    def __init__(self, settings: EngineSettings) -> None:
        """Keep the settings; connecting waits for ``check`` or the first build.

        Args:
            settings: What the engine may need to connect (kubeconfig, context, cluster
                options); local engines need none of it.
        """
        self.settings = settings

    def interrupt(self) -> None:
        """Stop what the engine runs for mlcc's builds: Ctrl-C reached mlcc, whose builds run
        in worker threads that Python does not interrupt (it tells the main thread only).

        Called from the main thread; the build then running fails with
        :class:`~mlcc.errors.Interrupted`, and no further build or stage starts. The default
        stops nothing: the running build (or chain stage) ends on its own first.
        """
        return None

    @abstractmethod
    def check(self) -> None:
        """Make sure the engine can run here, before any build starts.

        Raises:
            UsageError: The engine cannot run here (its tool or daemon is missing, no cluster
                login); the message says how to fix it.
        """

    @abstractmethod
    def find_built(self, job: BuildJob, policy: BuildPolicy) -> Optional[BuildResult]:
        """Whether the job's content is already built where it would go (skip-if-built).

        Args:
            job: The variant to build, with its content tag.
            policy: Where images go (``--push``, ``--registry``) and how to talk to the registry.

        Returns:
            A result with status ``"skipped"`` and the reason when the content is there
            (``--force`` never asks), else None.

        Raises:
            RegistryError: The registry or cluster could not be asked.
        """

    def is_built(self, job: BuildJob, policy: BuildPolicy) -> Optional[str]:
        """Where the job's content already is, for a dry run: it reads, and changes nothing
        (``find_built`` may point a readable tag at what it finds).

        Args:
            job: the job, its base pinned (its content tag is final).
            policy: where the build would go (``policy.push``: the registry).

        Returns:
            A sentence saying where the content is, or None when a build would run.

        Raises:
            NotImplementedError: the engine cannot tell without acting (the default, so a
                plugin engine written before this method is never taken as "not built").
            RegistryError, UsageError: the registry or cluster could not be read.
        """
        raise NotImplementedError

    @abstractmethod
    def build(self, job: BuildJob, policy: BuildPolicy, log: Log) -> BuildResult:
        """Build the job's image, tag it, and with ``policy.push`` push it.

        Args:
            job: The variant to build; ``job.files`` is the build context and ``job.build_args``
                the build args (the base pinned by digest).
            policy: Where images go and how they are built (``--no-cache``, ``--network``).
            log: Where the engine's output goes, line by line.

        Returns:
            A result with status ``"built"``; ``digest`` and ``size`` are set when it was pushed.

        Raises:
            BuildError: The build failed; the error names the step and the output's end.
            RegistryError: The push failed or the registry refused the credentials.
        """

    def describe(self) -> str:
        """Where the build runs, for the line printed before it.

        Returns:
            The engine's name; a cluster engine adds its server and namespace.
        """
        return self.name

    def pushed_image(self, job: BuildJob, policy: BuildPolicy) -> Optional[Reference]:
        """The registry reference the job's image is pushed to, where its SBOM goes beside it.

        Args:
            job: The variant being built.
            policy: Where images go.

        Returns:
            The reference, or None when the image stays where it was built.
        """
        return None


class ImageEngine(Engine):
    """A local container engine: builds, tags, pushes and saves images.

    The image is tagged only once its build succeeded, so an interrupted build leaves no
    tag behind.
    """

    multi_arch = True

    @abstractmethod
    def build_image(self, spec: EngineBuild, log: Log) -> str:
        """Build an image from a context folder into the engine's local storage.

        Args:
            spec: The context folder, Dockerfile name, platform, build args, labels and cache
                and network settings.
            log: Where the engine's output goes, line by line.

        Returns:
            The image id, untagged (``build`` tags it only once the build succeeded).

        Raises:
            BuildError: The build failed.
        """

    def layer_sizes(self, image: str) -> Optional[ImageSizes]:
        """The uncompressed size of each layer of a local image, from the engine's history.

        Args:
            image: The image id or a local reference.

        Returns:
            The sizes (uncompressed only; the registry gives the compressed ones), or None
            when this engine cannot say.
        """
        return None

    @abstractmethod
    def tag(self, image: str, ref: str) -> None:
        """Tag a local image.

        Args:
            image: The image id or an existing reference.
            ref: The new reference.

        Raises:
            BuildError: The engine refused the tag.
        """

    @abstractmethod
    def push(self, ref: Reference, *, tls_verify: bool, credentials: Optional[Credentials], log: Log) -> None:
        """Push a local image to its registry.

        Args:
            ref: The image to push, as tagged locally.
            tls_verify: Verify the registry's TLS certificate (False: unverified https, else http).
            credentials: The registry login, or None for an anonymous push.
            log: Where the engine's output goes.

        Raises:
            RegistryError: The push failed or the registry refused the credentials.
        """

    @abstractmethod
    def exists(self, ref: str) -> bool:
        """Whether a reference is in the engine's local storage.

        Args:
            ref: The image reference, e.g. the content tag.

        Returns:
            True when the engine has it.
        """

    @abstractmethod
    def save(self, ref: str, destination: Path) -> Path:
        """Write a local image to an archive mlcc can read (oci-archive or docker-archive).

        Args:
            ref: The image reference in local storage.
            destination: The archive file to write.

        Returns:
            The archive's path, prefixed as :func:`mlcc.app.images.open_image` reads it.

        Raises:
            BuildError: The engine could not save the image.
        """

    def remove(self, ref: str) -> None:
        """Remove a local tag (tests clean up with it); a missing tag is not an error.

        Args:
            ref: The reference to remove.
        """

    # ------------------------------------------------------------------ the shared half

    def pushed_image(self, job: BuildJob, policy: BuildPolicy) -> Optional[Reference]:
        """The readable reference when ``--push``, else None: the image stays in local storage.

        Args:
            job: The variant being built.
            policy: Where images go.

        Returns:
            ``job.readable`` with ``policy.push``, else None.
        """
        return job.readable if policy.push else None

    def is_built(self, job: BuildJob, policy: BuildPolicy) -> Optional[str]:
        content = job.content
        if policy.push:
            registry = registry_for(content, policy)
            found = registry.exists(content.repository, content.tag or "")
            return None if found is None else f"{content} is in the registry"
        return f"{content} is in {self.name}'s storage" if self.exists(str(content)) else None

    def find_built(self, job: BuildJob, policy: BuildPolicy) -> Optional[BuildResult]:
        """With ``--push``, ask the registry for the content tag; else the engine's storage.

        A content tag found in local storage is tagged with the readable name again.

        Args:
            job: The variant to build.
            policy: Where images go and how to talk to the registry.

        Returns:
            A ``"skipped"`` result, or None when the content is not built yet.

        Raises:
            RegistryError: The registry could not be asked.
        """
        content, readable = job.content, job.readable
        if policy.push:
            return find_in_registry(job, content, readable, policy)
        if self.exists(str(content)):
            self.tag(str(content), str(readable))
            reason = f"{content} is already in {self.name}'s storage (same build inputs)"
            return BuildResult(job, "skipped", reason, 0.0)
        return None

    def build(self, job: BuildJob, policy: BuildPolicy, log: Log) -> BuildResult:
        """Build in a temporary context, tag both names, and with ``--push`` push both.

        Args:
            job: The variant to build.
            policy: Where images go and how they are built.
            log: Where the engine's output goes.

        Returns:
            A ``"built"`` result with the image id, and when pushed its digest and size.

        Raises:
            BuildError: The build or a tag failed.
            RegistryError: The push failed.
        """
        image = self._build_in_context(job, policy, log)
        self.tag(image, str(job.content))
        self.tag(image, str(job.readable))
        digest = registry_sizes = None
        if policy.push:
            credentials = credentials_for(job.content.registry)
            for ref in (job.content, job.readable):
                self.push(ref, tls_verify=policy.tls_verify, credentials=credentials, log=log)
            digest, registry_sizes = pushed(registry_for(job.content, policy), job.content)
        sizes = combined(registry_sizes, self.layer_sizes(image))
        return BuildResult(job, "built", f"built with {self.name}", 0.0, digest, image, sizes)

    def _build_in_context(self, job: BuildJob, policy: BuildPolicy, log: Log) -> str:
        rendered = job.rendered
        return self._build_files(
            job.files, rendered.main_file, rendered.platform, job.build_args, job.labels, policy, log
        )

    def _build_files(
        self,
        files: Tuple[Tuple[str, str], ...],
        dockerfile: str,
        platform: str,
        build_args: Tuple[Tuple[str, str], ...],
        labels: Tuple[Tuple[str, str], ...],
        policy: BuildPolicy,
        log: Log,
    ) -> str:
        cache = cache_repository(policy)
        with tempfile.TemporaryDirectory(prefix="mlcc-context-") as scratch:
            context = Path(scratch)
            write_tree(context, list(files))
            spec = EngineBuild(
                context=context,
                platform=platform,
                build_args=build_args,
                labels=labels,
                dockerfile=dockerfile,
                no_cache=policy.no_cache,
                network=policy.network,
                cache_repo=cache,
                tls_verify=policy.tls_verify,
                cache_credentials=credentials_for(cache.registry) if cache else None,
                source_date_epoch=SOURCE_DATE_EPOCH,
            )
            return self.build_image(spec, log)

    # ------------------------------------------------------------------ stage images (--chain)

    def stage_image(self, stage: StageJob, policy: BuildPolicy) -> Optional[str]:
        """Where a shared stage image is built already, pinned: what the next stage builds FROM.

        Args:
            stage: The stage.
            policy: With ``--push``, the registry is asked; else the engine's storage.

        Returns:
            ``<repository>@<manifest digest>`` in the registry, the content tag in local
            storage, or None when it is not built.

        Raises:
            RegistryError: The registry could not be asked.
        """
        content = stage.content
        if policy.push:
            digest = registry_for(content, policy).exists(content.repository, content.tag or "")
            return None if digest is None else str(content._replace(tag=None, digest=digest))
        return str(content) if self.exists(str(content)) else None

    def build_stage(self, stage: StageJob, policy: BuildPolicy, log: Log) -> str:
        """Build a shared stage image FROM ``stage.parent``, tag it (content and readable
        tag), and with ``--push`` push both.

        Args:
            stage: The stage, its parent found or built.
            policy: Where images go and how they are built.
            log: Where the engine's output goes.

        Returns:
            The stage image, pinned as :meth:`stage_image` names it.

        Raises:
            BuildError: The build or a tag failed.
            RegistryError: The push failed, or the pushed image is not in the registry.
        """
        bound = stage.bound
        files = (("Dockerfile", bound.dockerfile),)
        image = self._build_files(files, "Dockerfile", stage.platform, bound.build_args, (), policy, log)
        self.tag(image, str(stage.content))
        self.tag(image, str(stage.readable))
        if not policy.push:
            return str(stage.content)
        credentials = credentials_for(stage.content.registry)
        for ref in (stage.content, stage.readable):
            self.push(ref, tls_verify=policy.tls_verify, credentials=credentials, log=log)
        found = self.stage_image(stage, policy)
        if found is None:
            raise RegistryError(f"{stage.content} was pushed but the registry does not list it")
        return found


def write_context(rendered: Rendered, folder: Path) -> None:
    """Write the variant's files as ``mlcc gen`` writes them (scripts executable).

    Args:
        rendered: The rendered variant.
        folder: The build context folder; created if missing.

    Raises:
        OutputError: The folder cannot be written.
    """
    write_tree(folder, list(rendered.files))


def registry_for(ref: Reference, policy: BuildPolicy) -> Registry:
    """A registry client for a reference's registry, with its credentials.

    Args:
        ref: The image reference.
        policy: Gives ``tls_verify``.

    Returns:
        The client (it connects on first use).
    """
    return Registry(ref.registry, tls_verify=policy.tls_verify, credentials=credentials_for(ref.registry))


def find_in_registry(
    job: BuildJob, content: Reference, readable: Reference, policy: BuildPolicy
) -> Optional[BuildResult]:
    """A "skipped" result when the registry holds the content tag.

    The readable tag is pointed at it again when it moved (whichever engine pushed the image).

    Args:
        job: The variant to build.
        content: Its content tag.
        readable: Its readable tag.
        policy: How to talk to the registry.

    Returns:
        The ``"skipped"`` result with the pushed digest and size, or None.

    Raises:
        RegistryError: The registry could not be reached or refused the request.
    """
    registry = registry_for(content, policy)
    digest = registry.exists(content.repository, content.tag or "")
    if digest is None:
        return None
    if registry.exists(readable.repository, readable.tag or "") != digest:
        manifest = registry.manifest(content.repository, digest)
        if manifest is None:
            return None
        registry.put_manifest(readable.repository, readable.tag or "", manifest.body, manifest.media_type)
    reason = f"{content} is already in the registry (same build inputs)"
    return BuildResult(job, "skipped", reason, 0.0, digest, sizes=pushed(registry, content)[1])


def pushed(registry: Registry, ref: Reference) -> Tuple[Optional[str], Optional[ImageSizes]]:
    """The digest and sizes of a pushed image: config plus compressed layers, and each
    layer's compressed size beside the instruction that made it (the config's history).

    Args:
        registry: The registry client.
        ref: The pushed image.

    Returns:
        ``(digest, sizes)``, or ``(None, None)`` when the registry does not have it.

    Raises:
        RegistryError: The registry could not be reached or served a config that is not JSON.
    """
    manifest = registry.manifest(ref.repository, ref.tag or "")
    if manifest is None:
        return None, None
    config = registry.blob_json(ref.repository, manifest.config_digest()) if not manifest.is_index else {}
    return manifest.digest, from_manifest(manifest.data, config)
