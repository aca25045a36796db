"""The content digest of a variant's build inputs: its files, build args and platform.

The digest says what is built, never how the request for it was written, nor where
verified bytes come from:

- The digest is also a label inside the Dockerfile, so it is computed with a placeholder
  in that label's place and then substituted; ``recompute`` undoes the substitution, which
  is how tests (and a reader of a variant folder) check a rendered variant.
- The header comment records the request (``mlcc gen maskrcnn --cuda 10.1``) that made the
  files. It is hashed as a placeholder too: ``--cuda 10.1``, ``--cuda 10.1.243`` and
  ``--cuda '>=10.1,<10.2'`` build the same image.
- A mirror (``--mirror``, ``--git-mirror``, ``--pip-index-url`` ...) changes where bytes
  come from. The plan records, per mirror build argument, whether every fetch through it
  is checked against a pin the recipes hold (``Plan.mirrors``, see
  :mod:`mlcc.render.verified`): a download against its sourced sha256, a git checkout
  against its full commit SHA, a pip install against its hash lock. Such a mirror cannot
  change the image's bytes, so the digest sees it at its placeholder, the public host it
  replaces (pip's index settings: unset), whatever its value: in the files, which are
  hashed as the stack renders without that mirror asked for (``Plan.hashed``), and in the
  build args (``placeholders``: ``Plan.placeholders``). The same image built through such
  a mirror, given at generation or only as a build arg, gets the published image's digest,
  and skip-if-built finds it. A mirror with one unverified fetch (a conda channel, NVIDIA's
  repositories, whose signing key comes unchecked from the same mirror, a pip install that
  is not hash-locked or builds an sdist, a download without a sourced sha256, a short
  commit hash, a recipe script that fetches by itself) is hashed by its URL.

  The placeholder is the public host, not a token of its own, so that files generated
  without mirror options (the published set) are their own hashed form: their digests did
  not change when mirrors left the digest, and ``recompute`` checks them as they are.
"""

from __future__ import annotations

from hashlib import sha256
from typing import Dict, Iterable, List, Optional, Tuple

from mlcc.render.manifest import DIGEST_PLACEHOLDER

# Stands in for the request's command line in the header comment while hashing.
REQUEST_PLACEHOLDER = "mlcc gen (the request is recorded here, outside the content digest)"

DIGEST_VERSION = b"mlcc build inputs v1\n"


def digest(
    files: Iterable[Tuple[str, str]],
    build_args: Iterable[Tuple[str, str]],
    platform: str,
    placeholders: Iterable[Tuple[str, Optional[str]]] = (),
) -> str:
    """``placeholders``: (build argument, placeholder) of each verified mirror, hashed
    instead of the value the build arg has (None: as if unset)."""
    chunks = [DIGEST_VERSION]
    for name, content in sorted(files):
        data = content.encode("utf-8")
        chunks += (f"file {name} {len(data)}\n".encode(), data)
    for name, value in sorted(hashed_args(build_args, placeholders)):
        chunks.append(f"arg {name}={value}\n".encode())
    chunks.append(f"platform {platform}\n".encode())
    return "sha256:" + sha256(b"".join(chunks)).hexdigest()


def hashed_args(
    build_args: Iterable[Tuple[str, str]], placeholders: Iterable[Tuple[str, Optional[str]]]
) -> List[Tuple[str, str]]:
    """The build args as the digest sees them: a verified mirror's at its placeholder."""
    replaced: Dict[str, Optional[str]] = dict(placeholders)
    found: List[Tuple[str, str]] = []
    for name, value in build_args:
        if name not in replaced:
            found.append((name, value))
        elif replaced[name] is not None:
            found.append((name, str(replaced[name])))
    return found


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
    placeholders: Iterable[Tuple[str, Optional[str]]] = (),
) -> str:
    """The digest of files that already carry ``stamped`` and ``command`` in place of
    the placeholders, built with ``build_args``.

    ``placeholders`` are the plan's (``Rendered.plan.placeholders``): the verified mirrors.
    The files are hashed as they are, so they must carry those mirrors at their placeholders,
    as a rendering without mirror options does (the published set); the build args may
    name any mirror for them. Files generated with a verified mirror are stamped with the
    digest of the files generated without it.
    """
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
        placeholders,
    )
