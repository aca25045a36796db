"""What a build plan is made of: its steps, the plan, the options a user may override, and
the paths and constants every part of the planner writes."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Optional, Tuple

from mlcc.kb.pip_locks import PipInstall
from mlcc.render.mirror import MIRROR_NAME
from mlcc.render.verified import MirrorUse

if TYPE_CHECKING:
    from mlcc.render.fetches import Record as FetchRecord


VENV = "/opt/mlcc/venv"
CONDA_ROOT = "/opt/conda"
NCCL_TARBALL_HOME = "/opt/nccl"
# The source date of every image (reproducible-builds.org's SOURCE_DATE_EPOCH): the time the
# engines stamp on the image and its layers' files, and what build steps read (Python >= 3.7
# then writes hash-based .pyc files). 1980-01-01: the earliest time a ZIP file (a wheel pip
# builds from an sdist) can hold; a stack has no date of its own that every machine agrees on.
SOURCE_DATE_EPOCH = 315532800
# A runtime image's build stage gathers here, under their own paths, the files its final
# stage takes besides the environment (cuDNN's and NCCL's shared libraries from tarballs).
HANDOFF = "/opt/mlcc/runtime-files"
# ldconfig, then without the cache it keeps of each library's inode and change time to speed
# itself up (glibc elf/cache.c, /var/cache/ldconfig/aux-cache): it differs on every build of
# the same files, and nothing needs it.
LDCONFIG = ("ldconfig", "rm -f /var/cache/ldconfig/aux-cache")
FROM_BUILD_STAGE = "its shared libraries come from the build stage"
MLCC_HOME = "/opt/mlcc/home"
MANIFEST_DIR = "/etc/mlcc"
RECORDER = "/usr/local/bin/mlcc-record"
SCRIPTS = "/opt/mlcc/scripts"
NON_ROOT_UID = "1001"
# Miniforge's channel: `-c conda-forge` is spelled out as a URL on the conda host (the one
# conda's channel_alias names), so that --conda-mirror replaces it
CONDA_FORGE = "conda-forge"
LOCAL_SOURCE = (
    "the benchmark's own package from its source checkout (pinned by full commit above):"
    " pip cannot hash a directory, and the dependencies its setup.py declares are not locked"
)
# A pip step on an image base (NGC) whose own packages mlcc cannot list: its exact pins are
# hash-locked and installed with --no-deps first, then the same requirements again, which pip
# finds installed and completes with what they need that the base lacks (not hash-locked)
BASE_DEPENDENCIES = (
    "the dependencies of these pins that {image} lacks: pip resolves them against the base"
    " image's own packages, which mlcc cannot list, so they are not hash-locked (the pins"
    " themselves are, installed just before with --no-deps and --require-hashes)"
)
LOCAL_SOURCE_NO_DEPS = (
    "the benchmark's own package from its source checkout (pinned by full commit above):"
    " pip cannot hash a directory; it is installed with --no-deps, since the steps before it"
    " install the dependencies its setup.py declares (the recipe's note names them)"
)


# The stages of a build, in order. "stack" is the prefix every benchmark on the same base +
# CUDA + cuDNN + NCCL + Python shares; chained OpenShift builds make one image per stage.
STAGES = ("stack", "framework", "benchmark")
# The name of a runtime image's first stage, which its final stage copies from.
BUILD_STAGE = "build"


class Step(NamedTuple):
    """One build step: a comment, shell commands run as one layer, then environment."""

    title: str
    commands: Tuple[str, ...] = ()
    env: Tuple[Tuple[str, str], ...] = ()
    copies: Tuple[Tuple[str, str], ...] = ()
    stage: str = "benchmark"
    # Comment lines under the title: why a step departs from a rule (a short commit hash,
    # a download without a checksum). `mlcc lint` reads "mlcc: <rule> waived" notes.
    notes: Tuple[str, ...] = ()
    # The directory the commands run in (WORKDIR in a Dockerfile, cd elsewhere); the next
    # step starts in / again. None: /.
    workdir: Optional[str] = None
    # Mirror build args first used here, declared just before it (see place_args).
    args: Tuple[Tuple[str, Optional[str]], ...] = ()
    # What install.sh runs on a bare-metal host instead, when that differs from an image's
    # step (None: the same): an image's OpenShift permissions have no place on a host.
    host: Optional[Step] = None
    # The build stage the copies come from (a runtime image's final stage), None: the context.
    from_stage: Optional[str] = None

    @property
    def shared(self) -> bool:
        """Part of the stack prefix every benchmark on this stack shares."""
        return self.stage == "stack"


class Plan(NamedTuple):
    base_image: str
    mirror: str
    steps: Tuple[Step, ...]
    labels: Tuple[Tuple[str, str], ...]
    workdir: Optional[str]
    user: Optional[str]
    entrypoint: Tuple[str, ...]
    cmd: Tuple[str, ...]
    # Mirror build arguments besides NVIDIA_MIRROR, each with its default (None: declared
    # without one, e.g. pip's PIP_INDEX_URL, which pip reads only when it is set).
    build_args: Tuple[Tuple[str, Optional[str]], ...] = ()
    # Every pip install of the build, in order: (id, id of the one before, what it asks).
    pip_installs: Tuple[Tuple[str, Optional[str], PipInstall], ...] = ()
    # Every fetch of the build and how it is pinned, in order, URLs as the steps write them
    # (stack.json's ``fetches``, see mlcc.render.fetches).
    fetches: Tuple[FetchRecord, ...] = ()
    # Every mirror build argument the build declares (NVIDIA_MIRROR first) and whether the
    # bytes fetched through it are verified (see mlcc.render.verified): what the content
    # digest sees of a mirror.
    mirrors: Tuple[MirrorUse, ...] = ()
    # A runtime image's build stage (BUILD_STAGE): what it compiles and installs, on the devel
    # stack; ``steps`` are then the final stage's, on the runtime stack. Empty: one stage.
    build_steps: Tuple[Step, ...] = ()
    # What a runtime image's final stage is FROM when that is not the build stage's base: a
    # chained build's runtime stage image (the RUNTIME_IMAGE build arg). None: BASE_IMAGE.
    runtime_base: Optional[str] = None

    @property
    def runtime_env(self) -> Tuple[Tuple[str, str], ...]:
        return tuple(item for step in self.steps for item in step.env)

    def hashed(self) -> Plan:
        """The plan as the content digest sees it: every verified mirror at its
        placeholder (:attr:`MirrorUse.placeholder`: the public host it replaces; pip's
        settings unset). ``self`` when each is there already (no mirror option asked for
        a verified mirror), so a rendering without mirrors is its own hashed form."""
        values = {m.var: m.placeholder for m in self.mirrors if m.verified and m.value != m.placeholder}
        if not values:
            return self

        def args(pairs: Tuple[Tuple[str, Optional[str]], ...]) -> Tuple[Tuple[str, Optional[str]], ...]:
            return tuple((name, values.get(name, value)) for name, value in pairs)

        return self._replace(
            mirror=values.get(MIRROR_NAME) or self.mirror,
            build_args=args(self.build_args),
            steps=tuple(step._replace(args=args(step.args)) if step.args else step for step in self.steps),
            build_steps=tuple(
                step._replace(args=args(step.args)) if step.args else step for step in self.build_steps
            ),
            mirrors=tuple(m._replace(value=values[m.var]) if m.var in values else m for m in self.mirrors),
        )

    @property
    def placeholders(self) -> Tuple[Tuple[str, Optional[str]], ...]:
        """(build argument, placeholder) of each verified mirror: the digest hashes that
        build argument so, whatever value it is given."""
        return tuple((m.var, m.placeholder) for m in self.mirrors if m.verified)


class Options(NamedTuple):
    """What the user may override without changing the stack (air-gapped sites)."""

    base_image: Optional[str] = None
    mirror: Optional[str] = None
    # (build argument, URL) for the other mirrors asked for: GIT_MIRROR, PIP_INDEX_URL ...
    mirrors: Tuple[Tuple[str, str], ...] = ()


DEFAULT_OPTIONS = Options()


# ----------------------------------------------------------------------- package managers
