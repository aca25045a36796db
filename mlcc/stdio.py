"""Standard output that cannot be written: a one-line error with its exit code, never a
traceback. Output fails at three places: standard output closed before mlcc starts
(Python then sets ``sys.stdout`` to None and click would drop every line silently), a
write that fails (``/dev/full``: ENOSPC; a closed pipe: EPIPE) and the last flush at
exit, after the CLI has returned. Used by :mod:`mlcc._entry` and :func:`mlcc.cli.run`.
"""

from __future__ import annotations

import errno
import io
import os
import sys

from mlcc.errors import OutputError

# Write errors that mean "the output went nowhere", not a bug in mlcc
OUTPUT_ERRNOS = frozenset(
    {errno.EPIPE, errno.ENOSPC, errno.EIO, errno.EBADF, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}
)
EXIT_OUTPUT = OutputError.exit_code  # the output asked for cannot be written


class ClosedOutput(io.RawIOBase):
    """Standard output that was closed before mlcc started: the first write is an error
    (reported once); later ones, such as the interpreter's flush at exit, are dropped."""

    reported = False

    def writable(self) -> bool:
        return True

    def write(self, data: object) -> int:
        if not self.reported:
            self.reported = True
            raise OSError(errno.EBADF, "standard output is closed")
        return len(data) if isinstance(data, (bytes, bytearray, memoryview)) else 0


def _say(text: str) -> None:
    """One line on stderr, if stderr can take it (it may be full or closed too)."""
    try:
        if sys.stderr is not None:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()
    except (OSError, ValueError):
        pass


def output_failed(error: OSError) -> int:
    """Report an output error; the exit code."""
    _say(f"mlcc: error: cannot write the output: {error.strerror or error}")
    return EXIT_OUTPUT


def finish_output(code: int) -> int:
    """Flush standard output before exit, where Python would otherwise print a traceback."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        pass  # `mlcc list | head`: the reader has what it wanted
    except OSError as error:
        code = code or output_failed(error)
    else:
        return code
    silence_stdout()
    return code


def silence_stdout() -> None:
    """Point fd 1 at /dev/null so the interpreter's own last flush has nowhere to fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass
