"""Hash locks of the pip installs in generated images (recipes/locks/pip-*.json).

``mlcc kb lock`` (mlcc/kbtools/lock.py) resolves, for every stack the matrix resolves,
what each pip install of its image downloads (the requirements the recipes pin and
their dependencies) for that stack's Python, CPU arch and C library, and records the
sha256 of the one file pip takes. The renderers then install with ``--require-hashes``:
an image built next year gets the same bytes or fails.

One lock file per target (Python, arch, glibc), because the files pip takes depend on
nothing else. An install is named by a chained id: a hash of what it asks for (the
requirements, the index options) and of the id of the pip install before it in the
same environment, since what is already installed decides what pip still downloads.
Two stacks that share a prefix of pip installs (every benchmark on one framework build)
share those ids and so render byte-identical prefixes.

An install the index cannot lock (a VCS checkout, a local directory, a wheel host
that cannot be reached from here) is recorded with ``unlocked``: the reason, which
the renderers print as a ``DF011`` waiver and lint reports as such.

File format (``format: 1``, sorted JSON)::

    {"format": 1, "generated_by": "mlcc kb lock", "index": "https://pypi.org/simple/",
     "target": {"python": "3.6", "arch": "x86_64", "glibc": "2.17"},
     "installs": {"<id>": {
        "after": "<id of the pip install before it>" | null,
        "environment": "venv" | "conda", "index": "<index URL>", "requirements": [...],
        "stacks": ["<benchmark>/<variant>", ...],
        "packages": [{"name", "version", "file", "url", "index": "<the project page read>",
                      "sha256", "requested", "dependencies": [...], "dependencies_from"}
                     | {"name", "version", "requested": true, "earlier": true,
                        "installed_by_earlier": [...]}],   # a pin an earlier VCS install provides
        "satisfied": [{"name", "version"}],   # kept from earlier installs, not downloaded
        "unlocked": "<why this install cannot be hash-locked>"}}}   # instead of packages

The lock files are read when the knowledge base is built (:func:`read_lock_files`) and
pickled with it, so the resolve and render paths parse no JSON; the chained ids are in
:mod:`mlcc.kb.lock_ids` (hashlib is not on the resolve path).
"""

# Annotations are evaluated here (no ``from __future__ import annotations``): typing.NamedTuple
# turns every string annotation into a ForwardRef and compiles it when the class is made, and
# every command that loads the knowledge base makes these classes. So a class is defined above the
# fields that name it (tests/unit/test_resolve_and_gen_import_only_what_they_use.py).

import json
import os
import sys
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

from mlcc.errors import RecipeError

LOCK_FORMAT = 1
LOCK_DIR = "locks"
REFRESH_COMMAND = "mlcc kb lock"
DEFAULT_INDEX = "https://pypi.org/simple/"


class LockTarget(NamedTuple):
    """Where pip installs: the interpreter, the CPU arch and the C library."""

    python: str  # "3.6"
    arch: str  # "x86_64"
    glibc: Optional[str]  # "2.17"; None: the base does not say

    @property
    def file_name(self) -> str:
        return f"pip-py{self.python}-{self.arch}-glibc{self.glibc or 'unknown'}.json"


class PipInstall(NamedTuple):
    """One ``pip install`` of an image, as the recipes ask for it."""

    requirements: Tuple[str, ...]
    index_url: Optional[str] = None  # --index-url (None: PyPI)
    extra_index: Optional[str] = None
    find_links: Optional[str] = None
    no_deps: bool = False
    environment: str = "venv"  # venv | conda: which interpreter's site-packages
    origins: Tuple[str, ...] = ()  # recipes/<file>:<line> of the requirements (not in the id)
    # Known at plan time: why the index cannot lock it (a local directory). None: ask the lock.
    unlockable: Optional[str] = None

    def key(self) -> Dict[str, Any]:
        return {
            "requirements": list(self.requirements),
            "index": self.index_url,
            "extra_index": self.extra_index,
            "find_links": self.find_links,
            "no_deps": self.no_deps,
            "environment": self.environment,
        }


class LockedPackage(NamedTuple):
    name: str
    version: str
    filename: str
    sha256: str

    def line(self) -> str:
        """The requirements-file line pip checks: ``name==version --hash=sha256:...``; without
        a hash for a pin an earlier install provides (pip accepts that only when installed)."""
        return f"{self.name}=={self.version}" + (f" --hash=sha256:{self.sha256}" if self.sha256 else "")


class LockedInstall(NamedTuple):
    """What the lock file says of one install."""

    id: str
    requirements: Tuple[str, ...]
    packages: Tuple[LockedPackage, ...]
    unlocked: Optional[str]  # the reason it cannot be hash-locked; None: locked
    # the PEP 503 names of what it asks for and pins (pip_names), recorded when the knowledge
    # base is built: a render compares them with recipes/tools.yaml's build_only as they are
    names: Tuple[str, ...] = ()


class PipLocks(NamedTuple):
    """The lock file of one target, as the resolver hands it to the renderers."""

    path: str  # recipes/locks/<file>, relative, for messages
    installs: Tuple[Tuple[str, LockedInstall], ...] = ()

    def get(self, install: str) -> Optional[LockedInstall]:
        return next((locked for ident, locked in self.installs if ident == install), None)


def lock_path(root: str, target: LockTarget) -> str:
    return os.path.join(root, LOCK_DIR, target.file_name)


def display_path(file_name: str) -> str:
    return f"recipes/{LOCK_DIR}/{file_name}"


def lock_file_names(root: str) -> List[str]:
    """The lock files under the recipes folder ``root`` (part of the knowledge base)."""
    directory = os.path.join(root, LOCK_DIR)
    if not os.path.isdir(directory):
        return []
    return sorted(n for n in os.listdir(directory) if n.startswith("pip-") and n.endswith(".json"))


class LockFiles(NamedTuple):
    """Every lock file of a recipes folder, parsed once when the knowledge base is built
    and pickled with it: a warm ``mlcc resolve`` then parses no JSON (a lock file is up to
    280 KB). A damaged file is kept as its problem and reported when a stack needs it, so
    ``mlcc kb lock`` can still rewrite it and every other command still runs."""

    parsed: Tuple[Tuple[str, PipLocks], ...] = ()
    damaged: Tuple[Tuple[str, str], ...] = ()  # (file name, what is wrong)

    def for_target(self, target: LockTarget) -> PipLocks:
        """The lock of ``target`` (empty when there is none); RecipeError when damaged."""
        name = target.file_name
        for file_name, problem in self.damaged:
            if file_name == name:
                raise RecipeError(display_path(name), None, problem, hint=REFRESH_COMMAND)
        for file_name, locks in self.parsed:
            if file_name == name:
                return locks
        return PipLocks(display_path(name))


def read_lock_files(root: str) -> LockFiles:
    parsed: List[Tuple[str, PipLocks]] = []
    damaged: List[Tuple[str, str]] = []
    for name in lock_file_names(root):
        locks = _parse(os.path.join(root, LOCK_DIR, name), display_path(name))
        if isinstance(locks, str):
            damaged.append((name, locks))
        else:
            parsed.append((name, locks))
    return LockFiles(tuple(parsed), tuple(damaged))


def _parse(path: str, display: str) -> Union[PipLocks, str]:
    """One lock file, parsed; or what is wrong with it."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        return f"is not a readable lock file ({exc})"
    if not isinstance(data, dict) or data.get("format") != LOCK_FORMAT:
        return f"is not a lock file of format {LOCK_FORMAT}"
    installs: List[Tuple[str, LockedInstall]] = []
    try:
        for key, entry in sorted(dict(data.get("installs") or {}).items()):
            installs.append((str(key), parse_install(str(key), entry)))
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        return f"is not a lock file of format {LOCK_FORMAT} ({type(exc).__name__}: {exc})"
    return PipLocks(display, tuple(installs))


def parse_install(key: str, entry: Dict[str, Any]) -> LockedInstall:
    packages = tuple(
        LockedPackage(str(p["name"]), str(p["version"]), str(p.get("file", "")), str(p.get("sha256", "")))
        for p in entry.get("packages") or ()
        if p.get("sha256") or p.get("installed_by_earlier")
    )
    requirements = tuple(str(r) for r in entry.get("requirements") or ())
    return LockedInstall(
        key,
        requirements,
        packages,
        entry.get("unlocked") or None,
        pip_names(requirements, (p.name for p in packages)),
    )


def pip_names(requirements: Sequence[str], packages: Iterable[str] = ()) -> Tuple[str, ...]:
    """The PEP 503 names (packaging's ``canonicalize_name``) of the packages ``requirements``
    name (a URL or a folder names none) and of ``packages``, sorted.

    Args:
        requirements: pip requirements as an install asks for them.
        packages: project names as a lock file spells them.

    Returns:
        Each name once, sorted.
    """
    # imported here: packaging.requirements and packaging.utils bring packaging.tags
    # (logging, subprocess, platform); the knowledge base's build names every locked install,
    # so a render calls this only for an install the lock files do not have
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    names = set(map(canonicalize_name, packages))
    for text in requirements:
        try:
            names.add(canonicalize_name(Requirement(text).name))
        except InvalidRequirement:
            continue
    # one string object per name across installs: the pickled knowledge base stores it once
    return tuple(sys.intern(name) for name in sorted(names))
