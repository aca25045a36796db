"""A small client for Python package indexes: the simple API (PEP 503 HTML, PEP 691 JSON)
and pip's ``--find-links`` pages, with answers cached on disk.

Only the standard library speaks HTTP here (urllib): ``mlcc kb check`` and the hash locks
of the maintainer commands need a handful of GET requests, not a client dependency. The
module is imported by those commands only, never on the CLI's start-up path.

Cache: one JSON file per URL under ``$XDG_CACHE_HOME/mlcc/index`` (``MLCC_CACHE_DIR``
moves it with the rest of mlcc's cache), reused for ``ttl`` seconds; ``refresh`` refetches.
A 404 is an answer too (the project does not exist) and is cached like any other.

Everything an index sends is outside input: :func:`read_url` is the one reader of it
(here, in mlcc/kb/wheel.py and in ``mlcc kb lock``). It reads http(s) only (a page may
link a ``file:`` URL: that is never opened), stops a response that is still arriving
after ``timeout`` seconds in all (a server that drips a byte at a time does not hold it)
or is larger than its size limit, and never names credentials: an index URL
``https://user:token@mirror/simple/`` is used as ``https://mirror/simple/`` with the
token sent as HTTP Basic authorisation to that host only (not across a redirect), so
errors, logs, caches and lock files only ever hold the URL without it.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.client
import json
import os
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from packaging.utils import canonicalize_name

from mlcc.errors import IndexUnreachable, UsageError
from mlcc.kb.loader import cache_dir

PYPI_SIMPLE = "https://pypi.org/simple/"
INDEX_ENV = "PIP_INDEX_URL"  # pip's own setting: a configured mirror is honoured as pip would
DEFAULT_TTL = 24 * 3600
CACHE_FORMAT = 1
SIMPLE_ACCEPT = (
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
)
USER_AGENT = "mlcc-kb-check (urllib)"
# A project page of torch on PyPI, the largest the published set reads, is a few MiB
MAX_PAGE_BYTES = 64 * 1024 * 1024
# An sdist is read whole to hash it and read its metadata as data (never to run it)
MAX_FILE_BYTES = 256 * 1024 * 1024
_CHUNK = 64 * 1024


class Fetched(NamedTuple):
    status: int
    body: bytes
    content_type: str
    content_range: str
    url: str  # after redirects, without credentials


def without_credentials(url: str) -> str:
    """``url`` with any ``user:password@`` removed: the form errors and files may hold."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def credentials_of(url: str) -> Dict[str, Tuple[str, str]]:
    """The ``user:password`` an index URL carries, by the host[:port] it is for ({} when none)."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return {}
    user, _, password = parts.netloc.rpartition("@")[0].partition(":")
    host = parts.netloc.rpartition("@")[2].lower()
    return {host: (urllib.parse.unquote(user), urllib.parse.unquote(password))}


def read_url(
    url: str,
    *,
    timeout: float,
    limit: int,
    headers: Optional[Dict[str, str]] = None,
    credentials: Optional[Dict[str, Tuple[str, str]]] = None,
) -> Optional[Fetched]:
    """GET ``url`` (http or https): None on 404/410, IndexUnreachable on anything else that
    is not an answer, on more than ``limit`` bytes or on an answer still arriving after
    ``timeout`` seconds. Errors name the URL without credentials."""
    shown = without_credentials(url)
    if urllib.parse.urlsplit(url).scheme.lower() not in ("http", "https"):
        raise IndexUnreachable(shown, "only http and https URLs are read")
    request = urllib.request.Request(shown, headers={"User-Agent": USER_AGENT, **(headers or {})})
    login = (credentials or {}).get(urllib.parse.urlsplit(shown).netloc.lower())
    if login is not None:
        token = base64.b64encode(f"{login[0]}:{login[1]}".encode()).decode()
        request.add_unredirected_header("Authorization", f"Basic {token}")  # never to a redirect
    watch = _Deadline(timeout)
    try:
        with watch.opener().open(request, timeout=timeout) as response:
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > limit:
                raise IndexUnreachable(
                    shown, f"the answer is {declared} bytes, more than the {limit} bytes read"
                )
            chunks: List[bytes] = []
            size = 0
            while True:
                # read1: one receive at a time, so the limits are checked between them
                chunk = response.read1(_CHUNK)
                if not chunk:
                    break
                size += len(chunk)
                if size > limit:
                    raise IndexUnreachable(shown, f"the answer is larger than the {limit} bytes read")
                chunks.append(chunk)
            if watch.expired:  # the watchdog cut the connection: what came is not the answer
                raise IndexUnreachable(shown, f"the answer took longer than {timeout:g} s")
            return Fetched(
                response.status,
                b"".join(chunks),
                str(response.headers.get("Content-Type", "")),
                str(response.headers.get("Content-Range", "")),
                without_credentials(response.geturl()),
            )
    except urllib.error.HTTPError as exc:
        if exc.code in (404, 410):
            return None
        raise IndexUnreachable(shown, f"HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as exc:
        if watch.expired:
            raise IndexUnreachable(shown, f"the answer took longer than {timeout:g} s") from None
        reason = str(getattr(exc, "reason", exc)).replace(url, shown)  # ValueError: a malformed URL
        raise IndexUnreachable(shown, reason) from None
    finally:
        watch.cancel()


class _Deadline:
    """A watchdog over one request: when ``timeout`` seconds have passed it shuts the
    connection's socket, whatever the answer is in (status line, headers or body), so a
    server that drips a byte at a time cannot hold a read. The socket timeout alone only
    bounds each receive."""

    def __init__(self, timeout: float) -> None:
        self.expired = False
        # the sockets themselves: urllib drops the connection's reference once the headers
        # are read, while the answer still reads its body from the socket
        self.sockets: List[socket.socket] = []
        self.timer = threading.Timer(timeout, self.expire)
        self.timer.daemon = True
        self.timer.start()

    def expire(self) -> None:
        self.expired = True
        for sock in self.sockets:
            with contextlib.suppress(OSError):  # already closed: nothing to cut
                sock.shutdown(socket.SHUT_RDWR)

    def cancel(self) -> None:
        self.timer.cancel()

    def opener(self) -> urllib.request.OpenerDirector:
        """urllib's opener for http and https only (no file:, ftp: or data:, by a link or a
        redirect), whose connections this watchdog can cut."""
        watch = self

        def watched(base: Any) -> Any:
            class Watched(base):  # type: ignore[misc]
                def connect(self) -> None:
                    super().connect()
                    watch.sockets.append(self.sock)

            return Watched

        class HTTP(urllib.request.HTTPHandler):
            def http_open(self, req: urllib.request.Request) -> Any:
                return self.do_open(watched(http.client.HTTPConnection), req)

        class HTTPS(urllib.request.HTTPSHandler):
            def https_open(self, req: urllib.request.Request) -> Any:
                # the context urllib's own handler uses: certificates and host names verified
                context = ssl.create_default_context()
                return self.do_open(watched(http.client.HTTPSConnection), req, context=context)

        opener = urllib.request.OpenerDirector()
        for handler in (
            urllib.request.ProxyHandler(),  # pip's proxies from the environment still apply
            urllib.request.UnknownHandler(),
            HTTP(),
            HTTPS(),
            urllib.request.HTTPDefaultErrorHandler(),
            urllib.request.HTTPRedirectHandler(),
            urllib.request.HTTPErrorProcessor(),
        ):
            opener.add_handler(handler)
        return opener


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


def check_index_url(url: str) -> str:
    """``url`` when it can name a simple index: http or https, a host, no spaces or control
    characters (a newline would split every message naming it).

    Args:
        url: From --index-url or PIP_INDEX_URL.

    Returns:
        The URL.

    Raises:
        UsageError: It cannot (exit 2: the flag is wrong, the index is not unreachable).
    """
    try:
        parts = urllib.parse.urlsplit(url) if url.isprintable() and " " not in url else None
    except ValueError:  # an unclosed [IPv6 literal
        parts = None
    if parts is None or parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise UsageError(
            f"--index-url / {INDEX_ENV}: {url[:200]!r} is not an http(s) URL of a package index",
            hint="for example --index-url https://pypi.org/simple/ (or leave it out for PyPI)",
        )
    return url


def index_cache_dir() -> str:
    return os.path.join(cache_dir(), "index")


class IndexClient:
    """Reads project pages from one simple index (PyPI or a mirror) and find-links pages."""

    # Whether a page holds every release of its project (a record keeps the pinned ones only)
    complete_pages = True

    def __init__(
        self,
        index_url: Optional[str] = None,
        *,
        cache: Optional[str] = None,
        ttl: float = DEFAULT_TTL,
        refresh: bool = False,
        timeout: float = 60.0,
    ) -> None:
        given = check_index_url(default_index_url() if index_url is None else index_url).rstrip("/") + "/"
        self.credentials = credentials_of(given)
        self.index_url = without_credentials(given)  # what errors, caches and locks may name
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
        url = without_credentials(url)
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

    def read(
        self, url: str, *, limit: int = MAX_PAGE_BYTES, headers: Optional[Dict[str, str]] = None
    ) -> Optional[Fetched]:
        """GET ``url`` within this client's time limit and ``limit`` bytes (:func:`read_url`),
        with the index's credentials when it is on the index's host. None: 404 or 410."""
        self.requests += 1
        return read_url(url, timeout=self.timeout, limit=limit, headers=headers, credentials=self.credentials)

    def _fetch(self, url: str) -> Page:
        fetched = self.read(url, headers={"Accept": SIMPLE_ACCEPT})
        if fetched is None:
            return Page(url, False, ())
        text = fetched.body.decode("utf-8", errors="replace")
        if "json" in fetched.content_type:
            files = _files_from_json(text, fetched.url)
        else:
            files = _files_from_html(text, fetched.url)
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
        try:
            files = tuple(
                IndexFile(f["filename"], f["url"], f.get("requires_python"), bool(f.get("yanked")), _pairs(f))
                for f in data.get("files", [])
            )
        except (KeyError, TypeError, AttributeError):
            return None  # a damaged cache entry is a miss: the page is fetched again
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
    """PEP 691: {"files": [{"filename", "url", "hashes", "requires-python", "yanked"}]}.

    Each field is checked for the type PEP 691 gives it; anything else makes the page an
    error naming the field (an index is outside input: a list where a string belongs must
    not reach the version parser, and a page that is not JSON is not an empty project)."""
    where = without_credentials(base_url)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise IndexUnreachable(where, "the PEP 691 page is not JSON") from None
    raw = data.get("files") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        raise IndexUnreachable(where, 'the PEP 691 page has no "files" list')
    return tuple(_json_file(entry, f"files[{n}]", base_url, where) for n, entry in enumerate(raw))


def _text_field(entry: Dict[str, Any], key: str, what: str, where: str, *, required: bool) -> Optional[str]:
    value = entry.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value or not value.isprintable():
        raise IndexUnreachable(where, f"the PEP 691 page's {what}.{key} is not a printable string")
    return value


def _json_file(entry: Any, what: str, base_url: str, where: str) -> IndexFile:
    if not isinstance(entry, dict):
        raise IndexUnreachable(where, f"the PEP 691 page's {what} is not an object")
    filename = _text_field(entry, "filename", what, where, required=True) or ""
    if "/" in filename or "\\" in filename or filename in (".", ".."):
        raise IndexUnreachable(where, f"the PEP 691 page's {what}.filename is a path, not a file name")
    url = _text_field(entry, "url", what, where, required=True) or ""
    requires_python = _text_field(entry, "requires-python", what, where, required=False)
    yanked = entry.get("yanked", False)
    if not isinstance(yanked, (bool, str)):
        raise IndexUnreachable(where, f"the PEP 691 page's {what}.yanked is neither a boolean nor a reason")
    hashes = entry.get("hashes", {})
    if not isinstance(hashes, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and k.isprintable() and v.isprintable()
        for k, v in hashes.items()
    ):
        raise IndexUnreachable(where, f"the PEP 691 page's {what}.hashes is not an object of strings")
    return IndexFile(
        filename=filename,
        url=urllib.parse.urljoin(base_url, url),
        requires_python=requires_python,
        yanked=bool(yanked),
        hashes=_pairs(entry),
    )


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
