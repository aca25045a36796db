"""``mlcc kb check``'s look inside framework wheels: what a pip framework build brings itself.

A PyTorch wheel carries its CUDA runtime (``torch/lib/libcudart-<hash>.so.9.0``), says which
CUDA it was built for (``torch/version.py``: ``cuda = '9.0.176'``), and newer ones depend on
NVIDIA's runtime wheels (``Requires-Dist: nvidia-cudnn-cu12 (==8.9.2.26)``). The recipe's
``bundles:`` mapping (what the framework loads, which the stack then names instead of a
system library) is checked against that evidence, read with range requests
(:mod:`mlcc.kb.wheel`) rather than by downloading the wheel:

- a claimed version the wheel contradicts is an error;
- a library the wheel evidently brings that the recipe does not claim is a warning (the
  stack would install and name a system copy the framework does not load);
- a claim the wheel cannot show (a library linked statically shows no file of its own) is a
  note, and a wheel on a host the check cannot reach (PyTorch's own wheel host) is a warning
  saying so: the recipe must then mark the claim unverified.
"""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, Iterable, List, NamedTuple, Optional, Protocol, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.tags import Tag
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

from mlcc.errors import IndexUnreachable
from mlcc.kb.index import IndexClient
from mlcc.kb.model import UNCONFIRMED, FrameworkBuild, KnowledgeBase
from mlcc.kb.wheel import WheelReader
from mlcc.ui import Step

ERROR = "error"  # fails mlcc kb check
WARNING = "warning"
NOTE = "note"
LIBRARIES = ("cuda_runtime", "cudnn", "nccl")
TITLES = {"cuda_runtime": "CUDA runtime", "cudnn": "cuDNN", "nccl": "NCCL"}
# NVIDIA's runtime wheels a framework wheel depends on (PEP 658 metadata)
_NVIDIA_WHEELS = {
    "cuda_runtime": re.compile(r"^nvidia-cuda-runtime-cu\d+==([0-9.]*)$"),
    "cudnn": re.compile(r"^nvidia-cudnn-cu\d+==([0-9.]*)$"),
    "nccl": re.compile(r"^nvidia-nccl-cu\d+==([0-9.]*)$"),
}
# From CUDA 13 torch depends on NVIDIA's cuda-toolkit metapackage, one extra per library
# (``cuda-toolkit[cublas,cudart,...]==13.0.2``): its release is the CUDA release whose runtime
# the ``cudart`` extra installs
_TOOLKIT_EXTRAS = {"cuda_runtime": "cudart"}
_TOOLKIT = "cuda-toolkit"
# shared libraries a wheel carries itself: the soname's version (auditwheel adds -<hash>)
_BUNDLED_FILES = {
    "cuda_runtime": re.compile(r"/libcudart(?:-[0-9a-f]+)?\.so\.([0-9.]+)$"),
    "cudnn": re.compile(r"/libcudnn(?:-[0-9a-f]+)?\.so\.([0-9.]+)$"),
    "nccl": re.compile(r"/libnccl(?:-[0-9a-f]+)?\.so\.([0-9.]+)$"),
}
# torch/version.py: ``cuda = '11.7'``, and from torch 2.x with a type annotation,
# ``cuda: Optional[str] = '13.0'``
_VERSION_FILES = {
    "torch": ("torch/version.py", re.compile(r"^cuda(?:\s*:\s*[A-Za-z_.\[\]]+)?\s*=\s*'([0-9.]+)'", re.M))
}


class WheelContents(Protocol):
    """What :func:`wheel_evidence` asks of a wheel: a :class:`WheelReader`, or recorded facts."""

    def names(self, url: str) -> Tuple[str, ...]: ...

    def member(self, url: str, name: str) -> Optional[str]: ...

    def requires_dist(self, url: str) -> Optional[Tuple[str, ...]]: ...


class BundleFinding(NamedTuple):
    """One finding about a framework build's ``bundles:`` claim."""

    severity: str
    origin: str
    subject: str
    message: str


class Evidence(NamedTuple):
    """What one wheel shows of the libraries it brings."""

    wheel: str
    found: Tuple[Tuple[str, str, str], ...]  # (library, version, how it was seen)

    def version(self, library: str) -> Optional[Tuple[str, str]]:
        """What the wheel shows of one library.

        Args:
            library: ``cuda_runtime``, ``cudnn`` or ``nccl``.

        Returns:
            ``(version, how it was seen)``, or None when the wheel shows none.
        """
        for name, version, how in self.found:
            if name == library:
                return version, how
        return None


def wheel_evidence(
    reader: WheelContents, url: str, project: str, extras: FrozenSet[str] = frozenset(), arch: str = "x86_64"
) -> Evidence:
    """The CUDA runtime, cuDNN and NCCL the wheel at ``url`` brings, with how each was seen.

    Read without downloading the wheel (range requests; PEP 658 metadata). Requires-Dist
    lines count when pip installs them on Linux/``arch`` with the pin's ``extras``
    (TensorFlow's nvidia-* wheels come only with ``tensorflow[and-cuda]``).

    Args:
        reader: The wheel reader.
        url: The wheel's URL.
        project: Its project name (which version file to read, e.g. ``torch/version.py``).
        extras: The extras the pin installs.
        arch: The CPU arch markers are evaluated for.

    Returns:
        The evidence, libraries sorted.

    Raises:
        IndexUnreachable: The wheel's host cannot be read.
    """
    found: Dict[str, Tuple[str, str]] = {}
    for line in reader.requires_dist(url) or ():
        requirement = _installed_requirement(line, extras, arch)
        if requirement is None:
            continue
        how = f"Requires-Dist {line.split(';')[0].strip()}"
        for library, pattern in _NVIDIA_WHEELS.items():
            match = pattern.match(f"{requirement.name}=={_exact(requirement) or ''}")
            if match and match.group(1):
                found.setdefault(library, (match.group(1), how))
        if canonicalize_name(requirement.name) == _TOOLKIT and _exact(requirement):
            for library, extra in _TOOLKIT_EXTRAS.items():
                if extra in requirement.extras:
                    found.setdefault(library, (str(_exact(requirement)), how))
    for name in reader.names(url):
        for library, pattern in _BUNDLED_FILES.items():
            match = pattern.search("/" + name)
            if match:
                found.setdefault(library, (match.group(1), f"bundled file {name}"))
    member = _VERSION_FILES.get(canonicalize_name(project))
    if member is not None:
        text = reader.member(url, member[0]) or ""
        match = member[1].search(text)
        if match:  # the exact build version, finer than a soname's major.minor
            found["cuda_runtime"] = (match.group(1), f"{member[0]} cuda = '{match.group(1)}'")
    return Evidence(url.rsplit("/", 1)[-1], tuple((k, v, how) for k, (v, how) in sorted(found.items())))


def _installed_requirement(line: str, extras: FrozenSet[str], arch: str) -> Optional[Requirement]:
    try:
        requirement = Requirement(line)
    except InvalidRequirement:
        return None
    if requirement.marker is None:
        return requirement
    environment = {"platform_system": "Linux", "sys_platform": "linux", "platform_machine": arch}
    for extra in extras or {""}:
        if requirement.marker.evaluate({**environment, "extra": extra}):
            return requirement
    return None


def _exact(requirement: Requirement) -> Optional[str]:
    pins = [s.version for s in requirement.specifier if s.operator in ("==", "===")]
    return pins[0] if len(pins) == 1 else None


def agrees(claimed: str, seen: str) -> bool:
    """Whether two versions are equal as far as both say.

    A soname says 9.0, version.py 9.0.176, a recipe 7.6.

    Args:
        claimed: The recipe's version.
        seen: The wheel's.

    Returns:
        True when their common leading parts agree.
    """
    a, b = claimed.split("."), seen.split(".")
    depth = min(len(a), len(b))
    return a[:depth] == b[:depth]


def judge(build: FrameworkBuild, origin: str, evidence: Evidence) -> List[BundleFinding]:
    """Each library's claim against the wheel.

    Args:
        build: The framework build and its ``bundles:`` claim.
        origin: The build's recipe line, for a library it does not claim.
        evidence: What the wheel shows.

    Returns:
        An error for a contradicted version, a warning for a library the wheel brings that
        the recipe does not claim, a note for a claim the wheel cannot show; each names its
        own recipe line.
    """
    findings: List[BundleFinding] = []
    subject = f"{build.label} bundles"
    for library in LIBRARIES:
        claimed = build.bundled(library)
        seen = evidence.version(library)
        title = TITLES[library]
        if (
            claimed is not None
            and claimed != UNCONFIRMED
            and seen is not None
            and not agrees(claimed, seen[0])
        ):
            findings.append(
                BundleFinding(
                    ERROR,
                    build.bundle_origin(library),
                    subject,
                    f"{library} {claimed} but {evidence.wheel} shows {seen[0]} ({seen[1]})",
                )
            )
        elif claimed is None and seen is not None:
            findings.append(
                BundleFinding(
                    WARNING,
                    origin,
                    subject,
                    f"{evidence.wheel} brings {title} {seen[0]} ({seen[1]}); the recipe claims none, "
                    f"so a stack would name and install a system {title} the framework does not load",
                )
            )
        elif claimed is not None and seen is None:
            findings.append(
                BundleFinding(
                    NOTE,
                    build.bundle_origin(library),
                    subject,
                    f"{library} {claimed}: {evidence.wheel} shows no {title} of its own "
                    "(linked statically or loaded from the system); unchecked",
                )
            )
    return findings


def elsewhere(client: IndexClient, build: FrameworkBuild) -> Optional[str]:
    """Where the build's wheel comes from when that is not the index the check reads.

    Another index (``index_url``), or a local version (``+cu92``) only a find-links page or
    an extra index offers.

    Args:
        client: The index the check reads.
        build: The framework build.

    Returns:
        Where it comes from; None when pip takes it from the checked index (or the recipe
        names exact wheel URLs).
    """
    install = build.install
    if install.wheels:
        return None
    if install.index_url and install.index_url.rstrip("/") + "/" != client.index_url:
        return install.index_url
    first = install.packages[0] if install.packages else ""
    if "+" in first.partition("==")[2]:
        return install.find_links or install.extra_index_url or "another index"
    return None


def framework_wheel(
    client: IndexClient, build: FrameworkBuild, arch: Optional[str] = None
) -> Optional[Tuple[str, str]]:
    """The wheel pip installs for the build's first Python on ``arch``.

    An exact wheel URL the recipe names, else the index's Linux file for its
    ``name==version``.

    Args:
        client: The index client.
        build: The framework build.
        arch: The CPU arch (default: the build's first).

    Returns:
        ``(project, URL)``, or None when there is no such wheel.

    Raises:
        IndexUnreachable: The project's page cannot be read.
    """
    python = build.python[0] if build.python else None
    arch = arch or (build.arches[0] if build.arches else "x86_64")
    if python is not None and build.install.wheels_for(python):
        url = build.install.wheels_for(python)[0]
        return url.rsplit("/", 1)[-1].split("-", 1)[0], url
    if not build.install.packages:
        return None
    project, _, version = build.install.packages[0].partition("==")
    project = project.split("[", 1)[0]
    if not version:
        return None
    interpreter = f"cp{python.replace('.', '')}" if python else None
    for file in client.project(project).files:
        try:
            _, found, _, tags = parse_wheel_filename(file.filename)
        except InvalidWheelFilename:
            continue
        if str(found) == version and any(_fits(t, arch, interpreter) for t in tags):
            return project, file.url
    return None


def _unchecked(build: FrameworkBuild, origin: str, why: str) -> BundleFinding:
    """A wheel the check cannot read: fine for a build that claims nothing, or whose recipe
    already lists its bundles as unverified; otherwise the recipe must say so."""
    unverified = not build.prov.verified or any(f.startswith("bundles") for f in build.prov.unverified_fields)
    severity = WARNING if build.bundles and not unverified else NOTE
    advice = "; list bundles in unverified_fields" if severity == WARNING else ""
    return BundleFinding(severity, origin, f"{build.label} bundles", f"not checked: {why}{advice}")


def _extras(build: FrameworkBuild) -> FrozenSet[str]:
    first = build.install.packages[0] if build.install.packages else ""
    try:
        return frozenset(Requirement(first).extras) if first else frozenset()
    except InvalidRequirement:
        return frozenset()


def _fits(tag: Tag, arch: str, interpreter: Optional[str]) -> bool:
    linux = tag.platform.startswith(("manylinux", "linux")) and tag.platform.endswith(arch)
    return linux and (interpreter in (None, tag.interpreter) or tag.interpreter.startswith("py"))


def bundle_findings(
    kb: KnowledgeBase,
    client: IndexClient,
    reader: WheelReader,
    builds: Iterable[FrameworkBuild],
    step: Optional[Step] = None,
) -> List[BundleFinding]:
    """Check each pip build's ``bundles:`` claim (or its absence) against its wheel.

    A wheel the check cannot read is a warning for a build that claims bundles without
    listing them as unverified, else a note.

    Args:
        kb: The knowledge base.
        client: The index client.
        reader: The wheel reader.
        builds: The framework builds; each is checked once.
        step: Told ``("kb check: bundled libraries", done, total)`` per build (progress).

    Returns:
        The findings.
    """
    findings: List[BundleFinding] = []
    seen: Dict[Tuple[str, str, str], bool] = {}
    todo = list(builds)
    for done, build in enumerate(todo):
        if step is not None:
            step("kb check: bundled libraries", done, len(todo))
        key = (build.framework, build.version, build.variant)
        if build.is_cpu or key in seen or build.install.method not in ("pip", "conda"):
            continue
        seen[key] = True
        origin = build.bundles_origin or build.prov.origin
        if build.install.method == "conda":
            if build.bundles:  # a channel's repodata is not read here (IBM's is offline)
                channels = ", ".join(build.install.channels) or "its conda channel"
                findings.append(_unchecked(build, origin, f"conda channel {channels} is not read here"))
            continue
        source = elsewhere(client, build)
        if source is not None:
            if build.bundles:
                findings.append(
                    _unchecked(build, origin, f"its wheel comes from {source}, which is not read here")
                )
            continue
        for arch in build.arches:  # a wheel per arch: each must bring what the recipe claims
            findings += _arch_findings(client, reader, build, origin, arch)
    if step is not None:
        step("kb check: bundled libraries", len(todo), len(todo))
    return findings


def _arch_findings(
    client: IndexClient, reader: WheelReader, build: FrameworkBuild, origin: str, arch: str
) -> List[BundleFinding]:
    """The build's claim against the wheel pip installs on ``arch``."""
    try:
        wheel = framework_wheel(client, build, arch)
    except IndexUnreachable as exc:
        return [_unchecked(build, origin, exc.message)]
    if wheel is None:
        if build.bundles:
            return [_unchecked(build, origin, f"no wheel for its Python on {arch} on the index")]
        return []
    try:
        evidence = wheel_evidence(reader, wheel[1], wheel[0], _extras(build), arch)
    except IndexUnreachable as exc:
        return [_unchecked(build, origin, exc.message)]
    return judge(build, origin, evidence)
