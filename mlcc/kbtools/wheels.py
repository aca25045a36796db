"""``mlcc kb check``'s reading of a pip framework build's wheel against what its recipe claims.

For every pip framework build the check asks the index which files the release has and reads
the wheel pip installs (range requests, :mod:`mlcc.kb.wheel`):

- **Python and platform.** Each Python the recipe lists needs a Linux wheel for it (its
  CPython tag, ``abi3`` or a ``py3`` wheel) or an sdist, and each arch it lists a wheel for
  that arch; otherwise pip refuses the build there. A build installed from another index
  (PyTorch's own wheel host, not reachable from here) is judged by the same release's files on
  the checked index, which the project builds for the same Pythons; the finding says so.
- **Linked libraries.** The DT_NEEDED entries of the wheel's shared libraries name the CUDA
  runtime, cuDNN and NCCL the framework loads from the system: ``libcudart.so.10.1`` (from
  CUDA 11 on ``libcudart.so.11.0`` for every 11.x, ``libcudart.so.12``), ``libcudnn.so.8``,
  ``libnccl.so.2``. The recipe's ``cuda`` lines must be that runtime's; its ``cudnn:`` range
  must admit only that cuDNN major (a ``>=7.6`` for a wheel that loads ``libcudnn.so.8``
  lets a stack install cuDNN 7, which the framework cannot load); a ``bundles:`` claim (the
  wheel brings its own, linked statically or as a file) is contradicted by a library loaded
  from the system that no file or dependency of the wheel provides.

A library loaded with ``dlopen`` (TensorFlow 2 loads CUDA that way) shows no DT_NEEDED
entry: the wheel cannot prove that claim either way, and nothing is reported.

What was read is kept per wheel file (:func:`wheel_facts`): shared-library member names,
the CUDA line of ``torch/version.py``, the nvidia-* Requires-Dist lines and the DT_NEEDED
sonames. ``mlcc kb check --record`` writes them to ``recipes/wheel-files.json``;
``mlcc lint recipes`` judges the same claims offline from it, and ``mlcc kb check`` reuses a
recorded wheel's facts when the index still serves that file at the same URL (PyPI's file
URLs name the file's hash), instead of downloading its libraries again.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, FrozenSet, Iterable, List, Mapping, NamedTuple, Optional, Set, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from mlcc.errors import IndexUnreachable
from mlcc.kb.index import IndexClient, IndexFile
from mlcc.kb.model import UNCONFIRMED, FrameworkBuild, KnowledgeBase
from mlcc.kb.wheel import SHARED_LIBRARY, WheelReader
from mlcc.kbtools.bundles import (
    _BUNDLED_FILES,
    _VERSION_FILES,
    ERROR,
    NOTE,
    WARNING,
    BundleFinding,
    elsewhere,
    framework_wheel,
    wheel_evidence,
)
from mlcc.ui import Step

_LINKED = {
    "cuda_runtime": re.compile(r"^libcudart\.so\.([0-9]+(?:\.[0-9]+)?)$"),
    "cudnn": re.compile(r"^libcudnn\.so\.([0-9]+)$"),
    "nccl": re.compile(r"^libnccl\.so\.([0-9]+)$"),
}
_NVIDIA_REQUIRES = re.compile(r"^nvidia-[a-z0-9-]+", re.I)
NOT_READ = " (not read)"
# why mlcc.kb.wheel left a library unread for its size: "<n> bytes deflated, over <limit>"
OVER_LIMIT = re.compile(r"^[0-9]+ bytes (?:deflated|inflated), over [0-9]+$")
READERS = 4  # wheels read at once


# ----------------------------------------------------------------------------- what a wheel holds


def wheel_facts(reader: WheelReader, url: str, project: str) -> Dict[str, Any]:
    """What the check needs of one wheel, read with range requests.

    Args:
        reader: The wheel reader.
        url: The wheel's URL.
        project: Its project (which version file to read).

    Returns:
        ``{"url", "libraries", "version_file", "requires", "needed"}``: the shared-library
        member names, the version file's CUDA line (torch), the nvidia-* Requires-Dist lines
        and each library's DT_NEEDED sonames (a library left unread under
        ``"<member> (not read)"`` with the reason).

    Raises:
        IndexUnreachable: The wheel cannot be read.
    """
    libraries = tuple(n for n in reader.names(url) if SHARED_LIBRARY.search(n))
    own = tuple(n for n in libraries if not any(p.search("/" + n) for p in _BUNDLED_FILES.values()))
    version_file = None
    member = _VERSION_FILES.get(canonicalize_name(project))
    if member is not None:
        match = member[1].search(reader.member(url, member[0]) or "")
        version_file = match.group(0) if match else None
    requires = [r for r in reader.requires_dist(url) or () if _NVIDIA_REQUIRES.match(r.strip())]
    return {
        "url": url,
        "libraries": list(libraries),
        "version_file": version_file,
        "requires": requires,
        "needed": reader.needed(url, own),
    }


class FactsReader:
    """Answers :func:`~mlcc.kbtools.bundles.wheel_evidence`'s questions from recorded facts."""

    requests = 0

    def __init__(self, facts: Mapping[str, Any]) -> None:
        """Answer from one wheel's facts.

        Args:
            facts: What :func:`wheel_facts` returned for the wheel.
        """
        self.facts = facts

    def names(self, url: str) -> Tuple[str, ...]:
        """The wheel's shared-library member names (the only names recorded)."""
        return tuple(str(n) for n in self.facts.get("libraries", ()))

    def member(self, url: str, name: str) -> Optional[str]:
        """The recorded line of the version file (the only member text recorded)."""
        text = self.facts.get("version_file")
        return str(text) if text else None

    def requires_dist(self, url: str) -> Optional[Tuple[str, ...]]:
        """The recorded nvidia-* Requires-Dist lines."""
        return tuple(str(r) for r in self.facts.get("requires", ()))


# ----------------------------------------------------------------------------- judging


class WheelSource(NamedTuple):
    """Where the check gets a wheel's facts: a reader (online), a record, or both."""

    reader: Optional[WheelReader]
    recorded: Mapping[str, Any]  # wheel file name -> facts
    budget: int = 12  # wheels the record lacks whose libraries one run reads (kb check --wheels)


def _public(version: str) -> str:
    try:
        return Version(version).public
    except InvalidVersion:
        return version


def _release_files(client: IndexClient, project: str, version: str) -> List[IndexFile]:
    wanted = canonicalize_name(project)
    found: List[IndexFile] = []
    for file in client.project(project).files:
        try:
            if file.filename.endswith(".whl"):
                name, release, _, _ = parse_wheel_filename(file.filename)
            else:
                name, release = parse_sdist_filename(file.filename)
        except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
            continue
        if canonicalize_name(name) == wanted and release.public == version:
            found.append(file)
    return found


def _runs_on(tag: Tag, python: str) -> bool:
    major, minor = python.split(".")[:2]
    if tag.interpreter == f"cp{major}{minor}":
        return True
    if tag.abi == "abi3" and tag.interpreter.startswith(f"cp{major}"):
        return int(tag.interpreter[2 + len(major) :] or 0) <= int(minor)
    return tag.abi == "none" and tag.interpreter in (f"py{major}", f"py{major}{minor}")


def _for_arch(tag: Tag, arch: str) -> bool:
    return tag.platform == "any" or (
        tag.platform.startswith(("linux", "manylinux")) and tag.platform.endswith("_" + arch)
    )


def _tags(files: Iterable[IndexFile]) -> List[FrozenSet[Tag]]:
    return [parse_wheel_filename(f.filename)[3] for f in files if f.filename.endswith(".whl")]


def _interpreters(tag_sets: List[FrozenSet[Tag]], arch: str) -> str:
    found = {t.interpreter for tags in tag_sets for t in tags if _for_arch(t, arch)}
    return ", ".join(sorted(found, key=lambda i: (len(i), i))) or "none"


def python_and_platform(
    build: FrameworkBuild, client: IndexClient, project: str, version: str, source: Optional[str]
) -> List[BundleFinding]:
    """The build's Pythons and arches against the release's files on the index.

    Args:
        build: The framework build.
        client: The index client.
        project: The project pip installs for the build (its first package).
        version: The release (public version).
        source: Where the build really installs from, when that is not the checked index.

    Returns:
        An error at the recipe's ``python`` line for each Python with neither a wheel nor an
        sdist, at its ``arches`` line for an arch with no wheel; nothing when the index has
        no files of the release (the pin check reports that).
    """
    files = _release_files(client, project, version)
    if not files:
        return []
    sdist = any(not f.filename.endswith(".whl") for f in files)
    tag_sets = _tags(files)
    subject = f"{build.label} wheel"
    where = client.index_url + (
        f" (the same release's files; the build installs from {source})" if source else ""
    )
    findings: List[BundleFinding] = []
    for arch in build.arches:
        if sdist:
            break
        if not any(_for_arch(t, arch) for tags in tag_sets for t in tags):
            findings.append(
                BundleFinding(
                    ERROR,
                    build.fact_origin("arches"),
                    subject,
                    f"{project} {version} has no {arch} wheel on {where}",
                )
            )
            continue
        missing = [
            p
            for p in build.python
            if not any(_for_arch(t, arch) and _runs_on(t, p) for tags in tag_sets for t in tags)
        ]
        if missing:
            findings.append(
                BundleFinding(
                    ERROR,
                    build.fact_origin("python"),
                    subject,
                    f"Python {', '.join(missing)}: {project} {version} has no {arch} wheel for "
                    f"{'it' if len(missing) == 1 else 'them'} and no sdist on {where}; its {arch} "
                    f"wheels are for {_interpreters(tag_sets, arch)}",
                )
            )
    return findings


def _linked(facts: Mapping[str, Any]) -> Dict[str, Tuple[str, str]]:
    """Library -> (soname version, member that loads it) from the DT_NEEDED entries."""
    found: Dict[str, Tuple[str, str]] = {}
    for member, sonames in sorted((facts.get("needed") or {}).items()):
        if member.endswith(NOT_READ):
            continue
        for soname in sonames:
            for library, pattern in _LINKED.items():
                match = pattern.match(str(soname))
                if match:
                    found.setdefault(library, (match.group(1), member))
    return found


def _cuda_agrees(line: str, soname: str) -> bool:
    """CUDA 11 and later keep one runtime soname per major (libcudart.so.11.0, .so.12)."""
    major = line.split(".")[0]
    if int(major) >= 11:
        return soname.split(".")[0] == major
    return soname == line or soname.startswith(line + ".")


def _cudnn_range(build: FrameworkBuild, kb: KnowledgeBase, major: str) -> Optional[str]:
    """Why the build's ``cudnn:`` range does not fit a wheel that loads cuDNN ``major``."""
    if build.cudnn is None:
        return None
    try:
        spec = SpecifierSet(build.cudnn)
    except InvalidSpecifier:
        return None
    known = sorted({r.version for r in kb.cudnn}, key=Version)
    admitted = [v for v in known if spec.contains(v, prereleases=True)]
    other: Dict[str, str] = {}  # the first release of each other major, in version order
    for version in admitted:
        if version.split(".")[0] != major:
            other.setdefault(version.split(".")[0], version)
    if other:
        return f"admits cuDNN {', '.join(other.values())} (recipes/cudnn.yaml), which it cannot load"
    if admitted or not known:
        return None
    return f"admits no cuDNN {major} release of recipes/cudnn.yaml"


def linked_findings(
    build: FrameworkBuild, kb: KnowledgeBase, facts: Mapping[str, Any], brought: Set[str]
) -> List[BundleFinding]:
    """The build's CUDA, cuDNN and bundles claims against the sonames its wheel links.

    Args:
        build: The framework build.
        kb: The knowledge base (the cuDNN releases a range admits).
        facts: The wheel's facts (:func:`wheel_facts`).
        brought: The libraries the wheel brings itself (a file, or an nvidia-* dependency).

    Returns:
        Errors at the recipe line of each contradicted claim; a note for a library left unread.
    """
    wheel = str(facts.get("url", "")).rsplit("/", 1)[-1]
    subject = f"{build.label} wheel"
    findings: List[BundleFinding] = []
    linked = _linked(facts)
    for member, why in sorted((facts.get("needed") or {}).items()):
        if member.endswith(NOT_READ):
            reason = "; ".join(str(w) for w in why)
            findings.append(
                BundleFinding(
                    NOTE,
                    build.prov.origin,
                    subject,
                    f"{member[: -len(NOT_READ)]} of {wheel} not read: {reason}",
                )
            )
    runtime = linked.get("cuda_runtime")
    if (
        runtime is not None
        and "cuda_runtime" not in brought
        and build.cuda
        and not any(_cuda_agrees(line, runtime[0]) for line in build.cuda)
    ):
        linked_by = f"{runtime[1]} of {wheel} links libcudart.so.{runtime[0]}"
        findings.append(
            BundleFinding(
                ERROR, build.fact_origin("cuda"), subject, f"cuda {', '.join(build.cuda)} but {linked_by}"
            )
        )
    for library, title in (("cuda_runtime", "libcudart"), ("cudnn", "libcudnn"), ("nccl", "libnccl")):
        seen = linked.get(library)
        claimed = build.bundled(library)
        if seen is None or library in brought or claimed is None:
            continue
        findings.append(
            BundleFinding(
                ERROR,
                build.bundle_origin(library),
                subject,
                f"bundles {library} {claimed}, but {seen[1]} of {wheel} loads {title}.so.{seen[0]} "
                "from the system and the wheel brings no copy of it",
            )
        )
    cudnn = linked.get("cudnn")
    if cudnn is not None and "cudnn" not in brought and build.bundled("cudnn") is None:
        why = _cudnn_range(build, kb, cudnn[0])
        if why is not None:
            findings.append(
                BundleFinding(
                    ERROR,
                    build.fact_origin("cudnn"),
                    subject,
                    f"cudnn '{build.cudnn}' {why}: {cudnn[1]} of {wheel} loads libcudnn.so.{cudnn[0]}",
                )
            )
        elif build.cudnn is None:
            findings.append(
                BundleFinding(
                    WARNING,
                    build.prov.origin,
                    subject,
                    f"{cudnn[1]} of {wheel} loads libcudnn.so.{cudnn[0]} from the system, and the build "
                    f"names no cudnn range (cudnn: '>={cudnn[0]},<{int(cudnn[0]) + 1}')",
                )
            )
    return findings


def _static_claims_hold(
    build: FrameworkBuild, facts: Mapping[str, Any], brought: Set[str]
) -> List[BundleFinding]:
    """A ``bundles:`` claim no file shows, and no library loads from the system: linked in."""
    needed = facts.get("needed") or {}
    if not needed or any(m.endswith(NOT_READ) for m in needed):
        return []
    linked = _linked(facts)
    wheel = str(facts.get("url", "")).rsplit("/", 1)[-1]
    return [
        BundleFinding(
            NOTE,
            build.bundle_origin(library),
            f"{build.label} wheel",
            f"{library} {build.bundled(library)}: no library of {wheel} loads it from the system, "
            "so it is linked in as claimed (its version is not in the ELF dynamic section)",
        )
        for library in ("cudnn", "nccl")
        if build.bundled(library) not in (None, UNCONFIRMED)
        and library not in linked
        and library not in brought
    ]


def _first_package(build: FrameworkBuild) -> Optional[Tuple[str, str]]:
    first = build.install.packages[0] if build.install.packages else ""
    project, sep, version = first.partition("==")
    if not sep or not version or "@" in project:
        return None
    return project.split("[", 1)[0].strip(), _public(version.strip())


def _proves_more(build: FrameworkBuild) -> bool:
    """Whether the build claims what only its libraries' DT_NEEDED entries settle: a cuDNN
    range, or a cuDNN or NCCL linked into the wheel. Reading a library means inflating most
    of it (its dynamic section sits near its end), hundreds of MB per wheel, so the CUDA
    line alone (which the file names and the version file mostly show) does not warrant it."""
    return build.cudnn is not None or any(build.bundled(lib) is not None for lib in ("cudnn", "nccl"))


def wheel_findings(
    kb: KnowledgeBase,
    client: IndexClient,
    source: WheelSource,
    builds: Iterable[FrameworkBuild],
    read: Dict[str, Any],
    step: Optional[Step] = None,
) -> List[BundleFinding]:
    """Check every pip framework build's Pythons, arches and linked libraries against its wheel.

    Args:
        kb: The knowledge base.
        client: The index client (or the recorded index, offline).
        source: Where wheels' facts come from.
        builds: The framework builds; each is checked once.
        read: Filled with the facts of each wheel used, by file name (for ``--record``).
        step: Told ``("kb check: framework wheels", done, total)`` per build, then
            ``("kb check: wheel libraries", done, total)`` per wheel read (progress).

    Returns:
        The findings.
    """
    tell = step or (lambda what, done, total: None)
    findings: List[BundleFinding] = []
    done: Set[Tuple[str, str, str]] = set()
    wanted: List[Tuple[FrameworkBuild, str, str, str]] = []  # (build, project, url, arch)
    todo = list(builds)
    for number, build in enumerate(todo):
        tell("kb check: framework wheels", number, len(todo))
        key = (build.framework, build.version, build.variant)
        if key in done or build.install.method != "pip":
            continue
        done.add(key)
        first = _first_package(build)
        where = elsewhere(client, build)
        try:
            if first is not None and not build.install.wheels:
                findings += python_and_platform(build, client, first[0], first[1], where)
            if build.is_cpu or where is not None or not _proves_more(build):
                continue
            # each arch's wheel is its own build: each loads its own libraries
            wheels = [(framework_wheel(client, build, arch), arch) for arch in build.arches]
        except IndexUnreachable:
            continue  # the pin check reports an unreachable page once
        wanted += [(build, wheel[0], wheel[1], arch) for wheel, arch in wheels if wheel is not None]
    tell("kb check: framework wheels", len(todo), len(todo))
    unread = [w for w in wanted if _recorded(source, w[2]) is None]
    # a library costs a few hundred MB: the rest wait for the next run, so a run stays bounded
    # and the record fills up run by run
    later = {w[2] for w in unread[source.budget :]} if source.reader is not None else set()
    # the libraries are downloaded and inflated: several wheels at once (network-bound)
    all_facts: List[Optional[Dict[str, Any]]] = []
    with ThreadPoolExecutor(max_workers=READERS) as pool:
        tell("kb check: wheel libraries", 0, len(wanted))
        for facts in pool.map(lambda w: None if w[2] in later else _facts(source, w[1], w[2]), wanted):
            all_facts.append(facts)  # in order, each told as it is read
            tell("kb check: wheel libraries", len(all_facts), len(wanted))
    for (build, project, url, arch), facts in zip(wanted, all_facts):
        if url in later:
            findings.append(
                BundleFinding(
                    NOTE,
                    build.prov.origin,
                    f"{build.label} wheel",
                    f"libraries of {url.rsplit('/', 1)[-1]} not read in this run (at most {source.budget} "
                    "wheels a run, kb check --wheels; the next run reads them)",
                )
            )
        if facts is None:
            continue
        read[url.rsplit("/", 1)[-1]] = facts
        evidence = wheel_evidence(FactsReader(facts), url, project, arch=arch)
        brought = {library for library, _, _ in evidence.found}
        findings += linked_findings(build, kb, facts, brought)
        findings += _static_claims_hold(build, facts, brought)
    return findings


def _recorded(source: WheelSource, url: str) -> Optional[Dict[str, Any]]:
    """The record's facts of the wheel: by file name offline, by the same URL online."""
    recorded = source.recorded.get(url.rsplit("/", 1)[-1])
    if not isinstance(recorded, dict):
        return None
    if source.reader is None:
        return recorded
    # online, a wheel with a library left unread is asked again: a failed read (the network,
    # a deadline) may succeed this time. A library over the size limit stays over it, so a
    # record unread only for that is final (torch 2.8.0's libtorch_cuda.so: 666 MB deflated)
    partial = any(
        str(m).endswith(NOT_READ) and not all(OVER_LIMIT.search(str(w)) for w in why or [""])
        for m, why in (recorded.get("needed") or {}).items()
    )
    return recorded if recorded.get("url") == url and not partial else None


def _facts(source: WheelSource, project: str, url: str) -> Optional[Dict[str, Any]]:
    recorded = _recorded(source, url)
    if recorded is not None:
        return recorded
    if source.reader is None:
        return None  # offline: a wheel the record lacks is not judged
    try:
        return wheel_facts(source.reader, url, project)
    except IndexUnreachable:
        return None
