"""Images after the build: references, registry access, and what an image says about itself.

    contents = open_image("127.0.0.1:5000/maskrcnn:cuda10.1-cudnn7-ubi8-x86_64", tls_verify=False)
    summary(contents[0]), verify(contents[0])

An image is named as a registry reference (``docker://`` optional) or an archive
(``oci-archive:PATH``, ``docker-archive:PATH``, ``oci:DIR``). ``local:REF`` (an image in a
local engine's storage) needs an engine and is opened by :mod:`mlcc.app.images`.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

from mlcc.errors import UsageError
from mlcc.image.auth import credentials_for
from mlcc.image.content import ImageContent, read_archive, read_from_registry, split_transport
from mlcc.image.reference import parse_reference
from mlcc.image.registry import Registry

__all__ = ["ImageContent", "open_image"]


def open_image(text: str, *, tls_verify: bool = True, arch: Optional[str] = None) -> List[ImageContent]:
    transport, rest = split_transport(text)
    if transport in ("oci-archive", "docker-archive", "oci"):
        return [read_archive(Path(rest), text)]
    if transport == "local":
        raise UsageError(f"{text}: a local image is read through an engine (mlcc.app.images.open_image)")
    ref = parse_reference(rest)
    registry = Registry(ref.registry, tls_verify=tls_verify, credentials=credentials_for(ref.registry))
    return read_from_registry(registry, ref, arch=arch)
