"""Which mirrors serve verified bytes: per mirror build argument, from the plan's fetches.

A mirror changes where bytes come from. Where every fetch through it is checked against a
pin the recipes hold, it cannot change which bytes the image gets:

- a download, against its sourced sha256 (a checksum file fetched from the same mirror is
  no pin: the mirror serves both);
- a git checkout, against its full commit SHA (the build proves HEAD to be it; a short hash
  can match other commits);
- a pip install, against its hash lock (``--require-hashes``), provided pip builds no sdist:
  a build may take its build requirements (``build-system``, ``setup_requires``) from the
  index, and pip checks no hash there; an install that is not hash-locked (a DF011 waiver)
  is verified only in the URLs that pin their bytes (``#sha256=``, ``git+`` at a full SHA);
- a conda install never: conda checks each package against the channel's own index, which
  the mirror serves;
- NVIDIA's package repositories: pinned by version and signature-checked, against the
  signing key the plan records as a download (``nvidia-key:<repository>``), so only as
  verified as that key.

The records are the plan's own (``Plan.fetches``, stack.json's ``fetches``), with URLs as
the steps write them (``${GIT_MIRROR}/...``); a build argument a step uses with no fetch
recorded through it is unverified, so a fetch the planner does not record is never taken
for a checked one. :mod:`mlcc.render.digest` hashes a verified mirror as its placeholder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, NamedTuple, Optional, Sequence, Tuple

from mlcc.kb.pip_locks import PipInstall
from mlcc.render.mirror import MIRROR_NAME, PIP_SETTINGS, Route, through_mirrors
from mlcc.stackfile.document import CondaRecord, DownloadRecord, GitRecord, PipRecord

if TYPE_CHECKING:
    from mlcc.render.fetches import Record


class MirrorUse(NamedTuple):
    """One mirror build argument of a plan and whether what the build fetches through it
    is verified."""

    var: str  # NVIDIA_MIRROR, GIT_MIRROR, PIP_INDEX_URL ...
    value: Optional[str]  # as generated: the mirror asked for, else the public host (None: unset)
    placeholder: Optional[str]  # what the digest hashes when verified: the public host (pip: unset)
    unverified: Tuple[str, ...] = ()  # why not, one line per unchecked fetch; (): verified

    @property
    def verified(self) -> bool:
        return not self.unverified


def through(url: str) -> Optional[str]:
    """The build argument a URL written through a mirror goes through (``${GIT_MIRROR}/...``,
    ``git+${GIT_MIRROR}/...``); None for a URL on no mirrored host."""
    bare = url[len("git+") :] if url.startswith("git+") else url
    if not bare.startswith("${") or "}" not in bare:
        return None
    return bare[2 : bare.index("}")]


class _Found:
    """Per build argument, why a fetch through it is not verified ([]: fetched, verified)."""

    def __init__(self) -> None:
        self.reasons: Dict[str, List[str]] = {}

    def add(self, var: Optional[str], unverified: Optional[str] = None) -> None:
        if var is None:
            return
        reasons = self.reasons.setdefault(var, [])
        if unverified is not None and unverified not in reasons:
            reasons.append(unverified)  # one line: the records' reasons are, as notes print them


def _names(requirements: Sequence[str]) -> str:
    shown = [r.rsplit("/", 1)[-1] if "://" in r or "}" in r else r for r in requirements[:3]]
    return ", ".join(shown) + (", ..." if len(requirements) > 3 else "")


def _pip(
    record: PipRecord, install: Optional[PipInstall], nvidia: str, hosts: Tuple[Route, ...]
) -> Tuple[Tuple[Optional[str], Optional[str]], ...]:
    """(build argument, why unverified) of each fetch of one pip install. pip reads the
    index settings from the environment (PIP_INDEX_URL ...) and takes the index options
    of its command line (``install``: the plan's, by the record's id)."""
    indexes: List[Optional[str]] = [p.var for p in PIP_SETTINGS]
    if install is not None:
        indexes += [
            through(through_mirrors(url, nvidia, hosts))
            for url in (install.index_url, install.extra_index, install.find_links)
            if url
        ]
    names = _names(record.requirements)
    if record.unlocked is None:
        built = [p.file for p in record.packages if p.file and not p.file.endswith(".whl")]
        why = None
        if built:
            why = (
                f"pip install {names}: hash-locked, but pip builds {', '.join(built[:3])}"
                f"{', ...' if len(built) > 3 else ''} from source, and a build may take its build"
                " requirements from the index unhashed"
            )
        return tuple((var, why) for var in indexes)
    found: List[Tuple[Optional[str], Optional[str]]] = [
        (var, f"pip install {names}: not hash-locked ({record.unlocked})") for var in indexes
    ]
    for requirement in record.requirements:
        if requirement.startswith("git+"):
            continue  # a checkout: its git record says how it is pinned
        pinned = "#sha256=" in requirement
        found.append(
            (through(requirement), None if pinned else f"pip install {requirement}: the URL pins no hash")
        )
    return tuple(found)


def mirror_uses(
    records: Sequence[Record],
    pip_installs: Sequence[Tuple[str, Optional[str], PipInstall]],
    others: Sequence[Tuple[str, str]],
    commands: str,
    declared: Sequence[Tuple[str, Optional[str], Optional[str]]],
    nvidia: str,
    hosts: Sequence[Route],
) -> Tuple[MirrorUse, ...]:
    """Each declared mirror build argument ``(name, value, placeholder)`` with what the
    ``records`` fetch through it; ``others``: (build argument, why unverified) of fetches
    no record describes (a recipe's script); ``commands``: the steps' text, for build
    arguments used with no fetch recorded."""
    found = _Found()
    installs = {ident: install for ident, _, install in pip_installs}
    for record in records:
        if isinstance(record, PipRecord):
            for var, why in _pip(record, installs.get(record.lock), nvidia, tuple(hosts)):
                found.add(var, why)
        elif isinstance(record, DownloadRecord):
            why = None
            if record.sha256 is None:
                checked = (
                    "checked only against a checksum file from the same mirror"
                    if record.checksum_url
                    else "no sha256"
                )
                why = f"{record.name} {record.url.rsplit('/', 1)[-1]}: {checked}" + (
                    f" ({record.sha256_unavailable})" if record.sha256_unavailable else ""
                )
                if record.name.startswith("nvidia-key:"):
                    why += "; the repository's packages are signature-checked against this key"
            found.add(through(record.url), why)
        elif isinstance(record, GitRecord):
            why = None
            if record.commit_unresolved is not None or len(record.commit) != 40:
                why = f"git {record.name} @ {record.commit}: a short hash, which other commits can match"
            found.add(through(record.repository), why)
        elif isinstance(record, CondaRecord):
            for channel in record.channels:
                found.add(
                    through(channel),
                    f"conda create from {channel}: conda checks packages only against the"
                    " channel's own index, which the mirror serves",
                )
    for var, why in others:
        found.add(var, why)
    uses = []
    for name, value, placeholder in declared:
        reasons = found.reasons.get(name)
        if reasons is None and "${" + name + "}" in commands:
            reasons = [f"a step uses ${{{name}}} with no fetch the plan recorded through it"]
        uses.append(MirrorUse(name, value, placeholder, tuple(reasons or ())))
    return tuple(uses)


def declared(
    mirror: str, nvidia: str, build_args: Sequence[Tuple[str, Optional[str]]], hosts: Sequence[Route]
) -> List[Tuple[str, Optional[str], Optional[str]]]:
    """(build argument, value, placeholder) of each mirror a plan declares: NVIDIA_MIRROR
    (always), then its build args; the placeholder is the public host (pip's: unset)."""
    public = {route.var: route.public for route in hosts}
    return [
        (MIRROR_NAME, mirror, nvidia.rstrip("/")),
        *[(name, value, public.get(name)) for name, value in build_args],
    ]
