"""Writing generated files: all rendered in memory first, each file replaced atomically.

A generator that dies half way must not leave a half-written Dockerfile behind: every
file is written to a temporary name in its own directory and renamed into place, and
nothing is written at all until every variant has rendered.
"""

from __future__ import annotations

import contextlib
import os
import stat
from typing import TYPE_CHECKING, Dict, Iterable, List, NamedTuple, Sequence, Tuple

from mlcc import paths
from mlcc.errors import OutputError

if TYPE_CHECKING:
    from mlcc.paths import StrPath

EXECUTABLE = ("mlcc-record", "install.sh")
TEMP_SUFFIX = ".mlcc-tmp"


def _executable(path: str) -> bool:
    return paths.name(path) in EXECUTABLE or paths.suffix(path) == ".sh"


def _mode_is_right(path: str) -> bool:
    return _executable(path) == bool(os.stat(path).st_mode & stat.S_IXUSR)


def _set_mode(path: str) -> None:
    try:
        os.chmod(path, 0o755 if _executable(path) else 0o644)
    except OSError as error:
        raise OutputError(f"cannot change the mode of {path}: {error.strerror}") from None


class Change(NamedTuple):
    path: str  # as pathlib spells it: "out/b/v/Dockerfile" for -o ./out/
    status: str  # "created" | "updated" | "unchanged" | "removed"


def change_lines(changes: Sequence[Change], root: str) -> List[str]:
    """What gen prints: each file with its status, or that nothing under ``root`` changed."""
    lines = [f"{change.status:9} {change.path}" for change in changes]
    if all(change.status == "unchanged" for change in changes):
        lines.append(f"nothing changed under {root}")
    return lines


def write_tree(
    root: StrPath, files: Iterable[Tuple[str, str]], *, prune: Sequence[str] = (), flag: str = "-o DIR"
) -> List[Change]:
    """Write ``files`` (relative path, content) under ``root``.

    ``prune`` names folders (relative to root) whose files not in ``files`` are removed:
    a variant folder keeps exactly the files of its current rendering. ``flag`` is the
    option that chose ``root``, for the hint of an error.
    """
    wanted: Dict[str, str] = dict(files)
    check_writable(root, flag)
    root = paths.pure(root)
    refuse_symlinks(root, [*wanted, *prune], flag)
    changes: List[Change] = []
    for rel in sorted(wanted):
        target = paths.join(root, rel)
        content = wanted[rel]
        if paths.is_file(target) and paths.read_text(target) == content:
            if _mode_is_right(target):
                changes.append(Change(target, "unchanged"))
                continue
            _set_mode(target)
            changes.append(Change(target, "updated"))
            continue
        status = "updated" if paths.exists(target) else "created"
        _atomic_write(target, content, executable=_executable(target))
        changes.append(Change(target, status))
    for path in _foreign(root, prune, wanted):
        try:
            os.unlink(path)
        except FileNotFoundError:
            continue  # a concurrent mlcc removed it first
        except OSError as error:
            raise OutputError(f"cannot remove {path}: {error.strerror}") from None
        changes.append(Change(path, "removed"))
    return changes


def refuse_symlinks(root: StrPath, relative: Iterable[str], flag: str = "-o DIR") -> None:
    """Refuse a symbolic link anywhere below ``root`` on the way to a path mlcc writes or prunes.

    Following one would write, or clean up, files outside the output folder.
    """
    root = paths.pure(root)
    seen = set()
    for rel in relative:
        probe = root
        for part in paths.parts(rel):
            probe = paths.join(probe, part)
            if probe in seen:
                continue
            seen.add(probe)
            if _is_link(probe, flag):
                raise OutputError(
                    f"{probe} is a symbolic link; mlcc writes and cleans up only real folders and "
                    f"files inside {root}",
                    hint=f"remove the link, or pick another output folder with {flag}",
                )
            if not paths.exists(probe):
                break


def remove_folder(folder: StrPath) -> List[Change]:
    """Delete a generated variant folder the published set no longer has."""
    folder = paths.pure(folder)
    changes: List[Change] = []
    if paths.is_symlink(folder):
        raise OutputError(
            f"{folder} is a symbolic link; mlcc cleans up only real folders",
            hint="remove the link yourself if the folder is no longer wanted",
        )
    try:
        # deepest first: a folder's files and folders go before it does
        for path in sorted(paths.tree(folder), key=paths.sort_key, reverse=True):
            if paths.is_dir(path) and not paths.is_symlink(path):
                os.rmdir(path)
            else:
                with contextlib.suppress(FileNotFoundError):  # a concurrent mlcc removed it first
                    os.unlink(path)
                changes.append(Change(path, "removed"))
        os.rmdir(folder)
    except FileNotFoundError:
        pass  # a concurrent mlcc removed it first
    except OSError as error:
        raise OutputError(f"cannot remove {folder}: {error.strerror}") from None
    return changes


def _foreign(root: str, folders: Sequence[str], wanted: Dict[str, str]) -> List[str]:
    """Files under ``folders`` that are not among the generated ones."""
    found: List[str] = []
    for folder in folders:
        directory = paths.join(root, folder)
        if paths.is_dir(directory):
            found += [
                p
                for p in sorted(paths.tree(directory), key=paths.sort_key)
                if (paths.is_file(p) or paths.is_symlink(p))
                and not _in_flight(p)
                and paths.relative(p, root) not in wanted
            ]
    return found


def _is_link(path: str, flag: str) -> bool:
    try:
        return paths.is_symlink(path)
    except OSError as error:
        raise OutputError(
            f"cannot use {path}: {error.strerror or error}", hint=f"pick another place with {flag}"
        ) from None


def _in_flight(path: str) -> bool:
    """A temporary file another mlcc is writing right now (see _atomic_write): not ours to prune."""
    name = paths.name(path)
    return name.startswith(".") and name.endswith(TEMP_SUFFIX)


def check_writable(root: StrPath, flag: str = "-o DIR") -> None:
    if not os.fspath(root):  # "" before pathlib's spelling makes it "."
        raise OutputError("an empty path is not an output folder", hint=f"name a folder with {flag}")
    root = paths.pure(root)
    try:
        probe = root
        while not paths.exists(probe) and probe != paths.parent(probe):
            probe = paths.parent(probe)
        usable = paths.is_dir(probe) and os.access(probe, os.W_OK | os.X_OK)
    except OSError as error:  # a name over the file-system limit, a loop of links ...
        raise OutputError(
            f"cannot write to {root}: {error.strerror or error}", hint=f"pick another place with {flag}"
        ) from None
    if not usable:
        raise OutputError(
            f"cannot write to {root}: {probe} is not a writable directory",
            hint=f"pick another place with {flag}",
        )


# What tempfile.mkstemp opens with; importing tempfile (shutil, random and their imports)
# cost every `mlcc gen` start-up more than the few lines it saves.
_EXCLUSIVE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _new_temporary(target: str) -> Tuple[int, str]:
    """A new file of mode 0600 next to ``target``, named ``.<name>.<random>.mlcc-tmp``,
    that nobody else created: opened exclusively, a fresh random name on a collision."""
    for _ in range(100):
        tmp = paths.join(paths.parent(target), f".{paths.name(target)}.{os.urandom(6).hex()}{TEMP_SUFFIX}")
        try:
            return os.open(tmp, _EXCLUSIVE, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no unused temporary name next to {target}")


def _atomic_write(target: str, content: str, *, executable: bool) -> None:
    try:
        paths.make_folders(paths.parent(target))
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


def compare_tree(root: StrPath, files: Iterable[Tuple[str, str]], *, folders: Sequence[str]) -> List[str]:
    """Differences between ``files`` and what is on disk under ``root`` (for --check)."""
    root = paths.pure(root)
    wanted: Dict[str, str] = dict(files)
    problems: List[str] = []
    for rel in sorted(wanted):
        target = paths.join(root, rel)
        if not paths.is_file(target):
            problems.append(f"missing: {target}")
        elif paths.read_text(target) != wanted[rel]:
            problems.append(f"stale: {target}")
        elif not _mode_is_right(target):
            problems.append(f"mode: {target}")
    problems += [f"not generated (remove it): {path}" for path in _foreign(root, folders, wanted)]
    return problems
