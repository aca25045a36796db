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
TEMP_SUFFIX = ".mlcc-tmp"


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


def change_lines(changes: Sequence[Change], root: str) -> List[str]:
    """What gen prints: each file with its status, or that nothing under ``root`` changed."""
    lines = [f"{change.status:9} {change.path}" for change in changes]
    if all(change.status == "unchanged" for change in changes):
        lines.append(f"nothing changed under {root}")
    return lines


def write_tree(
    root: Path,
    files: Iterable[Tuple[str, str]],
    *,
    prune: Sequence[str] = (),
    keep: Sequence[str] = (),
    flag: str = "-o DIR",
) -> List[Change]:
    """Write ``files`` (relative path, content) under ``root``.

    ``prune`` names folders (relative to root) whose files not in ``files`` are removed:
    a variant folder keeps exactly the files of its current rendering, except the files
    named in ``keep`` at the top of such a folder (another output format's main file).
    ``flag`` is the option that chose ``root``, for the hint of an error.
    """
    wanted: Dict[str, str] = dict(files)
    check_writable(root, flag)
    refuse_symlinks(root, [*wanted, *prune], flag)
    for rel in wanted:  # all before any: a refused path must not leave the others half-written
        refuse_other_than_a_file(root / rel, flag)
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
        if path.name in keep and path.parent.relative_to(root).as_posix() in prune:
            continue
        try:
            path.unlink()
        except FileNotFoundError:
            continue  # a concurrent mlcc removed it first
        except OSError as error:
            raise OutputError(f"cannot remove {path}: {error.strerror}") from None
        changes.append(Change(path, "removed"))
    return changes


def refuse_symlinks(root: Path, relative: Iterable[str], flag: str = "-o DIR") -> None:
    """Refuse a symbolic link anywhere below ``root`` on the way to a path mlcc writes or prunes.

    Following one would write, or clean up, files outside the output folder.
    """
    seen = set()
    for rel in relative:
        probe = root
        for part in Path(rel).parts:
            probe = probe / part
            if probe in seen:
                continue
            seen.add(probe)
            if _is_link(probe, flag):
                raise OutputError(
                    f"{probe} is a symbolic link; mlcc writes and cleans up only real folders and "
                    f"files inside {root}",
                    hint=f"remove the link, or pick another output folder with {flag}",
                )
            if not probe.exists():
                break


def remove_folder(folder: Path) -> List[Change]:
    """Delete a generated variant folder the published set no longer has."""
    changes: List[Change] = []
    if folder.is_symlink():
        raise OutputError(
            f"{folder} is a symbolic link; mlcc cleans up only real folders",
            hint="remove the link yourself if the folder is no longer wanted",
        )
    try:
        for path in sorted(folder.rglob("*"), reverse=True):
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            else:
                path.unlink(missing_ok=True)
                changes.append(Change(path, "removed"))
        folder.rmdir()
    except FileNotFoundError:
        pass  # a concurrent mlcc removed it first
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
                if (p.is_file() or p.is_symlink())
                and not _in_flight(p)
                and p.relative_to(root).as_posix() not in wanted
            ]
    return found


def refuse_other_than_a_file(target: Path, flag: str) -> None:
    """Refuse to write where something other than a regular file is: the new file is
    renamed into place, which would replace a device node (``/dev/null``), a FIFO or a
    socket with a regular file."""
    try:
        mode = target.lstat().st_mode
    except FileNotFoundError:
        return
    except OSError as error:
        raise OutputError(
            f"cannot use {target}: {error.strerror or error}", hint=f"pick another place with {flag}"
        ) from None
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
        raise OutputError(
            f"cannot write {target}: it is {kind}, and mlcc writes a new file and renames it "
            "into place, which replaces only regular files",
            hint=f"name a file (or a new path) with {flag}",
        )


def _is_link(path: Path, flag: str) -> bool:
    try:
        return path.is_symlink()
    except OSError as error:
        raise OutputError(
            f"cannot use {path}: {error.strerror or error}", hint=f"pick another place with {flag}"
        ) from None


def _in_flight(path: Path) -> bool:
    """A temporary file another mlcc is writing right now (see _atomic_write): not ours to prune."""
    return path.name.startswith(".") and path.name.endswith(TEMP_SUFFIX)


def check_writable(root: Path, flag: str = "-o DIR") -> None:
    if not str(root):
        raise OutputError("an empty path is not an output folder", hint=f"name a folder with {flag}")
    try:
        probe = root
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        usable = probe.is_dir() and os.access(probe, os.W_OK | os.X_OK)
    except OSError as error:  # a name over the file-system limit, a loop of links ...
        raise OutputError(
            f"cannot write to {root}: {error.strerror or error}", hint=f"pick another place with {flag}"
        ) from None
    if not usable:
        raise OutputError(
            f"cannot write to {root}: {probe} is not a writable directory",
            hint=f"pick another place with {flag}",
        )


def _new_temporary(target: Path) -> Tuple[int, str]:
    """A new file of mode 0600 next to ``target``, named ``.<name>.<random>.mlcc-tmp``,
    that nobody else created (``tempfile.mkstemp`` opens it exclusively, without
    following a link, and picks another name on a collision)."""
    return tempfile.mkstemp(prefix=f".{target.name}.", suffix=TEMP_SUFFIX, dir=target.parent)


def _atomic_write(target: Path, content: str, *, executable: bool) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _new_temporary(target)
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
        raise OutputError(f"cannot write {target}: {error.strerror or error}") from None


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
