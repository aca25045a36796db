"""NVIDIA downloads routed through ``$NVIDIA_MIRROR``: shared by the planner and stack.json."""

from __future__ import annotations

MIRROR_VAR = "${NVIDIA_MIRROR}"


def mirrored(url: str, host: str) -> str:
    """Route NVIDIA downloads through ``$NVIDIA_MIRROR`` (https), others stay as they are."""
    for scheme in ("https://", "http://"):
        prefix = scheme + host.split("://", 1)[1]
        if url.startswith(prefix):
            return MIRROR_VAR + url[len(prefix) :]
    return url
