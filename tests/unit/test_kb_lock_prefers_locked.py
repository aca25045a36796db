"""`mlcc kb lock` keeps what recipes/locks/ locks, as uv lock and pip-compile do: a re-lock
against an index that gained a newer release of an unpinned dependency keeps the locked
version; ``--upgrade`` (no committed locks given) takes the newer one; a specifier that no
longer admits the locked version, or a locked file that is yanked or gone, resolves afresh.

Every index here is a real HTTP server on 127.0.0.1 (tests/unit/simple_index.py); the locks
are written and read back through the same functions `mlcc kb lock` uses."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Dict, FrozenSet, List, Optional

from mlcc.kb.index import IndexClient
from mlcc.kb.pip_locks import LockFiles, LockTarget, PipInstall, read_lock_files
from mlcc.kbtools.lock import EMPTY, Locker, lock, write

from .simple_index import IndexServer, serve
from .test_pip_locks import _wheel

TARGET = LockTarget(f"{sys.version_info[0]}.{sys.version_info[1]}", "x86_64", "2.17")
IDENT = "a" * 16
PROBE = PipInstall(("mlccprobe==1.0",))  # an exact pin whose dependency mlccdep>=1.0 is not

WHEELS = {
    "mlccprobe-1.0-py3-none-any.whl": _wheel("mlccprobe", "1.0", ["mlccdep>=1.0"]),
    "mlccdep-1.0-py3-none-any.whl": _wheel("mlccdep", "1.0", []),
}
NEWER = {"mlccdep-1.1-py3-none-any.whl": _wheel("mlccdep", "1.1", [])}


def _publish(index: IndexServer, wheels: Dict[str, bytes], yanked: FrozenSet[str] = frozenset()) -> None:
    """A PEP 503 page per project; a file named in ``yanked`` carries data-yanked (PEP 592)."""
    projects: Dict[str, List[str]] = {}
    for filename, data in wheels.items():
        index.add(f"/files/{filename}", data, "application/octet-stream")
        digest = hashlib.sha256(data).hexdigest()
        flag = ' data-yanked=""' if filename in yanked else ""
        projects.setdefault(filename.split("-")[0], []).append(
            f'<a href="/files/{filename}#sha256={digest}"{flag}>{filename}</a>'
        )
    for project, links in projects.items():
        index.add(f"/simple/{project}/", ("<html><body>" + "".join(links) + "</body></html>").encode())


def _lock(index: IndexServer, root: Path, locked: Optional[LockFiles], install: PipInstall = PROBE) -> str:
    """Lock ``install`` as `mlcc kb lock` does, write recipes/locks/ under ``root`` and return
    the lock file's text."""
    locker = Locker(IndexClient(index.url + "/simple/", cache=""), metadata_cache="", locked=locked)
    record, _ = locker.lock_install(TARGET, install, EMPTY, None, ident=IDENT)
    record["after"] = None
    locker.records = {TARGET: {IDENT: record}}
    write(str(root), locker.documents())
    return (root / "locks" / TARGET.file_name).read_text(encoding="utf-8")


def _versions(root: Path) -> Dict[str, str]:
    locks = read_lock_files(str(root)).for_target(TARGET)
    install = locks.get(IDENT)
    assert install is not None and install.unlocked is None, install
    return {p.name: p.version for p in install.packages}


def test_a_relock_keeps_the_locked_version_when_the_index_gains_a_newer_release(tmp_path: Path) -> None:
    for index in serve():
        _publish(index, WHEELS)
        first = _lock(index, tmp_path, None)
        assert _versions(tmp_path) == {"mlccdep": "1.0", "mlccprobe": "1.0"}
        _publish(index, {**WHEELS, **NEWER})
        again = _lock(index, tmp_path, read_lock_files(str(tmp_path)))
        assert again == first  # byte-identical: the same tree keeps the same lock


def test_upgrade_takes_the_newest_release_the_specifier_allows(tmp_path: Path) -> None:
    for index in serve():
        _publish(index, WHEELS)
        _lock(index, tmp_path, None)
        _publish(index, {**WHEELS, **NEWER})
        _lock(index, tmp_path, None)  # --upgrade: the committed locks are not consulted
        assert _versions(tmp_path)["mlccdep"] == "1.1"


def test_a_specifier_that_no_longer_admits_the_locked_version_resolves_afresh(tmp_path: Path) -> None:
    for index in serve():
        _publish(index, {**WHEELS, **NEWER, "mlccdep-1.2-py3-none-any.whl": _wheel("mlccdep", "1.2", [])})
        _lock(index, tmp_path, None, PipInstall(("mlccdep<1.1",)))
        assert _versions(tmp_path) == {"mlccdep": "1.0"}
        # the recipe now asks for >=1.1: 1.0 no longer fits, so the newest that does is taken
        _lock(index, tmp_path, read_lock_files(str(tmp_path)), PipInstall(("mlccdep>=1.1",)))
        assert _versions(tmp_path) == {"mlccdep": "1.2"}
        # one that still admits the locked version keeps it
        _lock(index, tmp_path, read_lock_files(str(tmp_path)), PipInstall(("mlccdep>=1.0",)))
        assert _versions(tmp_path) == {"mlccdep": "1.2"}


def test_a_yanked_locked_file_resolves_afresh(tmp_path: Path) -> None:
    for index in serve():
        _publish(index, WHEELS)
        _lock(index, tmp_path, None)
        _publish(index, {**WHEELS, **NEWER}, yanked=frozenset({"mlccdep-1.0-py3-none-any.whl"}))
        _lock(index, tmp_path, read_lock_files(str(tmp_path)))
        assert _versions(tmp_path)["mlccdep"] == "1.1"


def test_a_locked_version_gone_from_the_index_resolves_afresh(tmp_path: Path) -> None:
    for index in serve():
        _publish(index, WHEELS)
        _lock(index, tmp_path, None)
        remaining = {n: d for n, d in WHEELS.items() if not n.startswith("mlccdep-")}
        _publish(index, {**remaining, **NEWER})
        _lock(index, tmp_path, read_lock_files(str(tmp_path)))
        assert _versions(tmp_path)["mlccdep"] == "1.1"


def test_an_install_the_lock_lacks_keeps_the_version_its_target_locks_elsewhere(tmp_path: Path) -> None:
    """A pin added before an install changes that install's chained id: its dependencies
    still keep the versions the target's lock file holds, so one pin does not re-resolve
    every install after it."""
    for index in serve():
        _publish(index, WHEELS)
        _lock(index, tmp_path, None)
        _publish(index, {**WHEELS, **NEWER})
        locked = read_lock_files(str(tmp_path))
        locker = Locker(IndexClient(index.url + "/simple/", cache=""), metadata_cache="", locked=locked)
        packages, _ = locker.resolve(TARGET, PROBE, EMPTY, ident="b" * 16)
        assert {p["name"]: p["version"] for p in packages} == {"mlccdep": "1.0", "mlccprobe": "1.0"}


def test_an_install_after_a_new_pin_keeps_what_the_same_requirements_locked(tmp_path: Path) -> None:
    """The file also locks a newer mlccdep for another install: an install asking for the
    same requirements as a locked one, after other installs (a new id), keeps that one's."""
    for index in serve():
        _publish(index, {**WHEELS, **NEWER})
        locker = Locker(IndexClient(index.url + "/simple/", cache=""), metadata_cache="")
        old, _ = locker.lock_install(TARGET, PipInstall(("mlccprobe==1.0", "mlccdep<1.1")), EMPTY, None)
        probe, _ = locker.lock_install(TARGET, PROBE, EMPTY, None)
        newer, _ = locker.lock_install(TARGET, PipInstall(("mlccdep>=1.1",)), EMPTY, None)
        probe["packages"] = old["packages"]  # as locked when the index had only mlccdep 1.0
        locker.records = {TARGET: {IDENT: dict(probe, after=None), "c" * 16: dict(newer, after=None)}}
        write(str(tmp_path), locker.documents())
        locked = read_lock_files(str(tmp_path))
        relocker = Locker(IndexClient(index.url + "/simple/", cache=""), metadata_cache="", locked=locked)
        packages, _ = relocker.resolve(TARGET, PROBE, EMPTY, ident="d" * 16)
        assert {p["name"]: p["version"] for p in packages} == {"mlccdep": "1.0", "mlccprobe": "1.0"}


def test_installs_no_stack_of_the_run_asks_for_are_kept_byte_identical_unless_pruned(
    recipes_copy: Path,
) -> None:
    """A run that locks no stack (the index is never asked) rewrites the committed lock files
    as they are: nothing is lost because the sample moved; --prune drops every one of them."""
    from mlcc.kb import load

    folder = recipes_copy / "locks"
    committed = {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("pip-*.json"))}
    assert committed
    kb = load(str(recipes_copy))
    client = IndexClient("https://pypi.org/simple/", cache="")  # never asked: no stack to lock
    locker, report = lock(kb, [], client)
    assert report.kept == sum(len(json.loads(t)["installs"]) for t in committed.values())
    assert locker.documents() == committed
    pruned, report = lock(kb, [], client, prune=True)
    assert report.kept == 0 and pruned.documents() == {}
    assert client.requests == 0
