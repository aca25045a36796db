"""How every fetched byte of a build is pinned: the records of stack.json's ``fetches``.

The planner (:mod:`mlcc.render.plan`) adds a record as it writes each step that fetches
something (a download, a git checkout, a pip or conda install), from the very facts that
step is written from, so stack.json says what the generated file does and no reader has
to work it out again. The planner records URLs as the generated file writes them, each
mirrored host through its build argument (``${GIT_MIRROR}/NVIDIA/apex.git``);
:func:`as_fetched` then gives every argument the value the generated file declares for
it (the mirror asked for at generation, else the public host), which is what a build
with default build arguments fetches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple, Union

from mlcc.kb.pip_locks import LockedInstall, PipInstall
from mlcc.render.mirror import MIRROR_VAR, Route, host_mirrored
from mlcc.stackfile.document import (
    CondaRecord,
    DownloadRecord,
    Fetches,
    GitRecord,
    PipPackageRecord,
    PipRecord,
)

if TYPE_CHECKING:
    Record = Union[DownloadRecord, GitRecord, PipRecord, CondaRecord]


def _reason(text: Optional[str]) -> Optional[str]:
    """A recipe's reason on one line, as the generated file's notes print it."""
    return " ".join(text.split()) if text else None


def download(
    name: str, url: str, sha256: Optional[str], unavailable: Optional[str], checksum_url: Optional[str] = None
) -> DownloadRecord:
    return DownloadRecord(name, url, sha256 or None, None if sha256 else _reason(unavailable), checksum_url)


def git(name: str, repository: str, ref: str, unresolved: Optional[str] = None) -> GitRecord:
    return GitRecord(name, repository, ref, None if len(ref) == 40 else _reason(unresolved))


def hash_locked(locked: Optional[LockedInstall]) -> bool:
    """Whether the renderers install ``locked`` with ``--require-hashes``."""
    return locked is not None and locked.unlocked is None and bool(locked.packages)


def no_lock(lock_file: str) -> str:
    return f"{lock_file} has no lock for this pip install"


def pip(
    ident: str,
    install: PipInstall,
    locked: Optional[LockedInstall],
    lock_file: str,
    hosts: Tuple[Route, ...],
) -> Tuple[Record, ...]:
    """The pip install ``ident`` (and a git record for each VCS requirement it checks out)."""
    requirements = tuple([host_mirrored(r, hosts) for r in install.requirements])
    found: List[Record] = [_vcs(r) for r in requirements if r.startswith("git+")]
    if hash_locked(locked):
        assert locked is not None
        packages = tuple(
            [
                PipPackageRecord(p.name, p.version, p.filename or None, p.sha256 or None)
                for p in locked.packages
            ]
        )
        unlocked = None
    else:
        packages = ()
        reason = install.unlockable or (locked.unlocked if locked is not None else None)
        unlocked = _reason(reason) or no_lock(lock_file)
    found.append(PipRecord(ident, lock_file, install.environment, requirements, packages, unlocked))
    return tuple(found)


def _vcs(requirement: str) -> GitRecord:
    """``git+URL@REF[#subdirectory=DIR]`` as a checkout (the recipes pin every one by full
    commit; the renderers' pip verifies it)."""
    url, _, fragment = requirement[len("git+") :].partition("#")
    repository, _, ref = url.rpartition("@") if "@" in url.split("://", 1)[-1] else (url, "", "")
    subdirectory = fragment.split("subdirectory=", 1)[1] if "subdirectory=" in fragment else None
    name = subdirectory or repository.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    return git(f"pip:{name}", repository, ref, "pip checks out a ref that is not a full commit")


def conda(channels: Sequence[str], packages: Sequence[str], builds_unavailable: Optional[str]) -> CondaRecord:
    unbuilt = tuple([p for p in packages if len(p.replace("==", "=").split("=")) < 3])
    return CondaRecord(
        tuple(channels), tuple(packages), unbuilt, _reason(builds_unavailable) if unbuilt else None
    )


def as_fetched(
    records: Sequence[Record], mirror: str, build_args: Sequence[Tuple[str, Optional[str]]]
) -> Fetches:
    """The records with each URL as the build fetches it, grouped by kind (each kind keeps
    build order)."""
    values = [(MIRROR_VAR, mirror), *[("${" + name + "}", value) for name, value in build_args if value]]

    def url(text: str) -> str:
        if "${" not in text:
            return text
        for var, value in values:
            text = text.replace(var, value)
        return text

    downloads: List[DownloadRecord] = []
    checkouts: List[GitRecord] = []
    installs: List[PipRecord] = []
    environments: List[CondaRecord] = []
    for record in records:
        if isinstance(record, PipRecord):  # the most frequent; few name a mirrored host
            if any(["${" in r for r in record.requirements]):
                record = record._replace(requirements=tuple([url(r) for r in record.requirements]))
            installs.append(record)
        elif isinstance(record, DownloadRecord):
            checksum = url(record.checksum_url) if record.checksum_url else None
            downloads.append(record._replace(url=url(record.url), checksum_url=checksum))
        elif isinstance(record, GitRecord):
            checkouts.append(record._replace(repository=url(record.repository)))
        else:
            environments.append(record._replace(channels=tuple([url(c) for c in record.channels])))
    return Fetches(tuple(downloads), tuple(checkouts), tuple(installs), tuple(environments))
