"""The pin check without a network: ``mlcc kb check --record`` keeps, in
``recipes/index-files.json``, the names of the files the index offers for every pinned
``name==version`` (a wheel's file name carries its tags); ``mlcc lint recipes`` then runs the
same judgement as ``mlcc kb check`` against that record, so a pin with no distribution for a
stack's arch or Python is reported with its recipe line before any build and offline.

The record is small on purpose: file names, Requires-Python and yanked marks of the pinned
versions only, per page the check read; no URLs or hashes (the hash locks are another
file's job). Pins whose page is not in the record are not judged offline.

Beside it, ``recipes/wheel-files.json`` keeps what the check read inside each framework wheel
(:func:`mlcc.kbtools.wheels.wheel_facts`: shared-library names, DT_NEEDED sonames, the
nvidia-* dependencies, torch's CUDA line), so the wheel claims are judged offline too, and an
online check reuses them instead of downloading a library again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)

from mlcc.errors import IndexUnreachable
from mlcc.kb import load
from mlcc.kb.index import IndexClient, IndexFile, Page
from mlcc.kb.model import KnowledgeBase
from mlcc.kbtools.bundles import ERROR
from mlcc.kbtools.check import FactFinding, Pin, framework_pins, pins_of, published_stacks, run
from mlcc.lint import Finding

RECORD_FILE = "index-files.json"
RECORD_FORMAT = 1
WHEEL_RECORD_FILE = "wheel-files.json"


def record_path(recipes: str) -> str:
    """Where the index record lives in a recipes folder.

    Args:
        recipes: The recipes folder.

    Returns:
        ``<recipes>/index-files.json``.
    """
    return os.path.join(recipes, RECORD_FILE)


def _name_version(filename: str) -> Optional[Tuple[str, str]]:
    try:
        if filename.endswith(".whl"):
            name, version, _, _ = parse_wheel_filename(filename)
        else:
            name, version = parse_sdist_filename(filename)
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None
    return str(name), str(version)


def _for_linux(filename: str) -> bool:
    """Stacks are Linux images: macOS and Windows wheels can never be their answer."""
    if not filename.endswith(".whl"):
        return True
    return any(
        t.platform == "any" or t.platform.startswith(("linux", "manylinux"))
        for t in parse_wheel_filename(filename)[3]
    )


def pinned_versions(pins: Iterable[Pin]) -> Set[Tuple[str, str]]:
    """The ``name==version`` pip pins among ``pins``, by canonical name.

    Args:
        pins: Pins of any kind.

    Returns:
        ``(canonical name, version)`` pairs; markers, URLs and conda pins are left out.
    """
    found: Set[Tuple[str, str]] = set()
    for pin in pins:
        name, sep, version = pin.requirement.partition("==")
        if sep and pin.kind == "pip" and ";" not in version and "@" not in name:
            project = canonicalize_name(name.split("[", 1)[0].strip())
            found.add((project, version.strip()))
            # a local version (torch==1.2.0+cu92) is judged by its release's files too
            found.add((project, version.strip().split("+", 1)[0]))
    return found


def record(client: IndexClient, pins: Iterable[Pin]) -> Dict[str, Any]:
    """What the check read, narrowed to the pinned versions, as the JSON the record holds.

    Args:
        client: The index client after ``mlcc kb check`` used it.
        pins: The pins checked.

    Returns:
        The record: per page read, whether it was found and the Linux and sdist files of the
        pinned versions (name, Requires-Python, yanked).
    """
    wanted = pinned_versions(pins)
    pages: Dict[str, Any] = {}
    for page in client.pages_read():
        files = []
        for file in page.files:
            key = _name_version(file.filename)
            if (
                key is not None
                and (canonicalize_name(key[0]), key[1]) in wanted
                and _for_linux(file.filename)
            ):
                files.append([file.filename, file.requires_python, file.yanked])
        pages[page.url] = {"found": page.found, "files": sorted(files, key=lambda f: str(f[0]))}
    return {
        "about": "file names the package index offered for each pinned version; written by "
        "`mlcc kb check --record`, read offline by `mlcc lint recipes`; never edit",
        "format": RECORD_FORMAT,
        "index": client.index_url,
        "pages": dict(sorted(pages.items())),
    }


def wheel_record(wheels: Iterable[Tuple[str, Any]]) -> Dict[str, Any]:
    """What the check read inside the framework wheels, as the JSON ``wheel-files.json`` holds.

    Args:
        wheels: ``(wheel file name, facts)`` pairs (:attr:`mlcc.kbtools.check.Report.wheels`).

    Returns:
        The record.
    """
    return {
        "about": "what mlcc kb check read inside each framework wheel (shared libraries, their "
        "DT_NEEDED sonames, nvidia-* dependencies); written by `mlcc kb check --record`; never edit",
        "format": RECORD_FORMAT,
        "wheels": dict(sorted(wheels)),
    }


def load_wheel_record(recipes: str) -> Optional[Dict[str, Any]]:
    """The wheel facts of a recipes folder's ``wheel-files.json``, by wheel file name.

    Args:
        recipes: The recipes folder.

    Returns:
        The facts, or None when the folder has no such record.

    Raises:
        IndexUnreachable: The record cannot be read or is not of the format ``--record`` writes.
    """
    path = os.path.join(recipes, WHEEL_RECORD_FILE)
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise IndexUnreachable(path, f"unreadable: {exc}") from None
    if (
        not isinstance(data, dict)
        or data.get("format") != RECORD_FORMAT
        or not isinstance(data.get("wheels"), dict)
    ):
        raise IndexUnreachable(path, "not a record mlcc kb check --record wrote")
    return dict(data["wheels"])


def write_record(recipes: str, data: Dict[str, Any], name: str = RECORD_FILE) -> str:
    """Write the record into the recipes folder (through a temporary file and a rename).

    Args:
        recipes: The recipes folder.
        data: What :func:`record` (or :func:`wheel_record`) made.
        name: The file: ``index-files.json`` or ``wheel-files.json``.

    Returns:
        The record's path.

    Raises:
        OSError: The folder cannot be written.
    """
    path = os.path.join(recipes, name)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1, sort_keys=True)
        handle.write("\n")
    os.replace(tmp, path)
    return path


class RecordedIndex(IndexClient):
    """An index client that answers from the record only (no network, no cache)."""

    complete_pages = False  # the record keeps the pinned versions' files only

    def __init__(self, data: Dict[str, Any]) -> None:
        """Answer from the record's pages, under the recorded index's URLs.

        Args:
            data: A record :func:`load_record` read.
        """
        super().__init__(str(data.get("index") or "https://pypi.org/simple/"), cache="")
        # project pages are looked up under the recorded index's URLs; index_url names the
        # record instead, so that a page it lacks is "not judged", never "index unreachable"
        self._base = self.index_url
        self.index_url = f"{RECORD_FILE} of {self._base}"
        self._recorded: Dict[str, Page] = {}
        for url, entry in (data.get("pages") or {}).items():
            files = tuple(
                IndexFile(str(f[0]), url.rsplit("/", 1)[0] + "/" + str(f[0]), f[1] or None, bool(f[2]))
                for f in entry.get("files", [])
            )
            self._recorded[str(url)] = Page(str(url), bool(entry.get("found")), files)

    def project_url(self, name: str) -> str:
        """The recorded index's page of a project.

        Args:
            name: The project's name, in any spelling.

        Returns:
            ``<index>/<canonical name>/``.
        """
        return self._base + canonicalize_name(name) + "/"

    def page(self, url: str) -> Page:
        """A page as the record holds it.

        Args:
            url: The page's URL.

        Returns:
            The page, its files as recorded.

        Raises:
            IndexUnreachable: The record does not hold the page (the pin is not judged).
        """
        page = self._recorded.get(url)
        if page is None:
            raise IndexUnreachable(url, f"not in {RECORD_FILE} (refresh it with mlcc kb check --record)")
        return page


def load_record(recipes: str) -> Optional[Dict[str, Any]]:
    """Read a recipes folder's index record.

    Args:
        recipes: The recipes folder.

    Returns:
        The record, or None when the folder has none.

    Raises:
        IndexUnreachable: The record cannot be read, is not JSON, or is not of the format
            ``mlcc kb check --record`` writes.
    """
    try:
        with open(record_path(recipes), encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise IndexUnreachable(record_path(recipes), f"unreadable: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
        raise IndexUnreachable(record_path(recipes), "not a record mlcc kb check --record wrote")
    return data


def offline_pin_errors(
    kb: KnowledgeBase, data: Dict[str, Any], wheels: Optional[Dict[str, Any]] = None
) -> List[FactFinding]:
    """The errors ``mlcc kb check`` would report for the published set, from the records.

    Only what the records can settle: pins whose page they hold, framework builds whose
    release files and wheel they hold.

    Args:
        kb: The knowledge base.
        data: The index record.
        wheels: The wheel record (:func:`load_wheel_record`); None: wheels are not judged.

    Returns:
        The findings of severity error.
    """
    report = run(kb, published_stacks(kb), RecordedIndex(data), all_builds=True, recorded_wheels=wheels)
    return [f for f in report.findings if f.severity == ERROR]


def unrecorded_pages(kb: KnowledgeBase, data: Dict[str, Any]) -> List[str]:
    """Index pages the published set's pins need that the record lacks (a stale record).

    Args:
        kb: The knowledge base.
        data: The record.

    Returns:
        The pages' URLs, sorted.
    """
    client = RecordedIndex(data)
    missing: List[str] = []
    for pin in checked_pins(kb, published_stacks(kb)):
        name, sep, _ = pin.requirement.partition("==")
        if not sep or pin.kind != "pip" or pin.extra_index or "@" in name or "/" in name:
            continue
        url = client.project_url(name.split("[", 1)[0].strip())
        if url not in data.get("pages", {}) and url not in missing:
            missing.append(url)
    return sorted(missing)


def checked_pins(kb: KnowledgeBase, stacks: Iterable[Any]) -> List[Pin]:
    """The pins of ``stacks`` and of every framework build (what ``--record`` keeps).

    Args:
        kb: The knowledge base.
        stacks: Resolved stacks.

    Returns:
        The pins, the stacks' first.
    """
    return [pin for stack in stacks for pin in pins_of(stack, kb)] + list(framework_pins(kb))


def lint_pins(recipes: Path) -> List[Finding]:
    """A recipes folder's pins against the index record ``mlcc kb check --record`` keeps there.

    Offline; without a record, one warning.

    Args:
        recipes: The recipes folder.

    Returns:
        KB001 findings at the recipe lines of pins the index never offered for the stack.

    Raises:
        RecipeError: The recipes do not load.
    """
    data = load_record(str(recipes))
    if data is None:
        message = f"no {RECORD_FILE}: pins are checked online only (mlcc kb check --record writes it)"
        return [Finding(str(recipes / RECORD_FILE), 0, "KB001", message, warning=True)]
    kb = load(str(recipes))
    findings = []
    missing = unrecorded_pages(kb, data)
    if missing:
        message = (
            f"{len(missing)} pinned project(s) not in the record, not checked offline "
            f"({', '.join(missing[:3])} ...): run mlcc kb check --record"
        )
        findings.append(Finding(str(recipes / RECORD_FILE), 0, "KB001", message, warning=True))
    for fact in offline_pin_errors(kb, data, load_wheel_record(str(recipes))):
        path, _, line = fact.origin.rpartition(":")
        where = path if path else fact.origin
        findings.append(
            Finding(where, int(line) if line.isdigit() else 0, "KB001", f"{fact.subject}: {fact.message}")
        )
    return findings
