"""An image's software bill of materials: CycloneDX 1.5 JSON from what the image says of itself.

Built from the two documents every mlcc image carries: ``/etc/mlcc/stack.json`` (what mlcc
resolved: the base, the CUDA, cuDNN and NCCL releases with their packages or download
URLs, the framework build, the benchmark's source at a commit) and
``/etc/mlcc/installed.json`` (what the image's last build step found installed: the OS,
the versions of the NVIDIA packages, library headers, ``nvcc``, GCC, Python and every
Python distribution ``pip list`` shows, and in a conda environment every package conda
linked, from conda-meta). One component per installed thing, with a purl
where one names it (``pkg:rpm``, ``pkg:deb``, ``pkg:pypi``, ``pkg:conda`` for what conda
installed, with its build and channel, ``pkg:generic`` for a
tarball, ``pkg:github`` for a source at a commit, ``pkg:oci`` for the image and its
base) and hashes where the documents carry them: image and base manifest digests, and from
a format 2 stack.json's ``fetches`` the sha256 of each download (cuDNN and NCCL tarballs,
Miniforge) and of each file pip took from a hash lock, and the commit of every git
checkout. A format 1 stack.json (an image built before) has no ``fetches``: its SBOM
names no such hashes, as before.

The document is made by cyclonedx-python-lib (its model, its CycloneDX 1.5 JSON
serialiser) with package URLs from packageurl-python; :func:`sbom_bytes` writes it as
canonical JSON, so the bytes do not follow the library's key order from one release to
the next. Two things the library would choose are set instead: the serial number is
derived from the content (the library's default is a random UUID), and the timestamp is
the caller's (from ``SOURCE_DATE_EPOCH`` or the image's own creation time) or none at
all, never the clock (the library's default). The library keeps time as Python's
datetime does, to the microsecond: an image created at ``...05.123456789Z`` gets an
SBOM timestamped ``...05.123456+00:00``.

Pure and deterministic: the same documents and image give the same bytes. Both documents
come from an image and are untrusted: stack.json is checked against its schema,
installed.json shape by shape, and a document that is not what mlcc writes is an error
naming the field, never a traceback.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from datetime import datetime
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Tuple
from urllib.parse import urlsplit

from cyclonedx.model import ExternalReference, ExternalReferenceType, HashAlgorithm, HashType, Property, XsUri
from cyclonedx.model.bom import Bom
from cyclonedx.model.component import Component, ComponentType
from cyclonedx.output.json import JsonV1Dot5
from packageurl import PackageURL

from mlcc.errors import DriftError
from mlcc.image.content import INSTALLED_FILE, STACK_FILE, ImageContent
from mlcc.kb.model import UNCONFIRMED
from mlcc.render.canonical_json import dumps
from mlcc.stackfile.document import DownloadRecord, GitRecord, LibraryRecord, PipPackageRecord, StackManifest

MEDIA_TYPE = "application/vnd.cyclonedx+json"
Json = Dict[str, Any]

# RFC 3339 as CycloneDX's "date-time" needs it, checked before an image's label is used
_TIMESTAMP = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})\Z")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}\Z")
_COMMIT = re.compile(r"^[0-9a-f]{40}\Z")
# mlcc's arch names -> Debian's (pkg:deb's arch qualifier); rpm uses mlcc's own
_DEB_ARCH = {"x86_64": "amd64", "ppc64le": "ppc64el", "aarch64": "arm64"}
_OCI_ARCH = {"x86_64": "amd64", "ppc64le": "ppc64le", "aarch64": "arm64"}
# the namespace of the serial numbers (RFC 4122 name-based UUIDs of the document's digest)
_SERIAL_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "mlcc:sbom")
# the serial number the content digest is taken with, before the real one is known
_NO_SERIAL = uuid.UUID(int=0)
_MAX_TEXT = 4096  # no field of installed.json is longer; a longer one is not mlcc's
# what a package name and version may be before it enters a purl (rpm, dpkg, PEP 440 and
# PEP 508 spellings); anything else in installed.json is not what a package database said
_PACKAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,199}\Z")
_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+~:^!-]{0,199}\Z")
# a conda channel as conda-meta names it: a URL (<host>/conda-forge/linux-64) or a name
# (pkgs/main); printable, no spaces
_CHANNEL = re.compile(r"^[A-Za-z0-9][!-~]{0,1023}\Z")
_USERINFO = re.compile(r"//[^/@]*@")
_TOKEN_PATH = re.compile(r"/t/[^/]+")


class ImageName(NamedTuple):
    """The image an SBOM describes: as the user named it, and its manifest digest if known."""

    reference: str
    digest: Optional[str] = None


def _error(message: str) -> DriftError:
    return DriftError(message, hint="rebuild the image with mlcc build (mlcc inspect shows what it holds)")


# ----------------------------------------------------------------------------- installed.json


class CondaPackage(NamedTuple):
    """One package of a conda environment, as conda-meta records it (installed.json's
    ``conda``), with the Python distributions it put into site-packages, PEP 503 named."""

    name: str
    version: str
    build: Optional[str]
    channel: Optional[str]
    distributions: Tuple[str, ...]


class Installed(NamedTuple):
    """installed.json, each field checked for the shape mlcc-record writes."""

    arch: Optional[str]
    os_id: Optional[str]
    os_version: Optional[str]
    packages: Tuple[Tuple[str, Optional[str]], ...]  # NVIDIA packages -> version (None: absent)
    headers: Tuple[Tuple[str, Optional[str]], ...]
    nvcc: Optional[str]
    gcc: Optional[str]
    python: Optional[str]
    pip: Tuple[Tuple[str, str], ...]  # (name, version) as pip list says
    modules: Tuple[Tuple[str, Json], ...]
    # what conda installed into the Python's environment (none: not a conda environment,
    # or an image recorded before mlcc-record asked)
    conda: Tuple[CondaPackage, ...] = ()


def _text(value: Any, what: str) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > _MAX_TEXT:
        raise _error(f"{what} is not a string of at most {_MAX_TEXT} characters")
    return value


def _strings(value: Any, what: str) -> Tuple[Tuple[str, Optional[str]], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise _error(f"{what} is not a JSON object")
    return tuple(sorted((str(k)[:_MAX_TEXT], _text(v, f"{what}/{k}")) for k, v in value.items()))


def _packages_of(value: Any, what: str) -> Tuple[Tuple[str, Optional[str]], ...]:
    found = _strings(value, what)
    for name, version in found:
        if not _PACKAGE.match(name) or (version is not None and not _VERSION.match(version)):
            raise _error(f"{what}/{name[:80]} is not a package name and version")
    return found


def read_installed(data: Any, what: str = f"/{INSTALLED_FILE}") -> Installed:
    """installed.json from an image, checked; wrong shapes are errors naming the field."""
    if not isinstance(data, dict):
        raise _error(f"{what} is not a JSON object")
    os_info = data.get("os")
    if os_info is not None and not isinstance(os_info, dict):
        raise _error(f"{what}: os is not a JSON object")
    os_info = os_info or {}
    pip = data.get("pip")
    if pip is not None and not (isinstance(pip, list) and all(isinstance(p, dict) for p in pip)):
        raise _error(f"{what}: pip is not a list of JSON objects")
    listed = []
    for index, entry in enumerate(pip or []):
        name = _text(entry.get("name"), f"{what}: pip/{index}/name")
        version = _text(entry.get("version"), f"{what}: pip/{index}/version")
        if not name or not version:
            raise _error(f"{what}: pip/{index} names no distribution and version")
        if not _PACKAGE.match(name) or not _VERSION.match(version):
            raise _error(f"{what}: pip/{index} is not a distribution name and version: {name[:80]!r}")
        listed.append((name, version))
    modules = data.get("modules")
    if modules is not None and not isinstance(modules, dict):
        raise _error(f"{what}: modules is not a JSON object")
    conda = data.get("conda")
    if conda is not None and not (isinstance(conda, list) and all(isinstance(c, dict) for c in conda)):
        raise _error(f"{what}: conda is not a list of JSON objects")
    return Installed(
        arch=_text(data.get("arch"), f"{what}: arch"),
        os_id=_text(os_info.get("id"), f"{what}: os/id"),
        os_version=_text(os_info.get("version_id"), f"{what}: os/version_id"),
        packages=_packages_of(data.get("packages"), f"{what}: packages"),
        headers=_strings(data.get("headers"), f"{what}: headers"),
        nvcc=_text(data.get("nvcc"), f"{what}: nvcc"),
        gcc=_text(data.get("gcc"), f"{what}: gcc"),
        python=_text(data.get("python"), f"{what}: python"),
        pip=tuple(sorted(set(listed), key=lambda p: (_pypi_name(p[0]), p[1]))),
        modules=tuple(sorted((str(k), v) for k, v in (modules or {}).items() if isinstance(v, dict))),
        conda=_conda_packages_of(conda or [], what),
    )


def _conda_packages_of(entries: List[Json], what: str) -> Tuple[CondaPackage, ...]:
    found = [_conda_package(entry, f"{what}: conda/{n}") for n, entry in enumerate(entries)]
    return tuple(sorted(found, key=lambda p: (p.name, p.version, p.build or "", p.channel or "")))


def _conda_package(entry: Json, what: str) -> CondaPackage:
    name = _text(entry.get("name"), f"{what}/name")
    version = _text(entry.get("version"), f"{what}/version")
    build = _text(entry.get("build"), f"{what}/build")
    if not name or not version or not _PACKAGE.match(name) or not _VERSION.match(version):
        raise _error(f"{what} is not a conda package name and version")
    if build is not None and not _PACKAGE.match(build):
        raise _error(f"{what}/build is not a conda build string: {build[:80]!r}")
    channel = _text(entry.get("channel"), f"{what}/channel")
    if channel is not None and not _CHANNEL.match(channel):
        raise _error(f"{what}/channel is not a channel name or URL: {channel[:80]!r}")
    names = entry.get("distributions")
    if names is not None and not (isinstance(names, list) and all(isinstance(d, str) for d in names)):
        raise _error(f"{what}/distributions is not a list of strings")
    if not all(_PACKAGE.match(d) for d in names or []):
        raise _error(f"{what}/distributions names something that is not a distribution")
    return CondaPackage(
        name,
        version,
        build,
        _without_credentials(channel) if channel else None,
        tuple(sorted({_pypi_name(d) for d in names or []})),
    )


def _without_credentials(channel: str) -> str:
    """mlcc-record writes channels without credentials; an image is untrusted, so again:
    no user:password@ and no conda token path (``/t/<token>``) in an SBOM."""
    return _TOKEN_PATH.sub("", _USERINFO.sub("//", channel))


# ----------------------------------------------------------------------------- purls


def purl(
    kind: str,
    name: str,
    version: Optional[str] = None,
    *,
    namespace: Optional[str] = None,
    qualifiers: Optional[Dict[str, Optional[str]]] = None,
    subpath: Optional[str] = None,
) -> PackageURL:
    """A package URL; qualifiers without a value are left out."""
    given = {k: v for k, v in (qualifiers or {}).items() if v}
    return PackageURL(kind, namespace, name, version or None, given or None, subpath or None)


def _pypi_name(name: str) -> str:
    """pkg:pypi's name: PEP 503 normalised (lowercase, runs of -_. as one -)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def is_timestamp(text: str) -> bool:
    """An RFC 3339 time CycloneDX accepts (an image's label is checked before it is used)."""
    return bool(_TIMESTAMP.match(text))


def _oci_purl(reference: str, digest: Optional[str], arch: Optional[str]) -> Optional[PackageURL]:
    """pkg:oci/NAME@sha256:...?repository_url=REGISTRY/PATH&tag=TAG, or None without a digest."""
    if not digest or not _DIGEST.match(digest):
        return None
    name, tag = _split_reference(reference)
    if not name:
        return None
    return purl(
        "oci",
        name.rsplit("/", 1)[-1],
        digest,
        qualifiers={"repository_url": name, "tag": tag, "arch": _OCI_ARCH.get(arch or "")},
    )


def _split_reference(reference: str) -> Tuple[str, Optional[str]]:
    """``registry/path:tag@digest`` -> (``registry/path``, tag); transports give ("", None)."""
    text = reference.removeprefix("docker://")
    if re.match(r"^[a-z-]+:(?!\d)", text):  # oci-archive:PATH, local:REF ...: no registry name
        return "", None
    text = text.split("@", 1)[0]
    head, slash, last = text.rpartition("/")
    if not slash:
        return "", None
    if ":" in last:
        last, tag = last.split(":", 1)
        return f"{head}/{last}".lower(), tag
    return text.lower(), None


# (host URL, Package URL type): where a repository's purl type comes from (recipes/hosts.yaml)
RepositoryTypes = Tuple[Tuple[str, str], ...]


def _repository_purl(repository: str, types: RepositoryTypes) -> Optional[Tuple[str, str, str]]:
    """(type, owner, repo) of a ``<host URL>/OWNER/REPO[.git]`` URL on a host the recipes
    give a purl type, else None."""
    parts = urlsplit(repository)
    segments = [s for s in parts.path.split("/") if s]
    for host, kind in types:
        known = urlsplit(host)
        if (parts.scheme, parts.hostname) == (known.scheme, known.hostname) and len(segments) == 2:
            # the github type's names are case-insensitive and spelled in lowercase
            return kind, segments[0].lower(), segments[1].removesuffix(".git").lower()
    return None


# ----------------------------------------------------------------------------- components


def _property(name: str, value: Optional[str]) -> List[Property]:
    return [Property(name=f"mlcc:{name}", value=value)] if value else []


def _component(
    kind: ComponentType,
    ref: str,
    name: str,
    version: Optional[str],
    *,
    package_url: Optional[PackageURL] = None,
    description: Optional[str] = None,
    hashes: Tuple[Tuple[str, str], ...] = (),
    properties: Iterable[Property] = (),
    external: Tuple[Tuple[ExternalReferenceType, str], ...] = (),
) -> Component:
    return Component(
        type=kind,
        bom_ref=ref,
        name=name,
        version=version or None,
        description=description or None,
        hashes=[HashType(alg=HashAlgorithm(alg), content=content) for alg, content in hashes],
        purl=package_url,
        external_references=[ExternalReference(type=t, url=XsUri(u)) for t, u in external],
        properties=properties,
    )


def _unique_ref(ref: str, seen: Dict[str, int]) -> str:
    """``ref``, or ``ref#N`` for its Nth use in one document (bom-refs must be unique; an
    untrusted record may name one thing twice, and the SBOM keeps both)."""
    seen[ref] = seen.get(ref, 0) + 1
    return ref if seen[ref] == 1 else f"{ref}#{seen[ref]}"


def _sha256(digest: Optional[str]) -> Tuple[Tuple[str, str], ...]:
    return (("SHA-256", digest.split(":", 1)[1]),) if digest and _DIGEST.match(digest) else ()


def _file_sha256(sha256: Optional[str]) -> Tuple[Tuple[str, str], ...]:
    """A file's sha256 as stack.json records it (hex; its schema checked the shape)."""
    return (("SHA-256", sha256),) if sha256 else ()


def _downloads(stack: StackManifest) -> Tuple[DownloadRecord, ...]:
    return stack.fetches.downloads if stack.fetches else ()


def _download_pins(record: Optional[DownloadRecord]) -> Tuple[Property, ...]:
    """What pins a download that has no sourced sha256: the recipe's reason, and the
    checksum file the build checked it against, if any."""
    if record is None or record.sha256:
        return ()
    return (
        *_property("sha256-unavailable", record.sha256_unavailable),
        *_property("checksum-url", record.checksum_url),
    )


def _base(stack: StackManifest) -> Component:
    base = stack.base
    name, tag = _split_reference(base.image)
    return _component(
        ComponentType.CONTAINER,
        "base-image",
        name or base.image,
        tag or base.digest,
        package_url=_oci_purl(base.image, base.digest, stack.arch),
        description=f"the base image ({base.name})",
        hashes=_sha256(base.digest),
        properties=(
            *_property("image", base.image),
            *_property("default-image", base.default_image),
            # an image base that already holds a stack (NGC): what the build took from it
            *_property("provides", ",".join(base.provides)),
            *[p for name, version in base.contents for p in _property(f"base-contents:{name}", version)],
        ),
    )


def _operating_system(installed: Installed) -> List[Component]:
    if not installed.os_id:
        return []
    return [
        _component(
            ComponentType.OPERATING_SYSTEM,
            "os",
            installed.os_id,
            installed.os_version,
            description="from /etc/os-release",
        )
    ]


def _packaging(stack: StackManifest, installed: Installed) -> str:
    """rpm or deb: the stack's pins say it (deb pins are name=version), else the OS."""
    components = stack.components
    pins = [
        *(components.cuda.packages if components.cuda else ()),
        *(p for lib in (components.cudnn, components.nccl) if lib for p in lib.packages),
    ]
    if pins:
        return "deb" if any("=" in pin for pin in pins) else "rpm"
    return "deb" if installed.os_id in ("debian", "ubuntu") else "rpm"


def _packages(stack: StackManifest, installed: Installed) -> List[Component]:
    """The NVIDIA packages mlcc-record asked the package database about, as installed."""
    kind = _packaging(stack, installed)
    distro = "-".join(p for p in (installed.os_id, installed.os_version) if p) or None
    arch = installed.arch or stack.arch
    found = []
    for name, version in installed.packages:
        if not version:
            continue  # recorded as not installed: nothing to list
        qualifiers = {"arch": _DEB_ARCH.get(arch, arch) if kind == "deb" else arch, "distro": distro}
        found.append(
            _component(
                ComponentType.LIBRARY,
                f"{kind}:{name}",
                name,
                version,
                package_url=purl(kind, name, version, namespace="nvidia", qualifiers=qualifiers),
                description="from NVIDIA's package repository",
            )
        )
    return found


def _cuda(stack: StackManifest, installed: Installed) -> List[Component]:
    cuda = stack.components.cuda
    if cuda is None:
        return []
    return [
        _component(
            ComponentType.FRAMEWORK,
            "cuda",
            "cuda",
            cuda.version,
            description="the CUDA toolkit (its packages are listed apart)",
            properties=(
                *_property("nvcc", installed.nvcc),
                *_property("min-driver", cuda.min_driver),
            ),
        )
    ]


def _library(
    name: str,
    lib: Optional[LibraryRecord],
    installed: Installed,
    framework: str,
    downloads: Tuple[DownloadRecord, ...],
) -> List[Component]:
    """cuDNN or NCCL: a tarball is a component of its own (with the sha256 the build
    checked); packages are listed as such; a copy the framework brings, or one a build step
    installed over an image base's own (built, or from packages), is named, with what the
    framework reports loading (and the base's version it replaced)."""
    if lib is None or (lib.method in ("rpm", "deb") and lib.replaced is None):
        return []  # the packages are listed as such
    headers = dict(installed.headers)
    version = None if lib.version == UNCONFIRMED else lib.version
    if lib.method == "tarball":
        url = lib.url or ""
        file = url.rsplit("/", 1)[-1] if url else name
        fetched = next((d for d in downloads if d.name == name and d.url == url), None)
        return [
            _component(
                ComponentType.LIBRARY,
                f"tarball:{name}",
                name,
                version,
                package_url=purl("generic", name, version, qualifiers={"download_url": url or None}),
                description=f"from the tarball {file}" if url else "from a tarball",
                hashes=_file_sha256(fetched.sha256 if fetched else None),
                properties=(
                    *_property("headers", headers.get(name)),
                    *_property("for-cuda", lib.for_cuda),
                    *_download_pins(fetched),
                ),
                external=(((ExternalReferenceType.DISTRIBUTION, url),) if url else ()),
            )
        ]
    reported = [m.get(name) for n, m in installed.modules if n == framework]
    loaded = next((v[:_MAX_TEXT] for v in reported if isinstance(v, str) and v), None)
    ref = f"bundled:{name}"
    if lib.replaced is not None:  # a build step installed its own over the image base's own
        ref = f"replacing:{name}"
        how = "built from source" if lib.method == "source" else f"installed from {lib.method} packages"
        description = f"{how} by the image's build over the base's own ({lib.replaced})"
    else:
        description = f"brought by the framework ({lib.method})"
    return [
        _component(
            ComponentType.LIBRARY,
            ref,
            name,
            version,
            description=description,
            properties=(
                *_property("method", lib.method),
                *_property("replaced", lib.replaced),
                *_property("version", lib.version if version is None else None),
                *_property("framework-loads", loaded),
            ),
        )
    ]


def _python(stack: StackManifest, installed: Installed) -> List[Component]:
    version = installed.python
    record = stack.components.python
    if not version and record is None:
        return []
    return [
        _component(
            ComponentType.APPLICATION,
            "python",
            "python",
            version or (record.version if record else None),
            description="the Python interpreter",
            properties=tuple(_property("executable", record.executable if record else None)),
        )
    ]


def _gcc(stack: StackManifest, installed: Installed) -> List[Component]:
    gcc = stack.components.gcc
    return [
        _component(
            ComponentType.APPLICATION,
            "gcc",
            "gcc",
            installed.gcc or gcc.version,
            description="the C/C++ compiler",
            properties=tuple(_property("toolset", gcc.toolset)),
        )
    ]


def _conda_owners(installed: Installed) -> Dict[str, CondaPackage]:
    """PEP 503 name of a distribution -> the conda package that installed it."""
    return {name: package for package in installed.conda for name in package.distributions}


def _conda_purl(package: CondaPackage) -> PackageURL:
    qualifiers = {"build": package.build, "channel": package.channel}
    return purl("conda", package.name, package.version, qualifiers=qualifiers)


def _conda_properties(package: CondaPackage) -> Tuple[Property, ...]:
    return (
        *_property("installer", "conda"),
        *_property("conda-package", f"{package.name} {package.version} {package.build or ''}".strip()),
        *_property("conda-channel", package.channel),
    )


def _python_packages(stack: StackManifest, installed: Installed) -> List[Component]:
    """Every distribution pip lists. One that conda installed (installed.json's ``conda``
    says which) is that conda package, not a PyPI release: pkg:conda with its build and
    channel. The framework's own, when conda or a source build put it there, is not a
    PyPI release either: without conda's record, pkg:conda without a channel, or no purl."""
    framework = stack.components.framework
    names = {_pypi_name(framework.module), _pypi_name(framework.name)} if framework else set()
    owners = _conda_owners(installed)
    locked = _locked_files(stack)
    found = []
    seen: Dict[str, int] = {}
    for name, version in installed.pip:
        normal = _pypi_name(name)
        ref = _unique_ref(f"pypi:{normal}", seen)  # pip lists a name once; a repeat keeps both
        properties: Tuple[Property, ...] = ()
        package_url: Optional[PackageURL] = purl("pypi", normal, version)
        if framework is not None and normal in names:
            properties = (
                *_property(ComponentType.FRAMEWORK, framework.name),
                *_property("framework-variant", framework.variant),
                *_property("install", framework.install),
                *_property("cuda-lines", ", ".join(framework.cuda)),
            )
            if framework.install in ("source", "base"):  # not a PyPI release (NGC's own build)
                package_url = None
            elif framework.install == "conda":
                package_url = purl("conda", normal, version)
        owner = owners.get(normal)
        if owner is not None:
            package_url = _conda_purl(owner)
            properties = (*properties, *_conda_properties(owner))
        lock = locked.get((normal, version))
        if lock is not None:
            properties = (*properties, *_property("file", lock[1].file), *_property("pip-lock", lock[0]))
        found.append(
            _component(
                ComponentType.LIBRARY,
                ref,
                name,
                version,
                package_url=package_url,
                hashes=_file_sha256(lock[1].sha256 if lock else None),
                properties=properties,
            )
        )
    return found


def _conda_only_packages(installed: Installed) -> List[Component]:
    """The conda packages that put no distribution pip lists: the libraries and tools of
    the environment (a channel's cudatoolkit, cudnn and nccl, which the framework loads)."""
    listed = {_pypi_name(name) for name, _ in installed.pip}
    found = []
    seen: Dict[str, int] = {}
    for package in installed.conda:
        if listed.intersection(package.distributions):
            continue  # named by the distribution pip lists (see _python_packages)
        ref = _unique_ref(f"conda:{package.name}", seen)  # conda links a name once
        found.append(
            _component(
                ComponentType.LIBRARY,
                ref,
                package.name,
                package.version,
                package_url=_conda_purl(package),
                properties=_conda_properties(package),
            )
        )
    return found


def _locked_files(stack: StackManifest) -> Dict[Tuple[str, str], Tuple[str, PipPackageRecord]]:
    """(normalised name, version) -> (lock id, the file pip took) for every package a
    hash-locked install fetched; the first install that fetched it (a later install of the
    same version finds it installed and takes nothing)."""
    found: Dict[Tuple[str, str], Tuple[str, PipPackageRecord]] = {}
    for install in stack.fetches.pip if stack.fetches else ():
        for package in install.packages:
            if package.sha256:
                found.setdefault((_pypi_name(package.name), package.version), (install.lock, package))
    return found


def _framework(stack: StackManifest, installed: Installed) -> List[Component]:
    """The framework as Python imports it, when pip does not list it (a conda build)."""
    framework = stack.components.framework
    if framework is None:
        return []
    listed = {_pypi_name(n) for n, _ in installed.pip}
    if {_pypi_name(framework.module), _pypi_name(framework.name)} & listed:
        return []
    recorded = dict(installed.modules).get(framework.module) or {}
    version = recorded.get("version") if isinstance(recorded.get("version"), str) else None
    return [
        _component(
            ComponentType.FRAMEWORK,
            f"framework:{framework.name}",
            framework.name,
            version or framework.version,
            description=f"imported as {framework.module}",
            properties=(
                *_property("framework-variant", framework.variant),
                *_property("install", framework.install),
                *_property("cuda-lines", ", ".join(framework.cuda)),
            ),
        )
    ]


def _benchmark(stack: StackManifest, types: RepositoryTypes) -> List[Component]:
    benchmark = stack.benchmark
    source = benchmark.source
    if source is None:
        return []
    found = _repository_purl(source.repository, types)
    package_url = None
    if found is not None and _COMMIT.match(source.commit):
        kind, owner, name = found
        package_url = purl(kind, name, source.commit, namespace=owner, subpath=source.path)
    return [
        _component(
            ComponentType.APPLICATION,
            f"source:{benchmark.name}",
            benchmark.name,
            source.commit,
            package_url=package_url,
            description=benchmark.title,
            properties=(
                *_property("suite", benchmark.suite),
                *_property("path", source.path),
            ),
            external=((ExternalReferenceType.VCS, source.repository),),
        )
    ]


def _checkouts(stack: StackManifest, types: RepositoryTypes) -> List[Component]:
    """Every git checkout besides the benchmark's own source (listed above): extensions,
    a framework built from source, pip's git+ requirements; each at its commit."""
    found = []
    seen: Dict[str, int] = {}
    for record in stack.fetches.git if stack.fetches else ():
        if record.name.startswith("source:"):
            continue
        ref = _unique_ref(f"git:{record.name}", seen)
        found.append(_checkout(ref, record, types))
    return found


def _checkout(ref: str, record: GitRecord, types: RepositoryTypes) -> Component:
    found = _repository_purl(record.repository, types)
    package_url = None
    if found is not None and _COMMIT.match(record.commit):
        kind, owner, repo = found
        package_url = purl(kind, repo, record.commit, namespace=owner)
    name = (
        f"{found[1]}/{found[2]}"
        if found
        else record.repository.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    )
    return _component(
        ComponentType.LIBRARY,
        ref,
        name,
        record.commit,
        package_url=package_url,
        description=f"git checkout ({record.name})",
        properties=(
            *_property("checkout", record.name),
            *_property("commit-unresolved", record.commit_unresolved),
        ),
        external=((ExternalReferenceType.VCS, record.repository),),
    )


def _tools(stack: StackManifest) -> List[Component]:
    """Downloads that are neither cuDNN nor NCCL (listed with their library) nor a
    repository's signing key (which pins packages, and is no component): Miniforge."""
    found = []
    for record in _downloads(stack):
        if record.name in ("cudnn", "nccl") or record.name.startswith("nvidia-key:"):
            continue
        found.append(
            _component(
                ComponentType.APPLICATION,
                f"download:{record.name}",
                record.name,
                None,
                package_url=purl("generic", record.name, qualifiers={"download_url": record.url}),
                description=f"from {record.url.rsplit('/', 1)[-1]}",
                hashes=_file_sha256(record.sha256),
                properties=_download_pins(record),
                external=((ExternalReferenceType.DISTRIBUTION, record.url),),
            )
        )
    return found


# ----------------------------------------------------------------------------- the document


def cyclonedx(
    stack_document: Any,
    installed_document: Any,
    image: ImageName,
    *,
    timestamp: Optional[str] = None,
    tool_version: str = "",
    repository_types: RepositoryTypes = (),
) -> Json:
    """The CycloneDX 1.5 document of an image from its stack.json and installed.json, as
    cyclonedx-python-lib writes it (read back into JSON values).

    ``timestamp`` (RFC 3339) is left out when None; ``tool_version`` is mlcc's, named in
    the tools; ``repository_types`` name a source on a known host by its purl type. The
    same inputs give the same document, its serial number included. A document that is
    not what mlcc writes is a DriftError naming the field.
    """
    stack = StackManifest.from_json(stack_document, f"{image.reference}: /{STACK_FILE}", _error)
    installed = read_installed(installed_document, f"{image.reference}: /{INSTALLED_FILE}")
    if timestamp is not None and not _TIMESTAMP.match(timestamp):
        raise _error(f"{image.reference}: the time {timestamp[:40]!r} is not an RFC 3339 time")
    framework = stack.components.framework
    module = framework.module if framework else ""
    components = [
        _base(stack),
        *_operating_system(installed),
        *_cuda(stack, installed),
        *_packages(stack, installed),
        *_library("cudnn", stack.components.cudnn, installed, module, _downloads(stack)),
        *_library("nccl", stack.components.nccl, installed, module, _downloads(stack)),
        *_gcc(stack, installed),
        *_python(stack, installed),
        *_framework(stack, installed),
        *_tools(stack),
        *_python_packages(stack, installed),
        *_conda_only_packages(installed),
        *_benchmark(stack, repository_types),
        *_checkouts(stack, repository_types),
    ]
    name, tag = _split_reference(image.reference)
    subject = _component(
        ComponentType.CONTAINER,
        "image",
        name or image.reference,
        image.digest or tag or stack.variant,
        package_url=_oci_purl(image.reference, image.digest, stack.arch),
        description=f"mlcc image of {stack.benchmark.name} ({stack.variant})",
        hashes=_sha256(image.digest),
        properties=(
            *_property("benchmark", stack.benchmark.name),
            *_property("variant", stack.variant),
            *_property("arch", stack.arch),
            *_property("accelerator", stack.accelerator),
            *_property("stack-generator", f"{stack.generator.name} {stack.generator.version}"),
            *_property("stack-format", str(stack.format)),
            *_property("reference", image.reference),
        ),
    )
    bom = Bom(components=components, serial_number=_NO_SERIAL)
    bom.metadata.component = subject
    bom.metadata.tools.components.add(
        Component(type=ComponentType.APPLICATION, name="mlcc", version=tool_version or None)
    )
    # the library stamps the clock unless told otherwise; CycloneDX makes the time optional
    bom.metadata.timestamp = _datetime(timestamp)  # type: ignore[assignment]
    # what the image is made of; the components' own dependencies are not recorded
    bom.register_dependency(subject, components)
    digest = hashlib.sha256(_serialised(bom).encode()).hexdigest()
    bom.serial_number = uuid.uuid5(_SERIAL_NAMESPACE, digest)
    document: Json = json.loads(_serialised(bom))
    return document


def _serialised(bom: Bom) -> str:
    """The library's CycloneDX 1.5 JSON of ``bom`` (a new writer each time: one caches its text)."""
    return JsonV1Dot5(bom).output_as_string()


def _datetime(timestamp: Optional[str]) -> Optional[datetime]:
    """An RFC 3339 time (checked by :data:`_TIMESTAMP`) as a datetime, to the microsecond."""
    found = _TIMESTAMP.match(timestamp) if timestamp else None
    if found is None:
        return None
    seconds, fraction, zone = found.groups()
    # fromisoformat before Python 3.11 reads six fractional digits or none, and no "Z"
    micro = "." + fraction[1:7].ljust(6, "0") if fraction else ""
    return datetime.fromisoformat(seconds + micro + ("+00:00" if zone == "Z" else zone))


def sbom_bytes(document: Json) -> bytes:
    """The document's bytes: canonical JSON (sorted keys, two-space indent) and a newline."""
    return (dumps(document) + "\n").encode()


def for_image(
    content: ImageContent,
    *,
    timestamp: Optional[str] = None,
    tool_version: str = "",
    repository_types: RepositoryTypes = (),
) -> Json:
    """The SBOM of an image read by :mod:`mlcc.image.content`; an image without mlcc's
    files, or with damaged ones, is a DriftError saying which."""
    for path in (STACK_FILE, INSTALLED_FILE):
        if path not in content.files:
            raise DriftError(
                f"{content.reference} has no /{path}: not an image mlcc built",
                hint="mlcc sbom reads what mlcc stamps into its images (mlcc inspect shows what is there)",
            )
        problem = (content.json_file(path) or {}).get("error")
        if problem:
            raise _error(f"{content.reference}: {problem}")
    return cyclonedx(
        content.json_file(STACK_FILE),
        content.json_file(INSTALLED_FILE),
        ImageName(content.reference, content.digest),
        timestamp=timestamp,
        tool_version=tool_version,
        repository_types=repository_types,
    )
