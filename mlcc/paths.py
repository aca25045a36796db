"""File paths as ``str``, spelled and probed the way pathlib (Python 3.9-3.12) does it.

Importing pathlib imports urllib.parse and ipaddress: ~17 M instructions, over 5 % of a
warm ``mlcc gen``. The writer (mlcc.output) and gen (mlcc.app.generate) use these instead, and
keep pathlib's results exactly: the paths users read in gen's output and errors
(``-o ./out/`` prints ``out/...``), the order of sorted paths, and which errors of a
probe count as "no" (pathlib ignores only ENOENT, ENOTDIR, EBADF and ELOOP; a name too
long or a denied lookup raises, where ``os.path.exists`` would say False). POSIX only,
like the rest of mlcc's output handling.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING, Callable, Iterator, List, Optional, Union

if TYPE_CHECKING:  # typing's names for the checker only (a warm gen does not import typing)
    StrPath = Union[str, os.PathLike[str]]

# the errors pathlib's probes take for "not there" (pathlib._IGNORED_ERRNOS)
_IGNORED_ERRNOS = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def pure(path: StrPath) -> str:
    """``str(PurePosixPath(path))``: no "." parts, no repeated or trailing slashes, "." for none.

    Two leading slashes stay two (POSIX leaves their meaning to the system); more become one.
    """
    text = os.fspath(path)
    if text.startswith("//") and not text.startswith("///"):
        root = "//"
    else:
        root = "/" if text.startswith("/") else ""
    return root + "/".join(part for part in text.split("/") if part not in ("", ".")) or "."


def join(path: StrPath, *more: str) -> str:
    """``Path(path).joinpath(*more)`` as a string (an absolute part starts over, as there)."""
    return pure(os.path.join(os.fspath(path), *more))


def parts(path: StrPath) -> List[str]:
    """``Path(path).parts``: the root ("/" or "//") first when there is one."""
    text = pure(path)
    if text == ".":
        return []
    names = [part for part in text.split("/") if part]
    root = text[: len(text) - len(text.lstrip("/"))]
    return [root, *names] if root else names


def parent(path: StrPath) -> str:
    """``Path(path).parent``: a root and "." are their own parents."""
    return pure(os.path.dirname(pure(path)))


def name(path: StrPath) -> str:
    """``Path(path).name``: empty for a root and for "."."""
    text = pure(path)
    return "" if text == "." else os.path.basename(text)


def suffix(path: StrPath) -> str:
    """``Path(path).suffix``: a name that is only a suffix (".sh") has none."""
    last = name(path)
    dot = last.rfind(".")
    return last[dot:] if 0 < dot < len(last) - 1 else ""


def relative(path: str, root: str) -> str:
    """``Path(path).relative_to(root)`` for a ``path`` made by joining onto ``root``."""
    if root == ".":
        return path
    prefix = root if root.endswith("/") else root + "/"
    if not path.startswith(prefix):
        raise ValueError(f"{path!r} is not under {root!r}")
    return path[len(prefix) :]


def sort_key(path: str) -> List[str]:
    """Sort as pathlib sorts: part by part ("a/b" before "a-b"), not character by character."""
    return path.split("/")


def _mode(path: str, *, follow: bool) -> Optional[int]:
    """The file's mode, or None where pathlib's probes would answer False."""
    try:
        return (os.stat(path) if follow else os.lstat(path)).st_mode
    except OSError as error:
        if error.errno not in _IGNORED_ERRNOS:
            raise
        return None
    except ValueError:  # a NUL in the name, or one the file system cannot encode
        return None


def _mode_is(path: StrPath, test: Callable[[int], bool], *, follow: bool = True) -> bool:
    mode = _mode(os.fspath(path), follow=follow)
    return mode is not None and test(mode)


def exists(path: StrPath) -> bool:
    return _mode(os.fspath(path), follow=True) is not None


def is_file(path: StrPath) -> bool:
    return _mode_is(path, stat.S_ISREG)


def is_dir(path: StrPath) -> bool:
    return _mode_is(path, stat.S_ISDIR)


def is_symlink(path: StrPath) -> bool:
    return _mode_is(path, stat.S_ISLNK, follow=False)


def make_folders(path: str, *, parents: bool = True) -> None:
    """``Path(path).mkdir(parents=True, exist_ok=True)``, error for error."""
    try:
        os.mkdir(path)
    except FileNotFoundError:
        above = parent(path)
        if not parents or above == path:
            raise
        make_folders(above)
        make_folders(path, parents=False)
    except OSError:
        if not is_dir(path):
            raise


def read_text(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def resolve(path: StrPath) -> str:
    """``Path(path).resolve()``: the real absolute path; a loop of links is a RuntimeError."""
    try:
        real = pure(os.path.realpath(path))
    except OSError as error:
        _refuse_loop(error)
        raise
    try:  # realpath passes over a loop quietly; pathlib looks for one with a stat
        os.stat(real)
    except OSError as error:
        _refuse_loop(error)
    return real


def _refuse_loop(error: OSError) -> None:
    if error.errno == errno.ELOOP:
        raise RuntimeError(f"Symlink loop from {error.filename!r}")


def tree(folder: str) -> List[str]:
    """``Path(folder).rglob("*")``: every entry below ``folder``, hidden ones too, without
    going into linked folders; folders that cannot be listed are passed over."""
    if not is_dir(folder):
        return []
    found: List[str] = []
    try:
        for directory in _folders(folder):
            found += [join(directory, entry) for entry in _listing(directory)]
    except PermissionError:
        pass
    return found


def _folders(folder: str) -> Iterator[str]:
    """``folder`` and every real folder below it, each before its contents."""
    yield folder
    try:
        with os.scandir(folder) as listing:
            entries = list(listing)
        for entry in entries:
            if _entry_is_dir(entry) and not entry.is_symlink():
                yield from _folders(join(folder, entry.name))
    except PermissionError:
        return


def _entry_is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError as error:
        if error.errno not in _IGNORED_ERRNOS:
            raise
        return False


def _listing(folder: str) -> List[str]:
    try:
        with os.scandir(folder) as listing:
            return [entry.name for entry in listing]
    except PermissionError:
        return []


def glob_folders(folder: str, file: str) -> List[str]:
    """``Path(folder).glob(f"*/{file}")``: ``file`` in each folder (or link to one) in ``folder``."""
    if not is_dir(folder):
        return []
    found: List[str] = []
    try:
        with os.scandir(folder) as listing:
            entries = list(listing)
        for entry in entries:
            if _entry_is_dir(entry):
                found += _present(join(folder, entry.name, file))
    except PermissionError:
        pass
    return found


def _present(path: str) -> List[str]:
    try:
        return [path] if exists(path) else []
    except PermissionError:
        return []
