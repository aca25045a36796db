"""SHA-256 for the start-up path, without loading OpenSSL.

``import hashlib`` loads OpenSSL's libcrypto (3-4 ms, a tenth of what ``mlcc gen`` spends
in its own code). The interpreter's built-in SHA-256 gives the same digests and imports in
0.2 ms; what ``gen`` hashes (a variant's build inputs, names, lock ids) is tens of
kilobytes, where its lower throughput does not show. Large inputs (image layers, wheels,
downloads) are hashed with :mod:`hashlib`.

Interpreters built without the built-in hashes (distributions that leave hashing to a
validated OpenSSL) have no ``_sha2``/``_sha256``: they get :func:`hashlib.sha256`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["sha256"]

if TYPE_CHECKING:
    from hashlib import sha256
else:
    try:
        from _sha2 import sha256  # Python 3.12+
    except ImportError:
        try:
            from _sha256 import sha256  # Python 3.11 and earlier
        except ImportError:
            from hashlib import sha256
