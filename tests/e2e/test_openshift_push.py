"""OpenShift builds that push to an external registry (--push-to) skip what that registry
holds: the fake API server stands in for the cluster (its build "pushes" an image, as the
BuildConfig's output would), the registry is the real distribution registry with htpasswd
auth, credentials come from an auth file (REGISTRY_AUTH_FILE), as for the local engines."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import secrets
import tarfile
import urllib.request
from pathlib import Path
from typing import Any, Dict, Iterator, Optional, Tuple

import pytest

from tests.e2e import fixtures as fx
from tests.fakeopenshift import Cluster, Request, cluster

__all__ = ["cluster"]  # the fixture

REPOSITORY = "bench/nccl-tests"
# CUDA 12.6 pinned (VARIANT, _build, _rendered): the names below spell that stack, whatever
# the newest CUDA the knowledge base knows
VARIANT = "cuda12.6-nccl2.23-ubi9-x86_64"


class Pusher:
    """Pushes a one-layer image carrying a digest label, over the registry's HTTP API."""

    def __init__(self, registry: fx.RegistryServer) -> None:
        self.registry = registry
        auth = f"{registry.user}:{registry.password}".encode()
        self.headers = {"Authorization": "Basic " + base64.b64encode(auth).decode()}

    def _call(self, method: str, path: str, data: Optional[bytes] = None, **headers: str) -> Tuple[int, dict]:  # type: ignore[type-arg]
        url = path if path.startswith("http") else f"http://{self.registry.host}{path}"
        request = urllib.request.Request(url, data=data, method=method, headers={**self.headers, **headers})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, dict(response.headers)
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers)

    def _blob(self, data: bytes) -> Tuple[str, int]:
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        _, headers = self._call("POST", f"/v2/{REPOSITORY}/blobs/uploads/")
        location = headers["Location"]
        status, _ = self._call(
            "PUT",
            f"{location}{'&' if '?' in location else '?'}digest={digest}",
            data,
            **{"Content-Type": "application/octet-stream"},
        )
        assert status == 201, status
        return digest, len(data)

    def push(self, tag: str, label: str, files: Optional[Dict[str, bytes]] = None) -> None:
        """An image whose one layer holds ``files`` (path -> bytes)."""
        layer = io.BytesIO()
        with tarfile.open(fileobj=layer, mode="w") as archive:
            for path, data in sorted((files or {}).items()):
                info = tarfile.TarInfo(path)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
        tar = layer.getvalue()
        config = {
            "architecture": "amd64",
            "os": "linux",
            "config": {"Labels": {"io.mlcc.digest": label}},
            "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(tar).hexdigest()]},
        }
        config_digest, config_size = self._blob(json.dumps(config).encode())
        layer_digest, layer_size = self._blob(gzip.compress(tar, mtime=0))
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": config_digest,
                "size": config_size,
            },
            "layers": [
                {
                    "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                    "digest": layer_digest,
                    "size": layer_size,
                }
            ],
        }
        status, _ = self._call(
            "PUT",
            f"/v2/{REPOSITORY}/manifests/{tag}",
            json.dumps(manifest).encode(),
            **{"Content-Type": "application/vnd.oci.image.manifest.v1+json"},
        )
        assert status == 201, status

    def digest_of(self, tag: str) -> Optional[str]:
        status, headers = self._call(
            "HEAD",
            f"/v2/{REPOSITORY}/manifests/{tag}",
            Accept="application/vnd.oci.image.manifest.v1+json",
        )
        return headers.get("Docker-Content-Digest") if status == 200 else None


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Pusher]:
    server = fx.start_registry(tmp_path / "registry", auth=("mlcc", secrets.token_hex(12)))
    auth = base64.b64encode(f"{server.user}:{server.password}".encode()).decode()
    auth_file = tmp_path / "auth.json"
    auth_file.write_text(json.dumps({"auths": {server.host: {"auth": auth}}}))
    monkeypatch.setenv("REGISTRY_AUTH_FILE", str(auth_file))
    try:
        yield Pusher(server)
    finally:
        server.stop()


def _rendered(kb, resolver) -> Any:  # type: ignore[no-untyped-def]
    from mlcc.api import Pins, request_for
    from mlcc.render import render

    return render(resolver.resolve(request_for(kb, "nccl-tests", Pins(cuda="12.6"))))


def _digest(kb, resolver) -> str:  # type: ignore[no-untyped-def]
    return str(_rendered(kb, resolver).digest)


def _mlcc_files(kb, resolver) -> Dict[str, bytes]:  # type: ignore[no-untyped-def]
    """What an image built from the generated Dockerfile carries: its stack.json, and the
    installed.json its last step records (one that installed exactly the stack)."""
    from tests.unit.test_sbom import _installed

    stack_json = _rendered(kb, resolver).content("stack.json")
    installed = _installed(json.loads(stack_json))
    return {
        "etc/mlcc/stack.json": stack_json.encode(),
        "etc/mlcc/installed.json": json.dumps(installed).encode(),
    }


def _sbom_tag(digest: str) -> str:
    return digest.replace(":", "-") + ".sbom"


def _build(cli, kubeconfig: Path, registry: Pusher):  # type: ignore[no-untyped-def]
    return cli(
        "build", "nccl-tests", "--cuda", "12.6",
        "--backend", "openshift", "--kubeconfig", str(kubeconfig), "-q",
        "--push-to", f"{registry.registry.host}/{REPOSITORY}", "--push-secret", "pushme", "--no-tls-verify",
    )  # fmt: skip


def _started(state: Cluster) -> int:
    return len([r for r in state.requests if r.path.endswith("/instantiate")])


def test_push_to_builds_once_then_skips_by_the_content_tag(cli, cluster, registry, kb, resolver) -> None:  # type: ignore[no-untyped-def]
    state, kubeconfig = cluster
    digest = _digest(kb, resolver)

    def cluster_pushes(request: Request) -> None:
        # what the BuildConfig's DockerImage output does
        registry.push(VARIANT, digest, _mlcc_files(kb, resolver))

    state.on_build = cluster_pushes
    first = _build(cli, kubeconfig, registry)
    assert first.code == 0, first.err
    assert "built in" in first.out and _started(state) == 1
    content_tag = "mlcc-" + digest.split(":")[1][:32]
    pushed = registry.digest_of(VARIANT)
    assert pushed is not None and registry.digest_of(content_tag) == pushed
    sbom = registry.digest_of(_sbom_tag(pushed))  # beside the image the cluster pushed
    assert sbom is not None

    second = _build(cli, kubeconfig, registry)
    assert second.code == 0, second.err
    assert "skipped" in second.out and _started(state) == 1  # no second cluster build
    assert registry.digest_of(_sbom_tag(pushed)) == sbom  # kept, not pushed again
    assert registry.registry.password not in first.out + first.err + second.out + second.err


def test_push_to_skips_an_earlier_push_and_tags_it(cli, cluster, registry, kb, resolver) -> None:  # type: ignore[no-untyped-def]
    state, kubeconfig = cluster
    digest = _digest(kb, resolver)
    registry.push(VARIANT, "sha256:" + "1" * 64)  # another content under the readable tag: build
    assert "built in" in _build(cli, kubeconfig, registry).out and _started(state) == 1
    registry.push(VARIANT, digest, _mlcc_files(kb, resolver))  # this content, without a content tag
    result = _build(cli, kubeconfig, registry)
    assert result.code == 0 and "skipped" in result.out, result.out + result.err
    assert _started(state) == 1
    pushed = registry.digest_of(VARIANT)
    assert pushed is not None and registry.digest_of("mlcc-" + digest.split(":")[1][:32]) == pushed
    assert registry.digest_of(_sbom_tag(pushed)) is not None  # a skipped image gets its SBOM too
