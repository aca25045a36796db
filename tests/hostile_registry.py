"""A registry on loopback that answers what a test scripts: a good image, forged digests,
dripped or endless bodies, odd token realms. The real client (urllib) talks to it over HTTP.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"

# (status, headers, body) or a callable that writes the answer itself
Answer = Tuple[int, Dict[str, str], bytes]


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


class Scripted:
    """Routes: a path (``/v2/x/y/manifests/v1``) -> an answer; unknown paths are 404."""

    def __init__(self) -> None:
        self.routes: Dict[str, Any] = {}
        self.seen: List[Tuple[str, Dict[str, str]]] = []  # (path, headers) of every request
        self.host = ""

    def json(self, path: str, document: Any, media_type: str = "application/json") -> bytes:
        body = json.dumps(document).encode()
        self.routes[path] = (200, {"Content-Type": media_type}, body)
        return body

    def blob(self, repository: str, data: bytes) -> Dict[str, Any]:
        """Serve ``data`` as a blob; its descriptor."""
        self.routes[f"/v2/{repository}/blobs/{digest(data)}"] = (200, {}, data)
        return {"digest": digest(data), "size": len(data), "mediaType": "application/octet-stream"}

    def image(self, repository: str, tag: str, layers: List[bytes], config: Optional[Any] = None) -> bytes:
        """A whole image under ``tag`` (and its digest); the manifest's bytes."""
        config_bytes = json.dumps(config if config is not None else {"architecture": "amd64", "os": "linux"})
        manifest = {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": self.blob(repository, config_bytes.encode()),
            "layers": [self.blob(repository, data) for data in layers],
        }
        body = self.json(f"/v2/{repository}/manifests/{tag}", manifest, OCI_MANIFEST)
        self.routes[f"/v2/{repository}/manifests/{digest(body)}"] = self.routes[
            f"/v2/{repository}/manifests/{tag}"
        ]
        return body


def serve(state: Scripted) -> Iterator[Scripted]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _answer(self, with_body: bool) -> None:
            path = self.path.split("?")[0]
            state.seen.append((self.path, dict(self.headers.items())))
            route = state.routes.get(path)
            if route is None and path == "/v2/":
                route = (200, {}, b"{}")
            if callable(route):
                route(self)
                return
            status, headers, body = route if route is not None else (404, {}, b'{"errors": []}')
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if with_body:
                self.wfile.write(body)

        def do_GET(self) -> None:
            self._answer(True)

        def do_HEAD(self) -> None:
            self._answer(False)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    state.host = f"127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()
    server.server_close()


def dripping(body: bytes, pause: float) -> Callable[[BaseHTTPRequestHandler], None]:
    """An answer that sends ``body`` one byte at a time, ``pause`` seconds apart."""

    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", OCI_MANIFEST)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        try:
            for byte in body:
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
                time.sleep(pause)
        except OSError:
            pass  # the client gave up, as it should

    return answer


def endless(size: int) -> Callable[[BaseHTTPRequestHandler], None]:
    """An answer that announces ``size`` bytes and sends spaces until the client hangs up."""

    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", OCI_MANIFEST)
        handler.send_header("Content-Length", str(size))
        handler.end_headers()
        chunk = b" " * 65536
        try:
            for _ in range(size // len(chunk)):
                handler.wfile.write(chunk)
        except OSError:
            pass

    return answer
