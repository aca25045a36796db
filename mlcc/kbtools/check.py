"""``mlcc kb check``: every pin of the resolved stacks, checked against the package index.

For each stack the published set (recipes/matrix.yaml) resolves, plus a deterministic
sample of the full cross product, the check collects what an image would install with
pip and asks the index what pip would really get for that stack's Python and CPU arch:

- a ``name==version`` pin needs a wheel whose tags the target accepts (the tags pip
  itself computes for that interpreter, glibc and arch: :mod:`packaging.tags`), or an
  sdist, reported as "builds from source" with the headers the recipes say it needs;
- a pin read with ``--find-links`` must get its build from that page: when the index has
  the same version with a tag pip ranks higher, pip installs the index's file instead
  (PyTorch 1.1.0 "cu100" came out as PyPI's CUDA 9.0 manylinux1 wheel that way);
- an exact wheel URL must carry tags the target accepts;
- a conda pin should name its build (``name=version=build``), since a channel may hold
  several builds of one version for different CUDA or Python;
- every download (cuDNN/NCCL tarballs, installers) should carry a sourced ``sha256``.

Findings name the recipe line the pin comes from. Errors fail the check (exit 10);
warnings are facts the index cannot settle or that another part of the project owns.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import time
from typing import Any, Dict, FrozenSet, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from mlcc.errors import ConflictError, IndexUnreachable, UsageError
from mlcc.kb.index import IndexClient, IndexFile, Page
from mlcc.kb.model import FrameworkBuild, KnowledgeBase
from mlcc.kb.wheel import WheelReader
from mlcc.kbtools.bundles import ERROR, NOTE, WARNING, bundle_findings
from mlcc.kbtools.wheels import WheelSource, wheel_findings
from mlcc.matrix import evaluate, expand, load_matrix
from mlcc.resolve import Resolver, Stack, build_request
from mlcc.ui import Step

SAMPLE_DEFAULT = 40


class Target(NamedTuple):
    """Where a pin is installed: the interpreter, the C library and the CPU arch."""

    python: str  # "3.6"
    arch: str  # "x86_64"
    glibc: Optional[str]  # "2.17"; None: only the plain linux_<arch> tag is known to fit

    @property
    def label(self) -> str:
        """How findings name the target, e.g. ``Python 3.6 on x86_64 (glibc 2.28)``."""
        return f"Python {self.python} on {self.arch}" + (f" (glibc {self.glibc})" if self.glibc else "")


class Pin(NamedTuple):
    """One requirement an image installs, with where pip looks for it."""

    requirement: str
    origin: str  # recipes/<file>:<line>
    target: Target
    extra_index: Optional[str] = None
    find_links: Optional[str] = None
    kind: str = "pip"  # pip | conda
    after_urls: Tuple[str, ...] = ()  # URL/VCS requirements the stack installed before this pin
    installs: FrozenSet[str] = frozenset()  # the system packages the image installs
    family: str = "rhel"  # the base's package family: which package names apply
    # (contents field, value) of what an image base carries (NGC's openmpi): see SourceBuild
    base_carries: Tuple[Tuple[str, str], ...] = ()
    reason: Optional[str] = None  # conda: the recipe's reason why no build is named
    # (version, nearest): the pin stands in for a release the index lacks (recipes: stands_for)
    stands_for: Optional[Tuple[str, str]] = None


class FactFinding(NamedTuple):
    """One finding of ``mlcc kb check``: severity, recipe line, pin, message, stacks."""

    severity: str
    origin: str
    subject: str
    message: str
    stacks: Tuple[str, ...] = ()

    def line(self) -> str:
        """The finding as one printed line, naming up to three of the stacks it affects.

        Returns:
            ``<origin>: <severity>: <subject>: <message>; stacks: ...``.
        """
        where = f"; stacks: {', '.join(self.stacks[:3])}" if self.stacks else ""
        more = f" (+{len(self.stacks) - 3} more)" if len(self.stacks) > 3 else ""
        return f"{self.origin}: {self.severity}: {self.subject}: {self.message}{where}{more}"


class Report(NamedTuple):
    """What ``mlcc kb check`` found, and how much it asked the index."""

    stacks: int
    pins: int
    findings: Tuple[FactFinding, ...]
    requests: int
    seconds: float
    index_url: str
    wheels: Tuple[Tuple[str, Any], ...] = ()  # (wheel file name, facts read): what --record keeps

    @property
    def errors(self) -> Tuple[FactFinding, ...]:
        """The findings of severity error (they fail the check, exit 10)."""
        return tuple(f for f in self.findings if f.severity == ERROR)

    @property
    def warnings(self) -> Tuple[FactFinding, ...]:
        """The findings of severity warning."""
        return tuple(f for f in self.findings if f.severity == WARNING)

    @property
    def notes(self) -> Tuple[FactFinding, ...]:
        """The findings of severity note (shown with ``-v``)."""
        return tuple(f for f in self.findings if f.severity == NOTE)

    def summary(self) -> str:
        """The closing line of ``mlcc kb check``.

        Returns:
            Pins and stacks checked, the index, and the counts of each severity.
        """
        return (
            f"{self.pins} pins of {self.stacks} stacks checked against {self.index_url}: "
            f"{len(self.errors)} errors, {len(self.warnings)} warnings, {len(self.notes)} notes "
            f"({self.requests} index requests, {self.seconds:.1f} s)"
        )


# ----------------------------------------------------------------------------- tags


def supported_tags(target: Target) -> List[Tag]:
    """The wheel tags pip accepts for ``target``, most preferred first (pip's own order).

    Args:
        target: The interpreter, the C library and the CPU arch.

    Returns:
        The tags, from :mod:`packaging.tags`.
    """
    major, minor = (int(p) for p in target.python.split(".")[:2])
    platforms = _platforms(target)
    # CPython < 3.8 was built with pymalloc, whose ABI tag carries an "m" (cp36m).
    abi = f"cp{major}{minor}" + ("m" if (major, minor) < (3, 8) else "")
    tags = list(cpython_tags((major, minor), abis=[abi], platforms=platforms))
    tags += list(compatible_tags((major, minor), interpreter=f"cp{major}{minor}", platforms=platforms))
    return tags


def _platforms(target: Target) -> List[str]:
    arch = target.arch
    platforms: List[str] = []
    if target.glibc:
        glibc_major, glibc_minor = (int(p) for p in target.glibc.split(".")[:2])
        # PEP 600 tags from the target's glibc down, with the PEP 513/571/599 aliases.
        lowest = 5 if arch in ("x86_64", "i686") else 17
        legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
        for glibc in range(glibc_minor, lowest - 1, -1):
            platforms.append(f"manylinux_{glibc_major}_{glibc}_{arch}")
            if glibc in legacy and (glibc == 17 or arch in ("x86_64", "i686")):
                platforms.append(f"{legacy[glibc]}_{arch}")
    platforms.append(f"linux_{arch}")
    return platforms


class _Ranker:
    """Memoised tag priority per target: lower is better, None means pip rejects it."""

    def __init__(self) -> None:
        self._tables: Dict[Target, Dict[Tag, int]] = {}

    def rank(self, target: Target, tags: FrozenSet[Tag]) -> Optional[int]:
        table = self._tables.get(target)
        if table is None:
            table = {tag: i for i, tag in enumerate(supported_tags(target))}
            self._tables[target] = table
        ranks = [table[t] for t in tags if t in table]
        return min(ranks) if ranks else None


# ----------------------------------------------------------------------------- collecting pins


def stack_label(stack: Stack) -> str:
    """How findings name a stack.

    Args:
        stack: A resolved stack.

    Returns:
        ``<benchmark>/<variant>``.
    """
    return f"{stack.benchmark.name}/{stack.variant}"


def pins_of(stack: Stack, kb: KnowledgeBase) -> List[Pin]:
    """Everything ``stack``'s image installs from an index, a page or a channel, in order.

    Args:
        stack: A resolved stack.
        kb: The knowledge base (the pip tooling of each Python).

    Returns:
        The pins: pip, setuptools and wheel, the framework's packages and wheels, its
        source build's companions, and the benchmark's pip steps; none without Python.
    """
    if stack.python is None:
        return []
    target = Target(stack.python.version, stack.arch.name, stack.base.glibc)
    raw: List[Pin] = []
    tooling = kb.python_tooling.get(stack.python.version)
    if tooling is not None:
        for name in ("pip", "setuptools", "wheel"):
            raw.append(Pin(f"{name}=={getattr(tooling, name)}", tooling.prov.origin, target))
    build = stack.framework
    if build is not None:
        install = build.install
        origins = install.origins or (build.prov.origin,) * len(install.packages)
        kind = "conda" if install.method == "conda" else "pip"
        wheels_origin = install.wheels_origin or build.prov.origin
        raw += [Pin(url, wheels_origin, target) for url in install.wheels_for(target.python)]
        for requirement, origin in zip(install.packages, origins):
            raw.append(
                Pin(
                    requirement,
                    origin,
                    target,
                    extra_index=install.index_url or install.extra_index_url,
                    find_links=install.find_links,
                    kind=kind,
                    reason=install.builds_unavailable if kind == "conda" else None,
                )
            )
        if install.method == "source":
            raw += [Pin(f"{n}=={v}", build.prov.origin, target) for n, v in build.companions]
    bench_build = stack.benchmark.build
    if bench_build is not None:
        for step in bench_build.steps:
            if step.kind != "pip" or not step.applies_to(stack.arch.name, stack.base.family):
                continue
            origins = step.origins or (bench_build.prov.origin,) * len(step.packages)
            raw += [
                Pin(p, o, target, extra_index=step.pip_index, stands_for=step.stands_for)
                for p, o in zip(step.packages, origins)
            ]
    installs = frozenset(_system_packages(stack))
    carries = _base_carries(stack)
    pins: List[Pin] = []
    urls: List[str] = []
    for pin in raw:
        pins.append(
            pin._replace(
                after_urls=tuple(urls), installs=installs, family=stack.base.family, base_carries=carries
            )
        )
        if _is_direct(pin.requirement) and not pin.requirement.split("#", 1)[0].endswith(".whl"):
            urls.append(pin.requirement)  # an archive or checkout: its project name is unknown here
    return pins


def _base_carries(stack: Stack) -> Tuple[Tuple[str, str], ...]:
    """What the stack's image base carries for source builds (its contents' openmpi)."""
    contents = stack.base.contents
    if contents is None or contents.openmpi is None:
        return ()
    return (("openmpi", contents.openmpi),)


def _system_packages(stack: Stack) -> List[str]:
    base, family = stack.base, stack.base.family
    names = [*base.build_packages, *base.gcc_packages]
    if stack.python is not None:
        names += [*stack.python.setup_packages, *stack.python.packages]
    if stack.gcc.toolset is not None:
        names += list(stack.gcc.toolset.packages)
    if stack.benchmark.build is not None:
        names += list(stack.benchmark.build.packages_for(family))
    return names


def _is_direct(requirement: str) -> bool:
    return "://" in requirement.split(";", 1)[0]


def downloads_of(stack: Stack, kb: KnowledgeBase) -> List[Tuple[str, str, bool]]:
    """Each file the stack's build downloads, and whether its checksum is accounted for.

    Args:
        stack: A resolved stack.
        kb: The knowledge base (the Miniforge installer).

    Returns:
        ``(file name, recipe origin, has a sourced sha256 or a recorded reason)`` triples.
    """
    found: List[Tuple[str, str, bool]] = []
    for lib in (stack.cudnn, stack.nccl):
        if lib is not None and lib.url:
            explained = bool(lib.sha256) or bool(lib.sha256_unavailable)
            found.append((lib.url.rsplit("/", 1)[-1], lib.prov.origin, explained))
    build = stack.framework
    if build is not None and stack.python is not None:
        # exact wheel URLs carry no sha256 field: the recipe must at least say why
        explained = bool(build.install.wheels_sha256_unavailable)
        origin = build.install.wheels_origin or build.prov.origin
        for wheel in build.install.wheels_for(stack.python.version):
            found.append((wheel.rsplit("/", 1)[-1], origin, explained))
    if build is not None and build.install.method == "conda":
        download = kb.downloads.get("miniforge")
        installer = download.url(stack.arch.name) if download else None
        if download is not None and installer:
            explained = bool(download.sha256_for(stack.arch.name)) or bool(download.sha256_unavailable)
            found.append((installer.rsplit("/", 1)[-1], download.prov.origin, explained))
    return found


# ----------------------------------------------------------------------------- judging pins


class Checker:
    """Judges pins against the index, caching each page it reads."""

    def __init__(self, client: IndexClient, kb: KnowledgeBase) -> None:
        """Start with nothing read.

        Args:
            client: The index client.
            kb: The knowledge base (what a source build needs).
        """
        self.client = client
        self.source_builds = {canonicalize_name(b.name): b for b in kb.source_builds}
        self.ranker = _Ranker()
        self.unreachable: Dict[str, str] = {}
        self._parsed: Dict[Tuple[str, str], List[Tuple[IndexFile, Optional[Version]]]] = {}

    def judge(self, pin: Pin) -> Optional[Tuple[str, str]]:
        """Judge one pin against the index.

        Args:
            pin: The requirement, its recipe line and its target.

        Returns:
            ``(severity, message)`` for a pin that fails or needs a word; None when it is fine.

        Raises:
            IndexUnreachable: The configured index itself cannot be read (another page that
                cannot be read is remembered and reported once, as a warning).
        """
        if pin.kind == "conda":
            return self._conda(pin)
        if _is_direct(pin.requirement) and " @ " not in pin.requirement:
            return self._bare_url(pin)
        try:
            requirement = Requirement(pin.requirement)
        except InvalidRequirement as exc:
            return ERROR, f"not a valid requirement ({exc})"
        if requirement.marker is not None and not requirement.marker.evaluate(
            {"python_version": pin.target.python, "platform_machine": pin.target.arch}
        ):
            return None  # pip skips it for this target, as intended
        if requirement.url:
            return self._direct(requirement, pin)
        version = _exact_version(requirement.specifier)
        if version is None:
            return WARNING, "not pinned to one version: the index cannot tell what a build will get"
        return self._indexed(requirement.name, version, pin)

    def _conda(self, pin: Pin) -> Optional[Tuple[str, str]]:
        parts = pin.requirement.replace("==", "=").split("=")
        if len(parts) >= 3 and parts[2]:
            return None
        if pin.reason:
            return NOTE, f"names no build (name=version=build), as the recipe says why: {pin.reason}"
        return (
            WARNING,
            "names no build (name=version=build): the channel may hold several builds of this version",
        )

    def _bare_url(self, pin: Pin) -> Optional[Tuple[str, str]]:
        """A requirement that is only a URL: a wheel's name still says what it installs."""
        filename = pin.requirement.split("#", 1)[0].rsplit("/", 1)[-1]
        if not filename.endswith(".whl"):
            return None  # a source archive or VCS checkout: built in the image, nothing to tag
        try:
            name = parse_wheel_filename(filename)[0]
        except InvalidWheelFilename as exc:
            return ERROR, f"the URL's file is not a wheel name ({exc})"
        return self._direct(Requirement(f"{name} @ {pin.requirement}"), pin)

    def _direct(self, requirement: Requirement, pin: Pin) -> Optional[Tuple[str, str]]:
        url = requirement.url or ""
        filename = url.split("#", 1)[0].rsplit("/", 1)[-1]
        if not filename.endswith(".whl"):
            return None  # a source archive or VCS checkout: built in the image, nothing to tag
        try:
            name, _, _, tags = parse_wheel_filename(filename)
        except InvalidWheelFilename as exc:
            return ERROR, f"the URL's file is not a wheel name ({exc})"
        if canonicalize_name(name) != canonicalize_name(requirement.name):
            return ERROR, f"the URL is a wheel of {name}, not {requirement.name}"
        if self.ranker.rank(pin.target, tags) is None:
            return ERROR, f"{filename} does not install on {pin.target.label}: its tags are {_tags(tags)}"
        return None

    def _indexed(self, name: str, version: Version, pin: Pin) -> Optional[Tuple[str, str]]:
        page = self._page(self.client.project_url(name))
        if page is None:
            return None
        if not page.found:
            return ERROR, f"the index {self.client.index_url} has no project {name!r}"
        sources: List[Tuple[str, List[IndexFile]]] = [(self.client.index_url, list(page.files))]
        pages = [(pin.extra_index, True), (pin.find_links, False)]
        for extra, is_index in pages:
            if not extra:
                continue
            url = extra.rstrip("/") + "/" + canonicalize_name(name) + "/" if is_index else extra
            extra_page = self._page(url)
            if extra_page is None:
                return NOTE, f"not checked: {url} could not be read"
            sources.append((extra, list(extra_page.files)))
        offered = [(where, f, v) for where, files in sources for f, v in self._versions(where, name, files)]
        candidates = [(where, f) for where, f, v in offered if v == version]
        if not candidates and pin.after_urls:
            earlier = ", ".join(u.split("#", 1)[0] for u in pin.after_urls[-2:])
            return WARNING, (
                f"no release {version} on the index; pip finds it satisfied only if an earlier "
                f"URL install provides it ({earlier})"
            )
        if not candidates:
            known = sorted({v for _, _, v in offered if v is not None})
            near = ", ".join(str(v) for v in _nearest(known, version))
            return ERROR, f"no release {version} on the index" + (f" (nearest: {near})" if near else "")
        judged = self._choose(name, pin, version, candidates)
        # the nearest release needs every release of the project: online only, not from a record
        if judged is None and pin.stands_for is not None and self.client.complete_pages:
            return self._stand_in(pin, pin.stands_for, offered)
        return judged

    def _stand_in(
        self, pin: Pin, claim: Tuple[str, str], offered: List[Tuple[str, IndexFile, Optional[Version]]]
    ) -> Optional[Tuple[str, str]]:
        """Whether the recipe's nearest release to the one the pin stands for is the index's:
        among the releases with a file that installs on the target, the one with the fewest
        releases of the index (any arch) between it and the wanted one."""
        wanted, claimed = Version(claim[0]), Version(claim[1])
        python = Version(pin.target.python + ".99")
        # final releases only: a .dev stub or a release candidate stands in for nothing
        finals = [(f, v) for _, f, v in offered if v is not None and v != wanted and not v.is_prerelease]
        every = sorted({v for _, v in finals} | {wanted})
        fits = {
            v
            for f, v in finals
            if not f.yanked
            and (not f.requires_python or _python_ok(f.requires_python, python))
            and (
                not f.filename.endswith(".whl")
                or self.ranker.rank(pin.target, _wheel_name(f.filename)[3]) is not None
            )
        }
        if not fits:
            return ERROR, f"stands for {wanted}, but no release of the index installs on {pin.target.label}"
        at = every.index(wanted)
        nearest = min(fits, key=lambda v: (abs(every.index(v) - at), v))
        if nearest != claimed:
            return ERROR, (
                f"the recipe says {claimed} is the release nearest to {wanted} on the index for "
                f"{pin.target.label}; the index's nearest is {nearest}"
            )
        return None

    def _versions(
        self, where: str, name: str, files: List[IndexFile]
    ) -> List[Tuple[IndexFile, Optional[Version]]]:
        """Each file's version, parsed once per page and project (torch lists thousands)."""
        key = (where, canonicalize_name(name))
        found = self._parsed.get(key)
        if found is None:
            found = [(f, _version_of(f, name)) for f in files]
            self._parsed[key] = found
        return found

    def _source_build(self, pin: Pin, name: str, sdist: IndexFile) -> Tuple[str, str]:
        """An sdist only: pip builds it in the image, which needs what the recipes say."""
        base = f"builds from source ({sdist.filename}): no wheel for {pin.target.label}"
        rule = self.source_builds.get(canonicalize_name(name))
        if rule is None:
            return NOTE, base
        carried = dict(pin.base_carries).get(rule.base_contents or "")
        if carried is not None:
            return NOTE, f"{base}; the base image carries what it needs ({rule.base_contents} {carried})"
        needed = rule.packages_for(pin.family)
        missing = [p for p in needed if p not in pin.installs]
        if missing:
            return ERROR, (
                f"{base}; the build needs {', '.join(missing)} ({rule.prov.origin}), "
                "which the image does not install"
            )
        return NOTE, f"{base}; the image installs what it needs ({', '.join(needed) or 'a compiler'})"

    def _choose(
        self, name: str, pin: Pin, version: Version, candidates: List[Tuple[str, IndexFile]]
    ) -> Optional[Tuple[str, str]]:
        python = Version(pin.target.python + ".99")
        wheels: List[Tuple[int, str, IndexFile]] = []
        sdists: List[Tuple[str, IndexFile]] = []
        excluded: Set[str] = set()
        for where, file in candidates:
            if file.requires_python and not _python_ok(file.requires_python, python):
                excluded.add(file.requires_python)
                continue
            if file.filename.endswith(".whl"):
                rank = self.ranker.rank(pin.target, _wheel_name(file.filename)[3])
                if rank is not None:
                    wheels.append((rank, where, file))
            else:
                sdists.append((where, file))
        if wheels:
            wheels.sort(key=lambda w: (w[2].yanked, w[0]))
            _, where, chosen = wheels[0]
            if pin.find_links and where != pin.find_links:
                claimed = [f.filename for w, f in candidates if w == pin.find_links]
                return (
                    ERROR,
                    f"pip installs {chosen.filename} from {where}, not the build on {pin.find_links}"
                    + (f" ({', '.join(claimed[:2])})" if claimed else "")
                    + ": its tag ranks higher; install the wanted wheel by its exact URL",
                )
            if chosen.yanked:
                return WARNING, f"{chosen.filename} is yanked on the index"
            return None
        if sdists:
            return self._source_build(pin, name, sdists[0][1])
        if excluded and len(excluded) == len({f.requires_python for _, f in candidates}):
            needs = " or ".join(sorted(excluded))
            return ERROR, f"{version} requires Python {needs}: pip refuses it on {pin.target.label}"
        files = sorted({_tag_summary(f) for _, f in candidates})
        return ERROR, (
            f"no distribution for {pin.target.label}: {version} has no sdist, and its wheels are "
            + ", ".join(files[:6])
            + (" ..." if len(files) > 6 else "")
        )

    def _page(self, url: str) -> Optional[Page]:
        if url in self.unreachable:
            return None
        try:
            return self.client.page(url)
        except IndexUnreachable as exc:
            if url.startswith(self.client.index_url):
                raise  # the configured index itself: nothing can be checked
            self.unreachable[url] = exc.message.rsplit(": ", 1)[-1]
            return None


def _exact_version(specifier: SpecifierSet) -> Optional[Version]:
    specs = list(specifier)
    if len(specs) != 1 or specs[0].operator not in ("==", "===") or "*" in specs[0].version:
        return None
    try:
        return Version(specs[0].version)
    except InvalidVersion:
        return None


def _version_of(file: IndexFile, name: str) -> Optional[Version]:
    return _filename_version(file.filename, canonicalize_name(name))


@functools.cache
def _filename_version(filename: str, name: str) -> Optional[Version]:
    """Memoised: a project page of torch lists thousands of files, asked about per pin."""
    try:
        if filename.endswith(".whl"):
            found, version, _, _ = _wheel_name(filename)
        else:
            found, version = parse_sdist_filename(filename)
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None
    return version if canonicalize_name(found) == name else None


@functools.cache
def _wheel_name(filename: str) -> Tuple[str, Version, object, FrozenSet[Tag]]:
    return parse_wheel_filename(filename)


def _python_ok(requires: str, python: Version) -> bool:
    try:
        return SpecifierSet(requires).contains(python, prereleases=True)
    except InvalidSpecifier:
        return True  # pip ignores a malformed Requires-Python too


def _nearest(known: Sequence[Version], wanted: Version) -> List[Version]:
    same_line = [v for v in known if v.release[:2] == wanted.release[:2]]
    if same_line:
        return same_line[-3:]
    lower = [v for v in known if v < wanted][-1:]
    higher = [v for v in known if v > wanted][:1]
    return lower + higher


def _tags(tags: FrozenSet[Tag]) -> str:
    return ", ".join(sorted(str(t) for t in tags)[:3])


def _tag_summary(file: IndexFile) -> str:
    if not file.filename.endswith(".whl"):
        return file.filename
    platforms = sorted({t.platform for t in parse_wheel_filename(file.filename)[3]})
    pythons = sorted({t.interpreter for t in parse_wheel_filename(file.filename)[3]})
    return f"{'/'.join(pythons)} {'/'.join(platforms)}"


# ----------------------------------------------------------------------------- the run


def published_stacks(kb: KnowledgeBase) -> List[Stack]:
    """The stacks of the published set.

    Args:
        kb: The knowledge base.

    Returns:
        One stack per published cell of ``recipes/matrix.yaml``.

    Raises:
        RecipeError: The matrix file is malformed.
    """
    return [o.stack for o in evaluate(kb, expand(load_matrix(kb))) if o.stack is not None and o.published]


Cell = Tuple[str, str, str, str]  # (benchmark, arch, CUDA line or "cpu", framework release)


def cell_rank(cell: Cell) -> str:
    """A cell's place in the sample: the sha256 of its key, a property of the cell alone.

    Args:
        cell: ``(benchmark, arch, CUDA line or "cpu", framework release)``.

    Returns:
        The hex digest of ``benchmark/arch/line/release``.
    """
    return hashlib.sha256("/".join(cell).encode()).hexdigest()


def sampled_cells(kb: KnowledgeBase, count: int) -> List[Cell]:
    """A deterministic sample of the cross product that stays put as the recipes grow.

    Each benchmark with each build of its framework, per arch and CUDA line of that build;
    the ``count`` cells of smallest :func:`cell_rank`. A cell's rank depends on nothing else,
    so adding a benchmark or a build adds its cells and pushes out at most as many of the
    others (a stride over the sorted product would shift nearly all of them, and with them
    the installs `mlcc kb lock` locks).

    Args:
        kb: The knowledge base.
        count: At most this many cells (``--sample``); 0 or less: none.

    Returns:
        The cells, sorted.
    """
    if count <= 0:
        return []
    cells: Set[Cell] = set()
    for name, bench in kb.benchmarks.items():
        rule = bench.framework
        if rule is None or rule.name not in kb.frameworks:
            continue
        accepted = SpecifierSet(rule.versions)
        for build in kb.frameworks[rule.name].builds:
            if not accepted.contains(build.version, prereleases=True):
                continue  # the benchmark refuses this release: no stack to check
            for arch in set(build.arches) & set(bench.arches):
                for line in build.cuda or ("cpu",):
                    cells.add((name, arch, line, build.version))
    return sorted(sorted(cells, key=cell_rank)[:count])


def sampled_stacks(kb: KnowledgeBase, count: int) -> List[Stack]:
    """The stacks of :func:`sampled_cells` (the base is left to the resolver); cells that do
    not resolve are dropped. `mlcc kb check --sample` and `mlcc kb lock --sample` use it.

    Args:
        kb: The knowledge base.
        count: At most this many cells (``--sample``); 0 or less: none.

    Returns:
        The stacks that resolved, in cell order.
    """
    resolver = Resolver(kb)
    stacks: List[Stack] = []
    for name, arch, line, release in sampled_cells(kb, count):
        rule = kb.benchmarks[name].framework
        assert rule is not None
        try:
            request = build_request(
                kb,
                name,
                arch=arch,
                cpu=line == "cpu",
                cuda=None if line == "cpu" else line,
                with_=[f"{rule.name}={release}"],
            )
            stacks.append(resolver.resolve(request))
        except (ConflictError, UsageError):
            continue
    return stacks


def framework_pins(kb: KnowledgeBase) -> Dict[Pin, List[str]]:
    """Every pip pin of every framework build, for each Python and arch the build claims.

    Whether or not a published stack uses it. The target's glibc is the newest any base
    offers for the arch, so only pins that install nowhere are reported from here.

    Args:
        kb: The knowledge base.

    Returns:
        Each pin with the builds that carry it.
    """
    newest: Dict[str, str] = {}
    for base in kb.bases:
        for arch in base.arches:
            if base.glibc and (arch not in newest or Version(base.glibc) > Version(newest[arch])):
                newest[arch] = base.glibc
    found: Dict[Pin, List[str]] = {}
    for framework in kb.frameworks.values():
        for build in framework.builds:
            install = build.install
            if install.method != "pip":
                continue
            origins = install.origins or (build.prov.origin,) * len(install.packages)
            label = f"{framework.name} {build.version} ({build.variant})"
            for python, arch in itertools.product(build.python, build.arches):
                target = Target(python, arch, newest.get(arch))
                wheels_origin = install.wheels_origin or build.prov.origin
                for url in install.wheels_for(python):
                    found.setdefault(Pin(url, wheels_origin, target), []).append(label)
                for requirement, origin in zip(install.packages, origins):
                    pin = Pin(
                        requirement,
                        origin,
                        target,
                        extra_index=install.index_url or install.extra_index_url,
                        find_links=install.find_links,
                    )
                    found.setdefault(pin, []).append(label)
    return found


def run(
    kb: KnowledgeBase,
    stacks: Iterable[Stack],
    client: IndexClient,
    *,
    all_builds: bool = True,
    wheels: Optional[WheelReader] = None,
    recorded_wheels: Optional[Mapping[str, Any]] = None,
    wheel_budget: int = 12,
    step: Optional[Step] = None,
) -> Report:
    """The findings of ``mlcc kb check`` for ``stacks``.

    Args:
        kb: The knowledge base.
        stacks: The stacks whose pins and downloads are checked.
        client: The index client (PyPI, or ``--index-url``).
        all_builds: Also check every framework build's pins (:func:`framework_pins`).
        wheels: With a wheel reader, also each pip framework build's ``bundles:`` claim
            against its wheel (those the stacks use and every build that claims), and every
            pip framework build's Pythons, arches and linked libraries
            (:mod:`mlcc.kbtools.wheels`).
        recorded_wheels: The wheel facts ``--record`` kept (``recipes/wheel-files.json``):
            reused for a wheel still at the same URL; without a reader (offline), the only
            facts judged.
        wheel_budget: At most this many wheels the record lacks have their libraries read.
        step: Told ``(phase, done, total)`` as pins are judged and wheels read (progress).

    Returns:
        The report, findings sorted by severity and recipe line.

    Raises:
        IndexUnreachable: The configured index cannot be read (exit 5).
    """
    started = time.monotonic()
    checker = Checker(client, kb)
    asked = _asked_of(kb, stacks, all_builds=all_builds)
    tell = step or (lambda what, done, total: None)
    findings = _pin_findings(checker, asked.by_pin, tell)
    findings += _download_findings(asked.downloads)
    tell("kb check: pins", len(asked.by_pin), len(asked.by_pin))
    if wheels is not None:
        builds = asked.builds + [b for f in kb.frameworks.values() for b in f.builds if b.bundles]
        findings += [FactFinding(*f) for f in bundle_findings(kb, client, wheels, builds, tell)]
    read: Dict[str, Any] = {}
    if wheels is not None or recorded_wheels is not None:
        source = WheelSource(wheels, recorded_wheels or {}, wheel_budget)
        findings += _wheel_claim_findings(kb, client, source, read, tell)
    order = {ERROR: 0, WARNING: 1, NOTE: 2}
    findings.sort(key=lambda f: (order[f.severity], _origin_key(f.origin), f.subject, f.message))
    return Report(
        stacks=asked.stacks,
        pins=len(asked.by_pin),
        findings=tuple(findings),
        requests=client.requests + (wheels.requests if wheels is not None else 0),
        seconds=time.monotonic() - started,
        index_url=client.index_url,
        wheels=tuple(sorted(read.items())),
    )


class _Asked(NamedTuple):
    """What the stacks of one ``kb check`` ask of the index, each with the stacks asking."""

    by_pin: Dict[Pin, List[str]]
    downloads: Dict[Tuple[str, str, bool], List[str]]  # (what, origin, explained)
    builds: List[FrameworkBuild]  # the framework builds the stacks use
    stacks: int  # how many distinct stacks


def _asked_of(kb: KnowledgeBase, stacks: Iterable[Stack], *, all_builds: bool) -> _Asked:
    """The pins and downloads of ``stacks`` (each stack once, by its label), and with
    ``all_builds`` every framework build's pins too."""
    by_pin: Dict[Pin, List[str]] = {}
    downloads: Dict[Tuple[str, str, bool], List[str]] = {}
    labels: Set[str] = set()
    builds: List[FrameworkBuild] = []
    for stack in stacks:
        label = stack_label(stack)
        if label in labels:
            continue
        labels.add(label)
        if stack.framework is not None:
            builds.append(stack.framework)
        for pin in pins_of(stack, kb):
            by_pin.setdefault(pin, []).append(label)
        for download in downloads_of(stack, kb):
            downloads.setdefault(download, []).append(label)
    if all_builds:
        for pin, labels_of_pin in framework_pins(kb).items():
            by_pin.setdefault(pin, []).extend(labels_of_pin)
    return _Asked(by_pin, downloads, builds, len(labels))


def _pin_findings(checker: Checker, by_pin: Dict[Pin, List[str]], tell: Step) -> List[FactFinding]:
    """Each pin judged against the index, one finding per verdict naming every stack that
    asks for it; then one warning per index page that could not be read."""
    grouped: Dict[Tuple[str, str, str, str], List[str]] = {}
    for done, pin in enumerate(sorted(by_pin, key=lambda p: (p.origin, p.requirement, p.target)), 1):
        tell("kb check: pins", done - 1, len(by_pin))
        verdict = checker.judge(pin)
        if verdict is not None:
            key = (verdict[0], pin.origin, pin.requirement, verdict[1])
            grouped.setdefault(key, []).extend(by_pin[pin])
    findings = [FactFinding(s, o, r, m, tuple(sorted(set(st)))) for (s, o, r, m), st in grouped.items()]
    for url, reason in sorted(checker.unreachable.items()):
        unchecked = sum(1 for f in findings if f.message == f"not checked: {url} could not be read")
        message = f"{unchecked} pin(s) read from it were not checked ({reason})"
        findings.append(FactFinding(WARNING, url, "unreachable", message))
    return findings


def _download_findings(downloads: Dict[Tuple[str, str, bool], List[str]]) -> List[FactFinding]:
    """A warning for each download that has no sourced sha256 nor a reason why none exists."""
    return [
        FactFinding(
            WARNING,
            origin,
            what,
            "downloaded without a sourced sha256 (or a recorded reason why none exists)",
            tuple(sorted(set(stack_labels))),
        )
        for (what, origin, explained), stack_labels in sorted(downloads.items())
        if not explained
    ]


def _wheel_claim_findings(
    kb: KnowledgeBase, client: IndexClient, source: WheelSource, read: Dict[str, Any], tell: Step
) -> List[FactFinding]:
    """Every pip framework build's Pythons, arches and linked libraries against its wheels
    (``read`` collects what was read, for ``--record``): one finding per claim, naming the
    builds it serves (one release's python line serves several)."""
    pip_builds = [b for f in kb.frameworks.values() for b in f.builds if b.install.method == "pip"]
    by_claim: Dict[Tuple[str, str, str], List[str]] = {}
    for found in wheel_findings(kb, client, source, pip_builds, read, tell):
        by_claim.setdefault((found.severity, found.origin, found.message), []).append(
            found.subject.removesuffix(" wheel")
        )
    return [
        FactFinding(severity, origin, "wheel", message, tuple(sorted(set(labels))))
        for (severity, origin, message), labels in by_claim.items()
    ]


def _origin_key(origin: str) -> Tuple[str, int]:
    path, _, line = origin.rpartition(":")
    return (path, int(line)) if line.isdigit() else (origin, 0)
