"""Checks for what images, archives and registries send: shapes before use, never a traceback.

Everything here comes from outside mlcc: an OCI layout someone saved, a registry's JSON,
installed.json inside an image. Each value is checked for the shape the reader needs; a
mismatch is a clear error naming the document, not a KeyError. (stack.json is checked
against its schema by :mod:`mlcc.stackfile.document`.)
"""

from __future__ import annotations

import json
import re
import zlib
from typing import Any, Callable, Dict, Iterable, List, Optional

from mlcc.errors import MlccError
from mlcc.validate import SQLITE_INT_MAX

DIGEST = re.compile(r"^sha256:[0-9a-f]{64}\Z|^sha512:[0-9a-f]{128}\Z")
ErrorFactory = Callable[[str], MlccError]


def obj(value: Any, what: str, error: ErrorFactory) -> Dict[str, Any]:
    if not isinstance(value, dict):
        raise error(f"{what} is not a JSON object")
    return value


def items(value: Any, what: str, error: ErrorFactory) -> List[Dict[str, Any]]:
    """A list of objects, or an empty list for a missing one."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise error(f"{what} is not a list of JSON objects")
    return value


def digest(value: Any, what: str, error: ErrorFactory) -> str:
    """A content digest; anything else (``../``, other algorithms, junk) is refused."""
    if not isinstance(value, str) or not DIGEST.match(value):
        raise error(f"{what} has no valid digest (sha256:<64 hex>), got {str(value)[:80]!r}")
    return value


def size(value: Any) -> Optional[int]:
    """A byte count a peer sent: a JSON integer from 0 to SQLite's largest, else None (unknown).

    A missing, negative or absurd size is unknown rather than 0: summed into a total it
    would make the total a lie, and beyond 2^63 it cannot be stored in the history.
    """
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= SQLITE_INT_MAX:
        return value
    return None


def total(sizes: Iterable[Optional[int]]) -> Optional[int]:
    """The sum of byte counts, or None when one is unknown or the sum leaves SQLite's range."""
    known = list(sizes)
    if any(value is None for value in known):
        return None
    summed = sum(value for value in known if value is not None)
    return summed if summed <= SQLITE_INT_MAX else None


def loads(data: bytes, what: str, error: ErrorFactory) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        raise error(f"{what} is not JSON") from None


def json_object(data: bytes, what: str, error: ErrorFactory) -> Dict[str, Any]:
    """``data`` parsed as one JSON object, else ``error`` naming ``what``: the one reader of
    a JSON document a peer sent (a registry's manifest, a cluster API's answer).

    Args:
        data: The bytes as received (already bounded by the caller).
        what: The document, for the message.
        error: The error class of the caller's stage (RegistryError, ClusterError ...).

    Returns:
        The object.

    Raises:
        MlccError: ``error``: the bytes are not JSON, or not an object.
    """
    return obj(loads(data, what, error), what, error)


def as_object(value: Any) -> Dict[str, Any]:
    """``value`` when it is an object, else an empty one (for optional nested records)."""
    return value if isinstance(value, dict) else {}


# A layer may compress well (text, sparse files), but a gzip bomb (a small layer that
# inflates to gigabytes of zeros) must not take the machine's time or disk: beyond a floor,
# output may be at most MAX_RATIO times the compressed bytes read so far, and never more
# than MAX_LAYER_OUTPUT in all.
MAX_RATIO = 200
RATIO_FLOOR = 64 * 1024 * 1024
MAX_LAYER_OUTPUT = 64 * 1024 * 1024 * 1024
_GZIP_MAGIC = b"\x1f\x8b"


class Inflated:
    """A layer's tar stream: gzip layers inflated here under the limits above (plain tar
    layers pass through), for ``tarfile.open(fileobj=..., mode="r|")``."""

    def __init__(self, raw: Any, what: str, error: ErrorFactory) -> None:
        self._raw = raw
        self.what = what
        self._error = error
        self._compressed = 0
        self._out = 0
        self._pending = b""
        self._inflater: Any = None
        self._started = False
        self._eof = False

    def _take(self, n: int) -> bytes:
        chunk: bytes = self._raw.read(n)
        self._compressed += len(chunk)
        return chunk

    def _next_input(self) -> bytes:
        if self._pending:
            chunk, self._pending = self._pending, b""
            return chunk
        return self._take(64 * 1024)

    def read(self, n: int = -1) -> bytes:
        want = 64 * 1024 if n is None or n < 0 else n
        if not self._started:
            self._started = True
            head = self._take(2)
            if head[:2] == _GZIP_MAGIC:
                self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            self._pending = head
        if self._inflater is None:
            return self._split(want) if self._pending else self._take(want)
        while not self._eof:
            data = self._inflater.unconsumed_tail or self._next_input()
            if not data:
                self._eof = True
                break
            try:
                out: bytes = self._inflater.decompress(data, want)
            except zlib.error as failure:
                raise self._error(f"{self.what}: not valid gzip ({failure})") from None
            if self._inflater.eof:  # another gzip member may follow; other trailing bytes end it
                rest = self._inflater.unused_data or self._take(64 * 1024)
                if rest[:2] == _GZIP_MAGIC:
                    self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
                    self._pending = rest
                else:
                    self._eof = True
            if out:
                self._count(len(out))
                return out
        return b""

    def _split(self, want: int) -> bytes:
        chunk, self._pending = self._pending[:want], self._pending[want:]
        return chunk

    def _count(self, produced: int) -> None:
        self._out += produced
        if self._out > MAX_LAYER_OUTPUT or (
            self._out > RATIO_FLOOR and self._out > MAX_RATIO * max(self._compressed, 1)
        ):
            raise self._error(
                f"{self.what}: inflates to more than {MAX_RATIO} times its compressed size "
                f"({self._out} bytes from {self._compressed}); refused as a decompression bomb"
            )
