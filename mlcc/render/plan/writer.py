"""The planner's state and the helpers every part of it writes steps with: the steps so far,
the library path, the pip environment and its lock records, and what was fetched."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from mlcc.kb.lock_ids import environment_id, install_id
from mlcc.kb.model import PinnedPackage
from mlcc.kb.pip_locks import LockedInstall, LockTarget, PipInstall
from mlcc.render import fetches
from mlcc.render.manifest import pinned
from mlcc.render.mirror import routes, through_mirrors
from mlcc.render.plan.commands import (
    _env_prefix,
    _install,
    _requirement_word,
    _sh,
    _url_word,
    locked_pip_command,
)
from mlcc.render.plan.model import Options, Step
from mlcc.resolve.stack import Stack

if TYPE_CHECKING:
    from mlcc.render.fetches import Record as FetchRecord


def spell_gpu_arch(
    stack: Stack, env: Sequence[Tuple[str, str]], own: Sequence[str] = ()
) -> List[Tuple[str, str]]:
    """``env`` with the CUDA arch lists as --gpu spells them (see :meth:`Writer.gpu_arch`):
    the image's ENV and the run objects' pod env take their values from here, so the two agree.

    Args:
        stack: the resolved stack (its ``gpu_arch_env`` is empty without --gpu).
        env: the recipe's (name, value) pairs, in order.
        own: the arch-list variables the build declares; one ``env`` lacks is added with --gpu.

    Returns:
        The pairs, each arch list replaced by the GPU's spelling, then the added ones.
    """
    spelled = dict(stack.gpu_arch_env)
    given = {name for name, _ in env}
    added = [(name, spelled[name]) for name in own if name in spelled and name not in given]
    return [(name, spelled.get(name, value)) for name, value in env] + added


class StepWriter:
    """The steps planned so far and how a step is added (each part of the planner adds its
    own: :mod:`.stack`, :mod:`.framework`, :mod:`.benchmark`)."""

    def __init__(self, stack: Stack, options: Options) -> None:
        self.stack = stack
        self.options = options
        self.base = stack.base
        self.manager = stack.base.packaging.manager(stack.base.package_manager)
        self.arch = stack.arch.name
        self.hosts = routes(stack.hosts)  # a URL on one of them goes through its build arg
        self.library_path: List[str] = []
        self.steps: List[Step] = []
        python = stack.python.version if stack.python else ""
        self.pip_target = LockTarget(python, self.arch, self.base.glibc)
        self.pip_previous: Optional[str] = None  # the id of the last pip install
        self.pip_environment = "venv"
        self.pip_installs: List[Tuple[str, Optional[str], PipInstall]] = []
        self.pending_notes: List[str] = []  # lock notes of the pip commands of the next step
        self.fetched: List[FetchRecord] = []
        # fetches through a mirror that no record describes: (build argument, why unverified)
        self.unrecorded: List[Tuple[str, str]] = []
        # planning a runtime image's final stage: runtime packages, nothing built
        self.runtime_stage = False

    # helpers ------------------------------------------------------------------

    def install(self, names: Sequence[str]) -> Tuple[str, ...]:
        if not names:
            return ()
        return _install(self.manager, tuple(names))

    def pinned(self, packages: Tuple[PinnedPackage, ...]) -> Tuple[str, ...]:
        return pinned(self.base.packaging, packages)

    def add_library_path(self, *paths: str) -> Tuple[str, str]:
        for path in paths:
            if path not in self.library_path:
                self.library_path.append(path)
        return ("LD_LIBRARY_PATH", ":".join(self.library_path))

    def add(
        self,
        title: str,
        commands: Sequence[str] = (),
        env: Sequence[Tuple[str, str]] = (),
        copies: Sequence[Tuple[str, str]] = (),
        stage: str = "benchmark",
        notes: Sequence[str] = (),
        workdir: Optional[str] = None,
    ) -> None:
        notes = [*notes, *self.pending_notes]
        self.pending_notes = []
        self.steps.append(
            Step(title, tuple(commands), tuple(env), tuple(copies), stage, tuple(notes), workdir)
        )

    def pip(
        self,
        requirements: Sequence[str],
        *,
        index: Optional[str] = None,
        extra_index: Optional[str] = None,
        find_links: Optional[str] = None,
        no_deps: bool = False,
        env: Sequence[Tuple[str, str]] = (),
        origins: Sequence[str] = (),
        python: str = "python",
        unlockable: Optional[str] = None,
    ) -> str:
        """One pip install: hash-locked when recipes/locks/ has it, else with the reason why
        not as a note of the step (a ``DF011`` waiver when the lock states one)."""
        install = PipInstall(
            tuple(requirements),
            index,
            extra_index,
            find_links,
            no_deps,
            self.pip_environment,
            tuple(origins),
            unlockable,
        )
        locked = self.record_pip(install)
        words = [python, "-m", "pip", "install", "--no-cache-dir"]
        if no_deps:
            words.append("--no-deps")
        line = _sh(words)
        for flag, url in (
            ("--index-url", index),
            ("--extra-index-url", extra_index),
            ("--find-links", find_links),
        ):
            if url:
                line += f" {flag} {_url_word(through_mirrors(url, self.stack.download_host, self.hosts))}"
        if fetches.hash_locked(locked):
            assert locked is not None
            return locked_pip_command(_env_prefix(env) + line, locked)
        if unlockable is not None:
            self.pending_notes.append(f"mlcc: DF011 waived: {' '.join(unlockable.split())}")
        elif locked is not None and locked.unlocked:
            self.pending_notes.append(f"mlcc: DF011 waived: {' '.join(locked.unlocked.split())}")
        else:
            self.pending_notes.append(f"mlcc: not hash-locked: {fetches.no_lock(self.lock_file)}")
        return (
            _env_prefix(env) + line + " " + " ".join(_requirement_word(r, self.hosts) for r in requirements)
        )

    def record_pip(self, install: PipInstall) -> Optional[LockedInstall]:
        """Chain ``install`` after the previous pip install; what the lock says of it."""
        previous = self.pip_previous
        ident = install_id(previous, self.pip_target, install)
        self.pip_installs.append((ident, previous, install))
        self.pip_previous = ident
        locks = self.stack.pip_locks
        locked = locks.get(ident) if locks is not None else None
        self.fetched += fetches.pip(ident, install, locked, self.lock_file, self.hosts)
        return locked

    @property
    def lock_file(self) -> str:
        return self.stack.pip_locks.path if self.stack.pip_locks else "recipes/locks/"

    def new_environment(self, name: str, what: Sequence[str]) -> None:
        """pip installs after this go into another interpreter's site-packages (conda)."""
        self.pip_environment = name
        self.pip_previous = environment_id(self.pip_target, [name, *what])

    # sections -----------------------------------------------------------------

    def gpu_arch(self, env: Sequence[Tuple[str, str]], own: Sequence[str] = ()) -> List[Tuple[str, str]]:
        """With --gpu, the CUDA arch lists of source builds name that GPU alone, spelled as
        each variable wants it (Stack.gpu_arch_env), instead of the recipe's default list.
        ``own`` names the variables the build declares itself: one ``env`` does not set is
        added with --gpu (without it the build's tools keep their own default list)."""
        return spell_gpu_arch(self.stack, env, own)

    def _host_url(self, var: str) -> str:
        """The public URL of the host the build argument ``var`` stands for."""
        return next(route.public for route in self.hosts if route.var == var)

    def _python_version(self) -> str:
        return self.stack.python.version if self.stack.python else ""
