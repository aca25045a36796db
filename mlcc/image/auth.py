"""Registry credentials from where the container tools keep them, never from arguments.

Looked up in order: ``MLCC_REGISTRY_USERNAME`` + ``MLCC_REGISTRY_PASSWORD`` (CI secrets),
then the first auth file that has an entry for the registry: ``REGISTRY_AUTH_FILE``,
``$XDG_RUNTIME_DIR/containers/auth.json``, ``~/.config/containers/auth.json``,
``$DOCKER_CONFIG/config.json`` or ``~/.docker/config.json``. A password never reaches a
log, a message, a generated file or a command line: CLI engines get an auth file.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from pathlib import Path
from typing import Dict, Iterator, List, NamedTuple, Optional

from mlcc.safeio import UnreadableFile, read_text

MAX_AUTH_FILE_BYTES = 4 * 1024 * 1024
USER_ENV = "MLCC_REGISTRY_USERNAME"
PASSWORD_ENV = "MLCC_REGISTRY_PASSWORD"


class Credentials(NamedTuple):
    username: str
    password: str
    source: str  # where they came from, for messages (a path or an env variable name)
    file: Optional[str] = None  # the auth file they came from, if any

    def __repr__(self) -> str:  # never show the password, even in a traceback
        return f"Credentials(username={self.username!r}, password='***', source={self.source!r})"

    def __str__(self) -> str:
        return self.__repr__()

    @property
    def basic(self) -> str:
        return base64.b64encode(f"{self.username}:{self.password}".encode()).decode()


def auth_files() -> List[Path]:
    found: List[Path] = []
    if os.environ.get("REGISTRY_AUTH_FILE"):
        found.append(Path(os.environ["REGISTRY_AUTH_FILE"]))
    if os.environ.get("XDG_RUNTIME_DIR"):
        found.append(Path(os.environ["XDG_RUNTIME_DIR"]) / "containers" / "auth.json")
    home = Path(os.path.expanduser("~"))
    found.append(home / ".config" / "containers" / "auth.json")
    docker = Path(os.environ["DOCKER_CONFIG"]) if os.environ.get("DOCKER_CONFIG") else home / ".docker"
    found.append(docker / "config.json")
    return found


def _keys(registry: str) -> Iterator[str]:
    yield registry
    yield f"https://{registry}"
    yield f"http://{registry}"
    if registry in ("docker.io", "registry-1.docker.io", "index.docker.io"):
        yield "https://index.docker.io/v1/"


def _from_file(path: Path, registry: str) -> Optional[Credentials]:
    try:  # regular files only, bounded: a FIFO named by REGISTRY_AUTH_FILE must not block
        data = json.loads(read_text(path, limit=MAX_AUTH_FILE_BYTES))
    except (UnreadableFile, ValueError, RecursionError):
        return None
    auths = data.get("auths") if isinstance(data, dict) else None
    if not isinstance(auths, dict):
        return None
    for key in _keys(registry):
        entry = auths.get(key) or auths.get(key + "/")
        if isinstance(entry, dict) and isinstance(entry.get("auth"), str):
            try:
                user, _, password = base64.b64decode(entry["auth"]).decode().partition(":")
            except (ValueError, UnicodeDecodeError):
                continue
            return Credentials(user, password, str(path), str(path))
    return None


def credentials_for(registry: str) -> Optional[Credentials]:
    user, password = os.environ.get(USER_ENV), os.environ.get(PASSWORD_ENV)
    if user and password:
        return Credentials(user, password, f"{USER_ENV}/{PASSWORD_ENV}")
    for path in auth_files():
        found = _from_file(path, registry)
        if found is not None:
            return found
    return None


class AuthFile:
    """An auth file holding only ``registry``'s credentials, for tools that read one.

    Used as a context manager: the file lives in a private temporary folder (0700, file
    0600) and is deleted on exit. When the credentials already come from a file, that file
    is used as it is.
    """

    def __init__(self, registry: str, credentials: Optional[Credentials]) -> None:
        self.registry = registry
        self.credentials = credentials
        self._tmp: Optional[tempfile.TemporaryDirectory[str]] = None
        self.path: Optional[str] = None

    def __enter__(self) -> AuthFile:
        if self.credentials is None:
            return self
        if self.credentials.file:
            self.path = self.credentials.file
            return self
        self._tmp = tempfile.TemporaryDirectory(prefix="mlcc-auth-")
        path = Path(self._tmp.name) / "auth.json"
        content: Dict[str, Dict[str, Dict[str, str]]] = {
            "auths": {self.registry: {"auth": self.credentials.basic}}
        }
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump(content, handle)
        self.path = str(path)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
