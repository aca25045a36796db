"""Untrusted images and servers, secrets, and the inputs that ended in "internal error"."""

from __future__ import annotations

import base64
import json
import sqlite3
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.oci_layout import layer, oci_layout

SEED = "maskrcnn/cuda10.1-cudnn7-ubi8-x86_64"
REPO = Path(__file__).resolve().parents[2]


def _clean(result) -> None:  # type: ignore[no-untyped-def]
    assert "internal error" not in result.err and "Traceback" not in result.err, result.err


# ----------------------------------------------------------------------------- OCI layouts


def _rewrite(folder: Path, name: str, data: Any) -> None:
    (folder / name).write_text(json.dumps(data))


@pytest.mark.parametrize(
    ("breakage", "message"),
    [
        (lambda f: (f / "index.json").unlink(), "no regular file index.json"),
        (lambda f: _rewrite(f, "index.json", []), "index.json is not a JSON object"),
        (lambda f: _rewrite(f, "index.json", {"manifests": [{}]}), "no valid digest"),
        (
            lambda f: _rewrite(f, "index.json", {"manifests": [{"digest": "sha256:../../etc/passwd"}]}),
            "no valid digest",
        ),
        (lambda f: _rewrite(f, "index.json", {"manifests": "x"}), "not a list of JSON objects"),
        (lambda f: (f / "index.json").write_text("{not json"), "index.json is not JSON"),
    ],
    ids=["empty", "list", "no-digest", "dotdot-digest", "manifests-string", "not-json"],
)
def test_broken_oci_layouts_are_usage_errors(cli, tmp_path: Path, breakage, message: str) -> None:  # type: ignore[no-untyped-def]
    folder = oci_layout(tmp_path / "img", [layer({"etc/mlcc/stack.json": b"{}"})], {}, architecture="ppc64le")
    breakage(folder)
    for command in ("inspect", "verify"):
        result = cli(command, f"oci:{folder}")
        _clean(result)
        assert result.code == 2 and message in result.err, result.err


def test_empty_oci_folder_is_a_usage_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "empty").mkdir()
    result = cli("inspect", f"oci:{tmp_path / 'empty'}")
    _clean(result)
    assert result.code == 2


@pytest.mark.parametrize(
    "stack",
    [b"[1, 2]", b'{"format": 1, "components": "x"}', b'{"components": {"cuda": "x"}}'],
    ids=["list", "components-string", "cuda-string"],
)
def test_a_stack_json_of_the_wrong_shape_is_reported(cli, tmp_path: Path, stack: bytes) -> None:  # type: ignore[no-untyped-def]
    folder = oci_layout(
        tmp_path / "img",
        [layer({"etc/mlcc/stack.json": stack, "etc/mlcc/installed.json": b'{"os": "x", "packages": []}'})],
        {"io.mlcc.variant": "v"},
        architecture="ppc64le",
    )
    inspected = cli("inspect", f"oci:{folder}")
    _clean(inspected)
    assert inspected.code == 6 and "not a stack manifest" in inspected.err
    verified = cli("verify", f"oci:{folder}")
    _clean(verified)
    assert verified.code == 6 and "stack manifest" in verified.out


def test_escape_sequences_in_labels_do_not_reach_the_terminal(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = oci_layout(
        tmp_path / "img",
        [layer({"x": b""})],
        {"evil": "\x1b]0;pwned\x07\x1b[2J", "ok": "v"},
        architecture="ppc64le",
    )
    result = cli("inspect", f"oci:{folder}")
    assert result.code == 0, result.err
    assert "\x1b" not in result.out and "\x07" not in result.out
    assert "evil=\\x1b]0;pwned\\x07\\x1b[2J" in result.out


# ----------------------------------------------------------------------------- registries


class _Echo(BaseHTTPRequestHandler):
    """A registry that asks for Basic auth and then echoes the Authorization header in its error."""

    def do_GET(self) -> None:
        auth = self.headers.get("Authorization")
        if self.path.startswith("/v2/x/y/manifests/") and auth:
            body = json.dumps(
                {"errors": [{"code": "DENIED", "message": f"denied for Authorization: {auth}"}]}
            )
            self.send_response(403)
        elif self.path.startswith("/v2/x/z/manifests/"):
            body = "<html>not json</html>"
            self.send_response(200)
            self.send_header("Content-Type", "")
        else:
            body = "{}"
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="r"')
        data = body.encode()
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def echo_registry() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_a_registry_echoing_credentials_gets_them_redacted(echo_registry: str) -> None:
    from mlcc.errors import RegistryError
    from mlcc.image.auth import Credentials
    from mlcc.image.registry import Registry

    password = "s3cret-Passw0rd"
    registry = Registry(echo_registry, tls_verify=False, credentials=Credentials("me", password, "env"))
    with pytest.raises(RegistryError) as raised:
        registry.manifest("x/y", "v1")
    text = str(raised.value)
    assert "DENIED" in text or "denied" in text
    assert password not in text and base64.b64encode(f"me:{password}".encode()).decode() not in text


def test_a_manifest_that_is_not_json_is_a_registry_error(echo_registry: str) -> None:
    from mlcc.errors import RegistryError
    from mlcc.image.auth import Credentials
    from mlcc.image.registry import Registry

    registry = Registry(echo_registry, tls_verify=False, credentials=Credentials("me", "pw12", "env"))
    with pytest.raises(RegistryError, match="not JSON"):
        registry.manifest("x/z", "v1")


def test_redact_masks_known_and_echoed_secrets() -> None:
    from mlcc.secrets import redact

    text = 'bad: Authorization: Basic bWU6cHc= token="abcd1234" and hunter22'
    cleaned = redact(text, ["hunter22"])
    assert "bWU6cHc=" not in cleaned and "abcd1234" not in cleaned and "hunter22" not in cleaned


# ----------------------------------------------------------------------------- flags and environment


def test_git_uri_with_a_password_is_refused_and_not_echoed(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "bc"
    result = cli(
        "gen",
        "maskrcnn",
        "--only",
        "openshift",
        "--git-uri",
        "https://me:hunter22@github.com/a/b.git",
        "--openshift-output",
        str(out),
    )
    _clean(result)
    assert result.code == 2 and "credentials" in result.err and "source secret" in result.err
    assert "hunter22" not in result.err and not out.exists()


@pytest.mark.parametrize("value", ["99999999999999999999", "abc", "-1", "1.5", "\uff11\uff12"])
def test_bad_source_date_epoch_is_a_usage_error(cli, tmp_path: Path, monkeypatch, value: str) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SOURCE_DATE_EPOCH", value)
    result = cli("gen", "maskrcnn", "--cuda", "10.1", "-o", str(tmp_path / "out"), "--only", "dockerfile")
    _clean(result)
    assert result.code == 2 and "SOURCE_DATE_EPOCH" in result.err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "args",
    [
        ("resolve", "maskrcnn", "--cuda", "~=10"),
        ("resolve", "maskrcnn", "--with", "pytorch=~=1"),
        ("resolve", "maskrcnn", "--driver", "9" * 5000),
        ("gen", "maskrcnn", "--cuda", "10.1", "-o", ""),
        ("gen", "maskrcnn", "--cuda", "10.1", "--only", "openshift", "--openshift-output", ""),
        ("history", "--history", ""),
        ("report", "--html", ""),
        ("gen", "maskrcnn", "--cuda", "10.1", "-o", "a" * 300),
        ("gen", "maskrcnn", "--only", "openshift", "--nodes", "99999999999", "--openshift-output", "bc"),
        ("gen", "ssd", "--mirror", "https://mirror.example.com:99999/nvidia", "-o", "out"),
        ("build", "maskrcnn", "--cuda", "10.1", "--network", "--privileged"),
        ("gen", "ssd", "--base-image", "registry.example.com/ubi8/ubi@sha256:" + "0" * 64, "-o", "out"),
    ],
    ids=[
        "cuda-compatible",
        "with-compatible",
        "driver-5000",
        "o-empty",
        "openshift-empty",
        "history-empty",
        "html-empty",
        "name-too-long",
        "nodes-int32",
        "mirror-port",
        "network-option",
        "zero-digest",
    ],
)
def test_inputs_that_were_internal_errors_are_usage_errors(cli, args) -> None:  # type: ignore[no-untyped-def]
    result = cli(*args)
    _clean(result)
    assert result.code == 2, result.err


def test_history_limit_beyond_sqlite_integers(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from mlcc.history import History

    path = tmp_path / "h.sqlite"
    History(path).check()
    result = cli("history", "--history", str(path), "--limit", "99999999999999999999")
    _clean(result)
    assert result.code == 2 and "--limit" in result.err


def test_a_history_status_is_escaped_in_the_html_report(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from mlcc.history import SCHEMA, SCHEMA_VERSION

    path = tmp_path / "h.sqlite"
    connection = sqlite3.connect(str(path))
    # a history written by something else that kept mlcc's table but not its CHECK
    connection.executescript(SCHEMA.replace("CHECK (status IN ('built', 'skipped', 'failed'))", ""))
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    connection.execute(
        "INSERT INTO builds (finished, benchmark, variant, content_digest, backend, status, seconds,"
        " mlcc_version)"
        " VALUES ('2026-01-01T00:00:00Z', 'ssd', 'cuda10.1-cudnn7-ubi8-x86_64', 'x', 'buildah',"
        " '<script>alert(1)</script>', 1, '0')"
    )
    connection.commit()
    connection.close()
    page = tmp_path / "r.html"
    result = cli("report", "--html", str(page), "--history", str(path))
    assert result.code == 0, result.err
    html = page.read_text()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html


def test_the_exit_code_table_in_the_docs_names_every_code() -> None:
    import mlcc.errors as errors

    table = (REPO / "docs" / "exit-codes.md").read_text().split("# Exit codes", 1)[1].split("\n\n", 2)[1]
    listed = {
        int(line.split("|")[1]) for line in table.splitlines() if line.startswith("| ") and line[2].isdigit()
    }
    codes = {value for name, value in vars(errors).items() if name.startswith("EXIT_")}
    assert listed == codes | {130}


@pytest.mark.parametrize("text", ["garbage: [\n", "- a\n", "\x00\x01"], ids=["broken", "list", "binary"])
def test_a_malformed_kubeconfig_is_a_usage_error(cli, tmp_path: Path, text: str) -> None:  # type: ignore[no-untyped-def]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(text)
    result = cli(
        "build", "maskrcnn", "--cuda", "10.1", "--backend", "openshift", "--kubeconfig", str(kubeconfig)
    )
    _clean(result)
    assert result.code == 2 and "no usable kubeconfig" in result.err


def test_an_unusable_log_file_is_a_usage_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = cli("build", "ssd", "--log", str(blocker / "x.log"))
    _clean(result)
    assert result.code == 2 and "--log" in result.err


def test_an_unusable_cache_folder_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mlcc.app.build import content_lock
    from mlcc.errors import UsageError

    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("MLCC_CACHE_DIR", str(blocker / "cache"))
    with pytest.raises(UsageError, match="MLCC_CACHE_DIR"), content_lock("sha256:" + "a" * 64, print):
        pass


def test_an_unusable_logs_folder_is_a_usage_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = cli("build", "ssd", "--matrix", "--no-history", "--logs", str(blocker / "logs"))
    _clean(result)
    assert result.code == 2 and "--logs" in result.err
