"""The errors mlcc reports to users, each with its own exit code.

Every failure a user can cause (bad input, bad recipes, no compatible stack, a failed
build) is one of these; the CLI prints ``str(error)`` to stderr and exits with
``error.exit_code``. Anything else is a bug and still gets a one-line message.
"""

from __future__ import annotations

from typing import ClassVar, Optional, Sequence

# Exit codes, documented in README.md ("Exit codes").
EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_CONFLICT = 3
EXIT_BUILD = 4
EXIT_REGISTRY = 5
EXIT_DRIFT = 6
EXIT_STALE = 7
EXIT_LINT = 8
EXIT_HISTORY = 9
EXIT_FACTS = 10
EXIT_INCOMPLETE = 11
EXIT_INTERRUPTED = 130


class MlccError(Exception):
    """Base class: a message meant for the user, and an exit code."""

    exit_code: ClassVar[int] = EXIT_INTERNAL

    def __init__(
        self,
        message: str,
        *,
        hint: Optional[str] = None,
        details: Sequence[str] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.details = tuple(details)

    def __str__(self) -> str:
        lines = [self.message]
        lines.extend(f"  {d}" for d in self.details)
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)


class UsageError(MlccError):
    """The command line asks for something malformed or unknown."""

    exit_code = EXIT_USAGE


class RecipeError(MlccError):
    """A recipe file is malformed, violates its schema, or contradicts itself."""

    exit_code = EXIT_USAGE

    def __init__(
        self,
        path: str,
        line: Optional[int],
        message: str,
        *,
        hint: Optional[str] = None,
        details: Sequence[str] = (),
    ) -> None:
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {message}", hint=hint, details=details)
        self.path = path
        self.line = line


class ConflictError(MlccError):
    """No stack satisfies the benchmark's rules and the user's pins."""

    exit_code = EXIT_CONFLICT


class OutputError(MlccError):
    """Output could not be written (directory not writable, disk full ...)."""

    exit_code = EXIT_USAGE


class BuildError(MlccError):
    """A container build failed."""

    exit_code = EXIT_BUILD


class RegistryError(MlccError):
    """A registry could not be reached, refused credentials, or lacks an image."""

    exit_code = EXIT_REGISTRY


class DriftError(MlccError):
    """An image's recorded contents differ from its stamped stack."""

    exit_code = EXIT_DRIFT


class LintError(MlccError):
    """Build files break mlcc's lint rules."""

    exit_code = EXIT_LINT


class HistoryError(MlccError):
    """The build history database cannot be opened, is locked, or is damaged."""

    exit_code = EXIT_HISTORY


class StaleError(MlccError):
    """Committed generated files differ from what the generator produces now."""

    exit_code = EXIT_STALE


class IndexUnreachable(MlccError):
    """A package index (or a find-links page) could not be reached or refused the request."""

    exit_code = EXIT_REGISTRY

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(
            f"package index {url} could not be read: {reason}",
            hint="check the network, or point --index-url / PIP_INDEX_URL at a reachable mirror",
        )
        self.url = url


class FactError(MlccError):
    """`mlcc kb check` found recipe facts that their source (a package index) contradicts."""

    exit_code = EXIT_FACTS


class Interrupted(MlccError):
    """Ctrl-C (SIGINT) stopped a build: what was built before it is kept and recorded, the
    build it stopped is recorded as interrupted, and nothing after it starts."""

    exit_code = EXIT_INTERRUPTED


class IncompleteRecipe(MlccError, UserWarning):
    """The benchmark's recipe says INCOMPLETE: its image does not yet run the benchmark.

    A warning (Python's :mod:`warnings`, shown on stderr by the CLI) wherever a user meets
    such a recipe; ``mlcc --strict`` (or ``CI=true``) turns it into this error.
    """

    exit_code = EXIT_INCOMPLETE
