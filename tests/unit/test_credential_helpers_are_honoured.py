"""After `docker login` through a credential helper, the auth file holds no password, only the
helper's name (credHelpers, credsStore): mlcc asks the helper, as docker does, with a deadline
and a size limit, and never shows the secret. The helpers here are scripts on PATH."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from mlcc.image import auth
from mlcc.image.auth import AuthFile, credentials_for

SECRET = "s3cr3t-from-the-keychain"

HELPER = """#!/bin/sh
# docker-credential-* protocol: `get`, the server on stdin, JSON on stdout
[ "$1" = get ] || exit 2
read -r server
printf '%s\\n' "$server" >> "$(dirname "$0")/asked"
case "$server" in
  registry.example.com) printf '{"ServerURL": "%s", "Username": "robot", "Secret": "SECRET"}' "$server" ;;
  https://index.docker.io/v1/) printf '{"Username": "hubber", "Secret": "hub"}' ;;
  token.example.com) printf '{"ServerURL": "%s", "Username": "<token>", "Secret": "refresh"}' "$server" ;;
  slow.example.com) sleep 30 ;;
  big.example.com) head -c 1000000 /dev/zero ;;
  *) echo "credentials not found in native keychain"; exit 1 ;;
esac
""".replace("SECRET", SECRET)


@pytest.fixture
def helpers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A helper `docker-credential-fake` on PATH, and a docker config of our own."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    helper = bin_dir / "docker-credential-fake"
    helper.write_text(HELPER)
    helper.chmod(helper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    for name in ("REGISTRY_AUTH_FILE", "XDG_RUNTIME_DIR", "MLCC_REGISTRY_USERNAME", "MLCC_REGISTRY_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "docker"))
    (tmp_path / "docker").mkdir()
    return tmp_path


def _config(helpers: Path, document: dict) -> None:  # type: ignore[type-arg]
    (helpers / "docker" / "config.json").write_text(json.dumps(document))


def test_a_registrys_own_helper_gives_its_login(helpers: Path) -> None:
    _config(helpers, {"auths": {"registry.example.com": {}}, "credHelpers": {"registry.example.com": "fake"}})
    found = credentials_for("registry.example.com")
    assert found is not None
    assert (found.username, found.password, found.source) == ("robot", SECRET, "docker-credential-fake")
    assert SECRET not in repr(found) and SECRET not in str(found)
    with AuthFile("registry.example.com", found) as written:  # what buildah and podman get
        assert written.path is not None and SECRET not in Path(written.path).read_text()
        assert stat.S_IMODE(os.stat(written.path).st_mode) == 0o600


def test_the_default_store_serves_registries_without_an_entry(helpers: Path) -> None:
    _config(helpers, {"auths": {"docker.io": {}}, "credsStore": "fake"})
    assert credentials_for("registry.example.com").username == "robot"  # type: ignore[union-attr]
    assert credentials_for("docker.io").username == "hubber"  # type: ignore[union-attr]
    assert credentials_for("other.example.com") is None  # the helper has none: no login


def test_an_inline_login_comes_before_the_default_store(helpers: Path) -> None:
    inline = {"auth": "aW5saW5lOnB3"}  # inline:pw
    _config(helpers, {"auths": {"registry.example.com": inline}, "credsStore": "fake"})
    assert credentials_for("registry.example.com").username == "inline"  # type: ignore[union-attr]
    assert not (helpers / "bin" / "asked").exists()


@pytest.mark.parametrize(
    "helper_name",
    ["../../bin/fake", "/usr/bin/env", "missing", "fake;rm"],
    ids=["path", "absolute", "absent", "shell"],
)
def test_a_helper_name_that_is_no_helper_on_path_gives_no_login(helpers: Path, helper_name: str) -> None:
    _config(helpers, {"credHelpers": {"registry.example.com": helper_name}})
    assert credentials_for("registry.example.com") is None
    assert not (helpers / "bin" / "asked").exists()


def test_an_identity_token_is_not_taken_for_a_password(helpers: Path) -> None:
    _config(helpers, {"credHelpers": {"token.example.com": "fake"}})
    assert credentials_for("token.example.com") is None


def test_a_slow_or_flooding_helper_is_stopped(helpers: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(auth, "HELPER_SECONDS", 1.0)
    _config(helpers, {"credHelpers": {"slow.example.com": "fake", "big.example.com": "fake"}})
    import time

    start = time.monotonic()
    assert credentials_for("slow.example.com") is None
    assert time.monotonic() - start < 10  # one deadline per server asked, never the helper's 30 s
    assert credentials_for("big.example.com") is None
