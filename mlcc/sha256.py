"""SHA-256 for the start-up path: the interpreter's own until a process hashes a lot.

``import hashlib`` loads OpenSSL's libcrypto (3-4 ms, a tenth of what ``mlcc gen`` spends
in its own code); the interpreter's built-in SHA-256 imports in 0.2 ms and gives the
same digests, at a fifth of OpenSSL's speed (3.2 against 0.6 ms per MB here). One
``mlcc gen`` hashes ~50 KB: the built-in one wins by 3 ms. Rendering the published set
hashes ~4 MB per pass: OpenSSL wins by 10 ms. So a process hashes with the built-in
SHA-256 until it has hashed :data:`BUILTIN_BYTES` (where the two costs meet), then loads
OpenSSL's for the rest. Give the data when you make the hasher (``sha256(data)``): that
is what is counted.

Interpreters built without the built-in hashes (distributions that leave hashing to a
validated OpenSSL) have no ``_sha2``/``_sha256``: they use :func:`hashlib.sha256` from
the start. Large inputs elsewhere (image layers, wheels, downloads) use hashlib directly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

if TYPE_CHECKING:
    from hashlib import _Hash

    _Factory = Callable[[bytes], _Hash]

__all__ = ["BUILTIN_BYTES", "sha256"]

# 3.5 ms of loading OpenSSL / (3.2 - 0.6) ms per MB saved after it
BUILTIN_BYTES = 1 << 20

_builtin: Optional[_Factory]
try:
    from _sha2 import sha256 as _builtin  # type: ignore[import-not-found,no-redef,unused-ignore]  # 3.12+
except ImportError:
    try:
        from _sha256 import sha256 as _builtin  # type: ignore[import-not-found,no-redef,unused-ignore]
    except ImportError:
        _builtin = None

_openssl: Optional[_Factory] = None
_hashed = 0  # bytes given to the built-in hasher so far in this process


def sha256(data: bytes = b"") -> _Hash:
    """A SHA-256 hasher fed ``data``."""
    global _hashed
    if _openssl is None:
        _hashed += len(data)
        if _builtin is not None and _hashed <= BUILTIN_BYTES:
            return _builtin(data)
        _load_openssl()
    assert _openssl is not None
    return _openssl(data)


def _load_openssl() -> None:
    global _openssl
    # the one late import of this module, and the reason it exists (see the docstring)
    import hashlib

    _openssl = hashlib.sha256
