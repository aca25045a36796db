"""Two images of one stack, layer by layer: identical, or the first layer that differs and
the paths in it that differ, and how (content, mode, owner, time, link, only in one).

What a reproducibility check prints: two builds of the same stack from the same base digest
and inputs should give one manifest digest; when they do not, the first differing layer is
the build step to look at, and its paths say what that step left behind (a log, a cache, a
.pyc with a time in it, a file time the engine did not rewrite).
"""

from __future__ import annotations

import hashlib
import posixpath
import tarfile
import zlib
from pathlib import Path
from typing import IO, Dict, Iterator, List, NamedTuple, Optional, Tuple

from mlcc.errors import UsageError
from mlcc.image import untrusted
from mlcc.image.content import OciImage, open_oci

MAX_PATHS = 20  # the differing paths a comparison names (the count says how many more)
# the image config's fields, besides the layers' digests, that make two images differ
CONFIG_FIELDS = ("created", "author", "config", "history", "architecture", "os", "variant")


class Entry(NamedTuple):
    """One tar member as far as two builds can differ in it."""

    kind: bytes
    mode: int
    owner: Tuple[int, int]
    mtime: int
    size: int
    link: str
    sha256: str  # of a regular file's bytes ("" otherwise)


class PathDifference(NamedTuple):
    path: str  # without the leading /
    what: Tuple[str, ...]  # "content", "mode", "owner", "time", "link", "kind", "only in first"...

    def __str__(self) -> str:
        return f"/{self.path} ({', '.join(self.what)})"


class Comparison(NamedTuple):
    first: str  # manifest digests
    second: str
    config_fields: Tuple[str, ...] = ()  # the config fields that differ
    layer: Optional[int] = None  # the first differing layer's index (0: the bottom one)
    layer_digests: Tuple[Optional[str], Optional[str]] = (None, None)
    paths: Tuple[PathDifference, ...] = ()  # up to MAX_PATHS of that layer's
    more_paths: int = 0  # how many more differ there

    @property
    def identical(self) -> bool:
        return self.first == self.second

    def describe(self) -> List[str]:
        """What a person reads: one line when identical, else where the images part."""
        if self.identical:
            return [f"identical: {self.first}"]
        lines = [f"different: {self.first} and {self.second}"]
        if self.config_fields:
            lines.append(f"image config differs in: {', '.join(self.config_fields)}")
        if self.layer is not None:
            first, second = (d or "(none)" for d in self.layer_digests)
            lines.append(f"first differing layer: {self.layer + 1} ({first} and {second})")
            lines += [f"  {path}" for path in self.paths]
            if self.more_paths:
                lines.append(f"  ... and {self.more_paths} more path(s)")
        return lines


def compare_images(first: Path, second: Path) -> Comparison:
    """Compare two saved images (OCI layouts or oci-archives) layer by layer.

    Args:
        first: One image, as an engine saved it.
        second: The other.

    Returns:
        The comparison: identical (one manifest digest), or the config fields and the first
        layer that differ, with the paths that differ in that layer.

    Raises:
        UsageError: Either is not a readable OCI layout or archive.
    """
    with open_oci(first) as one, open_oci(second) as other:
        if one.digest == other.digest:
            return Comparison(one.digest, other.digest)
        fields = tuple(
            _where(f, one.config.get(f), other.config.get(f))
            for f in CONFIG_FIELDS
            if one.config.get(f) != other.config.get(f)
        )
        for index in range(max(len(one.layers), len(other.layers))):
            a = one.layers[index] if index < len(one.layers) else None
            b = other.layers[index] if index < len(other.layers) else None
            if a != b:
                differences = _layer_differences(one, a, other, b)
                return Comparison(
                    one.digest,
                    other.digest,
                    fields,
                    index,
                    (a, b),
                    tuple(differences[:MAX_PATHS]),
                    max(0, len(differences) - MAX_PATHS),
                )
        return Comparison(one.digest, other.digest, fields)


def _where(field: str, first: object, second: object) -> str:
    """``field``, or where in it two values first differ: ``history[3].created``."""
    if isinstance(first, list) and isinstance(second, list):
        for index, (x, y) in enumerate(zip(first, second)):
            if x != y:
                return _where(f"{field}[{index}]", x, y)
        return f"{field} (length {len(first)} and {len(second)})"
    if isinstance(first, dict) and isinstance(second, dict):
        keys = sorted(k for k in set(first) | set(second) if first.get(k) != second.get(k))
        return f"{field}.{keys[0]}" if len(keys) == 1 else f"{field} ({', '.join(map(str, keys))})"
    return field


def _layer_differences(
    one: OciImage, a: Optional[str], other: OciImage, b: Optional[str]
) -> List[PathDifference]:
    first = _entries(one, a) if a else {}
    second = _entries(other, b) if b else {}
    found = []
    for path in sorted(set(first) | set(second)):
        x, y = first.get(path), second.get(path)
        if x is None or y is None:
            found.append(PathDifference(path, ("only in first" if y is None else "only in second",)))
        elif x != y:
            found.append(PathDifference(path, _what(x, y)))
    return found


def _what(x: Entry, y: Entry) -> Tuple[str, ...]:
    names = (
        ("kind", x.kind != y.kind),
        ("content", x.sha256 != y.sha256 or x.size != y.size),
        ("mode", x.mode != y.mode),
        ("owner", x.owner != y.owner),
        ("time", x.mtime != y.mtime),
        ("link", x.link != y.link),
    )
    return tuple(name for name, differs in names if differs)


def _entries(image: OciImage, digest: str) -> Dict[str, Entry]:
    """Every member of one layer, hashed as it streams (a layer is never held in memory)."""
    entries: Dict[str, Entry] = {}
    with image.open_layer(digest) as handle:
        for member, data in _members(handle):
            name = posixpath.normpath(member.name.lstrip("./").lstrip("/")) or "."
            sha256 = _sha256(data) if data is not None else ""
            entries[name] = Entry(
                member.type,
                member.mode,
                (member.uid, member.gid),
                int(member.mtime),
                member.size,
                member.linkname,
                sha256,
            )
    return entries


def _sha256(stream: IO[bytes]) -> str:
    digest = hashlib.sha256()
    for chunk in iter(lambda: stream.read(1 << 20), b""):
        digest.update(chunk)
    return digest.hexdigest()


def _members(handle: IO[bytes]) -> Iterator[Tuple[tarfile.TarInfo, Optional[IO[bytes]]]]:
    inflated = untrusted.Inflated(handle, "an image layer", UsageError)
    try:
        with tarfile.open(fileobj=inflated, mode="r|") as tar:  # type: ignore[call-overload]
            for member in tar:
                yield member, tar.extractfile(member) if member.isfile() else None
    except (tarfile.TarError, OSError, EOFError, zlib.error) as failure:
        raise UsageError(f"cannot read an image layer: {failure}") from None
