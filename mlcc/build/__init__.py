"""`mlcc build`: render, build, tag and push, skipping what the registry already holds.

Every image gets two tags: a readable one (``<registry>/<benchmark>:<variant>``) and an
immutable content tag (``<registry>/<benchmark>:mlcc-<digest>``) named after the digest
of the build inputs (the rendered files, build args and platform; also the
``io.mlcc.digest`` label). Before building, the registry (or, without ``--push``, local
storage) is asked for the content tag: if it is there, nothing is built. A build of the
same content by another process waits on a lock instead of racing it; an image is tagged
only after its build succeeded, so an interrupted build leaves no tag behind.

    outcome = build_target(engine, target, options, Log(print))
"""

from __future__ import annotations

import contextlib
import fcntl
import tempfile
import time
from pathlib import Path
from typing import Dict, Iterator, NamedTuple, Optional, Sequence, Tuple, Type

from mlcc.build.engine import BuildSpec, Engine, Log
from mlcc.errors import UsageError
from mlcc.image.auth import credentials_for
from mlcc.image.reference import Reference, parse_reference
from mlcc.image.registry import Registry
from mlcc.render import Rendered

LOCAL_REGISTRY = "localhost/mlcc"
CONTENT_PREFIX = "mlcc-"


def engines() -> Dict[str, Type[Engine]]:
    from mlcc.build.cli_engines import Buildah, Podman
    from mlcc.build.docker_engine import Docker

    return {"buildah": Buildah, "podman": Podman, "docker": Docker}


def engine_for(name: Optional[str]) -> Engine:
    """The engine asked for, or the first that works here: buildah, podman, docker."""
    available = engines()
    if name is not None:
        if name not in available:
            raise UsageError(f"--backend {name}: unknown", hint=f"choose one of {', '.join(available)}")
        engine = available[name]()
        engine.check()
        return engine
    reasons = []
    for candidate in available.values():
        engine = candidate()
        try:
            engine.check()
        except UsageError as error:
            reasons.append(str(error).splitlines()[0])
            continue
        return engine
    raise UsageError(
        "no container engine works here",
        details=reasons,
        hint="install buildah or podman, or set DOCKER_HOST",
    )


class BuildOptions(NamedTuple):
    registry: Optional[Reference] = None  # registry plus namespace; None: local only
    push: bool = False
    force: bool = False
    tls_verify: bool = True
    no_cache: bool = False
    network: Optional[str] = None


class Target(NamedTuple):
    """One variant to build, with the names it will carry."""

    rendered: Rendered
    repository: str  # <registry>[/<namespace>]/<benchmark>

    @property
    def variant(self) -> str:
        return self.rendered.variant

    @property
    def readable(self) -> Reference:
        return parse_reference(f"{self.repository}:{self.variant}")

    @property
    def content(self) -> Reference:
        return parse_reference(f"{self.repository}:{content_tag(self.rendered.digest)}")


class Outcome(NamedTuple):
    target: Target
    status: str  # "built" | "skipped"
    reason: str
    seconds: float
    digest: Optional[str] = None  # the manifest digest in the registry, when pushed
    image: Optional[str] = None  # the local image id, when built
    size: Optional[int] = None  # compressed layers + config in the registry, when pushed


def content_tag(digest: str) -> str:
    return CONTENT_PREFIX + digest.split(":", 1)[1][:32]


def target_for(rendered: Rendered, options: BuildOptions) -> Target:
    if options.push and options.registry is None:
        raise UsageError("--push needs --registry REGISTRY[/NAMESPACE], e.g. --registry quay.io/me")
    base = str(options.registry).rstrip("/") if options.registry else LOCAL_REGISTRY
    benchmark = rendered.stack.benchmark.name.replace("_", "-")
    return Target(rendered, f"{base}/{benchmark}")


def registry_for(ref: Reference, options: BuildOptions) -> Registry:
    return Registry(ref.registry, tls_verify=options.tls_verify, credentials=credentials_for(ref.registry))


# ----------------------------------------------------------------------------- one target


def build_target(engine: Engine, target: Target, options: BuildOptions, log: Log) -> Outcome:
    start = time.monotonic()
    with content_lock(target.rendered.digest, log):
        if not options.force:
            skipped = _already_built(engine, target, options)
            if skipped is not None:
                return skipped._replace(seconds=time.monotonic() - start)
        image = _build(engine, target, options, log)
        engine.tag(image, str(target.content))
        engine.tag(image, str(target.readable))
        digest = size = None
        if options.push:
            credentials = credentials_for(target.content.registry)
            for ref in (target.content, target.readable):
                engine.push(ref, tls_verify=options.tls_verify, credentials=credentials, log=log)
            digest, size = _pushed(registry_for(target.content, options), target.content)
        seconds = time.monotonic() - start
        return Outcome(target, "built", f"built with {engine.name}", seconds, digest, image, size)


def _already_built(engine: Engine, target: Target, options: BuildOptions) -> Optional[Outcome]:
    content, readable = target.content, target.readable
    if options.push:
        registry = registry_for(content, options)
        digest = registry.exists(content.repository, content.tag or "")
        if digest is None:
            return None
        if registry.exists(readable.repository, readable.tag or "") != digest:
            manifest = registry.manifest(content.repository, digest)
            assert manifest is not None
            registry.put_manifest(readable.repository, readable.tag or "", manifest.body, manifest.media_type)
        reason = f"{content} is already in the registry (same build inputs)"
        return Outcome(target, "skipped", reason, 0.0, digest, size=_pushed(registry, content)[1])
    if engine.exists(str(content)):
        engine.tag(str(content), str(target.readable))
        return Outcome(
            target, "skipped", f"{content} is already in {engine.name}'s storage (same build inputs)", 0.0
        )
    return None


def _pushed(registry: Registry, ref: Reference) -> Tuple[Optional[str], Optional[int]]:
    """The digest and size (config plus compressed layers) of a pushed image."""
    manifest = registry.manifest(ref.repository, ref.tag or "")
    if manifest is None:
        return None, None
    data = manifest.data
    size = data.get("config", {}).get("size", 0) + sum(
        layer.get("size", 0) for layer in data.get("layers", [])
    )
    return manifest.digest, size or None


def _build(engine: Engine, target: Target, options: BuildOptions, log: Log) -> str:
    rendered = target.rendered
    with tempfile.TemporaryDirectory(prefix="mlcc-context-") as scratch:
        context = Path(scratch)
        write_context(rendered, context)
        spec = BuildSpec(
            context=context,
            platform=rendered.platform,
            build_args=rendered.build_args,
            dockerfile=rendered.main_file,
            no_cache=options.no_cache,
            network=options.network,
        )
        return engine.build(spec, log)


def write_context(rendered: Rendered, folder: Path) -> None:
    """The variant's files, as ``mlcc gen`` writes them (scripts executable)."""
    from mlcc.output import write_tree

    write_tree(folder, list(rendered.files))


@contextlib.contextmanager
def content_lock(digest: str, log: Log) -> Iterator[None]:
    """One build per content at a time on this machine; the OS drops it if we die."""
    from mlcc.kb.loader import cache_dir

    folder = Path(cache_dir()) / "locks"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / f"{digest.split(':', 1)[1][:32]}.lock"
    with path.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f"waiting for another mlcc build of the same content (lock {path})")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# ----------------------------------------------------------------------------- multi-arch


def manifest_list_tag(targets: Sequence[Target]) -> Reference:
    """``<repo>:<variant without its arch>``; every arch must have resolved the same stack."""
    stems = {t.variant.rsplit("-", 1)[0] for t in targets}
    if len(stems) != 1:
        raise UsageError(
            "the arches resolved to different stacks: " + ", ".join(sorted(t.variant for t in targets)),
            hint="pin the components that differ (e.g. --cuda) so every arch gets the same stack",
        )
    return parse_reference(f"{targets[0].repository}:{stems.pop()}")


def push_manifest_list(targets: Sequence[Target], outcomes: Sequence[Outcome], options: BuildOptions) -> str:
    """An OCI index over the per-arch images, written through the registry API."""
    tag = manifest_list_tag(targets)
    registry = registry_for(tag, options)
    entries = []
    for target, outcome in zip(targets, outcomes):
        digest = outcome.digest or registry.exists(target.content.repository, target.content.tag or "")
        manifest = registry.manifest(target.content.repository, digest or "")
        if manifest is None:
            raise UsageError(f"{target.content} is not in the registry; cannot list it")
        config = registry.blob_json(target.content.repository, manifest.data["config"]["digest"])
        entries.append((manifest, config.get("os", "linux"), config.get("architecture", "")))
    return registry.put_index(tag.repository, tag.tag or "", entries)


def stderr_log(quiet: bool) -> Log:
    if quiet:
        return Log(None)
    import click

    def sink(line: str) -> None:
        click.echo(f"  | {line}", err=True)

    return Log(sink)


def file_log(path: Path) -> Log:
    handle = path.open("a", encoding="utf-8")

    def sink(line: str) -> None:
        handle.write(line + "\n")
        handle.flush()

    return Log(sink)


__all__ = [
    "BuildOptions",
    "Engine",
    "Log",
    "Outcome",
    "Target",
    "build_target",
    "content_lock",
    "content_tag",
    "engine_for",
    "manifest_list_tag",
    "push_manifest_list",
    "target_for",
]
