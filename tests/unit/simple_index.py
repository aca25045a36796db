"""A real HTTP server on 127.0.0.1 serving a small package index built by a test.

Routes map a path to (content type, body); anything else is a 404. Range requests are
honoured (``bytes=a-b`` and ``bytes=-n``) so that wheel contents can be read the way
mlcc reads them from a real index, without downloading the whole file.
"""

from __future__ import annotations

import http.server
import threading
from typing import Dict, Iterator, List, Optional, Tuple

Route = Tuple[str, bytes]


class IndexServer:
    def __init__(self, authorization: Optional[str] = None) -> None:
        """``authorization``: the Authorization header every request must carry (else 401)."""
        self.routes: Dict[str, Route] = {}
        self.hits: List[str] = []
        self.authorizations: List[Optional[str]] = []
        routes, hits, seen = self.routes, self.hits, self.authorizations

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                seen.append(self.headers.get("Authorization"))
                if authorization is not None and self.headers.get("Authorization") != authorization:
                    self.send_error(401)
                    return
                route = routes.get(self.path)
                if route is None:
                    self.send_error(404)
                    return
                content_type, body = route
                status, body, extra = _ranged(self.headers.get("Range"), body)
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Accept-Ranges", "bytes")
                for name, value in extra:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def add(self, path: str, body: bytes, content_type: str = "text/html") -> str:
        self.routes[path] = (content_type, body)
        return self.url + path

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _ranged(header: Optional[str], body: bytes) -> Tuple[int, bytes, List[Tuple[str, str]]]:
    if not header or not header.startswith("bytes="):
        return 200, body, []
    first, _, last = header[len("bytes=") :].partition("-")
    size = len(body)
    if first == "":
        start, end = max(0, size - int(last)), size - 1
    else:
        start, end = int(first), (int(last) if last else size - 1)
    end = min(end, size - 1)
    return 206, body[start : end + 1], [("Content-Range", f"bytes {start}-{end}/{size}")]


def serve(authorization: Optional[str] = None) -> Iterator[IndexServer]:
    server = IndexServer(authorization)
    try:
        yield server
    finally:
        server.close()
