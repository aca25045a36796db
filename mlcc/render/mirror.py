"""Mirrors: where a build fetches what the public hosts serve, shared by the planner and stack.json.

NVIDIA's downloads go through ``$NVIDIA_MIRROR``; the other public hosts the recipes fetch
from each have a build argument of their own (:data:`HOST_MIRRORS`), whose default is the
public host, so a generated file builds as published unless a mirror is asked for. pip's
index is pip's own setting (``PIP_INDEX_URL``, ``PIP_EXTRA_INDEX_URL``): the build
arguments are declared, and pip reads them from the environment.

A mirror only changes where bytes come from, never which: downloads keep their sha256,
wheels their ``#sha256=``, git checkouts their full-SHA check.
"""

from __future__ import annotations

from typing import NamedTuple, Tuple

MIRROR_VAR = "${NVIDIA_MIRROR}"


class HostMirror(NamedTuple):
    var: str  # the build argument
    flag: str  # the `mlcc gen` / `mlcc build` option
    public: str  # the URL prefix it replaces (no trailing slash)
    what: str  # what comes from there, for --help and README


GIT = HostMirror(
    "GIT_MIRROR",
    "--git-mirror",
    "https://github.com",
    "git sources, pip git+ requirements and release files (<URL>/<owner>/<repo>)",
)
CONDA = HostMirror(
    "CONDA_MIRROR",
    "--conda-mirror",
    "https://conda.anaconda.org",
    "conda channels by name (<URL>/conda-forge)",
)
WMLCE = HostMirror(
    "WMLCE_MIRROR",
    "--wmlce-mirror",
    "https://public.dhe.ibm.com/ibmdl/export/pub/software/server/ibm-ai/conda",
    "IBM's WML CE conda channel (ppc64le)",
)
PYTORCH = HostMirror(
    "PYTORCH_MIRROR", "--pytorch-mirror", "https://download.pytorch.org", "PyTorch's wheel files"
)
HOST_MIRRORS: Tuple[HostMirror, ...] = (GIT, CONDA, WMLCE, PYTORCH)


class PipSetting(NamedTuple):
    var: str  # pip's own environment variable, also the build argument
    flag: str
    what: str


PIP_SETTINGS: Tuple[PipSetting, ...] = (
    PipSetting("PIP_INDEX_URL", "--pip-index-url", "the package index pip installs from instead of PyPI"),
    PipSetting("PIP_EXTRA_INDEX_URL", "--pip-extra-index-url", "one more package index pip looks in"),
)


def mirrored(url: str, host: str) -> str:
    """Route NVIDIA downloads through ``$NVIDIA_MIRROR`` (https), others stay as they are."""
    for scheme in ("https://", "http://"):
        prefix = scheme + host.split("://", 1)[1]
        if url.startswith(prefix):
            return MIRROR_VAR + url[len(prefix) :]
    return url


def host_mirrored(url: str) -> str:
    """A URL on one of :data:`HOST_MIRRORS` written through its variable (``git+`` kept in front)."""
    vcs = "git+" if url.startswith("git+") else ""
    bare = url[len(vcs) :]
    for mirror in HOST_MIRRORS:
        if bare == mirror.public or bare.startswith(mirror.public + "/"):
            return vcs + "${" + mirror.var + "}" + bare[len(mirror.public) :]
    return url


def through_mirrors(url: str, nvidia_host: str) -> str:
    return host_mirrored(mirrored(url, nvidia_host))
