"""The content digest of a variant's build inputs: its files, build args and platform.

The digest is also a label inside the Dockerfile, so it is computed with a placeholder
in that label's place and then substituted; ``recompute`` undoes the substitution, which
is how tests and ``mlcc verify`` check a rendered variant.

The header comment records the request (``mlcc gen maskrcnn --cuda 10.1``) that made the
files. It is hashed as a placeholder too: the digest says what is built, and
``--cuda 10.1``, ``--cuda 10.1.243`` and ``--cuda '>=10.1,<10.2'`` build the same image.
"""

from __future__ import annotations

import hashlib
from typing import Iterable, Tuple

from mlcc.render.manifest import DIGEST_PLACEHOLDER

# Stands in for the request's command line in the header comment while hashing.
REQUEST_PLACEHOLDER = "mlcc gen (the request is recorded here, outside the content digest)"

DIGEST_VERSION = b"mlcc build inputs v1\n"


def digest(files: Iterable[Tuple[str, str]], build_args: Iterable[Tuple[str, str]], platform: str) -> str:
    hasher = hashlib.sha256(DIGEST_VERSION)
    for name, content in sorted(files):
        data = content.encode("utf-8")
        hasher.update(f"file {name} {len(data)}\n".encode())
        hasher.update(data)
    for name, value in sorted(build_args):
        hasher.update(f"arg {name}={value}\n".encode())
    hasher.update(f"platform {platform}\n".encode())
    return "sha256:" + hasher.hexdigest()


def stamp(content: str, value: str, command: str = REQUEST_PLACEHOLDER) -> str:
    """``content`` with the digest and the request's command line filled in."""
    return content.replace(DIGEST_PLACEHOLDER, value).replace(
        _header(REQUEST_PLACEHOLDER), _header(command), 1
    )


def _header(command: str) -> str:
    return f"#   {command}\n"


def recompute(
    files: Iterable[Tuple[str, str]],
    build_args: Iterable[Tuple[str, str]],
    platform: str,
    stamped: str,
    command: str,
) -> str:
    """The digest of files that already carry ``stamped`` and ``command`` in place of
    the placeholders."""
    return digest(
        (
            (
                n,
                c.replace(stamped, DIGEST_PLACEHOLDER).replace(
                    _header(command), _header(REQUEST_PLACEHOLDER), 1
                ),
            )
            for n, c in files
        ),
        build_args,
        platform,
    )
