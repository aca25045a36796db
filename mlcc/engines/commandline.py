"""buildah and podman, run through the ``sh`` library.

Both read containers.conf, storage.conf and registries.conf (and BUILDAH_ISOLATION) the
way they always do, so a host's workarounds live in its configuration, not in mlcc.
Credentials reach them only as an auth file (``--authfile``), never as ``--creds``,
which any user could read in the process list.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import tempfile
import threading
from pathlib import Path
from typing import Any, ClassVar, Dict, List, Optional

import sh

from mlcc.engines.base import EngineBuild, EngineSettings, ImageEngine, Log
from mlcc.errors import Interrupted, RegistryError, UsageError
from mlcc.image.auth import AuthFile, Credentials
from mlcc.image.reference import Reference
from mlcc.image.sizes import ImageSizes, from_engine_history


class CliEngine(ImageEngine):
    """A local engine driven through its command line: what buildah and podman share."""

    program: ClassVar[str]
    build_verb: ClassVar[str]
    registry_cache = True  # --cache-from / --cache-to

    def check(self) -> None:
        """Make sure the engine's program is on PATH.

        Raises:
            UsageError: It is not installed; the hint says how to install it.
        """
        if shutil.which(self.program) is None:
            raise UsageError(
                f"--backend {self.name}: {self.program} is not installed",
                hint=f"install it (apt-get or dnf install {self.program}) or pick another --backend",
            )

    def __init__(self, settings: EngineSettings) -> None:
        """Keep the settings, and no program running yet.

        Args:
            settings: Unused by local engines (kept for the interface).
        """
        super().__init__(settings)
        self._running: Dict[int, Any] = {}  # the logged programs (builds, pushes) now running, by id
        self._lock = threading.Lock()
        self._interrupted = False

    def interrupt(self) -> None:
        """Send SIGINT to every build and push this engine runs, as a terminal's Ctrl-C would
        (a ``kill -INT`` or a CI runner's cancel reaches mlcc alone); later ones are stopped
        as they start. Each then fails with :class:`~mlcc.errors.Interrupted`."""
        with self._lock:
            self._interrupted = True
            running = list(self._running.values())
        for process in running:
            with contextlib.suppress(Exception):  # it may have ended meanwhile
                process.signal(signal.SIGINT)

    def _run(self, *args: str, log: Optional[Log] = None) -> str:
        command = sh.Command(self.program)
        if log is None:
            return str(command(*args, _err_to_out=True, _new_session=False))
        # in the background so that Ctrl-C can stop the engine, not just mlcc
        process = command(*args, _out=log, _err=log, _bg=True, _bg_exc=False, _new_session=False)
        with self._lock:
            self._running[id(process)] = process
            interrupted = self._interrupted
        try:
            if interrupted:  # started just after a Ctrl-C: stopped at once
                process.signal(signal.SIGINT)
            process.wait()
        except KeyboardInterrupt:
            with contextlib.suppress(Exception):
                process.signal(signal.SIGINT)
                process.wait(timeout=30)
            with contextlib.suppress(Exception):
                process.kill()
            raise
        except sh.ErrorReturnCode as error:
            # ended by SIGINT: ours (interrupt) or a terminal's Ctrl-C, which reaches the group
            if self._interrupted or error.exit_code in (-signal.SIGINT, 128 + signal.SIGINT):
                raise Interrupted(f"{self.program} {args[0]} was interrupted (Ctrl-C)") from None
            raise
        finally:
            with self._lock:
                self._running.pop(id(process), None)
        return ""

    def layer_sizes(self, image: str) -> Optional[ImageSizes]:
        """Each layer's uncompressed size from ``podman history --format json``.

        buildah keeps no per-layer sizes of its own and shares containers-storage with
        podman, so both engines ask podman; without podman on PATH the figures are unknown.

        Args:
            image: The image id or a local reference.

        Returns:
            The sizes, or None when podman is missing or does not know the image.
        """
        if shutil.which("podman") is None:
            return None
        try:
            text = str(sh.Command("podman")("history", "--format", "json", image, _err_to_out=False))
        except sh.ErrorReturnCode:
            return None
        return from_engine_history(text)

    def build_image(self, spec: EngineBuild, log: Log) -> str:
        """Build with ``<program> <build_verb> --layers --iidfile``, output to ``log``.

        Args:
            spec: The context folder, Dockerfile, platform, build args, labels, cache and
                network settings.
            log: Receives the engine's output line by line.

        Returns:
            The image id the engine wrote to its iidfile.

        Raises:
            BuildError: The engine exited non-zero or wrote no image id; the error names the
                failed step.
            Interrupted: Ctrl-C (or :meth:`interrupt`) stopped the engine.
            KeyboardInterrupt: Ctrl-C in the thread that runs it, after the engine was stopped.
        """
        with tempfile.TemporaryDirectory(prefix="mlcc-iid-") as scratch:
            iidfile = Path(scratch) / "iid"
            args: List[str] = [self.build_verb, "--layers", "--iidfile", str(iidfile)]
            # --force-rm: a failed build removes its working containers too (buildah keeps
            # them by default, and they pile up in CI); --tls-verify reaches the base's pull
            args += ["--force-rm", f"--tls-verify={'true' if spec.tls_verify else 'false'}"]
            args += ["--file", str(spec.context / spec.dockerfile), "--platform", spec.platform]
            for name, value in spec.build_args:
                args += ["--build-arg", f"{name}={value}"]
            for name, value in spec.labels:
                args += ["--label", f"{name}={value}"]
            if spec.no_cache:
                args.append("--no-cache")
            if spec.network:
                args += ["--network", spec.network]
            if spec.source_date_epoch is not None:  # the image's and its layers' file times
                args += ["--timestamp", str(spec.source_date_epoch)]
            registry = spec.cache_repo.registry if spec.cache_repo else ""
            with AuthFile(registry, spec.cache_credentials) as auth:
                if spec.cache_repo:
                    repository = str(spec.cache_repo)
                    args += ["--cache-from", repository, "--cache-to", repository]
                    if auth.path:
                        args += ["--authfile", auth.path]
                args.append(str(spec.context))
                try:
                    self._run(*args, log=log)
                except sh.ErrorReturnCode as error:
                    raise log.failure(f"{self.name} build failed (exit {error.exit_code})") from None
            image = iidfile.read_text().strip() if iidfile.exists() else ""
        if not image:
            raise log.failure(f"{self.name} build produced no image id")
        return image

    def tag(self, image: str, ref: str) -> None:
        """Tag a local image (``<program> tag``).

        Args:
            image: The image id or an existing reference.
            ref: The new reference.

        Raises:
            UsageError: The engine refused, with its last output line.
        """
        self._checked("tag", image, ref)

    def push(self, ref: Reference, *, tls_verify: bool, credentials: Optional[Credentials], log: Log) -> None:
        """Push with ``<program> push``, credentials only as a private auth file.

        Args:
            ref: The image to push.
            tls_verify: Verify the registry's TLS certificate.
            credentials: The registry login, or None.
            log: Receives the engine's output.

        Raises:
            RegistryError: The push failed; the hint names the likely cause (credentials,
                plain HTTP, an unreachable registry).
        """
        with AuthFile(ref.registry, credentials) as auth:
            args = ["push", f"--tls-verify={'true' if tls_verify else 'false'}"]
            if auth.path:
                args += ["--authfile", auth.path]
            args += [str(ref), f"docker://{ref}"]
            try:
                self._run(*args, log=log)
            except sh.ErrorReturnCode as error:
                text = " ".join(log.tail)
                raise RegistryError(
                    f"{self.name} push of {ref} failed (exit {error.exit_code})",
                    details=list(log.tail)[-6:],
                    hint=_push_hint(text, ref, tls_verify),
                ) from None

    def exists(self, ref: str) -> bool:
        """Whether the engine's storage holds ``ref``.

        Args:
            ref: The image reference.

        Returns:
            True when the engine's inspect finds it.
        """
        try:
            self._run(*self._exists_args(ref))
        except sh.ErrorReturnCode:
            return False
        return True

    def _exists_args(self, ref: str) -> List[str]:
        return ["inspect", "--type", "image", ref]

    def remove(self, ref: str) -> None:
        """Remove a local tag; a missing one is not an error.

        Args:
            ref: The reference to remove.
        """
        with contextlib.suppress(sh.ErrorReturnCode):
            self._run("rmi", ref)

    def _checked(self, *args: str) -> str:
        try:
            return self._run(*args)
        except sh.ErrorReturnCode as error:
            output = error.stdout.decode(errors="replace").strip().splitlines()
            raise UsageError(
                f"{self.program} {args[0]} failed: {output[-1] if output else error.exit_code}"
            ) from None


def _push_hint(text: str, ref: Reference, tls_verify: bool) -> str:
    lowered = text.lower()
    if "unauthorized" in lowered or "authentication required" in lowered or "denied" in lowered:
        return (
            "check the registry credentials (podman login / docker login, "
            "or MLCC_REGISTRY_USERNAME and MLCC_REGISTRY_PASSWORD)"
        )
    if "http response to https client" in lowered or ("tls" in lowered and tls_verify):
        return "a plain-HTTP registry needs --no-tls-verify"
    if "connection refused" in lowered or "no such host" in lowered:
        return f"is the registry {ref.registry} running and reachable?"
    return "see the engine's message above"


class Buildah(CliEngine):
    """buildah: daemonless, builds with ``buildah bud``."""

    name = "buildah"
    program = "buildah"
    build_verb = "bud"

    def save(self, ref: str, destination: Path) -> Path:
        """Write ``ref`` as an OCI archive (``buildah push ref oci-archive:...``).

        Args:
            ref: The image in buildah's storage.
            destination: The archive file to write.

        Returns:
            ``destination``.

        Raises:
            UsageError: buildah could not write it.
        """
        self._checked("push", ref, f"oci-archive:{destination}")
        return destination


class Podman(CliEngine):
    """podman: daemonless, builds with ``podman build``."""

    name = "podman"
    program = "podman"
    build_verb = "build"

    def _exists_args(self, ref: str) -> List[str]:
        return ["image", "exists", ref]

    def save(self, ref: str, destination: Path) -> Path:
        """Write ``ref`` as an OCI archive (``podman save --format oci-archive``).

        Args:
            ref: The image in podman's storage.
            destination: The archive file to write.

        Returns:
            ``destination``.

        Raises:
            UsageError: podman could not write it.
        """
        self._checked("save", "--format", "oci-archive", "--output", str(destination), ref)
        return destination
