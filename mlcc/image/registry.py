"""A small client for the OCI distribution API (registry v2): manifests, blobs, tags.

What mlcc needs from a registry and nothing more: does a tag exist (skip-if-built), read
a manifest, config and layers (inspect and verify without pulling into an engine), put a
manifest (retag, multi-arch index), upload a blob and put an artifact that names its
subject (an image's SBOM). Basic and Bearer-token auth; TLS verified unless the
caller asks otherwise, then https without verification is tried before plain http.
Every failure becomes a RegistryError that says which registry and what to do.
"""

from __future__ import annotations

import hashlib
import json
import re
import ssl
import urllib.error
import urllib.parse
import urllib.request
from typing import IO, Any, Dict, List, NamedTuple, Optional, Tuple

from mlcc.errors import RegistryError
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
TIMEOUT = 30.0


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


class _NoRedirectAuth(urllib.request.HTTPRedirectHandler):
    """Blob downloads redirect to storage; the registry's Authorization must not follow."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if (
            new is not None
            and urllib.parse.urlsplit(newurl).netloc != urllib.parse.urlsplit(req.full_url).netloc
        ):
            new.headers.pop("Authorization", None)
            new.unredirected_hdrs.pop("Authorization", None)
        return new


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
        if self.tls_verify:
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
                return response.status, response.headers, response.read()
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

    def _token(self, challenge: str, scope: str) -> str:
        params = dict(re.findall(r'(\w+)="([^"]*)"', challenge))
        realm = params.pop("realm", "")
        query = {"service": params.get("service", ""), "scope": scope}
        url = (
            realm
            + ("&" if "?" in realm else "?")
            + urllib.parse.urlencode({k: v for k, v in query.items() if v})
        )
        headers = {"Authorization": f"Basic {self.credentials.basic}"} if self.credentials else {}
        try:
            with self._open("GET", url, headers, None) as response:
                body = json.loads(response.read())
        except urllib.error.HTTPError as error:
            raise self._http_error(error, "GET", "token") from None
        except (urllib.error.URLError, OSError, ValueError) as error:
            raise self._unreachable(f"token service {realm}: {error}") from None
        token = body.get("token") or body.get("access_token")
        if not token:
            raise RegistryError(f"registry {self.host}: the token service gave no token")
        return str(token)

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
        media_type = (headers.get("Content-Type") or "").split(";")[0] or _json_object(
            body, f"{repository}:{reference} manifest"
        ).get("mediaType", "")
        digest = headers.get("Docker-Content-Digest") or "sha256:" + hashlib.sha256(body).hexdigest()
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

    def blob(self, repository: str, digest: str) -> IO[bytes]:
        """An open stream of a blob (close it when done)."""
        _, _, response = self.request(
            "GET", f"{repository}/blobs/{digest}", scope=f"repository:{repository}:pull", stream=True
        )
        return response  # type: ignore[no-any-return]

    def blob_json(self, repository: str, digest: str) -> Dict[str, Any]:
        with self.blob(repository, digest) as stream:
            data = stream.read()
        if "sha256:" + hashlib.sha256(data).hexdigest() != digest:
            raise RegistryError(f"registry {self.host}: blob {digest} does not match its digest")
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
    try:
        loaded = json.loads(body)
    except (ValueError, RecursionError):
        raise RegistryError(f"the registry sent a {what} that is not JSON") from None
    if not isinstance(loaded, dict):
        raise RegistryError(f"the registry sent a {what} that is not a JSON object")
    return loaded


def _error_message(error: urllib.error.HTTPError) -> str:
    try:
        body = json.loads(error.read() or b"{}")
    except (ValueError, OSError):
        return ""
    errors = body.get("errors") if isinstance(body, dict) else None
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        return str(errors[0].get("message") or errors[0].get("code") or "")
    return ""
