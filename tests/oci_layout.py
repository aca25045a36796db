"""OCI image layouts written by hand for the readers' tests (mlcc reads ``oci:PATH`` as it
reads a registry): gzip layers of given files, one manifest, its config."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence


def layer(files: Dict[str, bytes], whiteouts: Sequence[str] = ()) -> bytes:
    """A gzip tar layer of ``files``, with empty whiteout entries (``.wh.<name>``) after them."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name in whiteouts:
            tar.addfile(tarfile.TarInfo(name), io.BytesIO(b""))
    return buffer.getvalue()


def oci_layout(
    folder: Path,
    layers: Sequence[bytes],
    labels: Optional[Dict[str, str]] = None,
    *,
    architecture: str = "amd64",
    created: Optional[str] = None,
    history: Optional[List[Dict[str, str]]] = None,
) -> Path:
    """``folder`` as an OCI layout of one image: ``layers`` bottom first."""
    blobs = folder / "blobs" / "sha256"
    blobs.mkdir(parents=True)

    def put(data: bytes) -> Dict[str, Any]:
        digest = hashlib.sha256(data).hexdigest()
        (blobs / digest).write_bytes(data)
        return {"digest": f"sha256:{digest}", "size": len(data)}

    config: Dict[str, Any] = {"architecture": architecture, "os": "linux", "config": {}}
    if labels is not None:
        config["config"]["Labels"] = labels
    if created is not None:
        config["created"] = created
    if history is not None:
        config["history"] = history
    manifest = {
        "schemaVersion": 2,
        "config": put(json.dumps(config).encode()),
        "layers": [put(data) for data in layers],
    }
    entry = put(json.dumps(manifest).encode())
    (folder / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": [entry]}))
    (folder / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    return folder
