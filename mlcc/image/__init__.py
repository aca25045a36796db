"""Images after the build: references, registry access, and what an image says about itself.

    contents = open_image("127.0.0.1:5000/maskrcnn:cuda10.1-cudnn7-ubi8-x86_64", tls_verify=False)
    summary(contents[0]), verify(contents[0])

An image is named as a registry reference (``docker://`` optional), an archive
(``oci-archive:PATH``, ``docker-archive:PATH``, ``oci:DIR``), or ``local:REF`` for an image in a
local engine's storage (saved to a temporary archive through the engine).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import List, Optional

from mlcc.image.content import ImageContent, read_archive, read_from_registry, split_transport

__all__ = ["ImageContent", "open_image"]


def open_image(
    text: str, *, tls_verify: bool = True, arch: Optional[str] = None, backend: Optional[str] = None
) -> List[ImageContent]:
    transport, rest = split_transport(text)
    if transport in ("oci-archive", "docker-archive", "oci"):
        return [read_archive(Path(rest), text)]
    if transport == "local":
        from mlcc.build import engine_for

        engine = engine_for(backend)
        with tempfile.TemporaryDirectory(prefix="mlcc-inspect-") as scratch:
            archive = engine.save(rest, Path(scratch) / "image.tar")
            return [read_archive(archive, text)]
    from mlcc.image.auth import credentials_for
    from mlcc.image.reference import parse_reference
    from mlcc.image.registry import Registry

    ref = parse_reference(rest)
    registry = Registry(ref.registry, tls_verify=tls_verify, credentials=credentials_for(ref.registry))
    return read_from_registry(registry, ref, arch=arch)
