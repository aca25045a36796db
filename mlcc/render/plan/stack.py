"""The stack's steps: system packages, NVIDIA repositories, CUDA, cuDNN, NCCL, the Python
environment and the compiler; and a runtime image's runtime stack (the same, without
-devel packages)."""

from __future__ import annotations

import shlex
from typing import List, Tuple

from mlcc.kb.model import LibBuild, PinnedPackage
from mlcc.render import fetches
from mlcc.render.manifest import (
    cuda_packages,
    image_cuda_packages,
    image_library_packages,
    image_python_packages,
)
from mlcc.render.mirror import MIRROR_VAR, mirror_check, mirrored
from mlcc.render.plan.commands import _required, _sha256_check, _url_word
from mlcc.render.plan.model import FROM_BUILD_STAGE, LDCONFIG, NCCL_TARBALL_HOME, VENV
from mlcc.render.plan.writer import StepWriter


class StackSteps(StepWriter):
    """The steps every stack sharing base + CUDA + cuDNN + NCCL + Python renders the same."""

    def runtime_stack(self) -> None:
        """Base packages, NVIDIA repositories, CUDA, cuDNN, NCCL, Python: the steps every
        benchmark on the stack shares (devel packages, or runtime ones in a final stage)."""
        self.system()
        if self.stack.from_base:
            self.from_base()
        elif self.stack.cuda is not None:
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
        if not names:
            return  # an image that holds them (NGC): nothing to install
        self.add(
            "System packages for the build (versions follow the base image's release)",
            self.install(sorted(set(names), key=names.index)),
            stage="stack",
        )

    def from_base(self) -> None:
        """What the base image already holds (NGC): said in the file, installed by nothing (a
        library a build step makes over the base's is the step's, not the base's)."""
        stack = self.stack
        held = [f"CUDA {stack.cuda.version}" if stack.cuda else ""]
        held += [
            f"{name} {lib.version}"
            for name, lib in (("cuDNN", stack.cudnn), ("NCCL", stack.nccl))
            if lib and lib.replaced is None
        ]
        if stack.framework is not None:
            held.append(f"{stack.framework.framework} {stack.framework.version}")
        self.add(
            f"{', '.join(h for h in held if h)} come with the base image {self.base.ref}",
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
            gpgkey = f"{baseurl}/{repo.key(self.base.family, self.base.repo_distro)}"
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
                key = repo.key(self.base.family, self.base.repo_distro)
                notes.append(f"mlcc: DF010 waived: {key}: {reason}")
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
        # on an image base the environment sees the base's own packages (its framework)
        inherit = " --system-site-packages" if self.stack.from_base else ""
        commands = [
            *self.install(list(python.setup_packages)),
            *self.install(list(python.packages)),
            f"{python.executable} -m venv{inherit} {VENV}",
            self.pip(
                [f"pip=={tooling.pip}", f"setuptools=={tooling.setuptools}", f"wheel=={tooling.wheel}"],
                origins=[tooling.prov.origin] * 3,
                python=f"{VENV}/bin/python",
            ),
        ]
        env = [("VIRTUAL_ENV", VENV), ("PATH", f"{VENV}/bin:${{PATH}}")]
        if python.prefix:
            env.append(self.add_library_path(f"{python.prefix}/lib64"))
        where = f" that sees {self.base.ref}'s packages" if inherit else ""
        self.add(
            f"Python {python.version} in a virtual environment ({VENV}){where}", commands, env, stage="stack"
        )

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
