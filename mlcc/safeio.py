"""Reading files a user names: regular files only, bounded, UTF-8, never a hang or a traceback.

A FIFO or a device in place of a recipe or a lint input would block ``read()`` forever,
and a huge file would be read whole into memory; both are refused before opening.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

MAX_TEXT_BYTES = 16 * 1024 * 1024


class UnreadableFile(Exception):
    """The file cannot be used as text input; ``str()`` says why, for the caller's error."""


def read_text(path: Path, *, limit: int = MAX_TEXT_BYTES, follow_links: bool = True) -> str:
    """The UTF-8 text of a regular file of at most ``limit`` bytes.

    ``follow_links=False`` refuses a symbolic link at ``path`` itself: files that are copied
    on into generated folders and images (a recipe's helper scripts) must not pull in
    whatever the link points at.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        # O_NONBLOCK: opening a FIFO with no writer must not block; regular files ignore it.
        fd = os.open(path, flags)
    except OSError as error:
        if not follow_links and error.errno == errno.ELOOP:
            raise UnreadableFile("a symbolic link (mlcc reads only regular files here)") from None
        raise UnreadableFile(f"cannot read: {error.strerror or error}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise UnreadableFile(f"{kind} (mlcc reads only regular files)")
        if info.st_size > limit:
            raise UnreadableFile(f"too large ({info.st_size} bytes; at most {limit})")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    except OSError as error:
        raise UnreadableFile(f"cannot read: {error.strerror or error}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise UnreadableFile(f"too large (more than {limit} bytes)")
    if b"\0" in data:
        raise UnreadableFile("binary data, not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UnreadableFile(f"not UTF-8 text ({error.reason} at byte {error.start})") from None
