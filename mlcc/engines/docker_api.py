"""The docker SDK against any Docker-API socket: dockerd, or ``podman system service``.

The socket comes from DOCKER_HOST (or the SDK's default). Registry credentials go per
call as ``auth_config``; ``client.login`` is avoided because podman's API refuses it for
plain-HTTP registries.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from pathlib import Path
from typing import Any, Dict, Optional

import docker

from mlcc.engines.base import EngineBuild, EngineSettings, ImageEngine, Log
from mlcc.errors import BuildError, Interrupted, RegistryError, UsageError
from mlcc.image.auth import Credentials
from mlcc.image.reference import Reference
from mlcc.image.sizes import ImageSizes, from_engine_history

_BUILT = re.compile(r"(?:Successfully built |^)([0-9a-f]{12,64})\s*$")


class Docker(ImageEngine):
    """The docker SDK against the Docker API socket of DOCKER_HOST (dockerd or podman's service)."""

    name = "docker"

    def __init__(self, settings: EngineSettings) -> None:
        """Keep the settings; the client connects on first use.

        Args:
            settings: Unused by this engine (it needs no cluster settings).
        """
        super().__init__(settings)
        self._client: Any = None
        self._stop = threading.Event()  # Ctrl-C: stop reading the running build

    def interrupt(self) -> None:
        """Stop the running build at its next output line (Ctrl-C): its stream is closed,
        which ends the API request, and it fails with :class:`~mlcc.errors.Interrupted`.
        A step that prints nothing runs on until it prints."""
        self._stop.set()

    @property
    def client(self) -> Any:
        """The SDK client, connected and pinged on first use.

        Raises:
            UsageError: No Docker API answers at DOCKER_HOST (or the default socket).
        """
        if self._client is None:
            try:
                self._client = docker.from_env(timeout=600)
                self._client.ping()
            except Exception as error:  # the SDK raises several kinds for a missing daemon
                self._client = None
                where = os.environ.get("DOCKER_HOST", "the default socket (/var/run/docker.sock)")
                raise UsageError(
                    f"--backend docker: no Docker API at {where}: {error}",
                    hint="start dockerd, or `podman system service`, and set DOCKER_HOST=unix:///path/to.sock",
                ) from None
        return self._client

    def check(self) -> None:
        """Connect to the Docker API.

        Raises:
            UsageError: No Docker API answers; the hint says how to start one.
        """
        _ = self.client

    def build_image(self, spec: EngineBuild, log: Log) -> str:
        """Build through the API (``/build``), streaming its output to ``log``.

        Args:
            spec: The context folder, Dockerfile, platform, build args, labels, cache and
                network settings.
            log: Receives the build output line by line.

        Returns:
            The image id the daemon reported.

        Raises:
            BuildError: The daemon reported an error, the API call failed, or no image id came.
            Interrupted: Ctrl-C (:meth:`interrupt`) stopped reading the build.
        """
        kwargs: Dict[str, Any] = {
            "path": str(spec.context),
            "dockerfile": spec.dockerfile,
            "buildargs": dict(spec.build_args),
            "labels": dict(spec.labels),
            "platform": spec.platform,
            "rm": True,
            "forcerm": True,
            "nocache": spec.no_cache,
            "decode": True,
        }
        if spec.network:
            kwargs["network_mode"] = spec.network
        if spec.source_date_epoch is not None:
            # a BuildKit daemon takes the image's created time from this build argument; the
            # API's classic builder has no option to rewrite its layers' file times (the
            # reproducing docs page says so)
            kwargs["buildargs"]["SOURCE_DATE_EPOCH"] = str(spec.source_date_epoch)
        if not spec.tls_verify:  # the build API has no such setting: the daemon's decides
            log(NO_TLS_VERIFY_NOTE)
        image = ""
        stream: Any = ()
        try:
            stream = self.client.api.build(**kwargs)
            for chunk in stream:
                if self._stop.is_set():
                    raise Interrupted("docker build was interrupted (Ctrl-C)")
                if "error" in chunk:
                    log(str(chunk["error"]))
                    raise log.failure("docker build failed", str(chunk["error"]).strip().splitlines()[-1])
                for line in str(chunk.get("stream", "")).splitlines():
                    log(line)
                    match = _BUILT.search(line.strip())
                    if match:
                        image = match.group(1)
                aux = chunk.get("aux")
                if isinstance(aux, dict) and aux.get("ID"):
                    image = str(aux["ID"])
        except (BuildError, Interrupted):
            raise
        except Exception as error:
            raise log.failure("docker build failed", str(error)) from None
        finally:
            if hasattr(stream, "close"):  # the SDK's generator: closing it ends the request
                stream.close()
        if not image:
            raise log.failure("docker build reported no image id")
        return image

    def tag(self, image: str, ref: str) -> None:
        """Tag a local image.

        Args:
            image: The image id or an existing reference.
            ref: The new reference, ``repository:tag``.

        Raises:
            docker.errors.APIError: The daemon refused (an unknown image: ImageNotFound).
        """
        repository, _, tag = ref.rpartition(":")
        self.client.images.get(image).tag(repository, tag)

    def push(self, ref: Reference, *, tls_verify: bool, credentials: Optional[Credentials], log: Log) -> None:
        """Push through the API, credentials per call as ``auth_config``.

        Args:
            ref: The image to push.
            tls_verify: Used for the hint only: the daemon's own configuration decides TLS.
            credentials: The registry login, or None.
            log: Receives the push status lines.

        Raises:
            RegistryError: The push failed; the hint names the likely cause.
        """
        auth = {"username": credentials.username, "password": credentials.password} if credentials else None
        try:
            stream = self.client.api.push(ref.name, tag=ref.tag, auth_config=auth, stream=True, decode=True)
            for chunk in stream:
                if "error" in chunk:
                    message = str(chunk["error"])
                    log(message)
                    raise RegistryError(
                        f"docker push of {ref} failed: {message}", hint=_hint(message, tls_verify)
                    )
                status = chunk.get("status")
                if status and chunk.get("progressDetail") in (None, {}):
                    log(str(status))
        except RegistryError:
            raise
        except Exception as error:
            raise RegistryError(
                f"docker push of {ref} failed: {error}", hint=_hint(str(error), tls_verify)
            ) from None

    def exists(self, ref: str) -> bool:
        """Whether the daemon holds ``ref``.

        Args:
            ref: The image reference.

        Returns:
            True when the daemon has it; False when it has not, or the API refused to say.
        """
        try:
            self.client.images.get(ref)
        except docker.errors.ImageNotFound:
            return False
        except docker.errors.APIError:
            return False
        return True

    def layer_sizes(self, image: str) -> Optional[ImageSizes]:
        """Each layer's uncompressed size from the daemon's image history
        (``GET /images/{name}/history``, what ``docker history`` prints).

        Args:
            image: The image id or a local reference.

        Returns:
            The sizes, or None when the daemon does not know the image.
        """
        try:
            history = self.client.images.get(image).history()
        except docker.errors.APIError:
            return None
        return from_engine_history(json.dumps(history))

    def save(self, ref: str, destination: Path) -> Path:
        """Write ``ref`` as a docker-archive (``docker save``).

        Args:
            ref: The image reference.
            destination: The archive file to write.

        Returns:
            ``destination``.

        Raises:
            docker.errors.APIError: The daemon could not export it.
        """
        image = self.client.images.get(ref)
        with destination.open("wb") as handle:
            for chunk in image.save(named=True):
                handle.write(chunk)
        return destination

    def remove(self, ref: str) -> None:
        """Remove a local tag; what the daemon refuses is ignored.

        Args:
            ref: The reference to remove.
        """
        with contextlib.suppress(docker.errors.APIError):
            self.client.images.remove(ref, noprune=False)


NO_TLS_VERIFY_NOTE = (
    "note: --no-tls-verify does not reach docker's pull of the base: the daemon decides TLS per "
    "registry (insecure-registries in /etc/docker/daemon.json)"
)


def _hint(message: str, tls_verify: bool) -> str:
    lowered = message.lower()
    if "unauthorized" in lowered or "authentication" in lowered or "denied" in lowered:
        return "check the registry credentials (the password is never shown)"
    if "https" in lowered and "http" in lowered:
        return "the daemon talks https to this registry: mark it insecure in its configuration"
    if "connection refused" in lowered:
        return "is the registry running and reachable from the daemon?"
    return "see the daemon's message"
