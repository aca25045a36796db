"""The resolver's last step: the components it chose, assembled into an immutable
:class:`~mlcc.resolve.stack.Stack` with what they bring along (the NVIDIA repositories,
pip tooling, lock files, the conda installer, the benchmark's source for the framework).
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

from mlcc.errors import RecipeError
from mlcc.kb import pip_locks
from mlcc.kb.model import (
    Base,
    Benchmark,
    CudaRelease,
    FrameworkBuild,
    KnowledgeBase,
    LibBuild,
    NvidiaRepo,
    PythonOption,
    PythonTooling,
    System,
    spell_target,
)
from mlcc.kb.pip_locks import PipLocks
from mlcc.resolve.request import Request
from mlcc.resolve.rules import Rules
from mlcc.resolve.stack import Compiler, Stack


class Assembler:
    """Builds the stack of chosen components for one knowledge base."""

    def __init__(self, kb: KnowledgeBase, rules: Rules) -> None:
        self.kb = kb
        self.rules = rules
        self._newest_in_line: Dict[str, str] = {}
        for release in kb.cuda:  # newest first
            self._newest_in_line.setdefault(release.minor, release.version)

    def stack(
        self,
        bench: Benchmark,
        req: Request,
        arch: str,
        build: Optional[FrameworkBuild],
        cuda: Optional[CudaRelease],
        base: Base,
        python: Optional[PythonOption],
        cudnn: Optional[LibBuild],
        nccl: Optional[LibBuild],
        compiler: Compiler,
    ) -> Stack:
        """The stack of the chosen components, with what they bring along."""
        bench = _with_source_for(bench, build)
        stack = Stack(
            benchmark=bench,
            arch=self.kb.arches[arch],
            base=base,
            python=python,
            gcc=compiler,
            cuda=cuda,
            cudnn=cudnn,
            nccl=nccl,
            framework=build,
            choices=(),
            hosts=tuple(self.kb.hosts.values()),
            cuda_newest_in_line=cuda is None or self._newest_in_line[cuda.minor] == cuda.version,
            download_host=self.kb.download_host,
            repositories=self._repositories(cuda, cudnn, nccl),
            python_tooling=self._tooling(python),
            installer=self.rules.installer(arch) if build and build.install.method == "conda" else None,
            framework_module=self.kb.frameworks[build.framework].import_name if build else None,
            gpu_capability=self.kb.gpus[req.gpu].compute_capability if req.gpu else None,
            gpu_arch_env=self._gpu_arch_env(bench, req.gpu),
            pip_locks=self._pip_locks(python, arch, base),
            nccl_profiles=self.kb.nccl_profiles,
            build_only=tuple((rule.name, rule.canonical_name) for rule in self.kb.build_only),
            systems=self._systems(bench),
        )
        return stack

    def _gpu_arch_env(self, bench: Benchmark, gpu: Optional[str]) -> Tuple[Tuple[str, str], ...]:
        """Each arch-list variable as the GPU asked spells it; none without --gpu. The
        benchmark's own declarations (build.arch_list_env) win over recipes/gpus.yaml's."""
        if gpu is None:
            return ()
        templates = dict(self.kb.arch_list_env.variables)
        templates.update(bench.build.arch_list_env if bench.build else ())
        capability = self.kb.gpus[gpu].compute_capability
        defaults = dict(bench.build.env if bench.build else ())
        return tuple(
            (name, spell_target(template, capability, defaults.get(name, "")))
            for name, template in templates.items()
        )

    def _systems(self, bench: Benchmark) -> Tuple[System, ...]:
        """The systems (recipes/systems.yaml) the benchmark's launch node shapes name."""
        launch = bench.build.launch if bench.build else None
        shapes = launch.node_shapes if launch else ()
        return tuple(self.kb.systems[s.name] for s in shapes if s.name in self.kb.systems)

    def _pip_locks(self, python: Optional[PythonOption], arch: str, base: Base) -> Optional[PipLocks]:
        if python is None:
            return None
        return self.kb.pip_locks.for_target(pip_locks.LockTarget(python.version, arch, base.glibc))

    def _repositories(
        self, cuda: Optional[CudaRelease], cudnn: Optional[LibBuild], nccl: Optional[LibBuild]
    ) -> Tuple[NvidiaRepo, ...]:
        if cuda is None:
            return ()
        names = {"cuda"} | {lib.repo for lib in (cudnn, nccl) if lib is not None and lib.repo}
        missing = sorted(names - set(self.kb.repositories))
        if missing:
            raise RecipeError(
                "recipes/cuda.yaml",
                None,
                f"no NVIDIA repository named {', '.join(missing)} under repositories",
                hint="add it under repositories, or fix the repo: of the cuDNN/NCCL build",
            )
        return tuple(self.kb.repositories[name] for name in sorted(names))

    def _tooling(self, python: Optional[PythonOption]) -> Optional[PythonTooling]:
        if python is None:
            return None
        tooling = self.kb.python_tooling.get(python.version)
        if tooling is None:
            raise RecipeError(
                "recipes/tools.yaml",
                None,
                f"no python_tooling entry for Python {python.version}",
                hint="add its pip, setuptools and wheel versions under python_tooling",
            )
        return tooling


def _with_source_for(bench: Benchmark, build: Optional[FrameworkBuild]) -> Benchmark:
    """The benchmark with the source commit that serves the stack's framework version
    (tensorflow/benchmarks keeps a branch per TensorFlow release)."""
    if bench.build is None or len(bench.build.sources) < 2:
        return bench
    source = bench.build.source_for(build.version if build is not None else None)
    if source is None or source == bench.build.source:
        return bench
    return bench._replace(build=bench.build._replace(source=source))
