"""The container-engine interface every backend implements (repo2docker's idea: one small
abstract class, engines behind it), and what a build is asked to do."""

from __future__ import annotations

import collections
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Callable, ClassVar, Deque, NamedTuple, Optional, Tuple

from mlcc.errors import BuildError
from mlcc.image.auth import Credentials
from mlcc.image.reference import Reference


class BuildSpec(NamedTuple):
    """One image to build from a context folder."""

    context: Path
    platform: str  # linux/amd64, linux/ppc64le ...
    build_args: Tuple[Tuple[str, str], ...] = ()
    dockerfile: str = "Dockerfile"
    no_cache: bool = False
    network: Optional[str] = None  # e.g. "host" when the builder's default network is none


class Log:
    """Where build output goes: a callback per line, plus the tail kept for error messages."""

    def __init__(self, sink: Optional[Callable[[str], None]] = None, keep: int = 40) -> None:
        self.sink = sink
        self.tail: Deque[str] = collections.deque(maxlen=keep)

    def __call__(self, line: str) -> None:
        line = line.rstrip("\n")
        if not line:
            return
        self.tail.append(line)
        if self.sink is not None:
            self.sink(line)

    def failure(self, what: str, detail: str = "") -> BuildError:
        """A BuildError naming the step that failed (as the engine printed it) and the output's end."""
        step = next(
            (line for line in reversed(self.tail) if "STEP" in line or line.startswith("Step ")), None
        )
        if step is not None:
            step = step.removeprefix("Error: ").removeprefix("error ").removeprefix("building at ")
        details = [*([f"failed at {step}"] if step else []), *list(self.tail)[-15:]]
        return BuildError(f"{what}{': ' + detail if detail else ''}", details=details)


class Engine(ABC):
    """A container engine: builds, tags, pushes and saves images.

    Every engine takes the same BuildSpec, tags the image only once the build succeeded
    (an interrupted build leaves no tag behind) and raises BuildError for a failed build
    and RegistryError for a failed push, with the engine's own message attached.
    """

    name: ClassVar[str]

    @abstractmethod
    def check(self) -> None:
        """Raise UsageError when the engine cannot run here, saying how to fix it."""

    @abstractmethod
    def build(self, spec: BuildSpec, log: Log) -> str:
        """Build and return the image id (untagged)."""

    @abstractmethod
    def tag(self, image: str, ref: str) -> None: ...

    @abstractmethod
    def push(
        self, ref: Reference, *, tls_verify: bool, credentials: Optional[Credentials], log: Log
    ) -> None: ...

    @abstractmethod
    def exists(self, ref: str) -> bool:
        """Is ``ref`` in the engine's local storage?"""

    @abstractmethod
    def save(self, ref: str, destination: Path) -> Path:
        """Write ``ref`` to an archive mlcc can read (oci-archive or docker-archive)."""

    def remove(self, ref: str) -> None:  # noqa: B027 - optional for engines that can
        """Remove a local tag (tests clean up with it)."""
