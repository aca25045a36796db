"""The base image as it is today: its digest, and whether it is the base the stack needs.

A tag such as ``ubi8/ubi:8.10`` is rebuilt by its publisher regularly. At build time mlcc
asks the registry (distribution API) which manifest the tag names for the stack's arch,
builds FROM exactly that digest, and folds the digest into the content digest: a moved
tag is a new build input, so skip-if-built rebuilds. The same lookup reads the image's
platform (config) and /etc/os-release (top layer first), so ``--base-image`` cannot put
a UBI 9 image under a UBI 8 stack, or a ppc64le image under an x86_64 one.
"""

from __future__ import annotations

from typing import Dict, NamedTuple, Optional, Tuple

from mlcc.errors import RegistryError, UsageError
from mlcc.image.auth import credentials_for
from mlcc.image.content import OCI_ARCH_NAMES, scan_layers
from mlcc.image.reference import Reference, parse_reference
from mlcc.image.registry import Manifest, Registry
from mlcc.ui.safe_text import printable

OS_RELEASE_FILES = ("etc/os-release", "usr/lib/os-release")


class ResolvedBase(NamedTuple):
    reference: str  # as given: registry/path:tag
    digest: str  # the manifest of the stack's arch (not the index)
    arch: str  # mlcc's name, from the image config
    os_id: Tuple[str, ...]  # ID then ID_LIKE words of /etc/os-release
    version_id: Optional[str]

    @property
    def pinned(self) -> str:
        """``registry/path@sha256:...``: what the build pulls."""
        ref = parse_reference(self.reference)
        return str(ref._replace(tag=None, digest=self.digest))


def resolve_base(reference: str, arch: str, *, tls_verify: bool = True) -> ResolvedBase:
    """The digest, arch and OS release behind ``reference`` for ``arch``."""
    ref = parse_reference(reference, what="base image")
    registry = Registry(ref.registry, tls_verify=tls_verify, credentials=credentials_for(ref.registry))
    manifest = registry.manifest(ref.repository, ref.selector)
    if manifest is None:
        raise RegistryError(f"base image {reference} does not exist in registry {ref.registry}")
    manifest = _for_arch(registry, ref, manifest, arch)
    config = registry.blob_json(ref.repository, manifest.config_digest())
    found = scan_layers(registry, ref, manifest, OS_RELEASE_FILES, any_of=True)
    text = next((found[name] for name in OS_RELEASE_FILES if name in found), b"")
    fields = parse_os_release(text.decode("utf-8", "replace"))
    config_arch = str(config.get("architecture", ""))
    return ResolvedBase(
        reference=reference,
        digest=manifest.digest,
        arch=OCI_ARCH_NAMES.get(config_arch, config_arch),
        os_id=tuple([fields.get("ID", ""), *fields.get("ID_LIKE", "").split()]),
        version_id=fields.get("VERSION_ID"),
    )


def _for_arch(registry: Registry, ref: Reference, manifest: Manifest, arch: str) -> Manifest:
    if not manifest.is_index:
        return manifest
    offered = []
    for digest, platform in manifest.platforms():
        given = platform.get("architecture")
        name = OCI_ARCH_NAMES.get(given, given) if isinstance(given, str) else "unknown"
        offered.append(printable(name)[:40])
        if name == arch:
            child = registry.manifest(ref.repository, digest)
            if child is not None and not child.is_index:
                return child
    raise UsageError(
        f"base image {ref} has no {arch} image (it offers {', '.join(sorted(set(offered))) or 'none'})",
        hint="give a base image built for the stack's arch, or pick the arch the base offers",
    )


def parse_os_release(text: str) -> Dict[str, str]:
    """KEY=value lines, quotes removed (os-release(5))."""
    fields: Dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and key and not key.startswith("#"):
            fields[key] = value.strip().strip("\"'")
    return fields


def mismatch(base: ResolvedBase, *, arch: str, family: str, release: str, name: str) -> Optional[str]:
    """Why ``base`` cannot serve a stack on ``name`` (family ``family``, release ``release``,
    e.g. rhel / 8.10) for ``arch``; None when it can."""
    if base.arch != arch:
        return f"it is a {base.arch or 'unknown-arch'} image, the stack is {arch}"
    if not base.os_id[0]:
        return "it has no /etc/os-release, so its OS release cannot be checked"
    if family not in base.os_id:
        ids = " ".join(word for word in base.os_id if word)
        return f"its /etc/os-release says ID {ids}, the stack needs {family} ({name})"
    wanted = release.split(".")[0]
    have = (base.version_id or "").split(".")[0]
    if have != wanted:
        return (
            f"its /etc/os-release says VERSION_ID {base.version_id or '(none)'}, "
            f"the stack is for {name} (release {wanted})"
        )
    return None
