"""Registry credentials from where the container tools keep them, never from arguments.

Looked up in order: ``MLCC_REGISTRY_USERNAME`` + ``MLCC_REGISTRY_PASSWORD`` (CI secrets),
then the first auth file that has an entry for the registry: ``REGISTRY_AUTH_FILE``,
``$XDG_RUNTIME_DIR/containers/auth.json``, ``~/.config/containers/auth.json``,
``$DOCKER_CONFIG/config.json`` or ``~/.docker/config.json``. In a file, a credential helper
named for the registry (``credHelpers``) comes first, then the file's own ``auths`` entry,
then its default helper (``credsStore``): the helper, ``docker-credential-<name>`` on PATH, is
run as ``docker login`` runs it (``get``, the registry on stdin, JSON on stdout), with a
deadline and a size limit. A password never reaches a log, a message, a generated file or a
command line: CLI engines get an auth file.
"""

from __future__ import annotations

import base64
import json
import os
import re
import selectors
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, NamedTuple, Optional

from mlcc.safeio import UnreadableFile, read_text

MAX_AUTH_FILE_BYTES = 4 * 1024 * 1024
USER_ENV = "MLCC_REGISTRY_USERNAME"
PASSWORD_ENV = "MLCC_REGISTRY_PASSWORD"
HELPER_PREFIX = "docker-credential-"
HELPER_SECONDS = 10.0  # a helper that asks a keychain answers in well under this
MAX_HELPER_BYTES = 64 * 1024  # a username and a secret, as JSON
_HELPER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")  # a program name, never a path


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
    if not isinstance(data, dict):
        return None
    helpers = data.get("credHelpers")
    if isinstance(helpers, dict):
        named = next((helpers[k] for k in _keys(registry) if isinstance(helpers.get(k), str)), None)
        if named is not None:  # the registry's own helper: docker asks only it
            return from_helper(named, registry)
    found = _from_auths(path, data.get("auths"), registry)
    if found is None and isinstance(data.get("credsStore"), str):
        found = from_helper(data["credsStore"], registry)
    return found


def _from_auths(path: Path, auths: Any, registry: str) -> Optional[Credentials]:
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


def from_helper(name: str, registry: str) -> Optional[Credentials]:
    """Ask the credential helper ``docker-credential-<name>`` for the registry's login.

    Args:
        name: The helper's name as an auth file gives it (``pass``, ``secretservice``,
            ``ecr-login``...): a program name, never a path.
        registry: The registry host, as mlcc names it.

    Returns:
        The username and secret the helper keeps for the registry (under its host or
        Docker Hub's URL), or None: no such helper on PATH, none stored, an identity token
        (``<token>``, which basic auth cannot use), or an answer that is late, too large or
        not the helper protocol's JSON. Nothing the helper says is logged.
    """
    program = shutil.which(HELPER_PREFIX + name) if _HELPER_NAME.match(name) else None
    if program is None:
        return None
    for server in _keys(registry):
        answer = _ask_helper(program, server)
        if not isinstance(answer, dict):
            continue
        user, secret = answer.get("Username"), answer.get("Secret")
        if isinstance(user, str) and isinstance(secret, str) and secret and user != "<token>":
            return Credentials(user, secret, f"{HELPER_PREFIX}{name}")
    return None


def _ask_helper(program: str, server: str) -> Any:
    """``<program> get`` with ``server`` on stdin: its JSON answer, or None (not found, a
    failure, past the deadline or the size limit: the helper is then killed)."""
    try:
        process = subprocess.Popen(
            [program, "get"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # its complaints may quote what it holds
        )
    except OSError:
        return None
    try:
        output = _bounded_answer(process, server.encode())
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
    if output is None or process.returncode != 0:
        return None
    try:
        return json.loads(output)
    except (ValueError, RecursionError):
        return None


def _bounded_answer(process: subprocess.Popen[bytes], query: bytes) -> Optional[bytes]:
    if process.stdin is None or process.stdout is None:  # both are pipes: never
        return None
    try:
        process.stdin.write(query)
        process.stdin.close()
    except OSError:  # it exited without reading: its exit code says the rest
        pass
    deadline = time.monotonic() + HELPER_SECONDS
    chunks: List[bytes] = []
    size = 0
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(timeout=left):
                return None  # past the deadline
            chunk = os.read(process.stdout.fileno(), 8192)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_HELPER_BYTES:
                return None
            chunks.append(chunk)
    try:
        process.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return None
    return b"".join(chunks)


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
