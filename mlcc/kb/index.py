"""A small client for Python package indexes: the simple API (PEP 503 HTML, PEP 691 JSON)
and pip's ``--find-links`` pages, with answers cached on disk.

Only the standard library speaks HTTP here (urllib): ``mlcc kb check`` and the hash locks
of the maintainer commands need a handful of GET requests, not a client dependency. The
module is imported by those commands only, never on the CLI's start-up path.

Cache: one JSON file per URL under ``$XDG_CACHE_HOME/mlcc/index`` (``MLCC_CACHE_DIR``
moves it with the rest of mlcc's cache), reused for ``ttl`` seconds; ``refresh`` refetches.
A 404 is an answer too (the project does not exist) and is cached like any other.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from packaging.utils import canonicalize_name

from mlcc.errors import IndexUnreachable
from mlcc.kb.loader import cache_dir

PYPI_SIMPLE = "https://pypi.org/simple/"
INDEX_ENV = "PIP_INDEX_URL"  # pip's own setting: a configured mirror is honoured as pip would
DEFAULT_TTL = 24 * 3600
CACHE_FORMAT = 1
SIMPLE_ACCEPT = (
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
)
USER_AGENT = "mlcc-kb-check (urllib)"


class IndexFile(NamedTuple):
    """One distribution file an index (or a find-links page) offers."""

    filename: str
    url: str
    requires_python: Optional[str] = None
    yanked: bool = False
    hashes: Tuple[Tuple[str, str], ...] = ()  # (algorithm, hex digest)

    def hash(self, algorithm: str = "sha256") -> Optional[str]:
        return dict(self.hashes).get(algorithm)


class Page(NamedTuple):
    """An index's answer for one project or one find-links page."""

    url: str
    found: bool  # False: the index answered 404 (no such project or page)
    files: Tuple[IndexFile, ...]


def default_index_url() -> str:
    return os.environ.get(INDEX_ENV) or PYPI_SIMPLE


def index_cache_dir() -> str:
    return os.path.join(cache_dir(), "index")


class IndexClient:
    """Reads project pages from one simple index (PyPI or a mirror) and find-links pages."""

    def __init__(
        self,
        index_url: Optional[str] = None,
        *,
        cache: Optional[str] = None,
        ttl: float = DEFAULT_TTL,
        refresh: bool = False,
        timeout: float = 60.0,
    ) -> None:
        self.index_url = (index_url or default_index_url()).rstrip("/") + "/"
        self.cache = cache if cache is not None else index_cache_dir()
        self.ttl = ttl
        self.refresh = refresh
        self.timeout = timeout
        self.requests = 0  # network requests made (the rest came from the cache)
        self._memory: Dict[str, Page] = {}

    def project_url(self, name: str) -> str:
        """The project's page on this index (name normalised as PEP 503 says)."""
        return self.index_url + canonicalize_name(name) + "/"

    def project(self, name: str) -> Page:
        """The files the index offers for project ``name``."""
        return self.page(self.project_url(name))

    def page(self, url: str) -> Page:
        """Any simple-API or find-links page, parsed into files (JSON or HTML)."""
        if url in self._memory:
            return self._memory[url]
        page = self._cached(url)
        if page is None:
            page = self._fetch(url)
            self._store(page)
        self._memory[url] = page
        return page

    def pages_read(self) -> Tuple[Page, ...]:
        """Every page this client answered, in the order first asked (``kb check --record``)."""
        return tuple(self._memory.values())

    # network -------------------------------------------------------------------

    def _fetch(self, url: str) -> Page:
        request = urllib.request.Request(url, headers={"Accept": SIMPLE_ACCEPT, "User-Agent": USER_AGENT})
        self.requests += 1
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                body = response.read()
                content_type = response.headers.get("Content-Type", "")
                final_url = response.geturl()
        except urllib.error.HTTPError as exc:
            if exc.code in (404, 410):
                return Page(url, False, ())
            raise IndexUnreachable(url, f"HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise IndexUnreachable(url, str(reason)) from None
        text = body.decode("utf-8", errors="replace")
        if "json" in content_type:
            files = _files_from_json(text, final_url)
        else:
            files = _files_from_html(text, final_url)
        return Page(url, True, files)

    # cache ---------------------------------------------------------------------

    def _cache_file(self, url: str) -> str:
        return os.path.join(self.cache, hashlib.sha256(url.encode()).hexdigest()[:32] + ".json")

    def _cached(self, url: str) -> Optional[Page]:
        if self.refresh or not self.cache:
            return None
        path = self._cache_file(url)
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            return None
        if (
            not isinstance(data, dict)
            or data.get("format") != CACHE_FORMAT
            or data.get("url") != url
            or time.time() - float(data.get("fetched", 0)) > self.ttl
        ):
            return None
        files = tuple(
            IndexFile(f["filename"], f["url"], f.get("requires_python"), bool(f.get("yanked")), _pairs(f))
            for f in data.get("files", [])
        )
        return Page(url, bool(data.get("found")), files)

    def _store(self, page: Page) -> None:
        if not self.cache:
            return
        data = {
            "format": CACHE_FORMAT,
            "url": page.url,
            "fetched": time.time(),
            "found": page.found,
            "files": [
                {
                    "filename": f.filename,
                    "url": f.url,
                    "requires_python": f.requires_python,
                    "yanked": f.yanked,
                    "hashes": dict(f.hashes),
                }
                for f in page.files
            ],
        }
        path = self._cache_file(page.url)
        try:
            os.makedirs(self.cache, mode=0o700, exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as handle:
                json.dump(data, handle, sort_keys=True)
            os.replace(tmp, path)
        except OSError:
            return  # a read-only cache only costs time


def _pairs(entry: Dict[str, Any]) -> Tuple[Tuple[str, str], ...]:
    hashes = entry.get("hashes") or {}
    return tuple(sorted((str(k), str(v)) for k, v in hashes.items())) if isinstance(hashes, dict) else ()


# ----------------------------------------------------------------------------- parsing


def _files_from_json(text: str, base_url: str) -> Tuple[IndexFile, ...]:
    """PEP 691: {"files": [{"filename", "url", "hashes", "requires-python", "yanked"}]}."""
    try:
        data = json.loads(text)
    except ValueError:
        return ()
    files: List[IndexFile] = []
    for entry in data.get("files", []) if isinstance(data, dict) else []:
        if not isinstance(entry, dict) or "filename" not in entry or "url" not in entry:
            continue
        files.append(
            IndexFile(
                filename=str(entry["filename"]),
                url=urllib.parse.urljoin(base_url, str(entry["url"])),
                requires_python=entry.get("requires-python") or None,
                yanked=bool(entry.get("yanked")),
                hashes=_pairs(entry),
            )
        )
    return tuple(files)


class _AnchorParser(HTMLParser):
    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.files: List[IndexFile] = []

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        if tag == "base":
            href = dict(attrs).get("href")
            if href:
                self.base_url = urllib.parse.urljoin(self.base_url, href)
            return
        if tag != "a":
            return
        values = dict(attrs)
        href = values.get("href")
        if not href:
            return
        url, _, fragment = urllib.parse.urljoin(self.base_url, href).partition("#")
        filename = urllib.parse.unquote(urllib.parse.urlsplit(url).path.rsplit("/", 1)[-1])
        if not filename:
            return
        hashes: Tuple[Tuple[str, str], ...] = ()
        if "=" in fragment:
            algorithm, _, digest = fragment.partition("=")
            hashes = ((algorithm, digest),)
        self.files.append(
            IndexFile(
                filename=filename,
                url=url,
                requires_python=values.get("data-requires-python") or None,
                yanked="data-yanked" in values,
                hashes=hashes,
            )
        )


def _files_from_html(text: str, base_url: str) -> Tuple[IndexFile, ...]:
    """PEP 503 project pages and pip find-links pages: every <a href> is a file."""
    parser = _AnchorParser(base_url)
    parser.feed(text)
    parser.close()
    return tuple(parser.files)
