"""``mlcc verify --rebuild``: build an image again from its own stamped stack and compare.

What the image says about its build is enough to build it again: ``/etc/mlcc/stack.json``
names the benchmark, the stack's components, the flavour, the base image the build pulled
(and its manifest digest) and the NVIDIA mirror; the ``io.mlcc.digest`` label is the digest
of the build files. This mlcc resolves the stack again with every component pinned to the
stamped version, renders it, and rebuilds only when it renders the same stack.json and the
same build files (the same content digest): anything else would compare two different
builds, so it is refused naming what differs. The rebuilt image goes to a throwaway local
name; both are saved as oci-archives and compared layer by layer
(:func:`mlcc.image.compare.compare_images`).
"""

from __future__ import annotations

import json
import re
import tempfile
import uuid
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional

from mlcc import engines
from mlcc.app.generate import check_options
from mlcc.engines.base import BuildJob, BuildPolicy, ImageEngine, Log, job_for
from mlcc.errors import ConflictError, DriftError, UsageError
from mlcc.image.base import ResolvedBase
from mlcc.image.compare import Comparison, compare_images
from mlcc.image.content import STACK_FILE, ImageContent, split_transport
from mlcc.kb.model import KnowledgeBase
from mlcc.render import render
from mlcc.render.manifest import DIGEST_LABEL
from mlcc.render.variant import Rendered
from mlcc.resolve import Resolver
from mlcc.resolve.pins import Pins
from mlcc.stackfile.document import StackManifest

_GPU_PART = re.compile(r"-sm([0-9]{2,3})$")  # the variant's last part when a GPU was asked

# where rebuilt images go: a name no build of mlcc's pushes to, one per rebuild
REBUILD_ROOT = "localhost/mlcc-rebuild"
# the components the pins name by a flag of their own; any other pin goes through --with
_PIN_FIELDS = ("cuda", "cudnn", "nccl", "python", "gcc")


class Rebuilt(NamedTuple):
    """What ``mlcc verify --rebuild`` found for one image."""

    image: str  # as the user named it
    rebuilt: str  # the rebuilt image's tag in local storage
    kept: bool  # whether the rebuilt image is still there (--keep)
    comparison: Comparison

    def describe(self) -> List[str]:
        """The report a person reads: identical, or where the two images part."""
        lines = self.comparison.describe()
        lines.append(f"rebuilt as {self.rebuilt}" + ("" if self.kept else " (removed)"))
        return lines

    def to_dict(self) -> Dict[str, Any]:
        """The report as ``mlcc verify --rebuild --json`` prints it.

        Returns:
            ``schema`` (mlcc-rebuild/1), ``image``, ``rebuilt``, ``kept``, ``identical``,
            the two manifest digests, and when they differ ``config_fields``, ``layer``
            (1 is the bottom layer, None: only the config differs), ``layer_digests``,
            ``paths`` (each ``path`` and ``what`` differs) and ``more_paths``.
        """
        c = self.comparison
        return {
            "schema": "mlcc-rebuild/1",
            "image": self.image,
            "rebuilt": self.rebuilt,
            "kept": self.kept,
            "identical": c.identical,
            "digests": [c.first, c.second],
            "config_fields": list(c.config_fields),
            "layer": None if c.layer is None else c.layer + 1,
            "layer_digests": list(c.layer_digests) if c.layer is not None else [],
            "paths": [{"path": f"/{p.path}", "what": list(p.what)} for p in c.paths],
            "more_paths": c.more_paths,
        }


def rebuild_error(rebuilt: Rebuilt) -> Optional[DriftError]:
    """The error that fails ``mlcc verify --rebuild`` (exit 6) when the two images differ.

    Args:
        rebuilt: What :func:`rebuild_and_compare` found.

    Returns:
        A DriftError naming both digests, or None when the rebuild is identical.
    """
    if rebuilt.comparison.identical:
        return None
    return DriftError(
        f"{rebuilt.image} is not what its stack builds: the rebuild differs",
        hint="docs/reproducing.md says what a rebuild cannot make the same",
    )


def stamped_manifest(content: ImageContent, image: str) -> StackManifest:
    """The image's stack.json, with every fact a rebuild needs, or a refusal naming the one
    that is missing.

    Args:
        content: The image, one arch (:func:`mlcc.app.images.open_image`).
        image: How the user named it, for errors.

    Returns:
        The stamped stack manifest.

    Raises:
        UsageError: The image has no stack.json, a damaged one, no base digest in it (built
            before builds recorded it, or by ``mlcc gen`` and another tool) or no
            ``io.mlcc.digest`` label.
    """
    data = content.json_file(STACK_FILE)
    if data is None:
        raise UsageError(f"cannot rebuild {image}: no /{STACK_FILE}, it is not an mlcc image")
    manifest = StackManifest.from_json(data, f"{image}: /{STACK_FILE}", UsageError)
    if not manifest.base.digest:
        raise UsageError(
            f"cannot rebuild {image}: its /{STACK_FILE} records no base image digest "
            f"(base.digest), so which {manifest.base.image} it was built on is not known",
            hint="only images mlcc build made (which pins the base by digest) can be rebuilt",
        )
    if not content.labels.get(DIGEST_LABEL):
        raise UsageError(
            f"cannot rebuild {image}: it has no {DIGEST_LABEL} label (the digest of its build files)"
        )
    return manifest


def pins_of(manifest: StackManifest) -> Pins:
    """The pins that resolve the stamped stack again: every component at its stamped version.

    Args:
        manifest: The image's stack manifest.

    Returns:
        Base, arch, flavour, CUDA (or ``--cpu``), the cuDNN and NCCL the build installs
        (not ones the framework bundles), Python, a GCC toolset, the framework (not one the
        base brings), and any pin the manifest recorded from its request.
    """
    parts = manifest.components
    values: Dict[str, Optional[str]] = {name: None for name in _PIN_FIELDS}
    values["cuda"] = parts.cuda.version if parts.cuda else None
    for name, library in (("cudnn", parts.cudnn), ("nccl", parts.nccl)):
        if library is not None and library.method != "bundled":
            values[name] = library.version
    values["python"] = parts.python.version if parts.python else None
    values["gcc"] = parts.gcc.version if parts.gcc.toolset else None  # else the base's own
    # a framework an image base brings (NGC's, install "base") comes with the base pin: its name
    # need not be a framework mlcc builds (NGC DGL), nor its version one a source names
    framework = parts.framework if parts.framework and parts.framework.install != "base" else None
    with_ = [f"{framework.name}={framework.version}"] if framework else []
    for component, version in manifest.pins:
        if component in values:
            values[component] = values[component] or version
        elif not any(w.startswith(f"{component}=") for w in with_):
            with_.append(f"{component}={version}")
    return Pins().updated(
        base=manifest.base.name,
        arch=manifest.arch,
        cpu=manifest.accelerator == "cpu",
        with_=tuple(with_),
        flavour=manifest.flavour,
        **values,
    )


def gpu_of(kb: KnowledgeBase, manifest: StackManifest) -> Optional[str]:
    """A GPU that resolves the stamped stack again, when it was resolved for one.

    The stack records the GPU only as its compute capability, in the variant's last part
    (``-sm100``: 10.0, the last digit the minor, as mlcc.resolve.reasons names it). GPUs of one
    capability give one stack; of those, one whose host is the image's arch (GB200 for an
    aarch64 sm100 image), else one that names no host, first by name.

    Args:
        kb: The knowledge base.
        manifest: The image's stack manifest.

    Returns:
        The GPU's name; None when the variant names no GPU or no GPU of that capability is known.
    """
    match = _GPU_PART.search(manifest.variant)
    if match is None:
        return None
    digits = match.group(1)
    capability = f"{digits[:-1]}.{digits[-1]}"
    fitting = sorted(
        (gpu.host_arch != manifest.arch, name)
        for name, gpu in kb.gpus.items()
        if gpu.compute_capability == capability and gpu.host_arch in (manifest.arch, None)
    )
    return fitting[0][1] if fitting else None


def render_again(kb: KnowledgeBase, manifest: StackManifest, content: ImageContent, image: str) -> Rendered:
    """The image's build files as this mlcc and its recipes render them, checked to be the
    image's own.

    Args:
        kb: The knowledge base.
        manifest: The image's stack manifest (:func:`stamped_manifest`).
        content: The image, for its ``io.mlcc.digest`` label.
        image: How the user named it, for errors.

    Returns:
        The rendering, whose stack.json is the image's (but for the base digest, which the
        build adds) and whose content digest is the image's label.

    Raises:
        UsageError: The stamped stack does not resolve here, resolves to another stack
            (other recipes or another mlcc release), or renders other build files.
    """
    pins = pins_of(manifest).updated(gpu=gpu_of(kb, manifest))
    base_image = manifest.base.image if manifest.base.image != manifest.base.default_image else None
    try:
        request = pins.request(kb, manifest.benchmark.name)
        stack = Resolver(kb).resolve(request)
    except (UsageError, ConflictError) as error:
        raise UsageError(
            f"cannot rebuild {image}: its stack does not resolve with these recipes: {error.message}",
            hint=f"rebuild with the recipes of mlcc {manifest.generator.version}, which built it",
        ) from None
    rendered = render(stack, options=check_options(base_image, None), request=request)
    if _stack_json(rendered).get("mirror") != manifest.mirror:
        rendered = render(stack, options=check_options(base_image, manifest.mirror), request=request)
    stamped = manifest.to_json()
    stamped["base"].pop("digest", None)
    differing = differing_keys(stamped, _stack_json(rendered))
    if differing:
        raise UsageError(
            f"cannot rebuild {image}: these recipes resolve another stack than its /{STACK_FILE}: "
            f"it differs in {', '.join(differing)}",
            hint=f"rebuild with the recipes of mlcc {manifest.generator.version}, which built it",
        )
    label = content.labels[DIGEST_LABEL]
    if rendered.digest != label:
        raise UsageError(
            f"cannot rebuild {image}: its stack renders other build files here "
            f"({rendered.digest}) than the image was built from ({DIGEST_LABEL} {label})",
            hint="a mirror the image does not record (--git-mirror, --pip-index-url ...) that is not "
            "hash-checked is part of that digest; or another mlcc release rendered it",
        )
    return rendered


def _stack_json(rendered: Rendered) -> Dict[str, Any]:
    loaded: Dict[str, Any] = json.loads(rendered.content("stack.json"))
    return loaded


def differing_keys(first: Dict[str, Any], second: Dict[str, Any]) -> List[str]:
    """Where two stack.json documents differ, two levels deep (``components.cuda``).

    Args:
        first: One document.
        second: The other.

    Returns:
        The keys that differ, sorted: ``name`` at the top level, ``name.key`` inside an
        object both have.
    """
    found = []
    for key in sorted(set(first) | set(second)):
        a, b = first.get(key), second.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            found += [f"{key}.{k}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        else:
            found.append(key)
    return found


def rebuild_engine(backend: Optional[str]) -> ImageEngine:
    """The local engine that rebuilds: one that saves OCI archives and fixes file times.

    Args:
        backend: ``--backend`` (None: the first local engine that works).

    Returns:
        The engine.

    Raises:
        UsageError: OpenShift or docker: the first keeps no local images, the second
            cannot set the layers' file times (docs/reproducing.md) nor save OCI archives.
    """
    engine = engines.create(backend)
    if not isinstance(engine, ImageEngine) or engine.name == "docker":
        raise UsageError(
            f"--rebuild: the {engine.name} engine cannot rebuild an image to compare",
            hint="use --backend buildah or --backend podman (docs/reproducing.md)",
        )
    return engine


def rebuild_job(rendered: Rendered, manifest: StackManifest, policy: BuildPolicy) -> BuildJob:
    """The job that builds the rendering on the base manifest the image was built on.

    Args:
        rendered: From :func:`render_again`.
        manifest: The image's stack manifest (its base digest is set).
        policy: Where the rebuilt image goes.

    Returns:
        The job with its base pinned to the stamped digest: no registry is asked, the build
        pulls exactly that manifest (the original build checked its OS release and arch).
    """
    base = ResolvedBase(manifest.base.image, manifest.base.digest or "", manifest.arch, (), None)
    return job_for(rendered, policy, f"rebuild of {manifest.benchmark.name}")._replace(base=base)


SAVED_TRANSPORTS = ("local", "oci-archive", "oci")  # what the comparison can read (saved)


def check_saved(text: str) -> None:
    """Refuse, before anything is built, an image the comparison cannot read as it is.

    Args:
        text: The image as the user named it.

    Raises:
        UsageError: A registry reference or a docker-archive: the hint says how to copy it
            to an oci-archive first.
    """
    transport, rest = split_transport(text)
    if transport in SAVED_TRANSPORTS:
        return
    raise UsageError(
        f"--rebuild compares saved images: {text} is not local:REF, oci-archive:PATH or oci:DIR",
        hint=f"skopeo copy docker://{rest} oci-archive:image.tar, then mlcc verify --rebuild "
        "oci-archive:image.tar"
        if transport == "docker"
        else "skopeo copy it to oci-archive:FILE",
    )


def saved_original(text: str, engine: ImageEngine, scratch: Path) -> Path:
    """The image as an OCI archive or layout that :func:`compare_images` reads.

    Args:
        text: ``local:REF`` (saved through the engine), ``oci-archive:PATH`` or ``oci:DIR``
            (:func:`check_saved` passed it).
        engine: The engine whose storage holds a ``local:`` image.
        scratch: A folder for the saved archive.

    Returns:
        The archive or layout.
    """
    transport, rest = split_transport(text)
    return engine.save(rest, scratch / "original.tar") if transport == "local" else Path(rest)


def rebuild_and_compare(
    kb: KnowledgeBase,
    image: str,
    content: ImageContent,
    *,
    backend: Optional[str] = None,
    tls_verify: bool = True,
    keep: bool = False,
    log: Optional[Log] = None,
) -> Rebuilt:
    """Rebuild ``image`` from its stamped stack with a local engine and compare the two.

    Args:
        kb: The knowledge base.
        image: How the user named it: ``local:REF``, ``oci-archive:PATH`` or ``oci:DIR``.
        content: The image as :func:`mlcc.app.images.open_image` read it (one arch).
        backend: The engine that rebuilds (buildah or podman; None: the first that works).
        tls_verify: Verify the TLS certificate of the base image's registry.
        keep: Leave the rebuilt image in local storage.
        log: Receives the engine's output (default: kept for error messages only).

    Returns:
        The comparison, the rebuilt image's tag, and whether it was kept.

    Raises:
        UsageError: A fact the rebuild needs is missing from the image, its stack does not
            render to its own build files here, the engine cannot rebuild, or the image is
            not saved where the comparison can read it.
        BuildError: The rebuild failed.
    """
    check_saved(image)
    manifest = stamped_manifest(content, image)
    rendered = render_again(kb, manifest, content, image)
    engine = rebuild_engine(backend)
    policy = BuildPolicy(
        registry=f"{REBUILD_ROOT}-{uuid.uuid4().hex[:8]}",
        force=True,
        no_cache=True,  # every step runs again: a cached layer would compare with itself
        sbom=False,
        tls_verify=tls_verify,
    )
    job = rebuild_job(rendered, manifest, policy)
    with tempfile.TemporaryDirectory(prefix="mlcc-rebuild-") as scratch:
        folder = Path(scratch)
        original = saved_original(image, engine, folder)
        try:
            engine.build(job, policy, log or Log())
            copy = engine.save(str(job.content), folder / "rebuilt.tar")
            comparison = compare_images(original, copy)
        finally:
            if not keep:
                for ref in (job.content, job.readable):
                    engine.remove(str(ref))
    return Rebuilt(image, str(job.readable), keep, comparison)


__all__ = [
    "Rebuilt",
    "differing_keys",
    "pins_of",
    "rebuild_and_compare",
    "rebuild_error",
    "render_again",
    "stamped_manifest",
]
