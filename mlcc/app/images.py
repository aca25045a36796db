"""Images after the build as use cases: inspect, diff and verify.

An image is a registry reference, an archive (``oci-archive:PATH``, ``docker-archive:PATH``,
``oci:DIR``) or ``local:REF`` for an image in a local engine's storage, saved to a
temporary archive through that engine.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from mlcc import engines
from mlcc.engines.base import ImageEngine
from mlcc.errors import DriftError, UsageError
from mlcc.image import open_image as open_remote
from mlcc.image.content import (
    INSTALLED_FILE,
    OCI_ARCH_NAMES,
    STACK_FILE,
    ImageContent,
    read_archive,
    split_transport,
)
from mlcc.image.stack import Mismatch, summary, verify


def open_image(
    text: str, *, tls_verify: bool = True, arch: Optional[str] = None, backend: Optional[str] = None
) -> List[ImageContent]:
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
        return [read_archive(archive, text)]


def arch_of(content: ImageContent) -> str:
    return OCI_ARCH_NAMES.get(content.arch or "", content.arch or "?")


def inspect_document(content: ImageContent) -> Dict[str, Any]:
    """Labels, stack.json and installed.json of one image, JSON-ready."""
    return {
        "reference": content.reference,
        "digest": content.digest,
        "platform": f"{content.os}/{content.arch}",
        "size": content.size,
        "labels": dict(sorted(content.labels.items())),
        "stack": content.json_file(STACK_FILE),
        "installed": content.json_file(INSTALLED_FILE),
    }


def is_mlcc_image(content: ImageContent) -> bool:
    return STACK_FILE in content.files


def diff_rows(
    contents_a: List[ImageContent], contents_b: List[ImageContent], names: Tuple[str, str]
) -> List[Tuple[str, str, str, str]]:
    """``(mark, component, a, b)`` rows; mark is ``*`` where the two differ."""
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


class Verified(NamedTuple):
    content: ImageContent
    findings: List[Mismatch]

    @property
    def drift(self) -> List[Mismatch]:
        return [f for f in self.findings if f.severity == "drift"]

    def to_dict(self) -> Dict[str, Any]:
        return {
            "reference": self.content.reference,
            "arch": arch_of(self.content),
            "findings": [f._asdict() for f in self.findings],
        }


def verify_image(contents: List[ImageContent]) -> List[Verified]:
    return [Verified(c, verify(c)) for c in contents]


def drift_error(image: str, verified: List[Verified]) -> Optional[DriftError]:
    drift = [f"{arch_of(v.content)}: {f}" for v in verified for f in v.drift]
    if not drift:
        return None
    return DriftError(f"{image} drifted from its stack: {len(drift)} mismatch(es)", details=drift[:30])


__all__ = [
    "Verified",
    "diff_rows",
    "drift_error",
    "inspect_document",
    "open_image",
    "summary",
    "verify_image",
]
