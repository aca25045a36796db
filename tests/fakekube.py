"""A kubeconfig that points the real Kubernetes client at a test server on loopback.

The OpenShift backend's and `mlcc results collect`'s tests each run a recording API server
(their answers differ); both reach it through the same kind of kubeconfig, written here.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Type


def serve(handler: Type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """Start ``handler`` on a free loopback port in a daemon thread."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def write_kubeconfig(path: Path, server: ThreadingHTTPServer, *, token: str, namespace: str) -> Path:
    """A kubeconfig whose one context talks to ``server`` with a bearer ``token``."""
    url = f"http://127.0.0.1:{server.server_address[1]}"
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "test", "cluster": {"server": url}}],
                "users": [{"name": "me", "user": {"token": token}}],
                "contexts": [
                    {"name": "test", "context": {"cluster": "test", "user": "me", "namespace": namespace}}
                ],
                "current-context": "test",
            }
        )
    )
    return path
