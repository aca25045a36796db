"""What a hostile registry can send is refused with a clear error: token realms that are not
http(s) (a ``file:`` realm made mlcc read a local file and send it as a token), forged
manifests and layers, dripped, huge and inflating answers, indexes of the wrong shape, and
echoed passwords in any spelling. Each case runs against a real server on loopback."""

from __future__ import annotations

import base64
import gzip
import io
import json
import tarfile
import threading
import urllib.parse
from pathlib import Path
from typing import Any, Iterator, List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlcc.errors import MlccError, RegistryError
from mlcc.image import registry as registry_module
from mlcc.image.auth import Credentials
from mlcc.image.content import read_from_registry
from mlcc.image.reference import parse_reference
from mlcc.image.registry import Registry
from tests.hostile_registry import OCI_INDEX, OCI_MANIFEST, Scripted, digest, dripping, endless, serve
from tests.oci_layout import layer

STACK = b'{"format": 1}'


@pytest.fixture
def hostile() -> Iterator[Scripted]:
    yield from serve(Scripted())


def _clean(result: Any) -> None:
    assert "internal error" not in result.err and "Traceback" not in result.err, result.err


# ----------------------------------------------------------------------------- token realms


def _bearer(hostile: Scripted, realm: str) -> None:
    challenge = {"WWW-Authenticate": f'Bearer realm="{realm}",service="reg"'}
    hostile.routes["/v2/x/y/manifests/v1"] = (401, challenge, b"{}")


def test_a_file_realm_is_refused_and_the_local_file_never_sent(hostile: Scripted, tmp_path: Path) -> None:
    local = tmp_path / "token.json"
    local.write_text(json.dumps({"token": "read-from-the-local-disk"}))
    _bearer(hostile, local.as_uri())
    registry = Registry(hostile.host, tls_verify=False)
    with pytest.raises(RegistryError, match="only https or http URLs"):
        registry.manifest("x/y", "v1")
    assert all("read-from-the-local-disk" not in str(headers) for _, headers in hostile.seen)


@pytest.mark.parametrize("realm", ["ftp://127.0.0.1/token", "data:,{}", "/token", "http:///token"])
def test_other_realm_schemes_are_refused(hostile: Scripted, realm: str) -> None:
    _bearer(hostile, realm)
    with pytest.raises(RegistryError, match="only https or http URLs"):
        Registry(hostile.host, tls_verify=False).manifest("x/y", "v1")


def test_a_verified_registry_takes_only_an_https_realm() -> None:
    registry = Registry("registry.example", tls_verify=True)
    with pytest.raises(RegistryError, match="only https URLs"):
        registry._realm("http://auth.example/token")
    assert registry._realm("https://auth.example/token") == "https://auth.example/token"


def test_a_realm_with_control_characters_is_a_clear_error(hostile: Scripted) -> None:
    _bearer(hostile, f"http://{hostile.host}/tok\x01en\x7f")
    with pytest.raises(RegistryError, match="not a plain URL"):
        Registry(hostile.host, tls_verify=False).manifest("x/y", "v1")


@pytest.mark.parametrize(
    "answer",
    [b"[1, 2]", b'{"token": 5}', b'{"token": "a\\r\\nX-Evil: 1"}', b"not json", b"[" * 100000],
    ids=["list", "number", "header-injection", "not-json", "deep"],
)
def test_odd_token_answers_are_clear_errors(hostile: Scripted, answer: bytes) -> None:
    _bearer(hostile, f"http://{hostile.host}/token")
    hostile.routes["/token"] = (200, {"Content-Type": "application/json"}, answer)
    with pytest.raises(RegistryError, match="token"):
        Registry(hostile.host, tls_verify=False).manifest("x/y", "v1")


# ----------------------------------------------------------------------------- echoed secrets


PASSWORD = "Pa55 w/rd+Secret&x"


@pytest.mark.parametrize(
    "spelled",
    [
        PASSWORD,
        urllib.parse.quote(PASSWORD, safe=""),
        urllib.parse.quote_plus(PASSWORD),
        urllib.parse.quote(PASSWORD, safe="").lower(),
        PASSWORD.upper(),
        base64.b64encode(PASSWORD.encode()).decode(),
        base64.urlsafe_b64encode(f"me:{PASSWORD}".encode()).decode().rstrip("="),
    ],
    ids=["raw", "url-encoded", "plus-encoded", "lower-hex", "upper-cased", "base64", "urlsafe-base64"],
)
def test_an_echoed_password_is_redacted_in_every_spelling(hostile: Scripted, spelled: str) -> None:
    message = json.dumps({"errors": [{"code": "DENIED", "message": f"you sent ({spelled}) here"}]})
    hostile.routes["/v2/x/y/manifests/v1"] = (403, {}, message.encode())
    registry = Registry(hostile.host, tls_verify=False, credentials=Credentials("me", PASSWORD, "env"))
    with pytest.raises(RegistryError) as raised:
        registry.manifest("x/y", "v1")
    text = str(raised.value)
    assert "you sent ([redacted]) here" in text, text
    assert spelled not in text


# ----------------------------------------------------------------------------- digests


def test_verify_refuses_a_manifest_that_does_not_hash_to_its_digest(cli, hostile: Scripted) -> None:  # type: ignore[no-untyped-def]
    real = hostile.image("x/y", "v1", [layer({"etc/mlcc/stack.json": STACK})])
    forged = real.replace(b'"schemaVersion": 2', b'"schemaVersion": 2 ')
    asked = digest(real)
    hostile.routes[f"/v2/x/y/manifests/{asked}"] = (200, {"Content-Type": OCI_MANIFEST}, forged)
    result = cli("verify", f"{hostile.host}/x/y@{asked}", "--no-tls-verify")
    _clean(result)
    assert result.code == 5 and "not the digest it was asked by" in result.err, result.err
    # the registry's own Docker-Content-Digest header does not vouch for it either
    hostile.routes[f"/v2/x/y/manifests/{asked}"] = (
        200,
        {"Content-Type": OCI_MANIFEST, "Docker-Content-Digest": asked},
        forged,
    )
    assert (
        "not the digest it was asked by"
        in cli("verify", f"{hostile.host}/x/y@{asked}", "--no-tls-verify").err
    )


def test_a_tag_whose_digest_header_lies_is_refused(hostile: Scripted) -> None:
    body = hostile.image("x/y", "v1", [layer({"etc/mlcc/stack.json": STACK})])
    hostile.routes["/v2/x/y/manifests/v1"] = (
        200,
        {"Content-Type": OCI_MANIFEST, "Docker-Content-Digest": "sha256:" + "1" * 64},
        body,
    )
    with pytest.raises(RegistryError, match="the registry says sha256:1111"):
        Registry(hostile.host, tls_verify=False).manifest("x/y", "v1")


def test_a_layer_that_does_not_match_its_descriptor_is_refused(hostile: Scripted) -> None:
    good = layer({"etc/mlcc/stack.json": STACK})
    hostile.image("x/y", "v1", [good])
    swapped = layer({"etc/mlcc/stack.json": b'{"format": 1, "forged": true}'})
    hostile.routes[f"/v2/x/y/blobs/{digest(good)}"] = (200, {}, swapped[: len(good)].ljust(len(good), b"\0"))
    registry = Registry(hostile.host, tls_verify=False)
    with pytest.raises(RegistryError, match="does not match its digest"):
        read_from_registry(registry, parse_reference(f"{hostile.host}/x/y:v1"))


def test_a_layer_longer_than_its_descriptor_is_refused(hostile: Scripted) -> None:
    good = layer({"etc/mlcc/stack.json": STACK})
    hostile.image("x/y", "v1", [good])
    hostile.routes[f"/v2/x/y/blobs/{digest(good)}"] = (200, {}, good + b"\0" * 70000)
    with pytest.raises(RegistryError, match=r"more than the \d+ bytes its descriptor says"):
        read_from_registry(
            Registry(hostile.host, tls_verify=False), parse_reference(f"{hostile.host}/x/y:v1")
        )


def test_a_forged_config_blob_is_refused(hostile: Scripted) -> None:
    hostile.image("x/y", "v1", [layer({"etc/mlcc/stack.json": STACK})])
    config = json.dumps({"architecture": "amd64", "os": "linux"}).encode()
    hostile.routes[f"/v2/x/y/blobs/{digest(config)}"] = (200, {}, config.replace(b"amd64", b"arm64"))
    with pytest.raises(RegistryError, match="does not match its digest"):
        read_from_registry(
            Registry(hostile.host, tls_verify=False), parse_reference(f"{hostile.host}/x/y:v1")
        )


def test_a_good_image_is_still_read(hostile: Scripted) -> None:
    hostile.image("x/y", "v1", [layer({"etc/other": b"x"}), layer({"etc/mlcc/stack.json": STACK})])
    [content] = read_from_registry(
        Registry(hostile.host, tls_verify=False), parse_reference(f"{hostile.host}/x/y:v1")
    )
    assert content.files == {"etc/mlcc/stack.json": STACK} and content.arch == "amd64"


# ----------------------------------------------------------------------------- limits


def test_a_dripping_manifest_meets_a_deadline(hostile: Scripted, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry_module, "DEADLINE", 0.5)
    hostile.routes["/v2/x/y/manifests/v1"] = dripping(b'{"schemaVersion": 2, "layers": []}' * 10, 0.05)
    with pytest.raises(RegistryError, match=r"not complete after 0\.5 s"):
        Registry(hostile.host, tls_verify=False).manifest("x/y", "v1")


def test_a_gigabyte_manifest_is_refused_at_its_size_limit(hostile: Scripted) -> None:
    hostile.routes["/v2/x/y/manifests/v1"] = endless(1024**3)
    with pytest.raises(RegistryError, match="larger than 4194304 bytes"):
        Registry(hostile.host, tls_verify=False).manifest("x/y", "v1")


class _Zeros(io.RawIOBase):
    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), self.left)
        buffer[:n] = b"\0" * n
        self.left -= n
        return n


def _gzip_bomb(size: int) -> bytes:
    out = io.BytesIO()
    packed = gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9, mtime=0)
    with packed, tarfile.open(fileobj=packed, mode="w|") as tar:
        info = tarfile.TarInfo("zeros")
        info.size = size
        tar.addfile(info, io.BufferedReader(_Zeros(size), 1 << 20))
        info = tarfile.TarInfo("etc/mlcc/stack.json")
        info.size = len(STACK)
        tar.addfile(info, io.BytesIO(STACK))
    return out.getvalue()


def test_a_gzip_bomb_in_a_layer_is_refused(hostile: Scripted) -> None:
    bomb = _gzip_bomb(96 * 1024 * 1024)
    assert len(bomb) < 200_000  # it inflates about a thousand-fold
    hostile.image("x/y", "v1", [bomb])
    with pytest.raises(RegistryError, match="decompression bomb"):
        read_from_registry(
            Registry(hostile.host, tls_verify=False), parse_reference(f"{hostile.host}/x/y:v1")
        )


@pytest.mark.parametrize(
    "manifests",
    [
        [1, "x"],
        [{"digest": 5}],
        [{"digest": "sha256:../../etc"}],
        {"a": 1},
        [{"digest": "sha256:" + "a" * 64}] * 2000,
    ],
    ids=["scalars", "number-digest", "path-digest", "object", "too-many"],
)
def test_an_index_of_the_wrong_shape_is_a_clear_error(cli, hostile: Scripted, manifests: Any) -> None:  # type: ignore[no-untyped-def]
    hostile.json(
        "/v2/x/y/manifests/v1",
        {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": manifests},
        OCI_INDEX,
    )
    result = cli("verify", f"{hostile.host}/x/y:v1", "--no-tls-verify")
    _clean(result)
    assert result.code == 5 and "manifests" in result.err, result.err


def test_an_index_inside_an_index_is_refused(hostile: Scripted) -> None:
    inner = hostile.json("/v2/x/y/manifests/inner", {"mediaType": OCI_INDEX, "manifests": []}, OCI_INDEX)
    hostile.routes[f"/v2/x/y/manifests/{digest(inner)}"] = hostile.routes["/v2/x/y/manifests/inner"]
    entry = {"digest": digest(inner), "size": len(inner), "platform": {"architecture": "amd64"}}
    hostile.json("/v2/x/y/manifests/v1", {"mediaType": OCI_INDEX, "manifests": [entry]}, OCI_INDEX)
    with pytest.raises(RegistryError, match="another index"):
        read_from_registry(
            Registry(hostile.host, tls_verify=False), parse_reference(f"{hostile.host}/x/y:v1")
        )


# ----------------------------------------------------------------------------- any JSON shape

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
FIELDS = st.sampled_from(["config", "layers", "manifests", "mediaType", "digest", "platform", "size"])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    media_type=st.sampled_from([OCI_MANIFEST, OCI_INDEX, "", "text/html"]),
    document=st.dictionaries(FIELDS, JSON, max_size=5) | JSON,
    config=JSON,
)
def test_any_registry_json_reads_or_is_a_clear_error(
    hostile: Scripted, media_type: str, document: Any, config: Any
) -> None:
    hostile.routes.clear()
    blob = hostile.blob("x/y", json.dumps(config).encode())
    if isinstance(document, dict) and isinstance(document.get("config"), dict):
        document["config"]["digest"] = blob["digest"]
    hostile.json("/v2/x/y/manifests/v1", document, media_type)
    try:
        read_from_registry(
            Registry(hostile.host, tls_verify=False), parse_reference(f"{hostile.host}/x/y:v1")
        )
    except MlccError as error:
        assert str(error)


# ----------------------------------------------------------------------------- local archives and auth files


def test_an_oci_layout_whose_blobs_were_altered_is_refused(tmp_path: Path) -> None:
    from mlcc.errors import UsageError
    from mlcc.image.content import read_archive
    from tests.oci_layout import oci_layout

    folder = oci_layout(tmp_path / "img", [layer({"etc/mlcc/stack.json": STACK})])
    assert read_archive(folder).files == {"etc/mlcc/stack.json": STACK}
    [layer_blob] = [p for p in (folder / "blobs" / "sha256").iterdir() if p.read_bytes()[:2] == b"\x1f\x8b"]
    layer_blob.write_bytes(layer({"etc/mlcc/stack.json": b'{"format": 1, "forged": true}'}))
    with pytest.raises(UsageError, match="does not match its digest"):
        read_archive(folder)


def test_a_fifo_as_the_auth_file_is_skipped_not_waited_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from mlcc.image.auth import credentials_for

    fifo = tmp_path / "auth.json"
    os.mkfifo(fifo)
    monkeypatch.setenv("REGISTRY_AUTH_FILE", str(fifo))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.delenv("DOCKER_CONFIG", raising=False)
    monkeypatch.delenv("MLCC_REGISTRY_USERNAME", raising=False)
    found: List[Any] = []
    worker = threading.Thread(target=lambda: found.append(credentials_for("quay.io")), daemon=True)
    worker.start()
    worker.join(20)
    if worker.is_alive():  # it blocked on the FIFO: release it, then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("reading credentials waited on a FIFO")
    assert found == [None]


def test_a_token_realm_that_redirects_to_ftp_is_not_followed(hostile: Scripted) -> None:
    _bearer(hostile, f"http://{hostile.host}/token")
    hostile.routes["/token"] = (302, {"Location": "ftp://127.0.0.1:1/token.json"}, b"")
    with pytest.raises(RegistryError, match="302"):
        Registry(hostile.host, tls_verify=False).manifest("x/y", "v1")
