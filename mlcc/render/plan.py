"""From a resolved Stack to a build plan: ordered steps of shell commands and environment.

The plan is format-neutral; the Dockerfile, bash script and Apptainer definition are
three renderings of it (writers in ``formats/``). Package-manager commands are data in
recipes/families.yaml (the base's family and package manager), so nothing here spells
``dnf`` or ``apt-get``.

Layer order is chosen for the build cache: system packages, NVIDIA repositories, CUDA,
cuDNN, NCCL and the Python environment come first and depend on nothing else, so every
stack sharing base + CUDA + cuDNN + NCCL + Python renders the same leading instructions.
The compiler, framework and benchmark follow; the manifest and labels come last.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Dict, List, NamedTuple, Optional, Sequence, Set, Tuple, TypeVar

from packaging.utils import canonicalize_name

from mlcc.errors import MlccError
from mlcc.kb.lock_ids import environment_id, install_id
from mlcc.kb.model import CONDA, GIT, BuildStep, LibBuild, PackageManager, PinnedPackage
from mlcc.kb.pip_locks import LockedInstall, LockTarget, PipInstall
from mlcc.render import fetches
from mlcc.render.manifest import (
    CONDA_ENV,
    cuda_packages,
    image_cuda_packages,
    image_library_packages,
    image_python_packages,
    labels,
    pinned,
)
from mlcc.render.mirror import (
    MIRROR_NAME,
    MIRROR_VAR,
    PIP_SETTINGS,
    Route,
    host_mirrored,
    mirror_check,
    mirrored,
    routes,
    through_mirrors,
)
from mlcc.render.verified import MirrorUse, declared, mirror_uses
from mlcc.resolve.stack import Stack

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


def _install(manager: PackageManager, names: Tuple[str, ...]) -> Tuple[str, str]:
    return manager.install_commands(names)


def _sh(words: Sequence[str]) -> str:
    return " ".join([shlex.quote(w) for w in words])


def _url_word(url: str) -> str:
    """A URL as one shell word; a mirrored URL keeps its leading ${VAR} expandable and the
    rest literal (escaped for double quotes)."""
    if not url.startswith(("${", "git+${")):
        return shlex.quote(url)
    head, rest = url.split("}", 1)
    return f'"{head}}}{_double_quoted(rest)}"'


def _requirement_word(requirement: str, hosts: Sequence[Route]) -> str:
    """A pip requirement as one shell word, a URL on a mirrored host through its variable."""
    routed = host_mirrored(requirement, hosts)
    return _url_word(routed) if routed != requirement else shlex.quote(requirement)


# ----------------------------------------------------------------------- the planner


class _Planner:
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

    def plan(self) -> Plan:
        self.runtime_stack()
        self.compiler()
        if self.stack.framework is not None:
            self.framework()
        self.benchmark()
        if not self.stack.runtime:
            self.manifest()
            return self.finish()
        self.handoff()
        # The final stage: the same leading steps on runtime packages, then what the build made.
        built = tuple(self.steps)
        self.steps = []
        self.library_path = []
        self.runtime_stage = True
        self.runtime_stack()
        self.runtime_benchmark()
        self.manifest()
        return self.finish(built)

    def runtime_stack(self) -> None:
        """Base packages, NVIDIA repositories, CUDA, cuDNN, NCCL, Python: the steps every
        benchmark on the stack shares (devel packages, or runtime ones in a final stage)."""
        self.system()
        if self.stack.cuda is not None:
            self.nvidia_repositories()
            self.cuda()
            if self.stack.cudnn is not None:
                self.cudnn(self.stack.cudnn)
            if self.stack.nccl is not None:
                self.nccl(self.stack.nccl)
        if self.stack.python is not None:
            self.python()

    def system(self) -> None:
        if self.runtime_stage:
            self.add(
                "System packages a runtime image needs (versions follow the base image's release)",
                self.install(list(self.base.packaging.runtime_packages)),
                stage="stack",
            )
            return
        names = list(self.base.build_packages) + list(self.base.gcc_packages)
        self.add(
            "System packages for the build (versions follow the base image's release)",
            self.install(sorted(set(names), key=names.index)),
            stage="stack",
        )

    def nvidia_repositories(self) -> None:
        # the mirror is written into the repository files: a newline in it would add lines
        # (gpgcheck=0) to them, so the step checks a value given at build time first
        commands = [mirror_check()]
        notes = []
        for repo in self.stack.repositories:
            name = repo.name
            directory = self.stack.arch.nvidia_repo(self.base.family)
            baseurl = f"{MIRROR_VAR}/{repo.path}/{self.base.repo_distro}/{directory}"
            gpgkey = f"{baseurl}/{repo.key(self.base.family)}"
            command = self.base.packaging.nvidia_repo_command(name, baseurl, gpgkey)
            commands.append(command)
            # fetched by the package manager (rpm) or the command (apt): no sourced sha256
            if not self.runtime_stage:  # the build stage recorded the same fetch
                self.fetched.append(
                    fetches.download(f"nvidia-key:{name}", gpgkey, None, repo.key_sha256_unavailable)
                )
            # families whose command downloads the key itself (apt) say why it is unchecked
            if command.startswith("curl ") and repo.key_sha256_unavailable:
                reason = " ".join(repo.key_sha256_unavailable.split())
                notes.append(f"mlcc: DF010 waived: {repo.key(self.base.family)}: {reason}")
        nvidia_host = self.stack.download_host.split("://", 1)[-1]
        self.add(
            f"NVIDIA package repositories (NVIDIA_MIRROR replaces {nvidia_host})",
            commands,
            stage="stack",
            notes=notes,
        )

    def cuda(self) -> None:
        cuda = self.stack.cuda
        assert cuda is not None
        listed = (
            image_cuda_packages(self.stack)
            if self.runtime_stage
            else cuda_packages(cuda, self.base.packaging, self.arch)
        )
        packages = self.pinned(listed)
        commands = [
            *self.install(packages),
            f"ln -sfn cuda-{cuda.minor} /usr/local/cuda",
            "printf '%s\\n' /usr/local/nvidia/lib /usr/local/nvidia/lib64 > /etc/ld.so.conf.d/nvidia.conf",
            *LDCONFIG,
        ]
        env = [
            ("CUDA_VERSION", cuda.version),
            ("CUDA_HOME", "/usr/local/cuda"),
            ("PATH", "/usr/local/nvidia/bin:/usr/local/cuda/bin:${PATH}"),
            self.add_library_path("/usr/local/nvidia/lib", "/usr/local/nvidia/lib64"),
            ("LIBRARY_PATH", "/usr/local/cuda/lib64/stubs"),
            ("NVIDIA_VISIBLE_DEVICES", "all"),
            ("NVIDIA_DRIVER_CAPABILITIES", "compute,utility"),
            ("NVIDIA_REQUIRE_CUDA", f"cuda>={cuda.minor}"),
        ]
        if self.runtime_stage:  # the stubs link programs at build time; nothing links here
            env = [item for item in env if item[0] != "LIBRARY_PATH"]
        kind = "runtime" if self.runtime_stage else "development"
        self.add(f"CUDA {cuda.version} ({cuda.label}) {kind} packages", commands, env, stage="stack")

    def _tarball(self, lib: LibBuild, target: str, strip: int) -> List[str]:
        assert lib.url is not None
        url = mirrored(lib.url, self.stack.download_host)
        name = "/tmp/" + lib.url.rsplit("/", 1)[1]
        commands = [f"curl -fsSL -o {shlex.quote(name)} {_url_word(url)}"]
        if not self.runtime_stage:  # the build stage recorded the same fetch
            self.fetched.append(fetches.download(lib.library, url, lib.sha256, lib.sha256_unavailable))
        if lib.sha256:
            commands.append(_sha256_check(lib.sha256, name))
        commands += [
            f"mkdir -p {target}",
            f"tar -xf {shlex.quote(name)} -C {target} --strip-components={strip}",
            f"rm -f {shlex.quote(name)} {shlex.quote(name + '.sha256')}",
        ]
        return commands

    @staticmethod
    def _waiver(lib: LibBuild) -> List[str]:
        if lib.method == "tarball" and not lib.sha256:
            return [f"mlcc: DF010 waived: no checksum: {lib.sha256_unavailable or 'none recorded'}"]
        return []

    def cudnn(self, lib: LibBuild) -> None:
        if lib.method == "bundled":
            return  # the framework brings it (a conda channel, a wheel): nothing to install
        title = f"cuDNN {lib.version} ({lib.method})"
        if lib.method == "tarball":
            commands = [*self._tarball(lib, "/usr/local/cuda", 1), *LDCONFIG]
            include, libdir = "/usr/local/cuda/include", "/usr/local/cuda/lib64"
        else:
            commands = list(self.install(self.pinned(self.library_packages(lib))))
            include = "/usr/include"
            libdir = self.base.packaging.libraries(self.stack.arch.gnu_triplet)
        env = [("CUDNN_VERSION", lib.version), ("CUDNN_INCLUDE_DIR", include), ("CUDNN_LIB_DIR", libdir)]
        notes = self._waiver(lib)
        if self.runtime_stage and lib.method == "tarball":
            # no second download, no headers or static archives: the handoff's shared libraries
            title, commands, notes = f"{title}: {FROM_BUILD_STAGE}", [], []
            env = [item for item in env if item[0] != "CUDNN_INCLUDE_DIR"]
        self.add(title, commands, env, stage="stack", notes=notes)

    def nccl(self, lib: LibBuild) -> None:
        if lib.method == "bundled":
            return  # the framework brings it
        title = f"NCCL {lib.version} ({lib.method})"
        notes = self._waiver(lib)
        if lib.method == "tarball":
            loader = f"echo {NCCL_TARBALL_HOME}/lib > /etc/ld.so.conf.d/nccl.conf"
            commands = [*self._tarball(lib, NCCL_TARBALL_HOME, 1), loader, *LDCONFIG]
            if self.runtime_stage:  # as cuDNN's: the handoff's shared libraries, no download
                title, commands, notes = f"{title}: {FROM_BUILD_STAGE}", [loader], []
            home = NCCL_TARBALL_HOME
            env = [("NCCL_HOME", home), self.add_library_path(f"{home}/lib")]
        else:
            commands = list(self.install(self.pinned(self.library_packages(lib))))
            home = "/usr"
            env = [("NCCL_HOME", home)]
        env += [("NCCL_VERSION", lib.version), ("NCCL_ROOT_DIR", home)]
        self.add(title, commands, env, stage="stack", notes=notes)

    def library_packages(self, lib: LibBuild) -> Tuple[PinnedPackage, ...]:
        return image_library_packages(self.stack, lib) if self.runtime_stage else lib.packages

    def python(self) -> None:
        python = self.stack.python
        assert python is not None
        if self.runtime_stage:
            self.runtime_python()
            return
        tooling = _required(self.stack.python_tooling, f"pip/setuptools/wheel for Python {python.version}")
        commands = [
            *self.install(list(python.setup_packages)),
            *self.install(list(python.packages)),
            f"{python.executable} -m venv {VENV}",
            self.pip(
                [f"pip=={tooling.pip}", f"setuptools=={tooling.setuptools}", f"wheel=={tooling.wheel}"],
                origins=[tooling.prov.origin] * 3,
                python=f"{VENV}/bin/python",
            ),
        ]
        env = [("VIRTUAL_ENV", VENV), ("PATH", f"{VENV}/bin:${{PATH}}")]
        if python.prefix:
            env.append(self.add_library_path(f"{python.prefix}/lib64"))
        self.add(f"Python {python.version} in a virtual environment ({VENV})", commands, env, stage="stack")

    def runtime_python(self) -> None:
        """The interpreter alone: the environment the build stage made is copied onto it."""
        python = self.stack.python
        assert python is not None
        commands = [
            *self.install(list(python.setup_packages)),
            *self.install(list(image_python_packages(self.stack))),
        ]
        env = [("VIRTUAL_ENV", VENV), ("PATH", f"{VENV}/bin:${{PATH}}")]
        if python.prefix:
            env.append(self.add_library_path(f"{python.prefix}/lib64"))
        self.add(
            f"Python {python.version} (its environment comes from the build stage)",
            commands,
            env,
            stage="stack",
        )

    def runtime_benchmark(self) -> None:
        """The final stage's own steps: the benchmark's runtime packages, what the build
        stage made (the Python environment, the work directory, the recipe's paths), its
        environment and the folders it writes."""
        bench = self.stack.benchmark
        build = bench.build
        assert build is not None  # the resolver makes no runtime stack without one
        family = self.base.packaging
        packages = list(build.runtime_packages_for(family))
        if build.mpi is not None:
            packages += [p for p in build.mpi.packages_for(self.base.family) if p not in packages]
        self.add(f"{bench.name}: system packages it runs with", self.install(packages))
        if build.mpi is not None:
            self.sshd()
        copied: List[str] = []
        env: List[Tuple[str, str]] = []
        fw = self.stack.framework
        if fw is not None and fw.install.method == "conda":
            # the environment the framework lives in, not the installer's base it was made with
            copied.append(CONDA_ENV)
            env += [("PATH", f"{CONDA_ENV}/bin:${{PATH}}"), *fw.install.build_env]
        elif self.stack.python is not None:
            copied.append(VENV)
        copied += [build.workdir, *[p for p in build.runtime_copy if p not in copied]]
        copies = [(path, path) for path in copied]
        libraries = self.tarball_libraries()
        if libraries:  # the handoff's shared libraries, merged into their own folders
            copies.append((f"{HANDOFF}/", "/"))
        self.steps.append(
            Step(
                f"{bench.name}: what the build stage made",
                commands=LDCONFIG if libraries else (),
                copies=tuple(copies),
                env=tuple(env),
                from_stage=BUILD_STAGE,
            )
        )
        self.add(f"{bench.name}: environment", env=[*self.gpu_arch(build.env), ("HOME", MLCC_HOME)])
        for step in build.steps:  # what the build set up outside the copies: again, here
            if step.kind == "script" and step.runtime and step.applies_to(self.arch, self.base.family):
                self.build_step(build.workdir, step)
        # the copies keep the build stage's group and modes: only the folders not copied
        writable = [p for p in [*build.writable, MLCC_HOME] if p not in copied]
        self.add(
            f"{bench.name}: writable by OpenShift's arbitrary UID (group 0)",
            [
                f"mkdir -p {' '.join(writable)}",
                f"chgrp -R 0 {' '.join(writable)}",
                f"chmod -R g=u {' '.join(writable)}",
            ],
        )

    def tarball_libraries(self) -> List[Tuple[str, str]]:
        """(folder, file pattern) of the shared libraries of cuDNN and NCCL from tarballs:
        a runtime image's final stage takes these, and neither headers nor static archives."""
        found: List[Tuple[str, str]] = []
        cuda = self.stack.cuda
        if self.stack.cudnn is not None and self.stack.cudnn.method == "tarball" and cuda is not None:
            found.append((f"/usr/local/cuda-{cuda.minor}/", "libcudnn*.so*"))  # where the link points
        if self.stack.nccl is not None and self.stack.nccl.method == "tarball":
            found.append((f"{NCCL_TARBALL_HOME}/", "libnccl*.so*"))
        return found

    def build_only_installed(self) -> List[str]:
        """The build-only Python packages (recipes/tools.yaml) that a pip install of this
        build names or its lock pins, in the rule's order."""
        names: Set[str] = set()
        for ident, _previous, install in self.pip_installs:
            names.update(canonicalize_name(_requirement_name(r)) for r in install.requirements)
            locked = self.stack.pip_locks.get(ident) if self.stack.pip_locks else None
            names.update(canonicalize_name(p.name) for p in (locked.packages if locked else ()))
        return [name for name in self.stack.build_only if canonicalize_name(name) in names]

    def handoff(self) -> None:
        """The build stage's last step in a runtime image: gather the shared libraries the
        final stage takes (their symlinks kept, under their own paths) and uninstall the
        build-only packages from the environment it copies."""
        commands: List[str] = []
        for folder, pattern in self.tarball_libraries():
            commands += [
                f"mkdir -p {HANDOFF}",
                f"find {folder} -name '{pattern}' ! -type d -exec cp -a --parents -t {HANDOFF}/ {{}} +",
                f"test -d {HANDOFF}{folder}",
            ]
        build_only = self.build_only_installed()
        if build_only:
            commands.append(_sh(["python", "-m", "pip", "uninstall", "-y", *build_only]))
        if commands:
            commands = list(dict.fromkeys(commands))  # one mkdir
            title = f"{self.stack.benchmark.name}: what the final stage takes (build-only files left out)"
            self.add(title, commands)

    def sshd(self) -> None:
        self.add(
            f"{self.stack.benchmark.name}: sshd and ssh for MPIJob launchers and workers (mpi-operator)",
            [
                # no host keys: a key made here would be in every pull of the image, shared by
                # every pod of every run; the worker makes its own when it starts (run manifest)
                "mkdir -p /run/sshd",
                "sed -i 's/^#\\?StrictModes .*/StrictModes no/' /etc/ssh/sshd_config",
                "printf '%s\\n' 'Host *' '    StrictHostKeyChecking no'"
                " '    UserKnownHostsFile /dev/null' >> /etc/ssh/ssh_config",
            ],
        )

    def compiler(self) -> None:
        toolset = self.stack.gcc.toolset
        if toolset is None:
            return
        commands = [*self.install(list(toolset.setup_packages)), *self.install(list(toolset.packages))]
        if toolset.suffix:  # Debian-style gcc-N: put unsuffixed names first on PATH
            bindir = "/opt/mlcc/gcc/bin"
            commands += [
                f"mkdir -p {bindir}",
                f"ln -sfn /usr/bin/gcc{toolset.suffix} {bindir}/gcc",
                f"ln -sfn /usr/bin/g++{toolset.suffix} {bindir}/g++",
            ]
            env = [("PATH", f"{bindir}:${{PATH}}")]
        else:
            bindir = f"{toolset.root}/usr/bin"
            env = [("PATH", f"{bindir}:${{PATH}}"), self.add_library_path(f"{toolset.root}/usr/lib64")]
        env += [("CC", f"{bindir}/gcc"), ("CXX", f"{bindir}/g++"), ("CUDAHOSTCXX", f"{bindir}/g++")]
        self.add(f"GCC {toolset.gcc} from {toolset.name}", commands, env, stage="framework")

    def framework(self) -> None:
        build = self.stack.framework
        assert build is not None
        install = build.install
        title = f"{build.framework} {build.version} ({build.variant}, {install.method})"
        if install.method == "pip":
            wheels = install.wheels_for(self._python_version())
            unchecked = [url for url in wheels if "#sha256=" not in url]
            reason = " ".join((install.wheels_sha256_unavailable or "none recorded").split())
            self.add(
                title,
                [
                    self.pip(
                        [*wheels, *install.packages],
                        index=install.index_url,
                        extra_index=install.extra_index_url,
                        find_links=install.find_links,
                        origins=[
                            *[install.wheels_origin or build.prov.origin] * len(wheels),
                            *(install.origins or [build.prov.origin] * len(install.packages)),
                        ],
                    )
                ],
                stage="framework",
                notes=[f"mlcc: DF010 waived: no checksum: {reason}"] if unchecked else [],
            )
        elif install.method == "conda":
            self.conda(title, install.channels, install.packages, install.build_env)
        else:
            self.source_build(title)

    def _host_url(self, var: str) -> str:
        """The public URL of the host the build argument ``var`` stands for."""
        return next(route.public for route in self.hosts if route.var == var)

    def _python_version(self) -> str:
        return self.stack.python.version if self.stack.python else ""

    def conda(
        self,
        title: str,
        channels: Sequence[str],
        packages: Sequence[str],
        build_env: Sequence[Tuple[str, str]],
    ) -> None:
        miniforge = _required(self.stack.installer, f"a Miniforge installer for {self.arch}")
        url = miniforge.url
        installer = "/tmp/" + url.rsplit("/", 1)[1]
        python = self.stack.python
        assert python is not None
        channel_args = " ".join(f"-c {_url_word(host_mirrored(c, self.hosts))}" for c in channels)
        conda_forge = f"{self._host_url(CONDA.var)}/{CONDA_FORGE}"
        commands = [f"curl -fsSL -o {installer} {_url_word(host_mirrored(url, self.hosts))}"]
        sha256 = miniforge.sha256
        checksum_url = None
        if sha256:
            commands.append(_sha256_check(sha256, installer))
        elif miniforge.checksum_suffix:
            checksum = installer + miniforge.checksum_suffix
            checksum_url = host_mirrored(url + miniforge.checksum_suffix, self.hosts)
            commands += [
                f"curl -fsSL -o {checksum} {_url_word(checksum_url)}",
                # the file names the installer without its folder: the step runs in /tmp
                f"sha256sum -c {checksum.rsplit('/', 1)[1]}",
            ]
        commands += [
            f"bash {installer} -b -p {CONDA_ROOT}",
            f"rm -f {installer}*",
            _env_prefix(build_env)
            + f"{CONDA_ROOT}/bin/conda create -y -p {CONDA_ENV} --override-channels"
            + f" {channel_args} -c {_url_word(host_mirrored(conda_forge, self.hosts))} "
            + _sh([f"python={python.version}", *packages]),
            f"{CONDA_ROOT}/bin/conda clean -afy",
        ]
        self.new_environment("conda", [*channels, *packages])
        builds_unknown = self.stack.framework.install.builds_unavailable if self.stack.framework else None
        self.fetched += [
            fetches.download(
                miniforge.name,
                host_mirrored(url, self.hosts),
                sha256,
                miniforge.sha256_unavailable,
                checksum_url,
            ),
            fetches.conda(
                [*[host_mirrored(c, self.hosts) for c in channels], host_mirrored(conda_forge, self.hosts)],
                [f"python={python.version}", *packages],
                builds_unknown,
            ),
        ]
        unbuilt = [p for p in packages if len(p.replace("==", "=").split("=")) < 3]
        self.add(
            title,
            commands,
            [("PATH", f"{CONDA_ENV}/bin:${{PATH}}"), *build_env],
            stage="framework",
            workdir="/tmp",
            notes=(
                [f"mlcc: conda builds not named ({', '.join(unbuilt)}): {' '.join(builds_unknown.split())}"]
                if unbuilt and builds_unknown
                else [f"mlcc: conda builds not named ({', '.join(unbuilt)}) and no reason recorded"]
                if unbuilt
                else []
            ),
        )

    def source_build(self, title: str) -> None:
        build = self.stack.framework
        assert build is not None and build.install.git_url and build.install.git_ref
        dest = f"/opt/src/{build.framework}"
        env = self.gpu_arch(build.install.build_env)
        commands = []
        if build.install.packages:
            commands.append(self.pip(build.install.packages, origins=build.install.origins))
        self.fetched.append(
            fetches.git(
                f"framework:{build.framework}",
                host_mirrored(build.install.git_url, self.hosts),
                build.install.git_ref,
                build.install.git_ref_unresolved,
            )
        )
        commands += [
            *_git_checkout(build.install.git_url, build.install.git_ref, self.hosts),
            _submodule_update(self.hosts),
            _env_prefix(env) + "python setup.py install",
            f"rm -rf {dest}/build",
        ]
        companions = [f"{name}=={version}" for name, version in build.companions]
        if companions:
            commands.append(self.pip(companions, no_deps=True, origins=[build.prov.origin] * len(companions)))
        notes = []
        if build.install.git_ref_unresolved:
            reason = " ".join(build.install.git_ref_unresolved.split())
            notes.append(f"mlcc: DF006 waived: {build.install.git_ref} is a short hash: {reason}")
        self.add(title, commands, stage="framework", notes=notes, workdir=dest)

    def benchmark(self) -> None:
        bench = self.stack.benchmark
        build = bench.build
        if build is None:
            return
        packages = list(build.packages_for(self.base.family))
        if build.mpi is not None:
            packages += [p for p in build.mpi.packages_for(self.base.family) if p not in packages]
        self.add(f"{bench.name}: system packages", self.install(packages))
        if build.mpi is not None:
            self.sshd()
        env = [*self.gpu_arch(build.env), ("HOME", MLCC_HOME)]
        self.add(f"{bench.name}: environment", env=env)
        if build.source is None:
            self.add(f"{bench.name}: work directory", [f"mkdir -p {build.workdir}"])
        else:
            src = build.source
            checkout = "/tmp/mlcc-source"
            folder = f"{checkout}/{src.path}" if src.path else checkout
            repository = host_mirrored(src.repository + ".git", self.hosts)
            self.fetched.append(fetches.git(f"source:{bench.name}", repository, src.commit))
            self.add(
                f"{bench.name}: source {src.repository} @ {src.commit[:12]}"
                + (f" ({src.path})" if src.path else ""),
                [
                    *_git_checkout(src.repository + ".git", src.commit, self.hosts),
                    f"mkdir -p {build.workdir}",
                    f"cp -a {shlex.quote(folder)}/. {build.workdir}/",
                    *_copy_also(checkout, build.workdir, src.also),
                    f"rm -rf {checkout} {build.workdir}/.git",
                ],
                workdir=checkout,
            )
        for step in build.steps:
            if step.applies_to(self.arch, self.base.family):
                self.build_step(build.workdir, step)
        writable = [build.workdir, *build.writable, MLCC_HOME]
        self.add(
            f"{bench.name}: writable by OpenShift's arbitrary UID (group 0)",
            [
                f"mkdir -p {' '.join(writable)}",
                f"chgrp -R 0 {' '.join(writable)}",
                f"chmod -R g=u {' '.join(writable)}",
            ],
        )
        # A host's /data and /results (the dataset, other runs' results) belong to their
        # owners: install.sh creates the folders and changes no group or mode of anything.
        self.steps[-1] = self.steps[-1]._replace(
            host=Step(f"{bench.name}: folders it reads and writes", (f"mkdir -p {' '.join(writable)}",))
        )

    def gpu_arch(self, env: Sequence[Tuple[str, str]]) -> List[Tuple[str, str]]:
        """With --gpu, the CUDA arch lists of source builds name that GPU's compute capability
        (recipes/gpus.yaml) instead of the recipe's default list."""
        capability = self.stack.gpu_capability
        if capability is None:
            return list(env)
        return [(name, capability if name in ARCH_LIST_ENV else value) for name, value in env]

    def build_step(self, workdir: str, step: BuildStep) -> None:
        bench = self.stack.benchmark.name
        if step.kind == "pip":
            names = [_requirement_name(r) for r in step.packages]
            title = f"{bench}: pip install {', '.join(names[:4])}" + (", ..." if len(names) > 4 else "")
            self.add(
                title,
                [
                    self.pip(
                        step.packages,
                        extra_index=step.pip_index,
                        no_deps=step.no_deps,
                        env=step.env,
                        origins=step.origins,
                    )
                ],
            )
        elif step.kind == "git":
            assert step.git_url and step.git_ref and step.dest
            name = step.dest.rsplit("/", 1)[1]
            self.fetched.append(fetches.git(name, host_mirrored(step.git_url, self.hosts), step.git_ref))
            commands = [
                *_git_checkout(step.git_url, step.git_ref, self.hosts),
                _submodule_update(self.hosts),
                _env_prefix(step.env) + "python setup.py install " + _sh(step.setup_options),
                f"rm -rf {step.dest}/build",
            ]
            self.add(
                f"{bench}: {name} @ {step.git_ref[:12]} " + " ".join(step.setup_options),
                commands,
                workdir=step.dest,
            )
        elif step.kind == "install":
            folder = shlex.quote(step.install_dir) if step.install_dir else "."
            flag = f"-e {folder}" if step.install == "editable" else folder
            # pip hashes files, not a directory: the source itself is the pinned checkout
            reason = LOCAL_SOURCE_NO_DEPS if step.no_deps else LOCAL_SOURCE
            self.record_pip(
                PipInstall((flag,), no_deps=step.no_deps, environment=self.pip_environment, unlockable=reason)
            )
            no_deps = " --no-deps" if step.no_deps else ""
            self.add(
                f"{bench}: its own package ({step.install})"
                if step.install_dir is None
                else f"{bench}: {step.install_dir} ({step.install})",
                [_env_prefix(step.env) + f"python -m pip install --no-cache-dir{no_deps} {flag}"],
                workdir=workdir,
                notes=[f"mlcc: DF011 waived: {reason}"],
            )
        elif step.kind == "make":
            args = " ".join(f'"{a}"' for a in step.make_args)
            self.add(
                f"{bench}: make", [_env_prefix(step.env) + f'make -C {workdir} -j"$(nproc)" {args}'.rstrip()]
            )
        elif step.kind == "script":
            assert step.script is not None
            target = f"{SCRIPTS}/{step.script}"
            self.script_fetches(step.script)
            self.add(
                f"{bench}: {step.script}" + (f" ({step.note})" if step.note else ""),
                [_env_prefix(step.env) + f"bash {target}"],
                copies=[(f"scripts/{step.script}", target)],
                workdir=workdir,
            )

    def script_fetches(self, name: str) -> None:
        """A recipe's script fetches by itself: mlcc planned none of it and cannot vouch for
        what it checks, so each mirror build argument it reads is unverified (pip, which it
        may run, reads its own)."""
        build = self.stack.benchmark.build
        text = dict(build.scripts).get(name, "") if build else ""
        used = [
            v for v in (MIRROR_NAME, *[r.var for r in self.hosts]) if f"${{{v}" in text or f"${v}" in text
        ]
        if "pip install" in text:
            used += [p.var for p in PIP_SETTINGS]
        self.unrecorded += [
            (var, f"scripts/{name} fetches through {var} by itself: mlcc cannot vouch for what it checks")
            for var in used
        ]

    def manifest(self) -> None:
        self.add(
            "The stack manifest, and a record of what the build really installed",
            [
                f"chmod 0755 {RECORDER}",
                f"{RECORDER} {_sh(recorder_args(self.stack))} > {MANIFEST_DIR}/installed.json",
                f"chmod 0644 {MANIFEST_DIR}/stack.json {MANIFEST_DIR}/installed.json",
            ],
            copies=[("stack.json", f"{MANIFEST_DIR}/stack.json"), ("mlcc-record", RECORDER)],
        )

    def finish(self, built: Tuple[Step, ...] = ()) -> Plan:
        """The plan of the steps planned; ``built``: a runtime image's build stage before them.

        Each stage declares the mirror build args it uses itself (a Dockerfile ARG is scoped
        to its stage), so the plan's build args are both stages' in their order."""
        build = self.stack.benchmark.build
        build_steps, first_args = place_args(built, self.options, self.hosts) if built else ((), ())
        steps, final_args = place_args(self.steps, self.options, self.hosts)
        build_args = merged_args(first_args, final_args)
        mirror = (self.options.mirror or self.stack.download_host).rstrip("/")
        nvidia = self.stack.download_host
        return Plan(
            base_image=self.options.base_image or self.base.ref,
            mirror=mirror,
            steps=steps,
            labels=labels(self.stack),
            workdir=build.workdir if build else None,
            user=None if (build is None or build.run_as_root) else NON_ROOT_UID,
            entrypoint=build.entrypoint if build else (),
            cmd=build.cmd if build else (),
            pip_installs=tuple(self.pip_installs),
            fetches=tuple(self.fetched),
            build_args=build_args,
            build_steps=build_steps,
            mirrors=mirror_uses(
                self.fetched,
                self.pip_installs,
                self.unrecorded,
                "\n".join(["\n".join(step.commands) for step in (*build_steps, *self.steps)]),
                declared(mirror, nvidia, build_args, self.hosts),
                nvidia,
                self.hosts,
            ),
        )


def locked_pip_command(pip_install: str, locked: LockedInstall) -> str:
    """``pip install --require-hashes`` of the lock's list, written by the same RUN: pip
    then takes exactly those files or fails (a requirements file also carries the hashes
    that a command line cannot)."""
    listing = f"/tmp/mlcc-pip-{locked.id}.txt"
    lines = " \\\n    ".join(shlex.quote(p.line()) for p in locked.packages)
    return (
        f"printf '%s\\n' \\\n    {lines} \\\n    > {listing}"
        f" && {pip_install} --require-hashes -r {listing} && rm -f {listing}"
    )


def place_args(
    steps: Sequence[Step], options: Options, hosts: Sequence[Route]
) -> Tuple[Tuple[Step, ...], Tuple[Tuple[str, Optional[str]], ...]]:
    """The steps with each mirror build arg declared by the first step that uses it, and
    every mirror build arg they use, with its default: the mirror asked for, else the
    public host (``hosts``: the Stack's, routed); pip's own settings (no default) where a
    step runs pip. Only those used: a chained build's shared stages stay byte-identical
    across benchmarks. Declared with their first use because a Dockerfile ARG takes part
    in the cache key of every RUN after it: declared at the top, GIT_MIRROR would split
    the stack prefix that benchmarks share into one per set of hosts they fetch from."""
    chosen = dict(options.mirrors)
    routes = [("${" + h.var + "}", h.var, chosen.get(h.var, h.public)) for h in hosts]
    pip = [(p.var, chosen.get(p.var)) for p in PIP_SETTINGS]
    declared: Dict[str, Optional[str]] = {}
    placed: List[Step] = []
    for step in steps:
        text = "\n".join(step.commands)
        first: List[Tuple[str, Optional[str]]] = []
        runs_pip = " pip install " in text
        if runs_pip or "${" in text:  # most steps fetch nothing from a mirrored host
            used = [(var, value) for token, var, value in routes if token in text]
            first = [(var, value) for var, value in (used + pip if runs_pip else used) if var not in declared]
            declared.update(first)
        placed.append(step._replace(args=tuple(first)) if first or step.args else step)
    order = [var for _token, var, _value in routes] + [var for var, _value in pip]
    return tuple(placed), tuple((var, declared[var]) for var in order if var in declared)


def merged_args(
    first: Tuple[Tuple[str, Optional[str]], ...], then: Tuple[Tuple[str, Optional[str]], ...]
) -> Tuple[Tuple[str, Optional[str]], ...]:
    """Two stages' mirror args as one list: each name once, the first stage's first."""
    seen = dict(first)
    return (*first, *[(name, value) for name, value in then if name not in seen])


def _copy_also(checkout: str, workdir: str, also: Sequence[Tuple[str, str]]) -> List[str]:
    """Copy further folders of the benchmark's checkout into the work directory, before the
    checkout is removed: the code a Dockerfile clones beside the benchmark, where the pinned
    commit keeps a copy of it (one fetch, one commit, checked like the benchmark's own)."""
    commands = []
    for path, dest in also:
        target = f"{workdir}/{dest}"
        commands += [
            f"mkdir -p {shlex.quote(target)}",
            f"cp -a {shlex.quote(f'{checkout}/{path}')}/. {shlex.quote(target)}/",
        ]
    return commands


def _sha256_check(sha256: str, path: str) -> str:
    """``sha256sum -c`` of a checksum file written beside the download (no pipe: a pipe
    hides a failing left side unless pipefail is set, which OCI-format builds cannot)."""
    listing = shlex.quote(f"{path}.sha256")
    return f"echo {shlex.quote(sha256 + '  ' + path)} > {listing} && sha256sum -c {listing}"


def _git_checkout(url: str, ref: str, hosts: Sequence[Route]) -> List[str]:
    """Check out one commit into the (empty) working directory and prove it: HEAD must be
    the pinned commit afterwards.

    A full SHA is fetched alone where the server allows it (GitHub; ``git daemon`` with
    uploadpack.allowAnySHA1InWant), else with the branches and tags (git 1.8 on RHEL 7
    cannot fetch by SHA; refspecs rather than --tags, whose meaning changed in git 1.9).
    A short hash can only be found in a full clone, and HEAD is then checked to start
    with it. No ``git -C``: RHEL 7's git 1.8.3 lacks it.
    """
    quoted = _url_word(host_mirrored(url, hosts))
    if len(ref) == 40:
        return [
            "git init -q .",
            f"(git fetch -q --depth 1 {quoted} {ref}"
            f" || git fetch -q {quoted} '+refs/heads/*:refs/remotes/origin/*' '+refs/tags/*:refs/tags/*')",
            f"git checkout -q --detach {ref}",
            f'test "$(git rev-parse HEAD)" = {ref}',
        ]
    return [
        f"git clone -q {quoted} .",
        f"git checkout -q --detach {ref}",
        f'expr "$(git rev-parse HEAD)" : {ref} > /dev/null',  # HEAD starts with the short hash
    ]


def _submodule_update(hosts: Sequence[Route]) -> str:
    """``git submodule update`` that fetches every submodule through the git mirror, at the
    commit the superproject pins (a gitlink names a commit, so the mirror cannot change it).
    Every source build runs it after its checkout (the framework's, a ``git:`` step's):
    where the pinned commit has no submodules it does nothing.

    ``.gitmodules`` names the public host's URLs, which git would fetch whatever the mirror
    says: ``-c url.<mirror>/.insteadOf=<public>/`` rewrites them for this one command and
    the nested submodule updates it runs (they inherit ``-c``), leaving no configuration in
    the image. One rewrite per scheme a .gitmodules may spell the host with, in a fixed
    order. The mirror's value, validated when it is generated in (an http(s) URL of host,
    port and plain path), stays a double-quoted ``${GIT_MIRROR}``: a value given only as a
    build arg is expanded, never run. No ``git -C``: RHEL 7's git 1.8.3 lacks it.
    """
    route = next((r for r in hosts if r.var == GIT.var), None)
    if route is None:
        return "git submodule update --init --recursive"
    host = _double_quoted(route.public.split("://", 1)[1])
    rewrites = [
        f'-c "url.${{{route.var}}}/.insteadOf={scheme}{host}/"'
        for scheme in ("https://", "http://", "git://")
    ]
    return f"git {' '.join(rewrites)} submodule update --init --recursive"


def _double_quoted(text: str) -> str:
    """``text`` literal inside a double-quoted shell word."""
    for char in ("\\", '"', "$", "`"):
        text = text.replace(char, "\\" + char)
    return text


# Variables through which source builds take the CUDA compute capabilities to compile for:
# PyTorch's setup.py and torch.utils.cpp_extension (apex, maskrcnn_benchmark), TensorFlow's
# configure, MXNet's CUDA_ARCH_LIST-style make variable is not modelled.
ARCH_LIST_ENV = ("TORCH_CUDA_ARCH_LIST", "TF_CUDA_COMPUTE_CAPABILITIES")


def _requirement_name(requirement: str) -> str:
    if "#subdirectory=" in requirement:
        return (
            requirement.rsplit("#subdirectory=", 1)[1]
            + " ("
            + requirement.split("/")[2 if "://" in requirement else 0]
            + ")"
        )
    return requirement.split("==")[0]


def _env_prefix(env: Sequence[Tuple[str, str]]) -> str:
    """NAME=value words before a command; values that refer to ${NAME} stay expandable
    (the recipe schema allows nothing else that a double-quoted word would expand)."""
    return "".join(
        f'{name}="{value}" ' if "${" in value else f"{name}={shlex.quote(value)} " for name, value in env
    )


def recorder_args(stack: Stack) -> List[str]:
    """What mlcc-record checks: the packages, headers and modules the stack pins."""
    args: List[str] = []
    kind = stack.base.packaging.recorder_flag
    if stack.cuda is not None:
        if not stack.runtime:  # a runtime image has no nvcc (mlcc verify checks so)
            args += ["--nvcc", "/usr/local/cuda/bin/nvcc"]
        for package in image_cuda_packages(stack):
            args += [kind, package.name]
    for lib, header in ((stack.cudnn, "cudnn"), (stack.nccl, "nccl")):
        if lib is None:
            continue
        if lib.method == "bundled":
            continue  # the framework reports it (--module)
        if lib.method == "tarball" and stack.runtime:  # the shared libraries, no headers
            folder = "/usr/local/cuda/lib64" if header == "cudnn" else f"{NCCL_TARBALL_HOME}/lib"
            args += ["--library", f"{header}={folder}"]
        elif lib.method == "tarball":
            base = "/usr/local/cuda/include" if header == "cudnn" else f"{NCCL_TARBALL_HOME}/include"
            args += ["--header", f"{header}={base}"]
        else:
            for package in image_library_packages(stack, lib):
                args += [kind, package.name]
    if stack.python is not None:
        args += ["--python", "python"]
    if stack.framework_module is not None:
        args += ["--module", stack.framework_module]
    return args


def build_plan(stack: Stack, options: Options = DEFAULT_OPTIONS) -> Plan:
    return _Planner(stack, options).plan()


if TYPE_CHECKING:
    T = TypeVar("T")


def _required(fact: Optional[T], what: str) -> T:
    """A fact the resolver puts into every stack that needs it (a hand-made Stack may lack it)."""
    if fact is None:
        raise MlccError(
            f"the stack lacks {what}", hint="stacks come from mlcc.resolve.Resolver, which adds it"
        )
    return fact


def planned_env(plan: Plan) -> Dict[str, str]:
    """The environment at the end of the build, later settings winning."""
    result: Dict[str, str] = {}
    for name, value in plan.runtime_env:
        result[name] = value.replace(f"${{{name}}}", result.get(name, f"${{{name}}}"))
    return result
