"""What an image says about itself, read without running it: labels, platform, and the
files mlcc stamped into it (/etc/mlcc/stack.json, /etc/mlcc/installed.json).

Sources: a registry (manifest, config and layers over the distribution API, top layer
first, stopping as soon as the files are found), or an archive a local engine saved
(OCI layout, oci-archive or docker-archive).
"""

from __future__ import annotations

import contextlib
import json
import posixpath
import re
import tarfile
import zlib
from pathlib import Path
from typing import IO, Any, Dict, Iterable, Iterator, List, NamedTuple, Optional, Set, Tuple

from mlcc.errors import RegistryError, UsageError
from mlcc.image import untrusted
from mlcc.image.reference import Reference
from mlcc.image.registry import (
    LAYER_DEADLINE,
    MAX_JSON_BLOB,
    Manifest,
    Registry,
    VerifiedBlob,
    read_bounded,
)
from mlcc.image.sizes import ImageSizes, from_manifest
from mlcc.image.untrusted import as_object

STACK_FILE = "etc/mlcc/stack.json"
INSTALLED_FILE = "etc/mlcc/installed.json"
WANTED = (STACK_FILE, INSTALLED_FILE)
MAX_WANTED_FILE = 16 * 1024 * 1024  # stack.json, installed.json, os-release: small text
# A private key (PEM, PKCS#8 or OpenSSH's format) starts with this line; keys are small files,
# so only files up to KEY_FILE_LIMIT are looked at, and only their first KEY_HEAD bytes.
PRIVATE_KEY = re.compile(rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")
KEY_FILE_LIMIT = 64 * 1024
KEY_HEAD = 4096
# GOARCH names in image configs -> mlcc's arch names
OCI_ARCH_NAMES = {"amd64": "x86_64", "ppc64le": "ppc64le", "arm64": "aarch64"}


class ImageContent(NamedTuple):
    reference: str
    digest: Optional[str]
    os: Optional[str]
    arch: Optional[str]  # as the image config says (GOARCH)
    labels: Dict[str, str]
    files: Dict[str, bytes]  # path (no leading /) -> content, for the files found
    size: Optional[int] = None  # compressed layers plus config, when known
    created: Optional[str] = None  # the image config's creation time, as it says it (untrusted)
    sizes: Optional[ImageSizes] = None  # totals and layers, as far as the source tells them
    # Files of any layer (even one a later layer deletes: its bytes are still pulled) that
    # hold a private key, paths without the leading /.
    private_keys: Tuple[str, ...] = ()

    def json_file(self, path: str) -> Optional[Any]:
        data = self.files.get(path)
        if data is None:
            return None
        try:
            loaded = json.loads(data)
        except (ValueError, RecursionError):
            return {"error": f"/{path} is not JSON"}
        return loaded if isinstance(loaded, dict) else {"error": f"/{path} is not a JSON object"}


# ----------------------------------------------------------------------------- layers


def _scan_layer(
    stream: Any,
    pending: Set[str],
    found: Dict[str, bytes],
    error: untrusted.ErrorFactory = RegistryError,
    keys: Optional[List[str]] = None,
) -> None:
    """Read one layer tar; files found leave ``pending``, whiteouts remove them unread.
    A gzip layer is inflated under :class:`untrusted.Inflated`'s ratio limit. ``keys``
    (when given) collects the layer's files that hold a private key: the whole layer is read."""
    inflated = untrusted.Inflated(stream, "an image layer", error)
    try:
        with tarfile.open(fileobj=inflated, mode="r|") as tar:  # type: ignore[call-overload]
            for member in tar:
                name = posixpath.normpath(member.name.lstrip("./").lstrip("/"))
                folder, base = posixpath.split(name)
                if base.startswith(".wh."):
                    target = posixpath.join(folder, base[4:])
                    if target in pending:
                        pending.discard(target)  # deleted in a later layer: absent
                    continue
                if name in pending and member.isfile():
                    if member.size > MAX_WANTED_FILE:
                        raise error(
                            f"an image layer's /{name} is {member.size} bytes; at most {MAX_WANTED_FILE}"
                        )
                    handle = tar.extractfile(member)
                    if handle is not None:
                        found[name] = handle.read()
                    pending.discard(name)
                elif keys is not None and member.isfile() and 0 < member.size <= KEY_FILE_LIMIT:
                    handle = tar.extractfile(member)
                    if handle is not None and PRIVATE_KEY.search(handle.read(KEY_HEAD)):
                        keys.append(name)
                if not pending and keys is None:
                    return
    except (tarfile.TarError, OSError, EOFError, zlib.error) as failure:
        raise error(f"cannot read an image layer: {failure}") from None


# ----------------------------------------------------------------------------- registry


def read_from_registry(
    registry: Registry, ref: Reference, *, arch: Optional[str] = None
) -> List[ImageContent]:
    """One ImageContent per platform (one for a plain image, several for an index)."""
    manifest = registry.manifest(ref.repository, ref.selector)
    if manifest is None:
        raise RegistryError(f"{ref} does not exist in registry {ref.registry}")
    if not manifest.is_index:
        return [_read_manifest(registry, ref, manifest)]
    contents = []
    for digest, platform in manifest.platforms():
        name = platform.get("architecture")
        if arch and (OCI_ARCH_NAMES.get(name, name) if isinstance(name, str) else None) != arch:
            continue
        child = registry.manifest(ref.repository, digest)
        if child is not None:
            if child.is_index:
                raise RegistryError(f"{ref}: index entry {digest} is another index; mlcc reads one level")
            contents.append(_read_manifest(registry, ref, child))
    if not contents:
        raise RegistryError(f"{ref} has no image for {arch}")
    return contents


def _read_manifest(registry: Registry, ref: Reference, manifest: Manifest) -> ImageContent:

    data = manifest.data
    config_entry = untrusted.as_object(data.get("config"))
    layers = manifest.descriptors("layers")
    config = registry.blob_json(ref.repository, manifest.config_digest())
    keys: List[str] = []  # every layer is read: a key in any of them is pulled with the image
    found = scan_layers(registry, ref, manifest, WANTED, keys=keys)
    size = untrusted.total(
        [untrusted.size(config_entry.get("size")), *(untrusted.size(layer.get("size")) for layer in layers)]
    )
    content = _content(str(ref), manifest.digest, config, found, size, from_manifest(data, config))
    return content._replace(private_keys=tuple(keys))


def scan_layers(
    registry: Registry,
    ref: Reference,
    manifest: Manifest,
    wanted: Iterable[str],
    *,
    any_of: bool = False,
    keys: Optional[List[str]] = None,
) -> Dict[str, bytes]:
    """The files of ``wanted`` (paths without a leading /) the image holds, read from the
    top layer down and stopping once each is found or deleted (``any_of``: once one is);
    with ``keys``, every layer is read and the files holding a private key collected."""
    pending = set(wanted)
    found: Dict[str, bytes] = {}
    for layer in reversed(manifest.descriptors("layers")):
        size = layer.get("size")
        with registry.blob(
            ref.repository, layer["digest"], size if isinstance(size, int) else None
        ) as stream:
            in_layer: Dict[str, bytes] = {}
            in_keys: List[str] = []
            _scan_layer(stream, pending, in_layer, keys=in_keys if keys is not None else None)
            stream.verify()  # the whole layer hashes to its digest before a file of it is used
        found.update(in_layer)
        if keys is not None:
            keys += in_keys
        elif not pending or (any_of and found):
            break
    return found


def _content(
    reference: str,
    digest: Optional[str],
    config: Dict[str, Any],
    files: Dict[str, bytes],
    size: Optional[int],
    sizes: Optional[ImageSizes] = None,
) -> ImageContent:

    labels = as_object(as_object(config.get("config")).get("Labels"))
    os_name, arch, created = config.get("os"), config.get("architecture"), config.get("created")
    return ImageContent(
        reference=reference,
        digest=digest,
        os=os_name if isinstance(os_name, str) else None,
        arch=arch if isinstance(arch, str) else None,
        labels={str(k): str(v) for k, v in labels.items()},
        files=files,
        size=size,
        created=created if isinstance(created, str) else None,
        sizes=sizes,
    )


# ----------------------------------------------------------------------------- archives


def read_archive(path: Path, reference: Optional[str] = None) -> ImageContent:
    """An image saved by an engine: an OCI layout folder, an oci-archive or a docker-archive."""
    if path.is_dir():
        return _read_oci(_DirSource(path), reference or str(path))
    try:
        with tarfile.open(path) as tar:
            names = set(tar.getnames())
            source = _TarSource(tar)
            if "index.json" in names or "./index.json" in names:
                return _read_oci(source, reference or str(path))
            if "manifest.json" in names or "./manifest.json" in names:
                return _read_docker_archive(source, reference or str(path))
    except (OSError, tarfile.TarError) as error:
        raise UsageError(f"cannot read image archive {path}: {error}") from None
    raise UsageError(f"{path} is neither an OCI layout nor a docker archive")


class _DirSource:
    def __init__(self, root: Path) -> None:
        self.root = root

    def open(self, name: str) -> IO[bytes]:
        path = self.root / name
        if ".." in Path(name).parts or not path.is_file():
            raise UsageError(f"the OCI layout {self.root} has no regular file {name}")
        try:
            return path.open("rb")
        except OSError as error:
            raise UsageError(f"cannot read {path}: {error.strerror or error}") from None


class _TarSource:
    def __init__(self, tar: tarfile.TarFile) -> None:
        self.tar = tar

    def size(self, name: str) -> int:
        """The size of the archive member ``name`` (0 when it has none)."""
        for candidate in (name, "./" + name):
            try:
                return self.tar.getmember(candidate).size
            except KeyError:
                continue
        return 0

    def open(self, name: str) -> IO[bytes]:
        for candidate in (name, "./" + name):
            try:
                handle = self.tar.extractfile(candidate)
            except KeyError:
                continue
            if handle is not None:
                return handle
        raise UsageError(f"the image archive has no {name}")


def _json(source: Any, name: str, digest: Optional[str] = None) -> Dict[str, Any]:
    """A JSON document of an archive, bounded; a blob (``digest`` given) must hash to it."""
    with source.open(name) as handle:
        if digest is None:
            data = handle.read(MAX_JSON_BLOB + 1)
        else:
            blob = VerifiedBlob(handle, digest, None, f"{name} of the OCI layout", LAYER_DEADLINE, UsageError)
            data = read_bounded(blob, limit=MAX_JSON_BLOB, deadline=LAYER_DEADLINE, what=name)
            blob.verify()
    if len(data) > MAX_JSON_BLOB:
        raise UsageError(f"{name} of the image archive is larger than {MAX_JSON_BLOB} bytes")
    return untrusted.obj(untrusted.loads(data, name, UsageError), name, UsageError)


def _blob(digest: str) -> str:
    algorithm, _, value = digest.partition(":")
    return f"blobs/{algorithm}/{value}"


def _read_oci(source: Any, reference: str) -> ImageContent:

    index = _json(source, "index.json")
    manifests = untrusted.items(index.get("manifests"), "index.json manifests", UsageError)
    if not manifests:
        raise UsageError(f"{reference}: the OCI layout holds no image")
    entry = manifests[0]
    entry_digest = untrusted.digest(entry.get("digest"), "index.json's first manifest", UsageError)
    manifest = _json(source, _blob(entry_digest), entry_digest)
    inner = untrusted.items(manifest.get("manifests"), f"manifest {entry_digest}", UsageError)
    if inner:  # an index inside the layout: take its first image
        entry_digest = untrusted.digest(inner[0].get("digest"), f"index {entry_digest}", UsageError)
        manifest = _json(source, _blob(entry_digest), entry_digest)
    config_entry = untrusted.obj(manifest.get("config"), f"manifest {entry_digest}'s config", UsageError)
    config_digest = untrusted.digest(config_entry.get("digest"), "the config", UsageError)
    config = _json(source, _blob(config_digest), config_digest)
    layers = [
        untrusted.digest(layer.get("digest"), "a layer", UsageError)
        for layer in untrusted.items(manifest.get("layers"), f"manifest {entry_digest}'s layers", UsageError)
    ]
    keys: List[str] = []
    files = _files(source, layers, verified=True, keys=keys)
    content = _content(reference, entry_digest, config, files, None, _oci_sizes(manifest, config))
    return content._replace(private_keys=tuple(keys))


class OciImage(NamedTuple):
    """An OCI layout's (or oci-archive's) first image: what a layer-by-layer comparison reads."""

    digest: str  # the manifest's
    config: Dict[str, Any]
    layers: Tuple[str, ...]  # layer digests, bottom first
    source: Any  # opens a blob: ``open_layer`` reads one

    def open_layer(self, digest: str) -> IO[bytes]:
        """The layer blob ``digest`` as it is stored (gzip or plain tar)."""
        return self.source.open(_blob(digest))  # type: ignore[no-any-return]


@contextlib.contextmanager
def open_oci(path: Path) -> Iterator[OciImage]:
    """The first image of an OCI layout folder or oci-archive, open while the block runs.

    Args:
        path: The folder or archive (what ``buildah push IMAGE oci-archive:PATH`` writes).

    Yields:
        Its manifest digest, config and layer digests, and a way to open each layer.

    Raises:
        UsageError: Not an OCI layout, unreadable, or malformed.
    """
    if path.is_dir():
        yield _oci_image(_DirSource(path), str(path))
        return
    try:
        with tarfile.open(path) as tar:
            yield _oci_image(_TarSource(tar), str(path))
    except (OSError, tarfile.TarError) as error:
        raise UsageError(f"cannot read image archive {path}: {error}") from None


def _oci_image(source: Any, reference: str) -> OciImage:
    index = _json(source, "index.json")
    manifests = untrusted.items(index.get("manifests"), "index.json manifests", UsageError)
    if not manifests:
        raise UsageError(f"{reference}: the OCI layout holds no image")
    digest = untrusted.digest(manifests[0].get("digest"), "index.json's first manifest", UsageError)
    manifest = _json(source, _blob(digest), digest)
    config_entry = untrusted.obj(manifest.get("config"), f"manifest {digest}'s config", UsageError)
    config_digest = untrusted.digest(config_entry.get("digest"), "the config", UsageError)
    layers = tuple(
        untrusted.digest(layer.get("digest"), "a layer", UsageError)
        for layer in untrusted.items(manifest.get("layers"), f"manifest {digest}'s layers", UsageError)
    )
    return OciImage(digest, _json(source, _blob(config_digest), config_digest), layers, source)


def _oci_sizes(manifest: Dict[str, Any], config: Dict[str, Any]) -> ImageSizes:
    """An OCI layout's sizes: its layer blobs are compressed unless every one is plain tar
    (``podman save --format oci-archive`` writes gzip layers; ``--uncompressed`` does not)."""
    kinds = [str(as_object(layer).get("mediaType", "")) for layer in manifest.get("layers") or []]
    plain = bool(kinds) and all(kind.endswith(".tar") for kind in kinds)
    return from_manifest(manifest, config, compressed=not plain)


def _read_docker_archive(source: Any, reference: str) -> ImageContent:

    with source.open("manifest.json") as handle:
        listed = untrusted.loads(handle.read(), "manifest.json", UsageError)
    if not isinstance(listed, list) or not listed or not isinstance(listed[0], dict):
        raise UsageError(f"{reference}: manifest.json is not a list of images")
    manifest = listed[0]
    config_name, layers = manifest.get("Config"), manifest.get("Layers") or []
    if not isinstance(config_name, str) or not isinstance(layers, list):
        raise UsageError(f"{reference}: manifest.json names no Config and Layers")
    names = [config_name, *layers]
    if not all(isinstance(n, str) and ".." not in Path(n).parts and not n.startswith("/") for n in names):
        raise UsageError(f"{reference}: manifest.json names a file outside the archive")
    config = _json(source, config_name)
    # a docker-archive's layers are plain tar: their sizes in the archive are the unpacked ones
    listing = {"layers": [{"size": source.size(name)} for name in layers]}
    sizes = from_manifest(listing, config, compressed=False)
    keys: List[str] = []
    files = _files(source, layers, keys=keys)
    return _content(reference, None, config, files, None, sizes)._replace(private_keys=tuple(keys))


def _files(
    source: Any, layers: Iterable[str], *, verified: bool = False, keys: Optional[List[str]] = None
) -> Dict[str, bytes]:
    """The wanted files of an archive's layers, top first; ``verified``: ``layers`` are
    digests (an OCI layout) and each layer must hash to its digest before its files count;
    ``keys``: every layer is read and the files holding a private key collected."""
    pending = set(WANTED)
    found: Dict[str, bytes] = {}
    for layer in reversed(list(layers)):
        name = _blob(layer) if verified else layer
        with source.open(name) as handle:
            in_layer: Dict[str, bytes] = {}
            in_keys: Optional[List[str]] = [] if keys is not None else None
            if verified:
                stream = VerifiedBlob(handle, layer, None, f"layer {layer}", LAYER_DEADLINE, UsageError)
                _scan_layer(stream, pending, in_layer, UsageError, in_keys)
                stream.verify()
            else:
                _scan_layer(handle, pending, in_layer, UsageError, in_keys)
        found.update(in_layer)
        if keys is not None and in_keys is not None:
            keys += in_keys  # only once the layer verified
        elif not pending:
            break
    return found


def split_transport(text: str) -> Tuple[str, str]:
    """``oci-archive:PATH`` -> ("oci-archive", PATH); a bare reference -> ("docker", ref)."""
    if text.startswith("docker://"):
        return "docker", text[len("docker://") :]
    for transport in ("oci-archive", "docker-archive", "oci", "local"):
        if text.startswith(transport + ":"):
            return transport, text[len(transport) + 1 :]
    return "docker", text
