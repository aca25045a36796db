"""The content digest of a variant's build inputs: its files, build args and platform.

The digest is also a label inside the Dockerfile, so it is computed with a placeholder
in that label's place and then substituted; ``recompute`` undoes the substitution, which
is how tests and ``mlcc verify`` check a rendered variant.
"""

from __future__ import annotations

import hashlib
from typing import Iterable, Tuple

from mlcc.render.manifest import DIGEST_PLACEHOLDER

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


def stamp(content: str, value: str) -> str:
    return content.replace(DIGEST_PLACEHOLDER, value)


def recompute(
    files: Iterable[Tuple[str, str]], build_args: Iterable[Tuple[str, str]], platform: str, stamped: str
) -> str:
    """The digest of files that already carry ``stamped`` in place of the placeholder."""
    return digest(((n, c.replace(stamped, DIGEST_PLACEHOLDER)) for n, c in files), build_args, platform)
