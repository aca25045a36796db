"""A recording OpenShift API server with scripted answers, for `mlcc build --backend
openshift` tests: the real Kubernetes client talks to it over loopback HTTP."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.fakekube import serve, write_kubeconfig

TOKEN = "sha256~not-a-real-token-but-secret"


def _resources(group_version: str, items: List[Tuple[str, str, bool]]) -> Dict[str, Any]:
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": [
            {
                "name": name,
                "singularName": "",
                "namespaced": True,
                "kind": kind,
                "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
            }
            for name, kind, _ in items
        ],
    }


DISCOVERY = {
    "/version": {"major": "1", "minor": "30", "gitVersion": "v1.30.4"},
    "/api": {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []},
    "/apis": {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [
            {
                "name": group,
                "versions": [{"groupVersion": f"{group}/v1", "version": "v1"}],
                "preferredVersion": {"groupVersion": f"{group}/v1", "version": "v1"},
            }
            for group in ("build.openshift.io", "image.openshift.io")
        ],
    },
    "/api/v1": _resources("v1", [("configmaps", "ConfigMap", True)]),
    "/apis/build.openshift.io/v1": _resources(
        "build.openshift.io/v1",
        [
            ("buildconfigs", "BuildConfig", True),
            ("buildconfigs/instantiate", "BuildRequest", True),
            ("builds", "Build", True),
            ("builds/log", "BuildLog", True),
        ],
    ),
    "/apis/image.openshift.io/v1": _resources(
        "image.openshift.io/v1",
        [("imagestreams", "ImageStream", True), ("imagestreamtags", "ImageStreamTag", True)],
    ),
}


class Request(NamedTuple):
    method: str
    path: str
    query: Dict[str, List[str]]
    headers: Dict[str, str]
    body: Optional[Any]


class Cluster:
    """A recording API server with scripted answers."""

    def __init__(self) -> None:
        self.requests: List[Request] = []
        self.existing: Dict[str, Any] = {}  # path -> object already on the "cluster"
        self.build_phase = "Complete"
        self.build_message = ""
        self.digest_label: Optional[str] = None
        self.unauthorized = False
        self.builds = 0
        # runs when a build is started, as the cluster's build would (e.g. push an image)
        self.on_build: Optional[Callable[[Request], None]] = None

    def answer(self, request: Request) -> Tuple[int, Any]:
        if self.unauthorized:
            return 401, {"kind": "Status", "status": "Failure", "reason": "Unauthorized", "code": 401}
        if request.path in DISCOVERY:
            return 200, DISCOVERY[request.path]
        parts = request.path.strip("/").split("/")
        if request.method == "POST" and request.path.endswith("/instantiate"):
            self.builds += 1
            if self.on_build is not None:
                self.on_build(request)
            name = f"{parts[-2]}-{self.builds}"
            return 201, {
                "kind": "Build",
                "apiVersion": "build.openshift.io/v1",
                "metadata": {"name": name},
                "status": {"phase": "New"},
            }
        if request.path.endswith("/log"):
            return 200, "STEP 1/20: FROM base\nSTEP 2/20: RUN dnf install ...\nPush successful\n"
        if "/builds/" in request.path and request.method == "GET":
            return 200, {
                "kind": "Build",
                "metadata": {"name": parts[-1]},
                "status": {"phase": self.build_phase, "message": self.build_message},
            }
        if "/imagestreamtags/" in request.path:
            if self.digest_label is None:
                return 404, {"kind": "Status", "code": 404, "reason": "NotFound"}
            config = {"Labels": {"io.mlcc.digest": self.digest_label}}
            return 200, {
                "kind": "ImageStreamTag",
                "metadata": {"name": parts[-1]},
                "image": {"dockerImageMetadata": {"Config": config}},
            }
        if request.method == "GET":
            if request.path in self.existing:
                return 200, self.existing[request.path]
            return 404, {"kind": "Status", "code": 404, "reason": "NotFound"}
        if request.method in ("POST", "PATCH"):
            return 201 if request.method == "POST" else 200, request.body
        return 405, {}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Tuple[Cluster, Path]]:
    state = Cluster()

    class Handler(BaseHTTPRequestHandler):
        def _handle(self) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            headers = {k.lower(): v for k, v in self.headers.items()}
            request = Request(self.command, url.path, parse_qs(url.query), headers, body)
            state.requests.append(request)
            status, answer = state.answer(request)
            data = answer.encode() if isinstance(answer, str) else json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain" if isinstance(answer, str) else "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = serve(Handler)
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server, token=TOKEN, namespace="bench")
    yield state, kubeconfig
    server.shutdown()
    server.server_close()
