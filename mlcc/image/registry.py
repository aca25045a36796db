"""A small client for the OCI distribution API (registry v2): manifests, blobs, tags.

What mlcc needs from a registry and nothing more: does a tag exist (skip-if-built), read
a manifest, config and layers (inspect and verify without pulling into an engine), put a
manifest (retag, multi-arch index), upload a blob and put an artifact that names its
subject (an image's SBOM). Basic and Bearer-token auth; TLS verified unless the
caller asks otherwise, then https without verification is tried before plain http.
Every failure becomes a RegistryError that says which registry and what to do.

A registry is untrusted: every read has a deadline and a size limit, a manifest asked for
by digest must hash to it, a blob is checked against its digest and size before its
bytes are used, and a token realm must be an http(s) URL (urllib's default opener would
otherwise read ``file:`` URLs from the local disk and send what it found as a token).
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from mlcc.errors import RegistryError
from mlcc.image import untrusted
from mlcc.image.auth import Credentials
from mlcc.secrets import redact
from mlcc.ui.safe_text import printable

OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
INDEX_TYPES = (OCI_INDEX, DOCKER_LIST)
# OCI 1.1's empty descriptor: the config of an artifact that needs none
OCI_EMPTY = "application/vnd.oci.empty.v1+json"
EMPTY_CONFIG = b"{}"
ACCEPT = ", ".join((OCI_INDEX, OCI_MANIFEST, DOCKER_LIST, DOCKER_MANIFEST))
TIMEOUT = 30.0  # each socket operation
DEADLINE = 120.0  # a whole manifest, JSON blob or token: a dripping server is cut off
LAYER_DEADLINE = 1800.0  # a whole layer
# The distribution spec asks registries to accept manifests up to 4 MiB; configs and
# token answers are JSON of the same order.
MAX_MANIFEST = 4 * 1024 * 1024
MAX_JSON_BLOB = 16 * 1024 * 1024
MAX_ENTRIES = 1024  # manifests in an index, layers in a manifest: a bound on every loop
_CHUNK = 64 * 1024


class Manifest(NamedTuple):
    media_type: str
    digest: str
    body: bytes

    @property
    def data(self) -> Dict[str, Any]:
        return _json_object(self.body, f"manifest {self.digest}")

    @property
    def is_index(self) -> bool:
        return self.media_type in INDEX_TYPES

    def config_digest(self) -> str:
        """The config blob's digest, checked for shape (a registry's JSON is untrusted)."""
        what = f"manifest {self.digest}"
        entry = untrusted.obj(self.data.get("config"), f"{what}'s config", RegistryError)
        _check_size(entry, f"{what}'s config")
        return untrusted.digest(entry.get("digest"), f"{what}'s config", RegistryError)

    def descriptors(self, field: str) -> List[Dict[str, Any]]:
        """The ``layers`` or ``manifests`` of this document, each with a valid digest, at
        most MAX_ENTRIES of them."""
        what = f"manifest {self.digest}'s {field}"
        entries = untrusted.items(self.data.get(field), what, RegistryError)
        if len(entries) > MAX_ENTRIES:
            raise RegistryError(f"{what}: {len(entries)} entries, more than {MAX_ENTRIES}")
        for entry in entries:
            untrusted.digest(entry.get("digest"), what, RegistryError)
            _check_size(entry, what)
        return entries

    def platforms(self) -> List[Tuple[str, Dict[str, Any]]]:
        """An index's (digest, platform) entries; the platform is {} when absent or odd."""
        if not self.is_index:
            raise RegistryError(f"manifest {self.digest} is not an index")
        return [
            (str(entry["digest"]), untrusted.as_object(entry.get("platform")))
            for entry in self.descriptors("manifests")
        ]


def _check_size(entry: Dict[str, Any], what: str) -> None:
    """A descriptor's ``size``, when given, is a byte count (a missing one is unknown)."""
    if entry.get("size") is not None and untrusted.size(entry.get("size")) is None:
        raise RegistryError(f"{what}: a size that is not an integer from 0 to 2^63-1")


def read_bounded(stream: Any, *, limit: int, deadline: float, what: str) -> bytes:
    """At most ``limit`` bytes of ``stream`` within ``deadline`` seconds, else a RegistryError.

    ``read1`` returns what has arrived, so a server that drips a byte at a time is checked
    against the deadline between its bytes instead of holding one read open."""
    end = time.monotonic() + deadline
    chunks: List[bytes] = []
    total = 0
    read = getattr(stream, "read1", stream.read)
    while True:
        if time.monotonic() > end:
            raise RegistryError(f"{what}: not complete after {deadline:g} s; refused")
        chunk = read(_CHUNK)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > limit:
            raise RegistryError(f"{what}: larger than {limit} bytes; refused")
        chunks.append(chunk)


class VerifiedBlob:
    """A blob's stream that counts and hashes what is read: more bytes than the descriptor
    says is an error at once, and :meth:`verify` (reading what is left) checks the digest
    and size before the caller trusts anything it read."""

    def __init__(
        self,
        response: Any,
        digest: str,
        size: Optional[int],
        what: str,
        deadline: float,
        error: untrusted.ErrorFactory = RegistryError,
    ) -> None:
        self._response = response
        self._error = error
        self.digest = digest
        self.size = size
        self.what = what
        self._hash = hashlib.new(digest.partition(":")[0])
        self._read = 0
        self.compressed = 0  # bytes read so far, for decompression-ratio checks
        self._end = time.monotonic() + deadline
        self._deadline = deadline

    def read(self, n: int = -1) -> bytes:
        """Up to ``n`` bytes; with no size, as a file does, all that is left, then verified."""
        if n is None or n < 0:
            parts: List[bytes] = []
            while part := self.read(_CHUNK):
                parts.append(part)
            self.verify()
            return b"".join(parts)
        if time.monotonic() > self._end:
            raise self._error(f"{self.what}: not complete after {self._deadline:g} s; refused")
        reader = getattr(self._response, "read1", self._response.read)
        if n == 0:
            return b""
        chunk: bytes = reader(min(n, _CHUNK))
        self._read += len(chunk)
        self.compressed = self._read
        if self.size is not None and self._read > self.size:
            raise self._error(f"{self.what}: more than the {self.size} bytes its descriptor says")
        self._hash.update(chunk)
        return chunk

    def verify(self) -> None:
        while self.read(_CHUNK):
            pass
        if self.size is not None and self._read != self.size:
            raise self._error(f"{self.what}: {self._read} bytes, its descriptor says {self.size}")
        actual = f"{self.digest.partition(':')[0]}:{self._hash.hexdigest()}"
        if actual != self.digest:
            raise self._error(f"{self.what} does not match its digest (it hashes to {actual}); refused")

    def close(self) -> None:
        self._response.close()

    def __enter__(self) -> VerifiedBlob:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _NoRedirectAuth(urllib.request.HTTPRedirectHandler):
    """Blob downloads redirect to storage; the registry's Authorization must not follow,
    and a redirect leads to http(s) only."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        if urllib.parse.urlsplit(newurl).scheme.lower() not in ("http", "https"):
            return None  # urllib would follow ftp: too; the 3xx becomes the answer (an error)
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if (
            new is not None
            and urllib.parse.urlsplit(newurl).netloc != urllib.parse.urlsplit(req.full_url).netloc
        ):
            new.headers.pop("Authorization", None)
            new.unredirected_hdrs.pop("Authorization", None)
        return new


def _loopback(host: str) -> bool:
    """Whether ``host`` (``name[:port]``, ``[v6]:port``) names this machine."""
    name = urllib.parse.urlsplit(f"//{host}").hostname or ""
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return name == "localhost" or name.endswith(".localhost")


class Registry:
    def __init__(
        self, host: str, *, tls_verify: bool = True, credentials: Optional[Credentials] = None
    ) -> None:
        self.host = host
        self.tls_verify = tls_verify
        self.credentials = credentials
        self._scheme: Optional[str] = "https" if tls_verify else None
        self._tokens: Dict[str, str] = {}
        self._basic = False
        context = ssl.create_default_context()
        if not tls_verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        self._opener = urllib.request.build_opener(
            urllib.request.HTTPSHandler(context=context), _NoRedirectAuth()
        )

    # ------------------------------------------------------------------ transport

    def _open(self, method: str, url: str, headers: Dict[str, str], data: Optional[bytes]) -> Any:
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        return self._opener.open(request, timeout=TIMEOUT)

    def _scheme_for(self, path: str) -> str:
        if self._scheme is not None:
            return self._scheme
        for scheme in ("https", "http"):  # --tls-verify=false: https unverified, else plain http
            try:
                self._open("GET", f"{scheme}://{self.host}/v2/", {}, None).close()
            except urllib.error.HTTPError:
                pass  # an HTTP answer (401, 404): the scheme works
            except (urllib.error.URLError, OSError, ValueError):
                continue
            self._scheme = scheme
            return scheme
        raise self._unreachable("neither https nor http answers")

    def _unreachable(self, reason: object) -> RegistryError:
        hint = "is the registry running and the address right?"
        if self.tls_verify and _loopback(self.host):  # a test registry, often plain HTTP
            hint += " For a plain-HTTP loopback registry add --no-tls-verify."
        return RegistryError(f"cannot reach registry {self.host}: {reason}", hint=hint)

    def request(
        self,
        method: str,
        path: str,
        *,
        scope: str,
        headers: Optional[Dict[str, str]] = None,
        data: Optional[bytes] = None,
        ok: Tuple[int, ...] = (200,),
        stream: bool = False,
        location: Optional[str] = None,
        limit: int = MAX_MANIFEST,
    ) -> Tuple[int, Any, Any]:
        """(status, headers, body bytes or an open response when ``stream``) for /v2/<path>,
        or for ``location``, a URL the registry gave (an upload's), on this registry only."""
        url = f"{self._scheme_for(path)}://{self.host}/v2/{path}"
        if location is not None:
            url = urllib.parse.urljoin(url, location)
            if urllib.parse.urlsplit(url).netloc != self.host:
                # the request carries our credentials: they go to this registry, nowhere else
                where = printable(urllib.parse.urlsplit(url).netloc)[:100]
                raise RegistryError(
                    f"registry {self.host} directed {method} {path} to another host ({where}): refused",
                    hint="mlcc sends a registry's credentials to that registry only",
                )
        for attempt in range(3):
            sent = dict(headers or {})
            authorization = self._authorization(scope)
            if authorization:
                sent["Authorization"] = authorization
            try:
                response = self._open(method, url, sent, data)
            except urllib.error.HTTPError as error:
                if error.code == 401 and attempt < 2 and self._authenticate(error.headers, scope):
                    continue
                if error.code in ok:
                    return error.code, error.headers, b""
                raise self._http_error(error, method, path) from None
            except ssl.SSLError as error:
                raise RegistryError(
                    f"TLS to registry {self.host} failed: {error.reason}",
                    hint="fix the certificate, or for a test registry pass --no-tls-verify",
                ) from None
            except (urllib.error.URLError, OSError) as error:
                raise self._unreachable(getattr(error, "reason", error)) from None
            if response.status not in ok:
                response.close()
                raise RegistryError(f"registry {self.host}: {method} {path} answered {response.status}")
            if stream:
                return response.status, response.headers, response
            with response:
                what = f"registry {self.host}: {method} {path}"
                return (
                    response.status,
                    response.headers,
                    read_bounded(response, limit=limit, deadline=DEADLINE, what=what),
                )
        raise AssertionError("unreachable")

    def _secrets(self) -> List[str]:
        known = list(self._tokens.values())
        if self.credentials is not None:
            known += [self.credentials.password, self.credentials.basic]
        return known

    def _http_error(self, error: urllib.error.HTTPError, method: str, path: str) -> RegistryError:

        # the server's text is untrusted: it may echo our Authorization header or carry escapes
        detail = printable(redact(_error_message(error), self._secrets()))[:300]
        if error.code in (401, 403):
            if self.credentials is None:
                return RegistryError(
                    f"registry {self.host} refused {method} {path}: authentication required",
                    hint="log in (podman login / docker login writes an auth file mlcc reads) or set "
                    "MLCC_REGISTRY_USERNAME and MLCC_REGISTRY_PASSWORD",
                )
            return RegistryError(
                f"registry {self.host} refused the credentials from {self.credentials.source}"
                f" for {method} {path}" + (f": {detail}" if detail else ""),
                hint="check the user name and password (they are not shown)",
            )
        return RegistryError(
            f"registry {self.host}: {method} {path} failed with {error.code} {detail}".rstrip()
        )

    # ------------------------------------------------------------------ auth

    def _authorization(self, scope: str) -> Optional[str]:
        if scope in self._tokens:
            return f"Bearer {self._tokens[scope]}"
        if self._basic and self.credentials is not None:
            return f"Basic {self.credentials.basic}"
        return None

    def _authenticate(self, headers: Any, scope: str) -> bool:
        challenge = headers.get("WWW-Authenticate", "") if headers else ""
        if challenge.lower().startswith("basic"):
            if self.credentials is None or self._basic:
                return False
            self._basic = True
            return True
        if challenge.lower().startswith("bearer"):
            if scope in self._tokens:
                return False
            self._tokens[scope] = self._token(challenge, scope)
            return True
        return False

    def _realm(self, realm: str) -> str:
        """The token service's URL, refused unless it is http(s) (https when TLS is verified
        and the registry itself is not plain http) and free of control characters."""
        shown = printable(realm)[:120]
        if not realm or any(ord(c) < 0x21 or ord(c) > 0x7E for c in realm):
            raise RegistryError(
                f"registry {self.host} named a token service that is not a plain URL ({shown!r}): refused",
                hint="a registry's Bearer realm must be an https URL without spaces or control characters",
            )
        scheme = urllib.parse.urlsplit(realm).scheme.lower()
        allowed = ("https",) if self.tls_verify and self._scheme != "http" else ("https", "http")
        if scheme not in allowed or not urllib.parse.urlsplit(realm).netloc:
            raise RegistryError(
                f"registry {self.host} named a token service {shown!r}: only "
                f"{' or '.join(allowed)} URLs are used",
                hint="mlcc sends credentials to a token service over the network only; "
                "for a plain-HTTP test registry add --no-tls-verify",
            )
        return realm

    def _token(self, challenge: str, scope: str) -> str:
        params = dict(re.findall(r'(\w+)="([^"]*)"', challenge))
        realm = self._realm(params.pop("realm", ""))
        query = {"service": params.get("service", ""), "scope": scope}
        url = (
            realm
            + ("&" if "?" in realm else "?")
            + urllib.parse.urlencode({k: v for k, v in query.items() if v})
        )
        headers = {"Authorization": f"Basic {self.credentials.basic}"} if self.credentials else {}
        what = f"registry {self.host}: the token service"
        try:
            with self._open("GET", url, headers, None) as response:
                data = read_bounded(response, limit=MAX_JSON_BLOB, deadline=DEADLINE, what=what)
        except urllib.error.HTTPError as error:
            raise self._http_error(error, "GET", "token") from None
        except (urllib.error.URLError, OSError, ValueError) as error:
            reason = printable(redact(str(getattr(error, "reason", error)), self._secrets()))[:200]
            raise self._unreachable(f"token service {printable(realm)[:120]}: {reason}") from None
        body = _json_object(data, "token answer")
        token = body.get("token") or body.get("access_token")
        if not isinstance(token, str) or not token:
            raise RegistryError(f"{what} gave no token")
        if not all(0x21 <= ord(c) <= 0x7E for c in token):
            raise RegistryError(f"{what} gave a token that is not printable ASCII; refused")
        return token

    # ------------------------------------------------------------------ API

    def _manifest_request(self, method: str, repository: str, reference: str) -> Tuple[int, Any, Any]:
        return self.request(
            method,
            f"{repository}/manifests/{reference}",
            scope=f"repository:{repository}:pull",
            headers={"Accept": ACCEPT},
            ok=(200, 404),
        )

    def manifest(self, repository: str, reference: str) -> Optional[Manifest]:
        """The manifest (or index) of a tag or digest, or None when there is none."""
        status, headers, body = self._manifest_request("GET", repository, reference)
        if status == 404:
            return None
        what = f"registry {self.host}: the manifest of {repository}@{printable(reference)[:80]}"
        data = _json_object(body, f"{repository}:{reference} manifest")
        media_type = (headers.get("Content-Type") or "").split(";")[0].strip() or data.get("mediaType")
        if not isinstance(media_type, str):
            raise RegistryError(f"{what} has no media type")
        digest = _digest_of(body, reference if untrusted.DIGEST.match(reference) else "sha256:")
        if untrusted.DIGEST.match(reference) and digest != reference:
            raise RegistryError(
                f"{what} hashes to {digest}, not the digest it was asked by; refused",
                hint="the registry (or something between) altered the manifest",
            )
        claimed = headers.get("Docker-Content-Digest")
        if claimed and claimed.startswith(digest.partition(":")[0] + ":") and claimed != digest:
            raise RegistryError(
                f"{what} hashes to {digest}, the registry says {printable(claimed)[:80]}; refused"
            )
        return Manifest(media_type, digest, body)

    def exists(self, repository: str, reference: str) -> Optional[str]:
        """The digest behind a tag, or None: one HEAD request."""
        status, headers, _ = self._manifest_request("HEAD", repository, reference)
        if status == 404:
            return None
        digest = headers.get("Docker-Content-Digest")
        if digest:
            return str(digest)
        found = self.manifest(repository, reference)
        return found.digest if found else None

    def put_manifest(self, repository: str, tag: str, body: bytes, media_type: str) -> str:
        _, headers, _ = self.request(
            "PUT",
            f"{repository}/manifests/{tag}",
            scope=f"repository:{repository}:pull,push",
            headers={"Content-Type": media_type},
            data=body,
            ok=(201, 200),
        )
        return str(headers.get("Docker-Content-Digest") or "sha256:" + hashlib.sha256(body).hexdigest())

    def has_blob(self, repository: str, digest: str) -> bool:
        status, _, _ = self.request(
            "HEAD", f"{repository}/blobs/{digest}", scope=f"repository:{repository}:pull", ok=(200, 404)
        )
        return status == 200

    def put_blob(self, repository: str, data: bytes) -> str:
        """Upload ``data`` as a blob (unless the repository has it) and return its digest:
        a POST that opens the upload, a PUT of the bytes that closes it."""
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        if self.has_blob(repository, digest):
            return digest
        scope = f"repository:{repository}:pull,push"
        path = f"{repository}/blobs/uploads/"
        _, headers, _ = self.request("POST", path, scope=scope, data=b"", ok=(202,))
        location = headers.get("Location") if headers else None
        if not location:
            raise RegistryError(f"registry {self.host}: POST {path} gave no upload location")
        location += ("&" if "?" in location else "?") + urllib.parse.urlencode({"digest": digest})
        self.request(
            "PUT",
            path,
            scope=scope,
            headers={"Content-Type": "application/octet-stream"},
            data=data,
            ok=(201, 204),
            location=location,
        )
        return digest

    def put_artifact(
        self,
        repository: str,
        tag: str,
        *,
        artifact_type: str,
        data: bytes,
        title: str,
        subject: Manifest,
        annotations: Optional[Dict[str, str]] = None,
    ) -> str:
        """``data`` as an OCI 1.1 artifact about ``subject``, tagged ``tag``: an image
        manifest of ``artifact_type`` with the empty config, ``data`` as its one layer and
        ``subject`` naming the manifest it describes (registries with the referrers API list
        it there; the tag finds it on the others). Returns the artifact's digest."""
        config_digest = self.put_blob(repository, EMPTY_CONFIG)
        layer_digest = self.put_blob(repository, data)
        manifest: Dict[str, Any] = {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "artifactType": artifact_type,
            "config": {"mediaType": OCI_EMPTY, "digest": config_digest, "size": len(EMPTY_CONFIG)},
            "layers": [
                {
                    "mediaType": artifact_type,
                    "digest": layer_digest,
                    "size": len(data),
                    "annotations": {"org.opencontainers.image.title": title},
                }
            ],
            "subject": {"mediaType": subject.media_type, "digest": subject.digest, "size": len(subject.body)},
        }
        if annotations:
            manifest["annotations"] = dict(sorted(annotations.items()))
        body = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
        return self.put_manifest(repository, tag, body, OCI_MANIFEST)

    def blob(
        self, repository: str, digest: str, size: Optional[int] = None, *, deadline: float = LAYER_DEADLINE
    ) -> VerifiedBlob:
        """An open, counted and hashed stream of a blob (close it when done; call its
        ``verify`` before trusting what was read)."""
        untrusted.digest(digest, f"blob of {repository}", RegistryError)
        _, _, response = self.request(
            "GET", f"{repository}/blobs/{digest}", scope=f"repository:{repository}:pull", stream=True
        )
        return VerifiedBlob(response, digest, size, f"registry {self.host}: blob {digest}", deadline)

    def blob_json(self, repository: str, digest: str) -> Dict[str, Any]:
        with self.blob(repository, digest, deadline=DEADLINE) as stream:
            data = read_bounded(stream, limit=MAX_JSON_BLOB, deadline=DEADLINE, what=stream.what)
            stream.verify()
        return _json_object(data, f"blob {digest}")

    def put_index(self, repository: str, tag: str, entries: List[Tuple[Manifest, str, str]]) -> str:
        """An OCI image index over per-arch manifests: entries are (manifest, os, architecture)."""
        index = {
            "schemaVersion": 2,
            "mediaType": OCI_INDEX,
            "manifests": [
                {
                    "mediaType": manifest.media_type,
                    "digest": manifest.digest,
                    "size": len(manifest.body),
                    "platform": {"architecture": arch, "os": os_name},
                }
                for manifest, os_name, arch in entries
            ],
        }
        body = json.dumps(index, sort_keys=True, separators=(",", ":")).encode()
        return self.put_manifest(repository, tag, body, OCI_INDEX)


def _json_object(body: bytes, what: str) -> Dict[str, Any]:
    """A registry's JSON document, checked: untrusted bytes never reach a KeyError or a traceback."""
    return untrusted.json_object(body, f"the registry's {what}", RegistryError)


def _digest_of(body: bytes, algorithm_of: str) -> str:
    """``body``'s digest with the algorithm of ``algorithm_of`` (``sha256:...``/``sha512:...``)."""
    algorithm = algorithm_of.partition(":")[0] or "sha256"
    return f"{algorithm}:{hashlib.new(algorithm, body).hexdigest()}"


def _error_message(error: urllib.error.HTTPError) -> str:
    try:
        data = read_bounded(error, limit=64 * 1024, deadline=TIMEOUT, what="an error answer")
        body = json.loads(data or b"{}")
    except (ValueError, OSError, RecursionError, RegistryError):
        return ""
    errors = body.get("errors") if isinstance(body, dict) else None
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        return str(errors[0].get("message") or errors[0].get("code") or "")
    return ""
