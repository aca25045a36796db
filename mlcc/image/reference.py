"""Image references: ``registry[:port]/path[:tag][@digest]``, parsed the way the OCI
distribution spec and containers/image do, without guessing a default registry."""

from __future__ import annotations

import re
from typing import NamedTuple, Optional

from mlcc.errors import UsageError

_PATH = re.compile(r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*\Z")
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}\Z")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}\Z")
_HOST = re.compile(
    r"^(localhost|[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+|\[[0-9a-fA-F:]+\]|[A-Za-z0-9-]+)(:[0-9]+)?\Z"
)


class Reference(NamedTuple):
    registry: str  # host[:port]
    repository: str  # path inside the registry
    tag: Optional[str] = None
    digest: Optional[str] = None

    @property
    def name(self) -> str:
        return f"{self.registry}/{self.repository}"

    def __str__(self) -> str:
        text = self.name
        if self.tag:
            text += f":{self.tag}"
        if self.digest:
            text += f"@{self.digest}"
        return text

    def with_tag(self, tag: str) -> Reference:
        return self._replace(tag=tag, digest=None)

    @property
    def selector(self) -> str:
        """What the registry API addresses: the digest if given, else the tag."""
        return self.digest or self.tag or "latest"


def parse_reference(text: str, *, what: str = "image") -> Reference:
    """``quay.io/acme/maskrcnn:tag`` -> Reference. The registry must be explicit."""
    original = text
    for prefix in ("docker://", "//"):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    digest = None
    if "@" in text:
        text, digest = text.split("@", 1)
        if not _DIGEST.match(digest):
            raise UsageError(f"{what} {original!r}: {digest!r} is not a sha256 digest")
    registry, slash, rest = text.partition("/")
    if (
        not slash
        or not _HOST.match(registry)
        or not ("." in registry or ":" in registry or registry == "localhost")
    ):
        raise UsageError(
            f"{what} {original!r} names no registry",
            hint="write it in full, e.g. quay.io/acme/maskrcnn:tag or 127.0.0.1:5000/maskrcnn:tag",
        )
    _check_port(registry, original, what)
    tag = None
    last = rest.rsplit("/", 1)[-1]
    if ":" in last:
        rest, tag = rest.rsplit(":", 1)
        if not _TAG.match(tag):
            raise UsageError(f"{what} {original!r}: {tag!r} is not a valid tag")
    if not _PATH.match(rest):
        raise UsageError(
            f"{what} {original!r}: {rest!r} is not a repository path",
            hint="lowercase letters, digits and . _ - separated by /",
        )
    return Reference(registry, rest, tag, digest)


def _check_port(registry: str, original: str, what: str) -> None:
    host, colon, port = registry.rpartition(":")
    if colon and not host.endswith(":") and port.isdigit() and not 1 <= int(port) <= 65535:
        raise UsageError(
            f"{what} {original!r}: port {port} is not a TCP port",
            hint="a port from 1 to 65535, e.g. 127.0.0.1:5000",
        )


def parse_repository(text: str, *, what: str = "--registry") -> Reference:
    """A registry plus optional namespace with no tag: ``quay.io/me`` or ``127.0.0.1:5000``."""
    text = text.rstrip("/")
    _check_port(text.partition("/")[0], text, what)
    probe = parse_reference(text + "/x", what=what)  # a stand-in repository name to parse around
    if probe.tag or probe.digest:
        raise UsageError(f"{what} {text!r} must not carry a tag")
    return Reference(probe.registry, probe.repository[: -len("/x")] if "/" in probe.repository else "")
