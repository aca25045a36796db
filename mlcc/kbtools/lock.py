"""``mlcc kb lock``: hash locks for every pip install of the stacks the matrix resolves.

For each stack, the build plan lists its pip installs in order (mlcc/render/plan/);
each is resolved the way pip resolves it in the image, for the stack's Python, CPU arch
and glibc, against the package index:

- what an earlier install of the same environment already put there and satisfies a
  requirement is kept (pip says "already satisfied" and downloads nothing);
- otherwise the newest release the specifiers allow (a pre-release only when the
  specifier names one or no final release has a file, as pip), whose Requires-Python
  admits the target, with a file for the target: the wheel whose tag pip ranks highest
  (:func:`mlcc.kbtools.check.supported_tags`), else the sdist;
- a wheel's dependencies come from its core metadata as the index serves it beside the
  file (PEP 658/714), else from its METADATA read by range requests; an sdist's are read
  from its files as data and nothing in it is ever run: its PKG-INFO when the metadata
  is static (PEP 643), else the egg-info/requires.txt setuptools wrote when it was made,
  else none when its setup.py cannot declare any, else the ``sdist_requires`` fact of
  recipes/tools.yaml, checked against the sdist's setup.py; else the install is refused
  with the fact to add.

What is locked is kept, as ``uv lock`` and ``pip-compile`` keep it: a requirement that is
not an exact pin takes the version the committed lock file of its target already locks for
that project (the same install's first, then those of installs with the same requirements,
then the newest any install of the target locks) when the specifier still allows it and the
index still has a file of it for the target (not yanked); otherwise it resolves afresh as
above. ``mlcc kb lock --upgrade`` resolves everything afresh (:func:`lock` with
``upgrade=True``). So a lock run on an unchanged tree rewrites nothing when the index has
gained newer releases.

Resolution is breadth-first without backtracking: a later requirement that the version
already chosen does not satisfy is recorded as a conflict (the install stays unlocked
with that reason) rather than guessed. Installs the index cannot lock (a VCS checkout,
a local directory, a host that cannot be reached from here) are recorded as unlocked
with the reason. Output: one JSON file per target under recipes/locks/, sorted; the committed
installs no stack of the run asks for are kept as they are (:func:`keep_unused`) unless
``--prune``.

The index is outside input: every read goes through :func:`mlcc.kb.index.read_url`
(a time and a size limit, http(s) only, credentials never shown or written); a sha256
that cannot be a file's is refused; a dependency chain longer than ``MAX_CHAIN_LINKS`` or an
install of more than ``MAX_PACKAGES`` packages stops the lock with nothing written.

Why this module resolves instead of uv or pip-tools. Both were run on every distinct
install recipes/locks/ holds (perf/lock_tools.py does it again; uv 0.13.9, pip-tools
7.6.2, all three targets: Python 3.6 on x86_64 glibc 2.17 and 2.28, on ppc64le 2.17):

- uv resolves for Python 3.6 on x86_64 and on ppc64le (``--python-platform
  ppc64le-manylinux_2_17`` is accepted, though its --help does not list it), and where
  it resolves it pins the versions of the lock (17 of the 56 installs, every locked sha256
  among its hashes). It cannot write these locks, for three reasons.
  An sdist's dependencies: without ``--no-build`` uv builds the sdist, running its
  setup.py on this machine ("warning: The requested Python version 3.6 is not available;
  3.11.7 will be used to build dependencies instead"), which this command never does.
  With it, every install with an sdist-only release anywhere in its tree fails (27 of
  56: absl-py 0.7.1, gast 0.2.2, termcolor 1.1.0, horovod, mpi4py, ...; pandas 0.24.2 as
  "invalid metadata"; 12 more ask for mlperf-compliance 0.6.0, which an earlier VCS
  install provides and no index has)::

      $ uv pip compile --generate-hashes --no-build --python-version 3.6 \
          --python-platform x86_64-manylinux_2_17 requirements.in   # absl-py==0.7.1
      error: No solution found when resolving dependencies
        cause: Because absl-py==0.7.1 has no usable wheels and you require
        absl-py==0.7.1, we can conclude that your requirements are unsatisfiable.

  The chain of installs: an image runs its pip installs in order, and what an earlier
  one installed is kept when it satisfies a later requirement; ``uv pip compile``
  resolves each file from nothing and has no input for what is installed (a constraints
  file would force those versions, not keep them only where they satisfy).
  The file pip takes: uv writes the hashes of every file of the version (23 for numpy
  1.16.3, every platform's) and no file name or page, which the lock records for
  ``mlcc kb lock --verify``.
- pip-tools resolves for the Python that runs it: pip-compile has no option for another
  Python or platform, and pip's own passed through --pip-args do not reach its resolver::

      $ pip-compile --generate-hashes --pip-args "--python-version 3.6 \
          --platform manylinux2014_x86_64 --only-binary=:all:" requirements.in  # numpy==1.16.3
      pip._internal.exceptions.DistributionNotFound: No matching distribution found
      for numpy==1.16.3

  Without --only-binary it builds the sdist with setup.py, on Python 3.11.
"""

from __future__ import annotations

import ast
import email.parser
import hashlib
import io
import json
import os
import re
import tarfile
import zipfile
import zlib
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Set, Tuple

from packaging.markers import default_environment
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from mlcc.errors import ConflictError, FactError, IndexUnreachable, UsageError
from mlcc.kb import pip_locks
from mlcc.kb.index import MAX_FILE_BYTES, Fetched, IndexClient, IndexFile, Page, without_credentials
from mlcc.kb.model import KnowledgeBase, SdistRequires
from mlcc.kb.pip_locks import LOCK_DIR, LOCK_FORMAT, LockFiles, LockTarget, PipInstall
from mlcc.kbtools import check as kb_check
from mlcc.matrix import evaluate, expand, load_matrix
from mlcc.render.plan import build_plan
from mlcc.resolve import Resolver, Stack, build_request

VCS_PREFIXES = ("git+", "hg+", "svn+", "bzr+")
# Bounds on what an index's metadata can make the lock walk, with room to spare: the
# published set's longest chain is about ten links, its largest install under sixty packages.
MAX_CHAIN_LINKS = 32
MAX_PACKAGES = 1000
# The few small files of an sdist read as data; anything larger is not metadata.
MAX_SDIST_MEMBER_BYTES = 4 * 1024 * 1024
SHA256_HEX = re.compile(r"[0-9a-f]{64}")


class Chosen(NamedTuple):
    name: str  # as the index spells the file's project
    version: str
    file: IndexFile
    page: str  # the index page the file was read from
    requires: Tuple[str, ...]
    requires_from: str  # where the dependencies were read, or why they are unknown
    known: bool


class Unlockable(Exception):
    """The install cannot be hash-locked: the message says why."""


class State(NamedTuple):
    """What an environment holds after an install: name -> (version, lock entry)."""

    installed: Dict[str, Tuple[str, Optional[Dict[str, Any]]]]
    unknown: Tuple[str, ...]  # earlier installs whose contents the lock cannot know


EMPTY = State({}, ())


Requirements = Tuple[str, ...]


class LockedVersions(NamedTuple):
    """The versions one committed lock file locks, by PEP 503 name: what a re-lock keeps."""

    by_install: Dict[str, Dict[str, str]]  # install id -> name -> the version it locks
    # the same requirements after other installs (a pin added before them changes their id)
    by_requirements: Dict[Requirements, Dict[str, Tuple[str, ...]]]
    by_target: Dict[str, Tuple[str, ...]]  # name -> every version the file locks, newest first

    def preferred(self, ident: Optional[str], requirements: Requirements, name: str) -> Tuple[str, ...]:
        """The locked versions to try first for ``name``: the one install ``ident`` locks,
        then those of the installs asking for the same ``requirements``, then the rest of
        the file's, each group newest first."""
        own = self.by_install.get(ident or "", {}).get(name)
        same = self.by_requirements.get(requirements, {}).get(name, ())
        return tuple(dict.fromkeys(((own,) if own else ()) + same + self.by_target.get(name, ())))


def locked_versions(files: LockFiles) -> Dict[str, LockedVersions]:
    """The versions the committed lock files hash-lock, by lock file name.

    A pin an earlier install provides (no sha256) is left out: it is an exact pin, which
    resolves to its version anyway. A damaged lock file gives nothing to keep.

    Args:
        files: The lock files the knowledge base carries (``kb.pip_locks``).

    Returns:
        Lock file name -> the versions it locks, by install, by requirements and for the
        whole target.
    """
    out: Dict[str, LockedVersions] = {}
    for file_name, locks in files.parsed:
        by_install: Dict[str, Dict[str, str]] = {}
        by_requirements: Dict[Requirements, Dict[str, Set[Version]]] = {}
        every: Dict[str, Set[Version]] = {}
        for ident, install in locks.installs:
            for package in install.packages:
                if not package.sha256:
                    continue
                name = canonicalize_name(package.name)
                by_install.setdefault(ident, {})[name] = package.version
                try:
                    version = Version(package.version)
                except InvalidVersion:
                    continue
                every.setdefault(name, set()).add(version)
                by_requirements.setdefault(install.requirements, {}).setdefault(name, set()).add(version)
        out[file_name] = LockedVersions(
            by_install,
            {asked: _newest_first(names) for asked, names in by_requirements.items()},
            _newest_first(every),
        )
    return out


def _newest_first(versions: Dict[str, Set[Version]]) -> Dict[str, Tuple[str, ...]]:
    return {name: tuple(str(v) for v in sorted(vs, reverse=True)) for name, vs in versions.items()}


def matrix_stacks(kb: KnowledgeBase) -> List[Stack]:
    """Every stack of the matrix that resolves, published or not, in matrix order.

    Args:
        kb: The knowledge base (recipes/matrix.yaml and what resolves its cells).

    Returns:
        One stack per cell that resolves; cells that do not resolve are left out.

    Raises:
        RecipeError: recipes/matrix.yaml is missing or malformed.
    """
    return [o.stack for o in evaluate(kb, expand(load_matrix(kb))) if o.stack is not None]


def image_base_stacks(kb: KnowledgeBase) -> List[Stack]:
    """Every benchmark that builds on an image base (NGC's), on each of those bases and arches.

    An image's pip installs are the same whatever GPU it is built for, so these stacks lock
    the installs of every ``--gpu`` variant, whether or not the matrix publishes one yet.

    Args:
        kb: The knowledge base.

    Returns:
        The stacks that resolve, by benchmark, base and arch; refused ones are left out.
    """
    images = {base.name: base for base in kb.bases if base.contents is not None}
    resolver = Resolver(kb)
    stacks: List[Stack] = []
    for name in sorted(kb.benchmarks):
        bench = kb.benchmarks[name]
        for base_name in bench.bases:
            base = images.get(base_name)
            for arch in sorted(set(base.arches) & set(bench.arches)) if base else ():
                try:
                    stacks.append(resolver.resolve(build_request(kb, name, base=base_name, arch=arch)))
                except (ConflictError, UsageError):
                    continue
    return stacks


def ubi_alternative_stacks(kb: KnowledgeBase, covered: Sequence[Stack] = ()) -> List[Stack]:
    """The recipe each NGC-only benchmark names as its nearest stack on UBI
    (``constraints.ubi_alternative.nearest``), on each of its arches, on its default base.

    ``--base ubi9`` offers that recipe, so its installs are locked like the NGC benchmark's,
    whether or not the matrix publishes it. A recipe some stack of ``covered`` (the matrix's)
    already builds is left to those stacks: another label on the same installs would only
    rewrite their records.

    Args:
        kb: The knowledge base.
        covered: The stacks the lock run has already (the matrix's).

    Returns:
        The stacks that resolve, by recipe and arch; refused ones are left out.
    """
    built = {stack.benchmark.name for stack in covered}
    names = {b.ubi_alternative.nearest for b in kb.benchmarks.values() if b.ubi_alternative is not None}
    resolver = Resolver(kb)
    stacks: List[Stack] = []
    for name in sorted(n for n in names if n is not None and n not in built):
        for arch in sorted(kb.benchmarks[name].arches):
            try:
                stacks.append(resolver.resolve(build_request(kb, name, arch=arch)))
            except (ConflictError, UsageError):
                continue
    return stacks


def target_of(stack: Stack) -> Optional[LockTarget]:
    """Where the stack's pip installs run: its Python, CPU arch and glibc.

    Args:
        stack: A resolved stack.

    Returns:
        The lock target, or None when the stack has no Python (nothing to lock).
    """
    if stack.python is None:
        return None
    return LockTarget(stack.python.version, stack.arch.name, stack.base.glibc)


def marker_environment(target: LockTarget) -> Dict[str, str]:
    """The environment markers (PEP 508) pip sees on ``target``, for evaluating requirements.

    Args:
        target: The interpreter, the CPU arch and the C library.

    Returns:
        Marker name -> value: CPython on Linux, the target's Python (patch release ``.0``,
        the most conservative, as the stack does not name one) and its CPU arch.
    """
    env = {key: str(value) for key, value in default_environment().items()}
    env.update(
        python_version=target.python,
        # the patch release is not a fact of the stack: .0 is the most conservative
        python_full_version=f"{target.python}.0",
        platform_machine=target.arch,
        sys_platform="linux",
        platform_system="Linux",
        os_name="posix",
        implementation_name="cpython",
        platform_python_implementation="CPython",
        implementation_version=f"{target.python}.0",
    )
    return env


class Locker:
    """Resolves and hash-locks the pip installs of stacks against one index, as pip would."""

    def __init__(
        self,
        client: IndexClient,
        *,
        metadata_cache: Optional[str] = None,
        sdist_facts: Sequence[SdistRequires] = (),
        locked: Optional[LockFiles] = None,
    ) -> None:
        self.client = client
        # the committed locks, whose versions a requirement keeps while they still fit;
        # None (``--upgrade``): every requirement resolves afresh
        self.locked = locked_versions(locked) if locked is not None else {}
        # recipes/tools.yaml sdist_requires: used only when pip and the egg-info both fail
        self.sdist_facts = {_fact_key(f.name, f.version): f for f in sdist_facts}
        # a fact the sdist's setup.py does not bear out: errors at the recipe line
        self.problems: List[str] = []
        self.ranker = kb_check._Ranker()
        self.states: Dict[str, State] = {}
        self.records: Dict[LockTarget, Dict[str, Dict[str, Any]]] = {}
        self.metadata_cache = (
            metadata_cache
            if metadata_cache is not None
            else (os.path.join(client.cache, "metadata") if client.cache else "")
        )
        self.unreachable: Dict[str, str] = {}

    # the stacks ----------------------------------------------------------------

    def lock_stack(self, stack: Stack, label: str) -> None:
        """Lock every pip install of ``stack``'s build plan, in order, into ``records``.

        An install another stack already locked for the same target is not resolved again:
        the stack's label is added to its record.

        Args:
            stack: A resolved stack (one without a Python has nothing to lock).
            label: How the lock names the stack, ``<benchmark>/<variant>``.

        Raises:
            IndexUnreachable: The index cannot be read (nothing is written).
            FactError: The index's metadata makes a dependency chain longer than
                ``MAX_CHAIN_LINKS`` or an install of more than ``MAX_PACKAGES`` packages.
            MlccError: The stack lacks a fact the resolver adds (a hand-made stack).
        """
        target = target_of(stack)
        if target is None:
            return
        records = self.records.setdefault(target, {})
        plan = build_plan(stack)
        wheels_reason = stack.framework.install.wheels_sha256_unavailable if stack.framework else None
        for ident, previous, install in plan.pip_installs:
            record = records.get(ident)
            if record is None:
                state = self.states.get(previous, EMPTY) if previous else EMPTY
                record, after = self.lock_install(target, install, state, wheels_reason, ident=ident)
                record["after"] = previous
                records[ident] = record
                self.states[ident] = after
            record["stacks"] = sorted(set(record.get("stacks", [])) | {label})

    def lock_install(
        self,
        target: LockTarget,
        install: PipInstall,
        state: State,
        wheels_reason: Optional[str],
        *,
        ident: Optional[str] = None,
    ) -> Tuple[Dict[str, Any], State]:
        """Lock one pip install on top of what the earlier installs of its environment hold.

        Args:
            target: The interpreter, the CPU arch and the C library.
            install: The pip install, as the recipes ask for it.
            state: What the environment holds before it.
            wheels_reason: Why the framework's wheels cannot be read from here (the recipe's
                ``wheels_sha256_unavailable``), given as the reason of a URL install; or None.
            ident: The install's chained id: the versions its committed lock holds are kept first.

        Returns:
            The install's lock record (its packages, or ``unlocked`` with the reason when it
            cannot be locked) and what the environment holds after it.

        Raises:
            IndexUnreachable: The index cannot be read.
            FactError: The index's metadata makes a dependency chain longer than
                ``MAX_CHAIN_LINKS`` or an install of more than ``MAX_PACKAGES`` packages.
        """
        record: Dict[str, Any] = {
            "requirements": list(install.requirements),
            "environment": install.environment,
            "index": without_credentials(install.index_url or self.client.index_url),
        }
        for key in ("extra_index", "find_links"):
            if getattr(install, key):
                record[key] = without_credentials(getattr(install, key))
        if install.no_deps:
            record["no_deps"] = True
        label = " ".join(install.requirements)
        try:
            if install.unlockable:
                raise Unlockable(install.unlockable)
            self._check_sources(install, wheels_reason)
            packages, satisfied = self.resolve(target, install, state, ident=ident)
        except Unlockable as exc:
            record["unlocked"] = str(exc)
            return record, State(state.installed, (*state.unknown, label))
        record["packages"] = packages
        if satisfied:
            record["satisfied"] = satisfied
        installed = dict(state.installed)
        for entry in packages:
            installed[canonicalize_name(entry["name"])] = (entry["version"], entry)
        return record, State(installed, state.unknown)

    def _check_sources(self, install: PipInstall, wheels_reason: Optional[str]) -> None:
        reasons: List[str] = []
        for requirement in install.requirements:
            head = requirement.split(";", 1)[0].strip()
            url = head.split(" @ ", 1)[1].strip() if " @ " in head else head
            if url.startswith(VCS_PREFIXES):
                reasons.append(
                    f"{url.split('#', 1)[0]} is a VCS checkout (pinned by full commit and verified): "
                    + (
                        "pip cannot hash a checkout; it is installed with --no-deps, so nothing "
                        "unhashed comes from the index with it"
                        if install.no_deps
                        else "pip cannot hash a checkout, and the dependencies it declares are not locked"
                    )
                )
            elif "://" in url:
                url = without_credentials(url)
                host = url.split("/")[2]
                why = " ".join((wheels_reason or "").split())
                reasons.append(
                    f"{url.split('#', 1)[0].rsplit('/', 1)[-1]} is installed by URL from {host}, which "
                    "could not be read where the lock was made" + (f": {why}" if why else "")
                )
        for what, page in (
            ("index", install.index_url),
            ("extra index", install.extra_index),
            ("find-links page", install.find_links),
        ):
            if page and without_credentials(page).rstrip("/") + "/" != self.client.index_url:
                # the page itself is in the record: a mirrored file must not name its host
                reasons.append(
                    f"the install reads a further {what} besides {self.client.index_url}, which the lock "
                    "does not read (files there are not hashed here)"
                )
        if reasons:
            raise Unlockable("; ".join(dict.fromkeys(reasons)))

    # resolution ----------------------------------------------------------------

    def resolve(
        self, target: LockTarget, install: PipInstall, state: State, *, ident: Optional[str] = None
    ) -> Tuple[List[Dict[str, Any]], List[Dict[str, str]]]:
        """Resolve one pip install breadth-first, without backtracking, as pip does.

        Args:
            target: The interpreter, the CPU arch and the C library.
            install: The pip install, as the recipes ask for it.
            state: What the environment holds before it: a requirement that an installed
                version satisfies is kept ("already satisfied").
            ident: The install's chained id, whose committed lock's versions are kept first
                (:meth:`LockedVersions.preferred`); None: those of installs with the same
                requirements, then the target's.

        Returns:
            The lock entries of the packages it installs (sorted by name), and the
            requirements that earlier installs already satisfy.

        Raises:
            Unlockable: The install cannot be hash-locked: an invalid requirement, a
                resolution conflict, no release with a file for the target, dependencies
                that cannot be known, a file without a usable sha256, or nothing to install.
            IndexUnreachable: The index cannot be read.
            FactError: The index's metadata makes a dependency chain longer than
                ``MAX_CHAIN_LINKS`` or an install of more than ``MAX_PACKAGES`` packages.
        """
        env = marker_environment(target)
        locked = self.locked.get(target.file_name)
        queue = _top_requirements(install)
        chosen: Dict[str, Chosen] = {}
        requested: Set[str] = set()
        satisfied: Dict[str, Dict[str, str]] = {}
        carried: Dict[str, Dict[str, Any]] = {}  # requested pins an earlier install provides
        top = len(queue)
        position = 0
        while position < len(queue):
            requirement, parent, chain = queue[position]
            is_top = position < top
            position += 1
            name = canonicalize_name(requirement.name)
            if (
                is_top
                and requirement.marker is not None
                and not requirement.marker.evaluate({**env, "extra": ""})
            ):
                continue  # pip skips it for this target, as the recipe intends
            if is_top:
                requested.add(name)
            if name in chosen:
                _check_agrees(requirement, parent, chosen[name])
                continue
            have = state.installed.get(name)
            if have is not None and requirement.specifier.contains(have[0], prereleases=True):
                satisfied[name] = {"name": requirement.name, "version": have[0]}
                if is_top and have[1] is not None:
                    carried[name] = have[1]
                continue
            try:
                prefer = locked.preferred(ident, install.requirements, name) if locked is not None else ()
                pick = self.choose(target, requirement, parent, state, no_deps=install.no_deps, prefer=prefer)
            except Unlockable:
                earlier = _installed_by_earlier(requirement, state) if is_top else None
                if earlier is None:
                    raise
                carried[name] = earlier
                continue
            chosen[name] = pick
            link = (*chain, f"{pick.name} {pick.version}")
            _check_bounds(install, link, len(chosen))
            if install.no_deps:
                continue
            queue += [
                (parsed, f"{pick.name} {pick.version}", link)
                for parsed in _dependencies(pick, requirement, env)
            ]
        packages = self._lock_entries(chosen, requested, carried)
        return packages, [satisfied[n] for n in sorted(satisfied) if n not in carried]

    def _lock_entries(
        self, chosen: Dict[str, Chosen], requested: Set[str], carried: Dict[str, Dict[str, Any]]
    ) -> List[Dict[str, Any]]:
        """The lock entries of a resolved install, sorted by name: the packages it chose, then
        the requested pins an earlier install provides (``carried``)."""
        packages = [self._entry(pick, canonicalize_name(pick.name) in requested) for pick in chosen.values()]
        packages += [dict(entry, requested=True, earlier=True) for entry in carried.values()]
        if not chosen and not packages:
            raise Unlockable("nothing to install: every requirement is skipped on this target")
        packages.sort(key=lambda p: canonicalize_name(p["name"]))
        return packages

    def _entry(self, pick: Chosen, requested: bool) -> Dict[str, Any]:
        sha256 = pick.file.hash("sha256")
        if not sha256:
            raise Unlockable(f"{pick.page} gives no sha256 for {pick.file.filename}")
        problem = meaningless_sha256(sha256)
        if problem is not None:
            raise Unlockable(f"{pick.page} gives {pick.file.filename} the sha256 {sha256[:80]!r}, {problem}")
        entry: Dict[str, Any] = {
            "name": pick.name,
            "version": pick.version,
            "file": pick.file.filename,
            "url": pick.file.url,
            "index": pick.page,
            "sha256": sha256,
            "requested": requested,
            "dependencies": sorted(pick.requires),
            "dependencies_from": pick.requires_from,
        }
        if not pick.known:
            entry["dependencies_unknown"] = True
        return entry

    def choose(
        self,
        target: LockTarget,
        requirement: Requirement,
        parent: str,
        state: State,
        *,
        no_deps: bool,
        prefer: Sequence[str] = (),
    ) -> Chosen:
        """The release and file pip takes for ``requirement`` on ``target``, with its dependencies.

        The newest version the specifier allows (a pre-release only as pip takes one) whose
        Requires-Python admits the target and that has a file for it: the wheel whose tag pip
        ranks highest, else the sdist. A version of ``prefer`` (what the lock holds) that the
        specifier allows and that still has such a file (not yanked) is taken before it,
        unless the requirement is an exact pin.

        Args:
            target: The interpreter, the CPU arch and the C library.
            requirement: The requirement to satisfy.
            parent: Who asks for it (``the recipe`` or ``<name> <version>``), for messages.
            state: What the environment holds (named in the message when nothing fits).
            no_deps: The install runs with ``--no-deps``: dependencies are not read.
            prefer: Locked versions to keep, in order, while they fit.

        Returns:
            The chosen file, the index page it was read from and its dependencies.

        Raises:
            Unlockable: No release has a file for the target, or the chosen file's
                dependencies cannot be known.
            IndexUnreachable: The project's page or the file's metadata cannot be read
                (an unreachable index stops the whole lock: no file is written).
        """
        name = requirement.name
        url = self.client.project_url(name)
        # an unreachable index stops the whole lock (IndexUnreachable): no file is written
        page = self.client.page(url)
        by_version = _files_by_version(page, name)
        exact = kb_check._exact_version(requirement.specifier) is not None
        for version in _candidate_versions(by_version, requirement, prefer, exact=exact):
            pick = self._pick_file(
                target, name, version, by_version[version], url, exact=exact, no_deps=no_deps
            )
            if pick is not None:
                return pick
        earlier = f"; an earlier install may provide it ({', '.join(state.unknown)})" if state.unknown else ""
        raise Unlockable(
            f"{requirement} (asked by {parent}) has no release with a file for Python {target.python} "
            f"on {target.arch} on {url}{earlier}"
        )

    def _pick_file(
        self,
        target: LockTarget,
        name: str,
        version: Version,
        files: Sequence[IndexFile],
        url: str,
        *,
        exact: bool,
        no_deps: bool,
    ) -> Optional[Chosen]:
        """The file pip takes of ``version`` on ``target`` (the wheel whose tag pip ranks
        highest, else the sdist), with its dependencies; None when none fits the target.
        A yanked file counts only for an exact pin, as pip takes one."""
        python = Version(target.python + ".99")
        usable = [
            f
            for f in files
            if (exact or not f.yanked)
            and (not f.requires_python or kb_check._python_ok(f.requires_python, python))
        ]
        check_target = kb_check.Target(target.python, target.arch, target.glibc)
        wheels = []
        for f in usable:
            if f.filename.endswith(".whl"):
                rank = self.ranker.rank(check_target, kb_check._wheel_name(f.filename)[3])
                if rank is not None:
                    wheels.append((rank, f.filename, f))
        if wheels:
            file = sorted(wheels)[0][2]
            requires, source, known = (
                ((), "not read (--no-deps)", True) if no_deps else self.wheel_requires(file)
            )
        else:
            sdists = sorted((f.filename, f) for f in usable if not f.filename.endswith(".whl"))
            if not sdists:
                return None
            file = sdists[0][1]
            requires, source, known = (
                ((), "not read (--no-deps)", True) if no_deps else self.sdist_requires(name, str(version))
            )
        if not known:
            raise Unlockable(f"{file.filename}: {source}")
        return Chosen(_project_name(file.filename, name), str(version), file, url, requires, source, known)

    # metadata ------------------------------------------------------------------

    def wheel_requires(self, file: IndexFile) -> Tuple[Tuple[str, ...], str, bool]:
        """Requires-Dist from the core metadata the index serves beside the wheel (PEP 658).

        Without it, the wheel's METADATA is read by HTTP range requests, as pip's lazy wheel
        does; what is read is kept in the metadata cache.

        Args:
            file: The wheel, as its index page lists it.

        Returns:
            ``(requirements, where they were read, known)``; ``known`` is False (with the
            reason) when the wheel's METADATA cannot be read.

        Raises:
            IndexUnreachable: The metadata or the wheel cannot be read, or the server
                ignores range requests.
        """
        text = self._get(file.url + ".metadata")
        source = "the wheel's core metadata as the index serves it (PEP 658)"
        if text is None:
            # read METADATA out of the wheel by HTTP range requests, as pip's lazy wheel does
            text = self._cached(f"wheel-metadata:{file.url}")
            if text is None:
                try:
                    text = _wheel_metadata(self.client, file.url)
                except (ValueError, zipfile.BadZipFile) as exc:
                    return (
                        (),
                        f"no core metadata on the index and the wheel's METADATA is unreadable ({exc})",
                        False,
                    )
                self._store(f"wheel-metadata:{file.url}", text)
            source = "the wheel's METADATA (read by range requests: the index serves none beside it)"
        message = email.parser.Parser().parsestr(text, headersonly=True)
        return tuple(message.get_all("Requires-Dist") or ()), source, True

    def sdist_requires(self, name: str, version: str) -> Tuple[Tuple[str, ...], str, bool]:
        """An sdist's dependencies, read from its files as data: nothing in it is run.

        A result read from the sdist is kept in the metadata cache; a failure is tried again
        next time, and a recipe fact is applied afresh each time (see :meth:`sdist_metadata`).

        Args:
            name: The project.
            version: The release.

        Returns:
            ``(requirements, where they were read, known)``; ``known`` is False with the
            reason (and what to do) when they cannot be read.

        Raises:
            IndexUnreachable: The project's page cannot be read.
        """
        key = f"sdist-data:{self.client.index_url}:{canonicalize_name(name)}=={version}"
        cached = self._cached(key)
        if cached is not None:
            data = json.loads(cached)
            if data["known"]:  # a failure is tried again: a later mlcc may read more of an sdist
                return tuple(data["requires"]), data["source"], True
        result = self.sdist_metadata(name, version)
        if not result[1].startswith(FACT_SOURCE_PREFIX):
            # a recipe fact is applied afresh each time: an edit of it must reach the lock
            self._store(key, json.dumps({"requires": result[0], "source": result[1], "known": result[2]}))
        return result

    def sdist_metadata(self, name: str, version: str) -> Tuple[Tuple[str, ...], str, bool]:
        """What the sdist's own files say, in this order: its PKG-INFO when the metadata is
        static (PEP 643), the requires.txt setuptools wrote into its egg-info when it was
        made, none when its setup.py cannot declare any, the recipe's sdist_requires fact
        (checked against the setup.py); else refused, naming what to do.

        A recipe fact its sdist's setup.py does not bear out is added to ``problems``, as
        an error at the recipe line.

        Args:
            name: The project.
            version: The release.

        Returns:
            ``(requirements, where they were read, known)``; ``known`` is False with the
            reason when there is no sdist, it cannot be downloaded, its bytes do not have the
            sha256 its page gives, or nothing in it declares the dependencies.

        Raises:
            IndexUnreachable: The project's page cannot be read.
        """
        page = self.client.project(name)
        files = [
            f
            for f in page.files
            if kb_check._version_of(f, name) == Version(version) and f.filename.endswith((".tar.gz", ".zip"))
        ]
        if not files:
            return (), "no sdist was found to read its metadata from", False
        file = sorted(files)[0]
        try:
            data = self._download(file)
        except IndexUnreachable as exc:
            return (), f"the sdist could not be read ({exc.message})", False
        if data is None:
            return (), f"the sdist does not have the sha256 {page.url} gives it", False
        static = _static_requires(file.filename, data)
        if static is not None:
            return static, STATIC_SOURCE, True
        found = _egg_requires(file.filename, data)
        if found is not None:
            return found, EGG_INFO_SOURCE, True
        if _declares_no_requires(file.filename, data):
            return (), NO_REQUIRES_SOURCE, True
        fact = self.sdist_facts.get(_fact_key(name, version))
        if fact is not None:
            problem = setup_py_problem(file.filename, data, fact)
            if problem is None:
                return fact.requires, fact_source(fact), True
            self.problems.append(f"{fact.prov.origin}: error: {problem}")
            return (), f"its metadata is not static, it has no egg-info, and {problem}", False
        return (
            (),
            f"its dependencies are known only by running its setup.py, and mlcc runs nothing from an "
            f"index: read the setup.py's install_requires and add `- {{name: {name}, version: "
            f'"{version}", requires: [...], source: [...]}}` under sdist_requires in recipes/tools.yaml, '
            "then run `mlcc kb lock` again",
            False,
        )

    def _download(self, file: IndexFile) -> Optional[bytes]:
        """The file's bytes when they hash to the sha256 its page gives, else None."""
        fetched = self.client.read(file.url, limit=MAX_FILE_BYTES)
        if fetched is None:
            raise IndexUnreachable(file.url, "HTTP 404: the file its page lists is not there")
        if hashlib.sha256(fetched.body).hexdigest() != file.hash("sha256"):
            return None
        return fetched.body

    def check_fact(self, fact: SdistRequires) -> Optional[str]:
        """A recipe's sdist_requires still matches its source: the sdist on the index (its
        sha256 checked against the page) declares exactly those install_requires. The
        problem at the recipe line, or None.

        Args:
            fact: An ``sdist_requires`` fact of recipes/tools.yaml.

        Returns:
            ``<recipe line>: error: ...`` when the index offers no sdist of it, the sdist
            does not have its page's sha256 or has no setup.py, or its setup.py declares other
            install_requires; None when the fact holds.

        Raises:
            IndexUnreachable: The project's page or the sdist cannot be read.
        """
        page = self.client.project(fact.name)
        wanted = _fact_key(fact.name, fact.version)[1]
        files = sorted(
            (f.filename, f)
            for f in page.files
            if str(kb_check._version_of(f, fact.name)) == wanted and f.filename.endswith((".tar.gz", ".zip"))
        )
        where = f"{fact.prov.origin}: error: sdist_requires {fact.name} {fact.version}"
        if not files:
            return f"{where}: {page.url} offers no sdist of it"
        file = files[0][1]
        key = f"setup-py:{file.hash('sha256')}"  # by content: the bytes cannot change under it
        cached = self._cached(key)
        if cached is None:
            data = self._download(file)
            if data is None:
                return f"{where}: {file.filename} does not have the sha256 {page.url} gives it"
            setup_py = _top_files(file.filename, data).get("setup.py")
            if setup_py is None:
                return f"{where}: {file.filename} has no setup.py to check it against"
            cached = setup_py.decode("utf-8", errors="replace")
            self._store(key, cached)
        problem = requires_problem(cached, file.filename, fact)
        return None if problem is None else f"{fact.prov.origin}: error: {problem}"

    def _get(self, url: str) -> Optional[str]:
        cached = self._cached(url)
        if cached is not None:
            return None if cached == "\0404" else cached
        fetched = self.client.read(url)
        if fetched is None:
            self._store(url, "\0404")
            return None
        text = fetched.body.decode("utf-8", errors="replace")
        self._store(url, text)
        return text

    def _path(self, key: str) -> str:
        return os.path.join(self.metadata_cache, hashlib.sha256(key.encode()).hexdigest()[:32])

    def _cached(self, key: str) -> Optional[str]:
        if self.client.refresh or not self.metadata_cache:
            return None
        try:
            with open(self._path(key), encoding="utf-8") as handle:
                return handle.read()
        except OSError:
            return None

    def _store(self, key: str, text: str) -> None:
        if not self.metadata_cache:
            return
        try:
            os.makedirs(self.metadata_cache, mode=0o700, exist_ok=True)
            tmp = f"{self._path(key)}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, self._path(key))
        except OSError:
            return

    # output --------------------------------------------------------------------

    def documents(self) -> Dict[str, str]:
        """File name -> the lock file's text, for every target seen.

        Returns:
            One JSON document per target (keys sorted), by its file name under
            recipes/locks/.
        """
        out: Dict[str, str] = {}
        for target, records in sorted(self.records.items(), key=lambda kv: kv[0].file_name):
            document = {
                "format": LOCK_FORMAT,
                "generated_by": pip_locks.REFRESH_COMMAND,
                "about": "sha256 of every file the pip installs of these stacks download; "
                "regenerate with `mlcc kb lock`, never edit",
                "target": {"python": target.python, "arch": target.arch, "glibc": target.glibc},
                "index": self.client.index_url,
                "installs": records,
            }
            out[target.file_name] = json.dumps(document, indent=1, sort_keys=True) + "\n"
        return out


class LockReport(NamedTuple):
    """What ``mlcc kb lock`` locked, and how much it asked the index."""

    stacks: int
    installs: int
    locked: int
    unlocked: int
    packages: int
    files: Tuple[str, ...]
    requests: int
    kept: int = 0  # committed installs no stack of the run asks for, kept as they are


def lock(
    kb: KnowledgeBase,
    stacks: Sequence[Stack],
    client: IndexClient,
    *,
    upgrade: bool = False,
    prune: bool = False,
) -> Tuple[Locker, LockReport]:
    """Lock the pip installs of ``stacks``; each stack is locked once, by its label.

    Args:
        kb: The knowledge base (the ``sdist_requires`` facts of recipes/tools.yaml and the
            committed lock files, whose versions are kept while they still fit).
        stacks: The stacks whose installs are locked.
        client: The index client (PyPI, or ``--index-url``).
        upgrade: Resolve every requirement afresh (``--upgrade``): the newest releases the
            specifiers allow, whatever the committed locks hold.
        prune: Drop the committed installs no stack of ``stacks`` asks for (``--prune``);
            else they are kept as they are (:func:`keep_unused`).

    Returns:
        The locker (its :meth:`Locker.documents` to write, and ``problems``: recipe facts
        the sdists contradict) and the counts of stacks, installs, files and requests.

    Raises:
        IndexUnreachable: The index cannot be read (nothing is written).
        FactError: The index's metadata makes a dependency chain longer than
            ``MAX_CHAIN_LINKS`` or an install of more than ``MAX_PACKAGES`` packages.
        MlccError: A stack lacks a fact the resolver adds (a hand-made stack).
    """
    locker = Locker(client, sdist_facts=kb.sdist_requires, locked=None if upgrade else kb.pip_locks)
    labels: Set[str] = set()
    for stack in stacks:
        label = kb_check.stack_label(stack)
        if label in labels:
            continue
        labels.add(label)
        locker.lock_stack(stack, label)
    records = [r for rs in locker.records.values() for r in rs.values()]
    report = LockReport(
        stacks=len(labels),
        installs=len(records),
        locked=sum(1 for r in records if "unlocked" not in r),
        unlocked=sum(1 for r in records if "unlocked" in r),
        packages=len({p["sha256"] for r in records for p in r.get("packages", []) if p.get("sha256")}),
        files=(),
        requests=client.requests,
        kept=0 if prune else keep_unused(locker, kb.root),
    )
    return locker, report._replace(files=tuple(sorted(locker.documents())))


def keep_unused(locker: Locker, root: str) -> int:
    """Add to ``locker.records`` the committed installs it did not lock, as they are.

    The lock run locks the matrix, the NGC-based benchmarks, their nearest UBI recipes and a
    sample of the cross product; other stacks (a cell that left the sample, the golden cases of the tests, a
    user's ``--with``) use installs of the committed files too, and a lock file must not
    lose them because this run did not ask. ``--prune`` drops them.

    Args:
        locker: The locker after the run.
        root: The recipes folder (the committed locks are under its locks/).

    Returns:
        How many installs were kept; a lock file that cannot be read keeps none.
    """
    kept = 0
    for name in pip_locks.lock_file_names(root):
        try:
            with open(os.path.join(root, LOCK_DIR, name), encoding="utf-8") as handle:
                data = json.load(handle)
            where = data["target"]
            target = LockTarget(str(where["python"]), str(where["arch"]), where["glibc"])
            installs = dict(data["installs"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # damaged: this run's locks replace it
        if target.file_name != name or data.get("format") != LOCK_FORMAT:
            continue
        records = locker.records.setdefault(target, {})
        for ident, record in sorted(installs.items()):
            if ident not in records and isinstance(record, dict):
                records[ident] = record
                kept += 1
    return kept


def write(root: str, documents: Dict[str, str]) -> List[str]:
    """Write the lock files (all or nothing) and remove the ones ``documents`` lacks (``--prune``).

    Args:
        root: The recipes folder.
        documents: File name -> text (:meth:`Locker.documents`).

    Returns:
        The paths written, sorted.

    Raises:
        OSError: recipes/locks/ or a lock file cannot be written (files are replaced only
            once every one is written).
    """
    folder = os.path.join(root, LOCK_DIR)
    os.makedirs(folder, exist_ok=True)
    written: List[str] = []
    temps = []
    for name, text in sorted(documents.items()):
        tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
        temps.append((tmp, os.path.join(folder, name)))
    for tmp, path in temps:
        os.replace(tmp, path)
        written.append(path)
    for name in sorted(os.listdir(folder)):
        if name.startswith("pip-") and name.endswith(".json") and name not in documents:
            os.remove(os.path.join(folder, name))
    return written


class _RangeFile(io.RawIOBase):
    """A remote file read by HTTP range requests: zipfile finds METADATA in a few KiB."""

    def __init__(self, client: IndexClient, url: str) -> None:
        super().__init__()
        self.client, self.url, self.position = client, url, 0
        # the first byte's answer names the size (Content-Range: bytes 0-0/SIZE)
        total = self._range("bytes=0-0").content_range.rpartition("/")[2]
        if not total.isdigit():
            raise IndexUnreachable(self.url, "the server ignores range requests")
        self.size = int(total)

    def _range(self, spec: str) -> Fetched:
        fetched = self.client.read(self.url, limit=MAX_FILE_BYTES, headers={"Range": spec})
        if fetched is None or fetched.status != 206:
            raise IndexUnreachable(self.url, "the server ignores range requests")
        return fetched

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self.position, 2: self.size}[whence]
        self.position = max(0, base + offset)
        return self.position

    def read(self, size: int = -1) -> bytes:
        end = self.size if size < 0 else min(self.size, self.position + size)
        if end <= self.position:
            return b""
        data = bytes(self._range(f"bytes={self.position}-{end - 1}").body)
        self.position += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _wheel_metadata(client: IndexClient, url: str) -> str:
    with zipfile.ZipFile(_RangeFile(client, url)) as wheel:
        names = [n for n in wheel.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
        if not names:
            raise ValueError("the wheel has no .dist-info/METADATA")
        if wheel.getinfo(names[0]).file_size > MAX_SDIST_MEMBER_BYTES:
            raise ValueError(f"the wheel's METADATA is larger than {MAX_SDIST_MEMBER_BYTES} bytes")
        return wheel.read(names[0]).decode("utf-8", errors="replace")


def meaningless_sha256(digest: str) -> Optional[str]:
    """Why a sha256 an index gives cannot be a file's (None when it can be): not 64 hex
    digits, or one digit repeated (``000...0``), which no file hashes to in practice.

    Args:
        digest: The sha256 the index gives, as text.

    Returns:
        The reason, worded to follow the digest in a message; None when it can be a file's.
    """
    if not SHA256_HEX.fullmatch(digest):
        return "which is not 64 lower-case hexadecimal digits"
    if len(set(digest)) == 1:
        return "which is a placeholder, not the digest of any file"
    return None


def _locked_first(matching: List[Version], prefer: Sequence[str]) -> List[Version]:
    """``matching`` with the locked versions it holds moved to the front, in ``prefer``'s
    order (a locked version the specifier no longer allows is not in it: it resolves afresh)."""
    kept: List[Version] = []
    for text in prefer:
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if version in matching and version not in kept:
            kept.append(version)
    return kept + [v for v in matching if v not in kept]


def _files_by_version(page: Page, name: str) -> Dict[Version, List[IndexFile]]:
    """The files of a project's index page, by the version their names give (none when the
    page was not found)."""
    by_version: Dict[Version, List[IndexFile]] = {}
    for file in page.files if page.found else ():
        version = kb_check._version_of(file, name)
        if version is not None:
            by_version.setdefault(version, []).append(file)
    return by_version


def _candidate_versions(
    by_version: Dict[Version, List[IndexFile]],
    requirement: Requirement,
    prefer: Sequence[str],
    *,
    exact: bool,
) -> List[Version]:
    """The versions the specifier allows, in the order pip tries them: newest first, final
    releases before pre-releases unless the specifier asks for one, and (unless the pin is
    exact) the locked versions of ``prefer`` before all."""
    matching = sorted(
        (v for v in by_version if requirement.specifier.contains(v, prereleases=True)), reverse=True
    )
    if not (exact or requirement.specifier.prereleases):
        # as pip: a pre-release only when no final release has a file for the target
        matching = [v for v in matching if not v.is_prerelease] + [v for v in matching if v.is_prerelease]
    if not exact:
        matching = _locked_first(matching, prefer)
    return matching


def _check_agrees(requirement: Requirement, parent: str, first: Chosen) -> None:
    """A requirement of a package already chosen must accept the version chosen first: the
    lock, like pip's first resolver, does not backtrack."""
    if not requirement.specifier.contains(first.version, prereleases=True):
        raise Unlockable(
            f"resolution conflict: {parent} needs {requirement}, but {first.name} "
            f"{first.version} was chosen first (the lock does not backtrack)"
        )


def _top_requirements(install: PipInstall) -> List[Tuple[Requirement, str, Tuple[str, ...]]]:
    """The install's requirements as the resolver's queue starts: (what, asked by, chain)."""
    queue: List[Tuple[Requirement, str, Tuple[str, ...]]] = []
    for text in install.requirements:
        try:
            queue.append((Requirement(text), "the recipe", ()))
        except InvalidRequirement as exc:
            raise Unlockable(f"{text!r} is not a valid requirement ({exc})") from None
    return queue


def _installed_by_earlier(requirement: Requirement, state: State) -> Optional[Dict[str, Any]]:
    """The entry of a requested exact pin that no release on the index fits but an earlier
    install the lock cannot see into may provide (None: no such install, or not exact).

    pip finds it installed by that install (the VCS checkout of the same package): a
    hashless line, which pip accepts in hash-checking mode only when it is already
    installed, so a build proves it."""
    version = kb_check._exact_version(requirement.specifier)
    if not state.unknown or version is None:
        return None
    return {"name": requirement.name, "version": str(version), "installed_by_earlier": list(state.unknown)}


def _dependencies(pick: Chosen, requirement: Requirement, env: Dict[str, str]) -> List[Requirement]:
    """The dependencies of ``pick`` that apply on the target: one of an extra only when
    ``requirement`` asked for that extra."""
    wanted = {""} | set(requirement.extras)
    found = []
    for dependency in pick.requires:
        parsed = _requirement(dependency, pick)
        if parsed.marker is None or any(parsed.marker.evaluate({**env, "extra": e}) for e in wanted):
            found.append(parsed)
    return found


def _check_bounds(install: PipInstall, chain: Tuple[str, ...], count: int) -> None:
    """Stop a dependency chain the index's metadata makes deeper or wider than any real one."""
    label = " ".join(install.requirements)[:200]
    if len(chain) > MAX_CHAIN_LINKS:
        raise FactError(
            f"pip install {label}: the index's metadata makes a dependency chain longer than "
            f"{MAX_CHAIN_LINKS} links ({' -> '.join(chain[:3])} -> ... -> {' -> '.join(chain[-3:])}): "
            "nothing written",
            hint="check the index (--index-url / PIP_INDEX_URL): no real package chain is that deep",
        )
    if count > MAX_PACKAGES:
        raise FactError(
            f"pip install {label}: the index's metadata asks for more than {MAX_PACKAGES} packages "
            f"(the last: {chain[-1]}): nothing written",
            hint="check the index (--index-url / PIP_INDEX_URL): no real install needs that many",
        )


def _requirement(text: str, pick: Chosen) -> Requirement:
    """A Requires-Dist line; an old one with a version pip no longer parses (``pytz
    (>=2011k)``) keeps its name and marker: pip's legacy parsing accepted any version."""
    try:
        return Requirement(text)
    except InvalidRequirement:
        head, _, marker = text.partition(";")
        name = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", head)
        if name is None:
            raise Unlockable(f"{pick.name} {pick.version} declares an invalid requirement {text!r}") from None
        try:
            return Requirement(name.group(1) + (f"; {marker}" if marker.strip() else ""))
        except InvalidRequirement:
            raise Unlockable(f"{pick.name} {pick.version} declares an invalid requirement {text!r}") from None


def _members(filename: str, data: bytes, wanted: Callable[[str], bool]) -> Dict[str, bytes]:
    """The sdist's regular files whose paths ``wanted`` accepts, read as data; a file larger
    than any metadata (MAX_SDIST_MEMBER_BYTES) is left out, and an unreadable archive has none."""
    found: Dict[str, bytes] = {}
    try:
        if filename.endswith(".zip"):
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                for info in archive.infolist():
                    small = info.file_size <= MAX_SDIST_MEMBER_BYTES
                    if not info.is_dir() and wanted(info.filename) and small:
                        with archive.open(info) as opened:
                            found[info.filename] = opened.read(MAX_SDIST_MEMBER_BYTES)
        else:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
                for member in archive:
                    if member.isfile() and wanted(member.name) and member.size <= MAX_SDIST_MEMBER_BYTES:
                        extracted = archive.extractfile(member)
                        if extracted is not None:
                            found[member.name] = extracted.read(MAX_SDIST_MEMBER_BYTES)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, zlib.error):
        return {}
    return found


STATIC_SOURCE = "the sdist's PKG-INFO, read as data (static metadata, PEP 643)"
EGG_INFO_SOURCE = "the sdist's egg-info/requires.txt, read as data (what setuptools wrote when it was made)"


def _static_requires(filename: str, data: bytes) -> Optional[Tuple[str, ...]]:
    """Requires-Dist of the sdist's PKG-INFO when PEP 643 makes it binding: Metadata-Version
    2.2 or later and Requires-Dist not marked Dynamic. None otherwise (older sdists)."""
    text = _top_files(filename, data).get("PKG-INFO")
    if text is None:
        return None
    message = email.parser.Parser().parsestr(text.decode("utf-8", errors="replace"), headersonly=True)
    try:
        metadata_version = Version(str(message.get("Metadata-Version", "")).strip())
    except InvalidVersion:
        return None
    dynamic = {str(d).strip().lower() for d in message.get_all("Dynamic") or ()}
    if metadata_version < Version("2.2") or "requires-dist" in dynamic:
        return None
    return tuple(str(r) for r in message.get_all("Requires-Dist") or ())


def _egg_requires(filename: str, data: bytes) -> Optional[Tuple[str, ...]]:
    """Requires-Dist lines from ``<name>.egg-info/requires.txt`` (sections ``[extra:marker]``);
    () when the egg-info exists without one, None when there is no egg-info at all."""
    members = _members(filename, data, lambda n: ".egg-info/" in n and n.count("/") == 2)
    if not members:
        return None
    text = next((v for k, v in sorted(members.items()) if k.endswith("/requires.txt")), b"")
    found: List[str] = []
    section = ""
    for raw in text.decode("utf-8", errors="replace").splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        extra, _, marker = section.partition(":")
        conditions = [f"({marker})"] if marker else []
        if extra:
            conditions.append(f'extra == "{extra}"')
        found.append(line + (f"; {' and '.join(conditions)}" if conditions else ""))
    return tuple(found)


NO_REQUIRES_SOURCE = (
    "the sdist's setup.py, read as text: it never names install_requires, nor does any other "
    "file at the sdist's top (setup.cfg, pyproject.toml, *.py), so it declares no dependencies"
)


def _declares_no_requires(filename: str, data: bytes) -> bool:
    """True when the sdist cannot declare dependencies: it has a top-level setup.py, and no
    top-level file where they could be declared names them: ``install_requires`` in no
    ``*.py`` (the setup.py or a module it imports) and no setup.cfg, ``dependencies`` in no
    pyproject.toml."""
    tops = _top_files(filename, data)
    if "setup.py" not in tops:
        return False
    for name, text in tops.items():
        if name.endswith((".py", ".cfg")) and b"install_requires" in text:
            return False
        if name == "pyproject.toml" and b"dependencies" in text:
            return False
    return True


FACT_SOURCE_PREFIX = "recipes/tools.yaml sdist_requires"


def fact_source(fact: SdistRequires) -> str:
    """The lock's ``dependencies_from`` for a recipe fact (no line number: an edit elsewhere
    in tools.yaml must not change the lock).

    Args:
        fact: An ``sdist_requires`` fact of recipes/tools.yaml.

    Returns:
        ``recipes/tools.yaml sdist_requires <name> <version>: ...``.
    """
    return (
        f"{FACT_SOURCE_PREFIX} {fact.name} {fact.version}: the install_requires of the sdist's "
        "setup.py, checked in this sdist (its metadata is not static and it has no egg-info)"
    )


def _fact_key(name: str, version: str) -> Tuple[str, str]:
    try:
        return canonicalize_name(name), str(Version(version))
    except InvalidVersion:
        return canonicalize_name(name), version


def _top_files(filename: str, data: bytes) -> Dict[str, bytes]:
    """The files at the top of an sdist (``p-1.0/setup.py`` as ``setup.py``)."""
    members = _members(filename, data, lambda n: n.count("/") == 1)
    return {name.split("/", 1)[1]: text for name, text in members.items()}


def install_requires_strings(setup_py: str) -> Optional[Set[str]]:
    """Every string that can reach ``install_requires`` in a setup.py, read (never run)
    with :mod:`ast`: the value of an ``install_requires=`` keyword, an ``install_requires``
    assignment or dict key; list elements, both branches of ``x if c else y``, both sides
    of ``+``, and through variable names every value assigned to a name they use
    (``install_requires=build_requires``). Strings in a condition, or made by a call
    (a requirements file read at run time), are not. None when it does not parse here.

    Args:
        setup_py: The setup.py's text.

    Returns:
        The strings, or None when the text does not parse on this Python.
    """
    try:
        tree = ast.parse(setup_py)
    except (SyntaxError, ValueError):
        return None
    assigned: Dict[str, List[ast.AST]] = {}
    roots: List[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)
                    if target.id == "install_requires":
                        roots.append(node.value)
                elif (
                    isinstance(target, ast.Subscript)
                    and isinstance(target.slice, ast.Constant)
                    and target.slice.value == "install_requires"
                ):
                    roots.append(node.value)
        elif isinstance(node, ast.keyword) and node.arg == "install_requires":
            roots.append(node.value)
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == "install_requires":
                    roots.append(value)
    found: Set[str] = set()
    seen: Set[str] = set()
    while roots:
        node = roots.pop()
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.add(node.value)
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            roots.extend(node.elts)
        elif isinstance(node, ast.IfExp):  # either branch may be taken: not the test
            roots.extend((node.body, node.orelse))
        elif isinstance(node, ast.BinOp):  # list + list
            roots.extend((node.left, node.right))
        elif isinstance(node, ast.BoolOp):
            roots.extend(node.values)
        elif isinstance(node, ast.Name) and node.id not in seen:
            seen.add(node.id)
            roots.extend(assigned.get(node.id, ()))
    return found


def _normal(text: str) -> Optional[str]:
    try:
        return str(Requirement(text))
    except InvalidRequirement:
        return None


def setup_py_problem(filename: str, data: bytes, fact: SdistRequires) -> Optional[str]:
    """None when the sdist's setup.py declares exactly ``fact.requires`` as install_requires
    (compared as parsed requirements), else what differs.

    Args:
        filename: The sdist's file name, for the message.
        data: The sdist's bytes (read as data, never run).
        fact: An ``sdist_requires`` fact of recipes/tools.yaml.

    Returns:
        None when the fact holds; else the problem (no setup.py, one that does not parse,
        or the requirements missing or extra).
    """
    setup_py = _top_files(filename, data).get("setup.py")
    if setup_py is None:
        return f"sdist_requires {fact.name} {fact.version}: {filename} has no setup.py to check it against"
    return requires_problem(setup_py.decode("utf-8", errors="replace"), filename, fact)


def requires_problem(setup_py: str, filename: str, fact: SdistRequires) -> Optional[str]:
    """None when ``setup_py`` declares exactly ``fact.requires`` as install_requires.

    Args:
        setup_py: The setup.py's text (read with :func:`install_requires_strings`, never run).
        filename: The sdist's file name, for the message.
        fact: An ``sdist_requires`` fact of recipes/tools.yaml.

    Returns:
        None when they match (compared as parsed requirements); else the problem: a
        setup.py that does not parse, or the requirements it does not name or also names.
    """
    label = f"sdist_requires {fact.name} {fact.version}"
    strings = install_requires_strings(setup_py)
    if strings is None:
        return f"{label}: the setup.py of {filename} does not parse on this Python, so it cannot be checked"
    declared = {n for n in (_normal(s) for s in strings) if n is not None}
    wanted = {_normal(r) or r for r in fact.requires}
    missing, extra = sorted(wanted - declared), sorted(declared - wanted)
    if not missing and not extra:
        return None
    parts = []
    if missing:
        parts.append(f"does not name {', '.join(missing)} in install_requires")
    if extra:
        parts.append(f"also names {', '.join(extra)} there")
    return f"{label}: the setup.py of {filename} " + " and ".join(parts)


def _project_name(filename: str, fallback: str) -> str:
    """The project's name as its file spells it (``Cython``), for the requirements line."""
    try:
        if filename.endswith(".whl"):
            return str(parse_wheel_filename(filename)[0])
        return str(parse_sdist_filename(filename)[0])
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return fallback


def stale_installs(stacks: Sequence[Stack]) -> List[str]:
    """Offline: every pip install of ``stacks`` that recipes/locks/ does not have (a pin
    changed since the lock was made), named by the recipe line that asks for it.

    Args:
        stacks: The stacks whose installs are checked (one without locks for its target
            is skipped).

    Returns:
        One problem per install without a lock, naming the command that makes it.

    Raises:
        MlccError: A stack lacks a fact the resolver adds (a hand-made stack).
    """
    problems: Dict[str, None] = {}
    for stack in stacks:
        locks = stack.pip_locks
        if locks is None:
            continue
        for ident, _, install in build_plan(stack).pip_installs:
            if locks.get(ident) is None:
                origin = install.origins[0] if install.origins else locks.path
                problems[
                    f"{origin}: pip install {' '.join(install.requirements)} has no lock in {locks.path} "
                    f"({kb_check.stack_label(stack)}): run `{pip_locks.REFRESH_COMMAND} && mlcc gen --all`"
                ] = None
    return list(problems)


def verify(
    root: str, stacks: Sequence[Stack], client: IndexClient, facts: Sequence[SdistRequires] = ()
) -> Tuple[List[str], int]:
    """The committed locks still hold: every install of ``stacks`` has one (offline), and
    every locked file is still on the index page it was read from, with the same sha256.
    A lock is a record: a newer release on the index does not make it wrong. Each
    sdist_requires fact of recipes/tools.yaml is checked against its sdist's setup.py.

    Args:
        root: The recipes folder (the committed locks are under its locks/).
        stacks: The stacks whose installs must have a lock.
        client: The index client (PyPI, or ``--index-url``).
        facts: The ``sdist_requires`` facts to check.

    Returns:
        The problems (a page that cannot be read is one), and how many locked files were
        checked.

    Raises:
        IndexUnreachable: A fact's project page or sdist cannot be read.
        OSError: The locks folder or a lock file cannot be read (a missing folder has no
            locks to verify: the missing ones are problems).
        ValueError: A lock file is not JSON.
        MlccError: A stack lacks a fact the resolver adds (a hand-made stack).
    """
    problems = stale_installs(stacks)
    checker = Locker(client)
    for fact in facts:
        problem = checker.check_fact(fact)
        if problem is not None:
            problems.append(problem)
    checked = 0
    folder = os.path.join(root, LOCK_DIR)
    listed = os.listdir(folder) if os.path.isdir(folder) else []  # no locks yet: nothing to verify
    names = sorted(n for n in listed if n.startswith("pip-") and n.endswith(".json"))
    for name in names:
        display = f"recipes/{LOCK_DIR}/{name}"
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            data = json.load(handle)
        for ident, install in sorted(dict(data.get("installs") or {}).items()):
            for package in install.get("packages") or ():
                if not package.get("sha256"):
                    continue
                checked += 1
                try:
                    page = client.page(package["index"])
                except IndexUnreachable as exc:
                    problems.append(f"{display}: install {ident}: {exc.message}")
                    continue
                offered = {f.filename: f.hash("sha256") for f in page.files}
                file, where, sha256 = package["file"], package["index"], package["sha256"]
                if file not in offered:
                    problems.append(f"{display}: install {ident}: {file} is gone from {where}")
                elif offered[file] != sha256:
                    problems.append(
                        f"{display}: install {ident}: {where} now gives {file} the sha256 {offered[file]}, "
                        f"the lock {sha256}"
                    )
    return problems, checked
