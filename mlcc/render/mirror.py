"""Mirrors: where a build fetches what the public hosts serve, shared by the planner and stack.json.

NVIDIA's downloads go through ``$NVIDIA_MIRROR``; the other public hosts the recipes fetch
from (recipes/hosts.yaml, carried by the Stack) each have a build argument of their own
(:data:`mlcc.kb.model.HOST_MIRRORS`), whose default is the public host, so a generated
file builds as published unless a mirror is asked for. pip's index is pip's own setting
(``PIP_INDEX_URL``, ``PIP_EXTRA_INDEX_URL``): the build arguments are declared, and pip
reads them from the environment.

A mirror only changes where bytes come from, never which: downloads keep their sha256,
wheels their ``#sha256=``, git checkouts their full-SHA check.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence, Tuple

from mlcc.kb.model import HOST_MIRRORS, PublicHost

MIRROR_NAME = "NVIDIA_MIRROR"
MIRROR_VAR = "${" + MIRROR_NAME + "}"
# What a mirror given at build time (--build-arg NVIDIA_MIRROR=...) may hold when it is
# written into a repository file: no newline (a second line of the file: gpgcheck=0), no
# quote, space or other shell or config character, no user:password@.
MIRROR_CHARACTERS = "A-Za-z0-9._~:/%+-"


class Route(NamedTuple):
    """A public host's URL prefix and the build argument written in its place."""

    var: str  # GIT_MIRROR
    public: str  # the host's URL prefix (no trailing slash)


class PipSetting(NamedTuple):
    var: str  # pip's own environment variable, also the build argument
    flag: str
    what: str


PIP_SETTINGS: Tuple[PipSetting, ...] = (
    PipSetting("PIP_INDEX_URL", "--pip-index-url", "the package index pip installs from instead of PyPI"),
    PipSetting("PIP_EXTRA_INDEX_URL", "--pip-extra-index-url", "one more package index pip looks in"),
)


def routes(hosts: Sequence[PublicHost]) -> Tuple[Route, ...]:
    """Each mirrored host's route, in :data:`HOST_MIRRORS` order (the order the build
    arguments are declared in). ``hosts`` are a Stack's: the knowledge base holds one for
    every mirror option, so none is missing."""
    urls = {host.name: host.url for host in hosts}
    return tuple(Route(m.var, urls[m.host]) for m in HOST_MIRRORS)


def mirrored(url: str, host: str) -> str:
    """Route NVIDIA downloads through ``$NVIDIA_MIRROR`` (https), others stay as they are."""
    for scheme in ("https://", "http://"):
        prefix = scheme + host.split("://", 1)[1]
        if url.startswith(prefix):
            return MIRROR_VAR + url[len(prefix) :]
    return url


def host_mirrored(url: str, hosts: Sequence[Route]) -> str:
    """A URL on one of ``hosts`` written through its variable (``git+`` kept in front)."""
    vcs = "git+" if url.startswith("git+") else ""
    bare = url[len(vcs) :]
    for route in hosts:
        if bare == route.public or bare.startswith(route.public + "/"):
            return vcs + "${" + route.var + "}" + bare[len(route.public) :]
    return url


def through_mirrors(url: str, nvidia_host: str, hosts: Sequence[Route]) -> str:
    return host_mirrored(mirrored(url, nvidia_host), hosts)


def mirror_check(var: str = MIRROR_NAME) -> str:
    """A shell command that stops the build unless ``$var`` is a plain http(s) URL.

    mlcc checks the mirrors it is given (``mlcc gen --mirror``); a value given to the build
    itself (``--build-arg``, the script's environment) reaches the step unchecked, so the
    step that writes it into a repository file checks it first.
    """
    value = "${" + var + "}"
    refuse = f'echo "{var} is not a plain http(s) URL (letters, digits and . _ ~ : / % + -)" >&2; exit 1'
    # the first pattern catches any other character, newlines included; the second the scheme
    # ([/] rather than a literal //: a generated file names no URL outside the mirror variables)
    bad = f"*[!{MIRROR_CHARACTERS}]*"
    return f'case "{value}" in {bad}) {refuse} ;; http:[/][/]?*|https:[/][/]?*) ;; *) {refuse} ;; esac'
