"""Writing generated files: all rendered in memory first, each file replaced atomically.

A generator that dies half way must not leave a half-written Dockerfile behind: every
file is written to a temporary name in its own directory and renamed into place, and
nothing is written at all until every variant has rendered.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Dict, Iterable, List, NamedTuple, Sequence, Tuple

from mlcc.errors import OutputError

EXECUTABLE = ("mlcc-record", "install.sh")


def _executable(path: Path) -> bool:
    return path.name in EXECUTABLE or path.suffix == ".sh"


def _mode_is_right(path: Path) -> bool:
    return _executable(path) == bool(path.stat().st_mode & stat.S_IXUSR)


def _set_mode(path: Path) -> None:
    try:
        os.chmod(path, 0o755 if _executable(path) else 0o644)
    except OSError as error:
        raise OutputError(f"cannot change the mode of {path}: {error.strerror}") from None


class Change(NamedTuple):
    path: Path
    status: str  # "created" | "updated" | "unchanged" | "removed"


def write_tree(root: Path, files: Iterable[Tuple[str, str]], *, prune: Sequence[str] = ()) -> List[Change]:
    """Write ``files`` (relative path, content) under ``root``.

    ``prune`` names folders (relative to root) whose files not in ``files`` are removed:
    a variant folder keeps exactly the files of its current rendering.
    """
    wanted: Dict[str, str] = dict(files)
    _check_writable(root)
    changes: List[Change] = []
    for rel in sorted(wanted):
        target = root / rel
        content = wanted[rel]
        if target.is_file() and target.read_text(encoding="utf-8") == content:
            if _mode_is_right(target):
                changes.append(Change(target, "unchanged"))
                continue
            _set_mode(target)
            changes.append(Change(target, "updated"))
            continue
        status = "updated" if target.exists() else "created"
        _atomic_write(target, content, executable=_executable(target))
        changes.append(Change(target, status))
    for path in _foreign(root, prune, wanted):
        path.unlink()
        changes.append(Change(path, "removed"))
    return changes


def remove_folder(folder: Path) -> List[Change]:
    """Delete a generated variant folder the published set no longer has."""
    changes: List[Change] = []
    try:
        for path in sorted(folder.rglob("*"), reverse=True):
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            else:
                path.unlink()
                changes.append(Change(path, "removed"))
        folder.rmdir()
    except OSError as error:
        raise OutputError(f"cannot remove {folder}: {error.strerror}") from None
    return changes


def _foreign(root: Path, folders: Sequence[str], wanted: Dict[str, str]) -> List[Path]:
    """Files under ``folders`` that are not among the generated ones."""
    found: List[Path] = []
    for folder in folders:
        directory = root / folder
        if directory.is_dir():
            found += [
                p
                for p in sorted(directory.rglob("*"))
                if p.is_file() and p.relative_to(root).as_posix() not in wanted
            ]
    return found


def _check_writable(root: Path) -> None:
    probe = root
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise OutputError(
            f"cannot write to {root}: {probe} is not a writable directory",
            hint="pick another output folder with -o DIR",
        )


def _atomic_write(target: Path, content: str, *, executable: bool) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(content)
            mode = 0o755 if executable else 0o644
            os.chmod(tmp, mode)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as error:
        raise OutputError(f"cannot write {target}: {error.strerror}") from None


def compare_tree(root: Path, files: Iterable[Tuple[str, str]], *, folders: Sequence[str]) -> List[str]:
    """Differences between ``files`` and what is on disk under ``root`` (for --check)."""
    wanted: Dict[str, str] = dict(files)
    problems: List[str] = []
    for rel in sorted(wanted):
        target = root / rel
        if not target.is_file():
            problems.append(f"missing: {target}")
        elif target.read_text(encoding="utf-8") != wanted[rel]:
            problems.append(f"stale: {target}")
        elif not _mode_is_right(target):
            problems.append(f"mode: {target}")
    problems += [f"not generated (remove it): {path}" for path in _foreign(root, folders, wanted)]
    return problems
