"""Images after the build as use cases: inspect, diff, verify, and an image's SBOM
(printed, or pushed beside the image as an OCI artifact).

An image is a registry reference, an archive (``oci-archive:PATH``, ``docker-archive:PATH``,
``oci:DIR``) or ``local:REF`` for an image in a local engine's storage, saved to a
temporary archive through that engine.
"""

from __future__ import annotations

import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Tuple

import mlcc
from mlcc import engines
from mlcc.engines.base import ImageEngine
from mlcc.errors import DriftError, RegistryError, UsageError
from mlcc.image import open_image as open_remote
from mlcc.image.content import (
    INSTALLED_FILE,
    OCI_ARCH_NAMES,
    STACK_FILE,
    ImageContent,
    read_archive,
    read_from_registry,
    split_transport,
)
from mlcc.image.reference import Reference
from mlcc.image.registry import Registry
from mlcc.image.sbom import MEDIA_TYPE, RepositoryTypes, for_image, is_timestamp, sbom_bytes
from mlcc.image.sizes import combined
from mlcc.image.stack import Mismatch, summary, verify
from mlcc.kb.model import PublicHost
from mlcc.render.manifest import source_date_epoch
from mlcc.safeio import UnreadableFile, read_text


def open_image(
    text: str, *, tls_verify: bool = True, arch: Optional[str] = None, backend: Optional[str] = None
) -> List[ImageContent]:
    """Read an image without running it: its files, labels and config, one per arch.

    Args:
        text: A registry reference (``quay.io/me/maskrcnn:tag``), ``local:REF`` (an
            engine's storage), or ``oci-archive:``, ``docker-archive:``, ``oci:`` paths.
        tls_verify: Verify the registry's TLS certificate.
        arch: Only this arch of a multi-arch image.
        backend: With ``local:``, the engine whose storage holds it (default: the first
            that works).

    Returns:
        One content per arch read (one for a single-arch image or with ``arch``).

    Raises:
        UsageError: A malformed reference, an unreadable archive or layout, an arch the
            image does not have, or ``local:`` with an engine that keeps no images.
        RegistryError: The registry could not be reached, or refused (credentials, no such
            image).
    """
    transport, rest = split_transport(text)
    if transport != "local":
        return open_remote(text, tls_verify=tls_verify, arch=arch)
    engine = engines.create(backend)
    if not isinstance(engine, ImageEngine):
        raise UsageError(
            f"--backend {engine.name} keeps no local images", hint="use buildah, podman or docker"
        )
    with tempfile.TemporaryDirectory(prefix="mlcc-inspect-") as scratch:
        archive = engine.save(rest, Path(scratch) / "image.tar")
        content = read_archive(archive, text)
    # the saved archive's blobs are compressed; the engine's history gives the unpacked sizes
    return [content._replace(sizes=combined(content.sizes, engine.layer_sizes(rest)))]


# the file name mlcc gen gives the stack manifest in a variant folder
STACK_FILE_NAME = Path(STACK_FILE).name


def is_stack_path(text: str) -> bool:
    """Whether ``mlcc diff`` reads ``text`` as a generated stack.json rather than an image.

    Args:
        text: What the user named: a path to a ``.json`` file, or a folder holding
            ``stack.json`` (a variant folder of ``mlcc gen``), is a stack file.

    Returns:
        True for an existing such file or folder; transports (``oci:``...) are images.
    """
    if split_transport(text)[0] != "docker":
        return False
    path = Path(text)
    return (path.is_file() and path.suffix == ".json") or (path / STACK_FILE_NAME).is_file()


def open_stack_file(text: str) -> ImageContent:
    """A stack.json ``mlcc gen`` wrote, read as an image that holds only it: ``mlcc diff``
    compares stacks before anything is built.

    Args:
        text: The stack.json, or the variant folder that holds it.

    Returns:
        An image content with the file at ``/etc/mlcc/stack.json``, no labels, no digest.

    Raises:
        UsageError: The file cannot be read, or is not a stack manifest mlcc wrote.
    """
    path = Path(text)
    if path.is_dir():
        path = path / STACK_FILE_NAME
    try:
        data = read_text(path).encode()
    except UnreadableFile as error:
        raise UsageError(f"{path}: {error}") from None
    content = ImageContent(str(path), None, None, None, {}, {STACK_FILE: data})
    try:
        summary(content)
    except DriftError as error:
        message = error.message.replace(f"{path}: /{STACK_FILE}", str(path), 1)  # a file, not an image
        raise UsageError(message, hint="give a stack.json that mlcc gen wrote") from None
    return content


def arch_of(content: ImageContent) -> str:
    """The image's arch by mlcc's name (``amd64`` is ``x86_64``).

    Args:
        content: An image read by :func:`open_image`.

    Returns:
        The arch, or ``?`` when the config names none.
    """
    return OCI_ARCH_NAMES.get(content.arch or "", content.arch or "?")


def inspect_document(content: ImageContent) -> Dict[str, Any]:
    """Labels, stack.json and installed.json of one image, JSON-ready (``mlcc inspect --json``).

    Args:
        content: An image read by :func:`open_image`.

    Returns:
        ``reference``, ``digest``, ``platform``, ``size``, ``sizes`` (compressed and
        uncompressed bytes where the source tells them, and the largest layers: see
        :mod:`mlcc.image.sizes`), ``labels``, ``stack`` and ``installed`` (a file that is
        missing or not JSON says so in an ``error`` key).
    """
    return {
        "reference": content.reference,
        "digest": content.digest,
        "platform": f"{content.os}/{content.arch}",
        "size": content.size,
        "sizes": content.sizes.document() if content.sizes else None,
        "labels": dict(sorted(content.labels.items())),
        "stack": content.json_file(STACK_FILE),
        "installed": content.json_file(INSTALLED_FILE),
    }


def is_mlcc_image(content: ImageContent) -> bool:
    """Whether the image carries mlcc's stack manifest.

    Args:
        content: An image read by :func:`open_image`.

    Returns:
        True when ``/etc/mlcc/stack.json`` is in it.
    """
    return STACK_FILE in content.files


def diff_rows(
    contents_a: List[ImageContent], contents_b: List[ImageContent], names: Tuple[str, str]
) -> List[Tuple[str, str, str, str]]:
    """Two images' stacks side by side (``mlcc diff``).

    Args:
        contents_a: The first image, as :func:`open_image` read it.
        contents_b: The second image.
        names: How the user named the two, for errors.

    Returns:
        ``(mark, component, a, b)`` rows; mark is ``*`` where the two differ. Each side
        shows what the build recorded as installed, else what was resolved.

    Raises:
        UsageError: An image is multi-arch (pick one with ``--arch``).
    """
    sides = []
    for text, contents in zip(names, (contents_a, contents_b)):
        if len(contents) != 1:
            raise UsageError(f"{text} is a multi-arch image: pick one with --arch")
        sides.append({r.component: (r.installed or r.resolved) for r in summary(contents[0])})
    components = list(dict.fromkeys([*sides[0], *sides[1]]))
    rows = []
    for name in components:
        a, b = sides[0].get(name, ""), sides[1].get(name, "")
        rows.append(("*" if a != b else "", name, a, b))
    return rows


def diff_document(rows: List[Tuple[str, str, str, str]], names: Tuple[str, str]) -> Dict[str, Any]:
    """``mlcc diff --json``: the two sides and every component, the differing ones marked.

    Args:
        rows: :func:`diff_rows`' rows.
        names: The two images or stack files as the user named them.

    Returns:
        ``{"schema": "mlcc-diff/1", "a", "b", "components": [{"component", "a", "b",
        "differs"}], "differ"}`` (``differ`` counts the components that differ).
    """
    components = [{"component": c, "a": a, "b": b, "differs": bool(mark)} for mark, c, a, b in rows]
    return {
        "schema": "mlcc-diff/1",
        "a": names[0],
        "b": names[1],
        "components": components,
        "differ": sum(1 for row in components if row["differs"]),
    }


class Verified(NamedTuple):
    """The findings of ``mlcc verify`` for one image (one arch)."""

    content: ImageContent
    findings: List[Mismatch]

    @property
    def drift(self) -> List[Mismatch]:
        """The findings that are drift (the rest are notes)."""
        return [f for f in self.findings if f.severity == "drift"]

    def to_dict(self) -> Dict[str, Any]:
        """The result as ``mlcc verify --json`` prints it.

        Returns:
            ``reference``, ``arch``, ``mlcc_image`` (false: no stack.json, nothing to verify)
            and ``findings``.
        """
        return {
            "reference": self.content.reference,
            "arch": arch_of(self.content),
            "mlcc_image": is_mlcc_image(self.content),
            "findings": [f._asdict() for f in self.findings],
        }


def verify_image(contents: List[ImageContent]) -> List[Verified]:
    """Compare what each image's build recorded with its stamped stack and labels.

    Args:
        contents: The image, one content per arch (:func:`open_image`).

    Returns:
        One result per arch; an image without mlcc's files, or with damaged ones, is a
        drift finding naming the file.
    """
    return [Verified(c, verify(c)) for c in contents]


def drift_error(image: str, verified: List[Verified]) -> Optional[DriftError]:
    """The error that fails ``mlcc verify`` (exit 6), if any arch drifted.

    Args:
        image: How the user named the image.
        verified: What :func:`verify_image` found.

    Returns:
        A DriftError saying the image is not mlcc's (it has no stack.json), or listing up to
        30 mismatches; None when nothing drifted.
    """
    foreign = [arch_of(v.content) for v in verified if not is_mlcc_image(v.content)]
    if foreign:  # nothing to drift from: it claims no stack
        return DriftError(
            f"{image} is not an mlcc image: no /{STACK_FILE} ({', '.join(foreign)})",
            hint="mlcc verify checks images mlcc built; mlcc inspect shows any image's labels",
        )
    drift = [f"{arch_of(v.content)}: {f}" for v in verified for f in v.drift]
    if not drift:
        return None
    return DriftError(f"{image} drifted from its stack: {len(drift)} mismatch(es)", details=drift[:30])


# ----------------------------------------------------------------------------- SBOM

SBOM_FILE = "sbom.cdx.json"  # the artifact layer's title


def sbom_time(content: ImageContent) -> Optional[str]:
    """When the SBOM says it was made, never the clock.

    Args:
        content: An image read by :func:`open_image`.

    Returns:
        ``SOURCE_DATE_EPOCH`` when set, else the image's creation time (its label, else its
        config), as an ISO 8601 UTC timestamp; None when none is known.

    Raises:
        UsageError: ``SOURCE_DATE_EPOCH`` is not a number of seconds.
    """
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        moment = datetime.fromtimestamp(source_date_epoch(epoch), tz=timezone.utc)
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    for candidate in (content.labels.get("org.opencontainers.image.created"), content.created):
        if candidate and is_timestamp(candidate):
            return candidate
    return None


def repository_types(hosts: Iterable[PublicHost]) -> RepositoryTypes:
    """The Package URL type of each public host whose repositories have one.

    Args:
        hosts: The stack's public hosts (``recipes/hosts.yaml``).

    Returns:
        ``(host URL, purl type)`` pairs, as the recipes give them.
    """
    return tuple((host.url, host.purl_type) for host in hosts if host.purl_type)


def sbom_document(contents: List[ImageContent], text: str, types: RepositoryTypes = ()) -> Dict[str, Any]:
    """The CycloneDX 1.5 document of one image (``mlcc sbom``).

    Args:
        contents: The image as :func:`open_image` read it; one arch.
        text: How the user named the image, for errors.
        types: From :func:`repository_types`: names the benchmark's source by its host's
            purl type.

    Returns:
        The document as JSON-ready data; the same image gives the same document.

    Raises:
        UsageError: The image is multi-arch (pick one with ``--arch``), or
            ``SOURCE_DATE_EPOCH`` is malformed.
        DriftError: The image lacks ``/etc/mlcc/stack.json`` or ``installed.json``, or one
            is damaged (the error names the file and field).
    """
    if len(contents) != 1:
        arches = ", ".join(arch_of(c) for c in contents)
        raise UsageError(f"{text} is a multi-arch image ({arches}): pick one with --arch")
    content = contents[0]
    return for_image(
        content, timestamp=sbom_time(content), tool_version=mlcc.__version__, repository_types=types
    )


def sbom_tag(digest: str) -> str:
    """Where cosign's convention puts an image's SBOM.

    Args:
        digest: The image's manifest digest, ``sha256:<hex>``.

    Returns:
        The tag, ``sha256-<hex>.sbom``.
    """
    algorithm, _, value = digest.partition(":")
    return f"{algorithm}-{value}.sbom"


class Attached(NamedTuple):
    """Where an image's SBOM is in the registry, and whether this call pushed it."""

    tag: Reference  # <repository>:sha256-<hex>.sbom
    digest: str  # the artifact manifest's
    pushed: bool  # False: the registry had it already


def attach_sbom(registry: Registry, image: Reference, digest: str, types: RepositoryTypes = ()) -> Attached:
    """Push the SBOM of ``image`` beside it, as an OCI artifact whose subject is the image.

    It is tagged by cosign's convention (:func:`sbom_tag`). An SBOM already there is kept: an
    image's SBOM depends on nothing but the image.

    Args:
        registry: The registry client holding the image.
        image: The image's repository (its tag is replaced).
        digest: The image's manifest digest.
        types: From :func:`repository_types`.

    Returns:
        The SBOM's tag, its artifact manifest's digest, and whether it was pushed now.

    Raises:
        RegistryError: The image is not in the registry, or the push failed.
        UsageError: ``digest`` is a multi-arch index (attach an SBOM to each image).
        DriftError: The image lacks mlcc's files or they are damaged.
    """
    tag = image.with_tag(sbom_tag(digest))
    found = registry.exists(tag.repository, tag.tag or "")
    if found is not None:
        return Attached(tag, found, False)
    subject = registry.manifest(image.repository, digest)
    if subject is None:
        raise RegistryError(f"{image.name}@{digest} is not in registry {image.registry}")
    if subject.is_index:
        raise UsageError(f"{image.name}@{digest} is a multi-arch index: attach an SBOM to each image")
    # read by digest (the tag may move meanwhile), described by the name it was pushed as
    named = str(image._replace(digest=None))
    contents = [
        c._replace(reference=named) for c in read_from_registry(registry, image._replace(digest=digest))
    ]
    document = sbom_document(contents, str(image), types)
    created = document["metadata"].get("timestamp")
    pushed = registry.put_artifact(
        tag.repository,
        tag.tag or "",
        artifact_type=MEDIA_TYPE,
        data=sbom_bytes(document),
        title=SBOM_FILE,
        subject=subject,
        annotations={"org.opencontainers.image.created": created} if created else None,
    )
    return Attached(tag, pushed, True)


__all__ = [
    "Attached",
    "Verified",
    "attach_sbom",
    "diff_rows",
    "drift_error",
    "inspect_document",
    "open_image",
    "sbom_document",
    "sbom_tag",
    "summary",
    "verify_image",
]
