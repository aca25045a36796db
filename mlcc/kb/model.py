"""The knowledge base as typed, immutable objects.

Records are :class:`typing.NamedTuple` classes: immutable, hashable and picklable.

Every fact carries a :class:`Provenance`: the citations it rests on, whether it was
verified, and ``origin`` (``recipes/cuda.yaml:182``) so that a conflict can point at the
exact line a rule comes from.
"""

# Annotations are evaluated here (no ``from __future__ import annotations``): typing.NamedTuple
# turns every string annotation into a ForwardRef and compiles it when the class is made, and
# every command that loads the knowledge base makes these classes. So a class is defined above the
# fields that name it (tests/unit/test_resolve_and_gen_import_only_what_they_use.py).

import re
from typing import Dict, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

from mlcc.kb.pip_locks import LockFiles
from mlcc.versions import parse_version, satisfies


class Provenance(NamedTuple):
    source: Tuple[str, ...]
    verified: bool
    origin: str
    unverified_fields: Tuple[str, ...] = ()
    note: Optional[str] = None

    @property
    def weak(self) -> bool:
        """True when any part of the fact rests on unconfirmed evidence."""
        return not self.verified or bool(self.unverified_fields)


class Arch(NamedTuple):
    name: str
    aliases: Tuple[str, ...]
    oci: str
    nvidia_repos: Tuple[Tuple[str, str], ...]  # (base family, NVIDIA repository directory)
    debian: str
    kubernetes: str
    gnu_triplet: str
    prov: Provenance

    def nvidia_repo(self, family: str) -> str:
        return dict(self.nvidia_repos)[family]


class PinnedPackage(NamedTuple):
    """A package and its exact version-release; its family spells it (:meth:`Family.pin`)."""

    name: str
    version: str


def fill(pattern: str, values: Mapping[str, str]) -> str:
    """``pattern`` (a shell line of recipes/families.yaml) with each ``{name}`` replaced
    by ``values[name]``, in one pass: a value that holds ``{name}`` stays as it is.

    The loader has checked that every brace belongs to a known placeholder, so splitting
    on braces suffices (no regular expression to compile on every start).
    """
    pieces = pattern.split("{")
    out = [pieces[0]]
    for piece in pieces[1:]:
        name, _, text = piece.partition("}")
        out.append(values[name])
        out.append(text)
    return "".join(out)


class PackageManager(NamedTuple):
    """The shell lines of one package manager (recipes/families.yaml)."""

    name: str
    install: str  # installs {packages}
    clean: str  # empties the caches
    prov: Provenance

    def install_commands(self, packages: Sequence[str]) -> Tuple[str, str]:
        """Install ``packages`` (words as the manager takes them), then clean up."""
        return (fill(self.install, {"packages": " ".join(packages)}), self.clean)


class Family(NamedTuple):
    """What differs between base families' package managers (recipes/families.yaml)."""

    name: str
    package_format: str  # rpm | deb
    package_managers: Tuple[PackageManager, ...]
    nvidia_repo: str  # adds NVIDIA repository {name} at {baseurl}, signed by {gpgkey}
    install_commands: Tuple[str, ...]
    pin_format: str  # "{name}-{version}"
    pinned: str  # a regular expression every pinned word matches
    library_dir: str  # may hold {gnu_triplet}
    recorder_flag: str
    cuda_packages: str  # which package list of a CudaRelease the family installs
    prov: Provenance
    # a package name that holds headers and static libraries, for building only (-devel)
    devel_package: str = "$^"
    # what a runtime image installs from the base's repositories (TLS roots, archives)
    runtime_packages: Tuple[str, ...] = ()

    def is_devel(self, name: str) -> bool:
        """True for a package a runtime image leaves out: headers and static libraries."""
        return re.search(self.devel_package, name) is not None

    def pin(self, package: PinnedPackage) -> str:
        return self.pin_format.format(name=package.name, version=package.version)

    def manager(self, name: str) -> PackageManager:
        for manager in self.package_managers:
            if manager.name == name:
                return manager
        raise KeyError(name)

    def nvidia_repo_command(self, name: str, baseurl: str, gpgkey: str) -> str:
        return fill(self.nvidia_repo, {"name": name, "baseurl": baseurl, "gpgkey": gpgkey})

    def libraries(self, gnu_triplet: str) -> str:
        """Where the family's packages put shared libraries on an arch."""
        return self.library_dir.replace("{gnu_triplet}", gnu_triplet)


class PythonOption(NamedTuple):
    version: str
    packages: Tuple[str, ...]
    executable: str
    setup_packages: Tuple[str, ...] = ()
    prefix: Optional[str] = None
    verified: bool = True
    note: Optional[str] = None


class Toolset(NamedTuple):
    name: str
    gcc: str
    packages: Tuple[str, ...]
    root: str
    setup_packages: Tuple[str, ...] = ()
    suffix: Optional[str] = None
    verified: bool = True
    note: Optional[str] = None


class BaseFramework(NamedTuple):
    """A framework an image base carries (NGC's PyTorch build 2.9.0a0+50eac811a6)."""

    name: str
    version: str  # UNCONFIRMED when no source names it


class BaseContents(NamedTuple):
    """What an image that already holds a framework brings (recipes/bases-ngc.yaml
    ``contents``): a stack on it installs no CUDA, cuDNN, NCCL or framework."""

    release: str  # the NGC release, 25.09
    os: str  # Ubuntu 24.04.3 LTS
    python: str  # 3.12
    cuda: str  # NVIDIA's full number, 13.0.1.012
    cuda_min_driver: str
    cudnn: str
    nccl: str
    frameworks: Tuple[BaseFramework, ...]  # the one the image is named for first
    cublas: Optional[str] = None
    dali: Optional[str] = None
    tensorrt: Optional[str] = None
    openmpi: Optional[str] = None  # the Open MPI it carries (HPC-X's, with mpicc)
    # (kernel | user_mode, version): the drivers NVIDIA's run on the image had
    driver_ran: Tuple[Tuple[str, str], ...] = ()
    # the kernel-driver branches (570 for 570.133.20) older than cuda_min_driver on which the
    # image's forward-compatibility package runs its CUDA, on data-center GPUs only
    forward_compat: Tuple[int, ...] = ()

    @property
    def cuda_release(self) -> str:
        """The CUDA release as recipes/cuda.yaml numbers it: 13.0.1 for 13.0.1.012."""
        return ".".join(str(part) for part in parse_version(self.cuda).release[:3])

    @property
    def framework(self) -> BaseFramework:
        """The framework the image is named for (pytorch, dgl)."""
        return self.frameworks[0]

    def carries(self, framework: str) -> Optional[BaseFramework]:
        """The build of ``framework`` the image carries, if any."""
        return next((f for f in self.frameworks if f.name == framework), None)


class Base(NamedTuple):
    name: str
    title: str
    image: str
    tag: str
    family: str
    repo_distro: str
    package_manager: str
    arches: Tuple[str, ...]
    preference: int
    python_default: str
    pythons: Tuple[PythonOption, ...]
    gcc_system: str
    gcc_packages: Tuple[str, ...]
    toolsets: Tuple[Toolset, ...]
    build_packages: Tuple[str, ...]
    prov: Provenance
    packaging: Family  # the facts of ``family``
    requires_subscription: bool = False
    end_of_life: Optional[str] = None
    glibc: Optional[str] = None  # decides which manylinux wheels fit (mlcc kb check)
    # (arch, the oldest CPU level its binaries run on): UBI 10 needs x86-64-v3 (AVX2) hosts
    isa_baseline: Tuple[Tuple[str, str], ...] = ()
    # What the image already holds (NGC framework images); None for a plain OS base
    contents: Optional[BaseContents] = None

    @property
    def ref(self) -> str:
        return f"{self.image}:{self.tag}"

    @property
    def os_release(self) -> str:
        """The OS release the image's /etc/os-release names: the tag of an OS base (8.10),
        the OS of an image base's contents (24.04.3 for "Ubuntu 24.04.3 LTS", tag 25.09-py3)."""
        if self.contents is None:
            return self.tag
        return next((word for word in self.contents.os.split() if word[:1].isdigit()), self.tag)

    @property
    def provides_framework(self) -> bool:
        """True for an image that brings CUDA, its libraries and a framework (NGC)."""
        return self.contents is not None


class CudaRelease(NamedTuple):
    version: str
    label: str
    min_driver: str
    host_gcc: Tuple[Tuple[str, str], ...]
    repos: Tuple[Tuple[str, Tuple[str, ...]], ...]
    packages: Tuple[PinnedPackage, ...]
    prov: Provenance
    apt_packages: Tuple[PinnedPackage, ...] = ()
    packages_not_on: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    # the names of ``packages`` / ``apt_packages`` NVIDIA's base and runtime images install
    # (no compiler, no headers); empty where no such image of this release is known
    runtime_packages: Tuple[str, ...] = ()
    apt_runtime_packages: Tuple[str, ...] = ()

    @property
    def minor(self) -> str:
        """``10.1`` for 10.1.243."""
        release = parse_version(self.version).release
        return f"{release[0]}.{release[1]}"

    def host_gcc_spec(self, arch: str) -> Optional[str]:
        return dict(self.host_gcc).get(arch)

    def arches_on(self, distro: str) -> Tuple[str, ...]:
        return dict(self.repos).get(distro, ())

    def carried(self, distro: str, arch: str) -> bool:
        return arch in self.arches_on(distro)

    def packages_for(self, family: Family, arch: str) -> Tuple[PinnedPackage, ...]:
        chosen = {"packages": self.packages, "apt_packages": self.apt_packages}[family.cuda_packages]
        missing = dict(self.packages_not_on).get(arch, ())
        return tuple(p for p in chosen if p.name not in missing)

    def runtime_packages_for(self, family: Family, arch: str) -> Optional[Tuple[PinnedPackage, ...]]:
        """The runtime subset of :meth:`packages_for`; None when no runtime list is known."""
        names = self.runtime_packages if family.cuda_packages == "packages" else self.apt_runtime_packages
        if not names:
            return None
        return tuple(p for p in self.packages_for(family, arch) if p.name in names)


# What an image carries: "runtime" (a multi-stage build whose final stage gets what the
# build made) or "devel" (one stage: the build's compilers, headers and sources stay).
FLAVOURS = ("runtime", "devel")


# A bundled library known to be brought by a framework build whose version no source
# names (recipes write it so; stacks and labels then claim no version).
UNCONFIRMED = "unconfirmed"


class LibBuild(NamedTuple):
    """A cuDNN or NCCL build for one CUDA release prefix, repository distro and arches."""

    library: str
    version: str
    cuda: str
    repo_distro: str
    arches: Tuple[str, ...]
    method: str
    prov: Provenance
    packages: Tuple[PinnedPackage, ...] = ()
    repo: Optional[str] = None
    url: Optional[str] = None
    sha256: Optional[str] = None
    sha256_unavailable: Optional[str] = None  # why no checksum can exist
    evidence: Optional[str] = None
    # method "source": the version of the image base's copy that the build replaced
    replaced: Optional[str] = None

    @property
    def confirmed(self) -> bool:
        """False for a framework-bundled library whose version no source names."""
        return self.version != UNCONFIRMED

    @property
    def major(self) -> int:
        return parse_version(self.version).release[0]

    def fits_cuda(self, cuda_version: str) -> bool:
        prefix = parse_version(self.cuda).release
        return parse_version(cuda_version).release[: len(prefix)] == prefix


class Install(NamedTuple):
    """How a framework build is installed into an image."""

    method: str
    packages: Tuple[str, ...] = ()
    index_url: Optional[str] = None
    extra_index_url: Optional[str] = None
    find_links: Optional[str] = None
    channels: Tuple[str, ...] = ()
    git_url: Optional[str] = None
    git_ref: Optional[str] = None
    build_env: Tuple[Tuple[str, str], ...] = ()
    steps: Tuple[str, ...] = ()
    git_ref_unresolved: Optional[str] = None  # why git_ref is a short hash
    origins: Tuple[str, ...] = ()  # file:line of each of ``packages`` (mlcc kb check)
    wheels: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()  # (python, exact wheel URLs)
    wheels_origin: Optional[str] = None
    wheels_sha256_unavailable: Optional[str] = None  # why the wheel URLs carry no #sha256=
    builds_unavailable: Optional[str] = None  # conda: why the packages name no build

    def wheels_for(self, python: str) -> Tuple[str, ...]:
        return dict(self.wheels).get(python, ())


class FrameworkBuild(NamedTuple):
    framework: str
    version: str
    variant: str
    cuda: Tuple[str, ...]
    python: Tuple[str, ...]
    arches: Tuple[str, ...]
    install: Install
    prov: Provenance
    cudnn: Optional[str] = None
    gcc: Optional[str] = None
    companions: Tuple[Tuple[str, str], ...] = ()
    # libraries the build brings and loads itself: (cuda_runtime | cudnn | nccl, version)
    bundles: Tuple[Tuple[str, str], ...] = ()
    bundles_origin: Optional[str] = None  # file:line of ``bundles:`` (mlcc kb check)
    bundles_origins: Tuple[Tuple[str, str], ...] = ()  # (library, file:line of its entry)
    # (python | arches | cuda | cudnn, file:line of the claim): where mlcc kb check reports
    # what the wheel contradicts
    fact_origins: Tuple[Tuple[str, str], ...] = ()

    def fact_origin(self, field: str) -> str:
        """Where the recipe states ``field`` of this build (its own line, else the build's)."""
        return dict(self.fact_origins).get(field) or self.prov.origin

    def bundle_origin(self, library: str) -> str:
        """Where the recipe states what the build brings of ``library`` (for findings)."""
        return dict(self.bundles_origins).get(library) or self.bundles_origin or self.prov.origin

    def bundled(self, library: str) -> Optional[str]:
        """The version of ``library`` the build brings (``UNCONFIRMED`` when no source names it)."""
        return dict(self.bundles).get(library)

    def bundled_versions(self, library: str) -> Tuple[str, ...]:
        """The confirmed version the build brings of ``library``, if any (for comparisons)."""
        version = self.bundled(library)
        return (version,) if version is not None and version != UNCONFIRMED else ()

    @property
    def is_cpu(self) -> bool:
        return not self.cuda

    @property
    def label(self) -> str:
        return f"{self.framework} {self.version} ({self.variant})"


class Framework(NamedTuple):
    name: str
    title: str
    import_name: str
    builds: Tuple[FrameworkBuild, ...]
    origin: str


class FrameworkRule(NamedTuple):
    """What a benchmark accepts of its framework."""

    name: str
    versions: str
    prefer: Tuple[str, ...]
    origin: str


class SourceRef(NamedTuple):
    """A benchmark's code: a GitHub repository pinned to a commit, and a folder in it."""

    repository: str
    commit: str
    path: Optional[str] = None
    framework: Optional[str] = None  # the framework versions this commit serves (None: any)
    # further folders of the same checkout: (path in the repository, folder under the workdir)
    also: Tuple[Tuple[str, str], ...] = ()

    @property
    def archive_url(self) -> str:
        return f"{self.repository}/archive/{self.commit}.tar.gz"

    @property
    def archive_prefix(self) -> str:
        """The top folder of the archive GitHub serves: <repo name>-<commit>."""
        return f"{self.repository.rsplit('/', 1)[1]}-{self.commit}"


# How a build step installs the component it replaces (recipes: a script step's replaces).
BUILT_FROM_SOURCE = "source"
FROM_PACKAGES = "package"  # the base's package manager (apt on an Ubuntu NGC image)


class Replacement(NamedTuple):
    """A component an image base holds that a build step installs its own version of."""

    component: str  # cudnn | nccl
    version: str
    method: str = BUILT_FROM_SOURCE  # BUILT_FROM_SOURCE | FROM_PACKAGES


class BuildStep(NamedTuple):
    """One step of a benchmark's build; ``kind`` says which fields apply."""

    kind: str  # pip | git | install | make | script
    packages: Tuple[str, ...] = ()
    pip_index: Optional[str] = None
    no_deps: bool = False
    git_url: Optional[str] = None
    git_ref: Optional[str] = None
    dest: Optional[str] = None
    setup_options: Tuple[str, ...] = ()
    install: Optional[str] = None
    install_dir: Optional[str] = None  # install: the workdir's folder holding setup.py (None: the workdir)
    make_args: Tuple[str, ...] = ()
    script: Optional[str] = None  # a file in recipes/benchmarks/<benchmark>.d/
    arches: Tuple[str, ...] = ()  # empty: every arch
    families: Tuple[str, ...] = ()  # empty: every base family
    env: Tuple[Tuple[str, str], ...] = ()
    note: Optional[str] = None
    origins: Tuple[str, ...] = ()  # file:line of each of ``packages`` (mlcc kb check)
    # a script that sets up what runs outside the work directory (a link, a system file): a
    # runtime image's final stage, which copies only the environment and the work
    # directory from the build stage, runs it too
    runtime: bool = False
    # (version, nearest): the pin stands in for ``version``, which the index lacks; ``nearest``
    # is the index's release nearest to it for the step's targets (mlcc kb check checks it)
    stands_for: Optional[Tuple[str, str]] = None
    # the components the image base holds (cudnn | nccl) that the step installs its own
    # version of, over the base's copy (recipes: replaces)
    replaces: Tuple[Replacement, ...] = ()
    replaces_origin: Optional[str] = None  # file:line of ``replaces``

    def applies_to(self, arch: str, family: str) -> bool:
        return (not self.arches or arch in self.arches) and (not self.families or family in self.families)


class Dataset(NamedTuple):
    name: str
    description: str
    size: str
    mount: str
    download: str
    verified: bool = True


class ReferenceRun(NamedTuple):
    minutes: float
    system: str
    runs: Optional[int] = None
    log_name: Optional[str] = None  # the name MLPerf logs use (submission_benchmark), if different
    gpu: Optional[str] = None  # the GPU generation it ran on (recipes/gpus.yaml), where the recipe says


class MpiLaunch(NamedTuple):
    """How an MPIJob starts the benchmark: mpirun on a launcher, sshd on the workers."""

    prefix: Tuple[Tuple[str, str], ...]  # (base family, Open MPI prefix)
    packages: Tuple[Tuple[str, Tuple[str, ...]], ...]  # (base family, names)
    ranks: str  # "gpu": one rank per GPU; "node": one per node, which starts a process per GPU
    args: Tuple[str, ...] = ()  # the entrypoint's arguments under mpirun
    # "torch": each rank gets torch.distributed's env:// variables (RANK, WORLD_SIZE,
    # LOCAL_RANK, MASTER_ADDR, MASTER_PORT) from Open MPI's, as torchrun would set them
    rank_env: Optional[str] = None
    # also a Kubeflow PyTorchJob: a pod per node, torch.distributed.run in each (rank_env: torch)
    pytorchjob: bool = False

    def prefix_for(self, family: str) -> str:
        return dict(self.prefix)[family]

    def packages_for(self, family: str) -> Tuple[str, ...]:
        return dict(self.packages).get(family, ())


class RunSeed(NamedTuple):
    """The seed NVIDIA's launch draws once per run and hands every task alike (run.sub's
    ``SEED=${SEED:-$RANDOM}``-style draw, exported before the tasks start): the variable the
    benchmark's scripts read it from. mlcc's run objects draw it when the run starts, or take
    the user's (recipes: ``build.run_seed``)."""

    env: str  # the variable the scripts read: SEED
    prov: Provenance


class NodeShape(NamedTuple):
    """A machine NVIDIA ran the benchmark on: what its config files say of the system
    (DGXNGPU, DGXNSOCKET, DGXSOCKETCORES, DGXHT). A DGX-1 has 8 GPUs, a DGX-2 16."""

    name: str
    gpus: int
    sockets: int
    socket_cores: int
    hyperthreads: int
    # The GPU generation the machine carries (a name in recipes/gpus.yaml) and its compute
    # capability: a stack resolved for that GPU (--gpu) starts from this machine's files.
    gpu: Optional[str] = None
    gpu_capability: Optional[str] = None


class LaunchConfig(NamedTuple):
    """One of NVIDIA's config_<system>.sh: the DL parameters and the size they were tuned for."""

    file: str
    node_shape: str  # the NodeShape it ran on
    nodes: int
    gpus_per_node: int
    settings: Tuple[Tuple[str, Union[str, Tuple[str, ...]]], ...]  # NAME=value or NAME=( ... )
    exports: Tuple[Tuple[str, str], ...] = ()
    source: str = ""  # where the file is: github:owner/repo @commit path
    # What the file needs that the benchmark's image does not carry (another implementation's
    # flags, a library mlcc cannot source): mlcc keeps NVIDIA's values but starts no run from it.
    image_lacks: Optional[str] = None

    @property
    def gpus(self) -> int:
        return self.nodes * self.gpus_per_node


class Launch(NamedTuple):
    """How NVIDIA's scripts start the benchmark at a size (recipes: build.launch)."""

    style: str  # per-node (bind_launch per node) | per-gpu (mpirun per GPU, Horovod)
    system: str  # DGXSYSTEM: the scripts source config_<system>.sh
    node_shapes: Tuple[NodeShape, ...]  # the machines NVIDIA's configurations ran on
    multi_node: bool
    configs: Tuple[LaunchConfig, ...]
    source: str
    scale: Tuple[str, ...] = ()

    @property
    def max_gpus(self) -> int:
        """GPUs per node: the largest machine NVIDIA's configurations ran on."""
        return max(shape.gpus for shape in self.node_shapes)

    def shape(self, name: str) -> NodeShape:
        return next(shape for shape in self.node_shapes if shape.name == name)


class EnvExtension(NamedTuple):
    """A variable of the base image's environment the benchmark extends rather than sets
    (a recipe's ``env: {PATH: {prepend: [...]}}``): NVIDIA's Dockerfiles put their folders
    before or after what the NGC base holds (``ENV PATH=/usr/local/hugectr/bin:$PATH``),
    whose LD_LIBRARY_PATH carries what CUDA in the container needs."""

    name: str
    prepend: Tuple[str, ...] = ()  # absolute folders, before the base's value, in order
    append: Tuple[str, ...] = ()  # after it


class BenchmarkBuild(NamedTuple):
    workdir: str
    packages: Tuple[Tuple[str, Tuple[str, ...]], ...]  # (base family, names)
    steps: Tuple[BuildStep, ...]
    env: Tuple[Tuple[str, str], ...]
    entrypoint: Tuple[str, ...]
    writable: Tuple[str, ...]
    datasets: Tuple[Dataset, ...]
    quality_target: str
    prov: Provenance
    source: Optional[SourceRef] = None  # the stack's: the resolver picks it from ``sources``
    sources: Tuple[SourceRef, ...] = ()  # per framework-version range, first match wins
    cmd: Tuple[str, ...] = ()
    shm: Optional[str] = None
    run_as_root: bool = False
    reference: Optional[ReferenceRun] = None
    run_args: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()  # (accelerator, arguments)
    scripts: Tuple[Tuple[str, str], ...] = ()  # (file name, content) used by script steps
    mpi: Optional[MpiLaunch] = None
    launch: Optional[Launch] = None
    flavour: str = "runtime"  # the default flavour of its images
    flavour_reason: Optional[str] = None  # why devel, when it is
    # (base family, names) a runtime image installs; empty: packages without the devel ones
    runtime_packages: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    runtime_copy: Tuple[str, ...] = ()  # paths the build stage made, besides the environment
    # NVIDIA's results of the same round on other GPU generations (v2.1: DGX H100 beside the
    # DGX A100 reference): each names its GPU; results compare sets runs on that GPU beside it.
    gpu_references: Tuple[ReferenceRun, ...] = ()
    # arch-list variables of this build besides recipes/gpus.yaml's: (name, template), e.g.
    # NVTE_CUDA_ARCHS "{sm}a". One ``env`` also sets holds the list a build without --gpu
    # compiles for; one it does not is set with --gpu only (nccl-tests' NVCC_GENCODE)
    arch_list_env: Tuple[Tuple[str, str], ...] = ()
    # the variables ``env`` extends instead of setting, in the recipe's order; ``env`` holds
    # only the values that replace the base's
    env_extensions: Tuple[EnvExtension, ...] = ()
    run_seed: Optional[RunSeed] = None  # one seed per run for every rank (None: the scripts draw theirs)

    def packages_for(self, family: str) -> Tuple[str, ...]:
        return dict(self.packages).get(family, ())

    @property
    def arch_list_names(self) -> Tuple[str, ...]:
        """The arch-list variables this build declares itself (``arch_list_env``), by name:
        the image's ENV and the run objects' pod env both spell them as --gpu asks."""
        return tuple(name for name, _ in self.arch_list_env)

    def replacing(self, component: str, arch: str, family: str) -> Optional[Tuple[BuildStep, Replacement]]:
        """The step that installs its own ``component`` (cudnn, nccl) over an image base's on
        ``arch`` and ``family``, with how it does, if one does (the loader allows one a
        component)."""
        return next(
            (
                (step, replacement)
                for step in self.steps
                for replacement in step.replaces
                if replacement.component == component and step.applies_to(arch, family)
            ),
            None,
        )

    def runtime_packages_for(self, family: Family) -> Tuple[str, ...]:
        """The system packages a runtime image of the benchmark installs."""
        named = dict(self.runtime_packages)
        if family.name in named:
            return named[family.name]
        return tuple(p for p in self.packages_for(family.name) if not family.is_devel(p))

    def source_for(self, framework_version: Optional[str]) -> Optional[SourceRef]:
        """The source commit for a framework version: the first whose range holds it."""
        for source in self.sources:
            if source.framework is None or (
                framework_version is not None and satisfies(framework_version, source.framework)
            ):
                return source
        return None


class ReferenceStack(NamedTuple):
    """What the benchmark's reference run used; the default stack is the nearest to it."""

    run: str  # "NGC 19.05 on DGX-1 (MLPerf v0.6)"
    cuda: str
    prov: Provenance
    cudnn: Optional[str] = None
    nccl: Optional[str] = None

    def version_of(self, component: str) -> Optional[str]:
        return {"cuda": self.cuda, "cudnn": self.cudnn, "nccl": self.nccl}.get(component)


class UbiAlternative(NamedTuple):
    """Why a benchmark that builds on NGC images only has no stack on a plain base (UBI 9/10):
    the public releases nearest to what its image holds and why they are not enough
    (``constraints.ubi_alternative``), and the recipe of the nearest stack there, if any."""

    unavailable: str
    nearest: Optional[str]  # a benchmark id whose stack builds on the plain bases
    prov: Provenance


# How a recipe says its image does not yet run the benchmark: its build note starts so.
INCOMPLETE_MARK = "INCOMPLETE:"


class Benchmark(NamedTuple):
    name: str
    title: str
    suite: str
    accelerators: Tuple[str, ...]
    arches: Tuple[str, ...]
    requires: Tuple[str, ...]
    framework: Optional[FrameworkRule]
    python: Optional[str]
    cuda: Optional[str]
    gcc: Optional[str]
    gpus_min: int
    gpus_reference: int
    prov: Provenance
    build: Optional[BenchmarkBuild]
    needs_python: bool = True
    origins: Tuple[Tuple[str, str], ...] = ()
    reference_stack: Optional[ReferenceStack] = None
    # libraries a build step links itself: the system copy stays even when the framework bundles one
    links: Tuple[str, ...] = ()
    # (arch, why the benchmark cannot run there): the arch's refusal names the cause
    arches_missing: Tuple[Tuple[str, str], ...] = ()
    # The MLPerf round the recipe implements (a record of recipes/rounds/); None for tools outside MLPerf.
    round: Optional[str] = None
    # The name the recipe file gives; ``name`` is the id, unique across rounds (see benchmark_id)
    recipe_name: str = ""
    # Why no stack of it can be built on the bases mlcc knows: resolving refuses with this cause
    unavailable: Optional[str] = None
    # The bases it builds on (constraints.bases), the reference first; empty: the resolver
    # chooses among the bases without contents. A base with contents brings the framework.
    bases: Tuple[str, ...] = ()
    # Why no stack on a base without contents (UBI) can be built, when ``bases`` are NGC's
    ubi_alternative: Optional[UbiAlternative] = None

    @property
    def base_name(self) -> str:
        """The benchmark's name without its round (``maskrcnn`` for ``maskrcnn-v2.1``)."""
        return self.recipe_name or self.name

    @property
    def incomplete(self) -> Optional[str]:
        """Why the benchmark's image does not yet run it, when its recipe says so: the build
        note after its leading ``INCOMPLETE:`` (None for a complete recipe)."""
        note = self.build.prov.note if self.build else None
        if note is None or not note.startswith(INCOMPLETE_MARK):
            return None
        return note[len(INCOMPLETE_MARK) :].strip()

    def why_not_on(self, arch: str) -> Optional[str]:
        """The recorded cause of the benchmark not running on ``arch``, if the recipe gives one."""
        return dict(self.arches_missing).get(arch)

    def origin_of(self, key: str) -> str:
        """Where the rule ``key`` (arches, python, framework ...) is written."""
        return dict(self.origins).get(key, self.prov.origin)


def benchmark_id(name: str, round_: Optional[str], default_round: Optional[str]) -> str:
    """A benchmark's id: its name for the default round and for tools outside MLPerf, else
    ``name-round`` (``maskrcnn-v2.1``), so images, files and tags of two rounds never collide
    and every name of the default round (recipes/rounds/: ``default: true``) stays as it was."""
    return name if round_ in (None, default_round) else f"{name}-{round_}"


class RoundCounts(NamedTuple):
    """How many runs a result needs and how many are dropped or may fail (a round's default,
    or one benchmark's own counts over it)."""

    runs: Optional[int] = None
    dropped: Optional[int] = None
    max_failed: Optional[int] = None
    note: Optional[str] = None
    model: Optional[str] = None  # the rules' model name: SSD (v0.6) is not SSD (RetinaNet) (v2.1)


class RoundScoring(NamedTuple):
    """How MLPerf Training scores one round's logs (recipes/rounds/<round>.yaml ``scoring:``)."""

    log_formats: Tuple[str, ...]  # the formats its runs write: a log's round is inferred from it
    rules: str  # the training rules the counts come from, at their commit
    scaling_json: bool  # the result folder's scaling.json multiplies the score
    default: RoundCounts
    benchmarks: Tuple[Tuple[str, RoundCounts], ...]  # by the name the round's logs give it
    note: Optional[str] = None

    def counts(self, benchmark: str) -> RoundCounts:
        """The benchmark's counts, each falling back to the round's default."""
        own = dict(self.benchmarks).get(benchmark, RoundCounts())
        return RoundCounts(
            runs=own.runs if own.runs is not None else self.default.runs,
            dropped=own.dropped if own.dropped is not None else self.default.dropped,
            max_failed=own.max_failed if own.max_failed is not None else self.default.max_failed,
            note=own.note,
            model=own.model,
        )


class RoundSystem(NamedTuple):
    """A system a round's NVIDIA submissions ran on (DGXSYSTEM), as its system JSON gives it."""

    name: str  # DGXA100: the name NVIDIA's config_<name>*.sh files carry
    gpu: str  # a generation of recipes/gpus.yaml
    gpus: int
    sockets: int
    socket_cores: int
    hyperthreads: int
    system_json: Tuple[str, ...]  # training_results' NVIDIA/systems/*.json it comes from
    prov: Provenance


class Round(NamedTuple):
    """One MLPerf Training round (recipes/rounds/<round>.yaml): its scoring rules, systems and
    the sources its benchmark recipes share."""

    name: str  # v2.1
    title: str
    year: int
    default: bool  # the round a benchmark name means when several rounds hold it
    scoring: RoundScoring
    systems: Tuple[RoundSystem, ...]
    sources: Tuple[Tuple[str, str], ...]  # (id, citation) its benchmark recipes may cite
    prov: Provenance
    steps: Tuple[Tuple[str, BuildStep], ...] = ()  # the build steps its benchmarks share, by name

    def system(self, name: str) -> Optional[RoundSystem]:
        return next((s for s in self.systems if s.name == name), None)


class NvidiaRepo(NamedTuple):
    name: str
    path: str
    # (base family or repository distro, signing key file): a distro's own key where its
    # directories are signed with another key than its family's (rhel10: CDF6BA43.pub)
    keys: Tuple[Tuple[str, str], ...]
    prov: Provenance
    key_sha256_unavailable: Optional[str] = None

    def key(self, family: str, distro: Optional[str] = None) -> str:
        """The signing key file in the directories of ``distro``, else its family's."""
        keys = dict(self.keys)
        return keys.get(distro or family, keys[family])


class PythonTooling(NamedTuple):
    """The newest pip / setuptools / wheel a Python version still supports."""

    python: str
    pip: str
    setuptools: str
    wheel: str
    prov: Provenance


class Download(NamedTuple):
    """A pinned tool download (Miniforge, Bazel): URL per arch, optional checksum file."""

    name: str
    version: str
    urls: Tuple[Tuple[str, str], ...]  # (arch, url)
    prov: Provenance
    checksum_suffix: Optional[str] = None
    sha256: Tuple[Tuple[str, str], ...] = ()  # (arch, sha256)
    sha256_unavailable: Optional[str] = None

    def url(self, arch: str) -> Optional[str]:
        return dict(self.urls).get(arch)

    def sha256_for(self, arch: str) -> Optional[str]:
        return dict(self.sha256).get(arch)


class SourceBuild(NamedTuple):
    """What pip needs in the image to build a package from its sdist (headers, compilers)."""

    name: str
    packages: Tuple[Tuple[str, Tuple[str, ...]], ...]  # (base family, names)
    prov: Provenance
    # the image base's contents field that carries what the build needs instead (openmpi)
    base_contents: Optional[str] = None

    def packages_for(self, family: str) -> Tuple[str, ...]:
        return dict(self.packages).get(family, ())


class BuildOnly(NamedTuple):
    """A Python package that only builds (recipes/tools.yaml build_only): a runtime image's
    final stage goes without it."""

    name: str
    why: str
    prov: Provenance
    canonical_name: str  # PEP 503's (packaging's canonicalize_name), what a render compares


class SdistRequires(NamedTuple):
    """The dependencies an sdist declares in its setup.py (install_requires), recorded for
    ``mlcc kb lock`` where its metadata is not static and it has no egg-info."""

    name: str
    version: str
    requires: Tuple[str, ...]  # each a valid PEP 508 requirement
    prov: Provenance


class System(NamedTuple):
    """A machine NVIDIA ran on (recipes/systems.yaml): what a run pod on one asks of a cluster."""

    name: str  # DGXA100: as NVIDIA's config files and a launch's node shapes name it
    title: str
    gpus: int
    cores: int  # physical cores, every socket
    threads: int
    memory_gib: int
    prov: Provenance

    def cores_for(self, gpus: int) -> int:
        """The cores of ``gpus`` GPUs' share of the node (NVIDIA's launchers bind each GPU's
        process to cores/gpus of them)."""
        return max(1, self.cores * gpus // self.gpus)

    def shm_mib_for(self, gpus: int) -> int:
        """Half of ``gpus`` GPUs' share of the memory, MiB: the host's /dev/shm (tmpfs, half the
        RAM by default) that NVIDIA's --ipc=host containers share, in the GPUs' proportion."""
        return max(1, self.memory_gib * 1024 * gpus // self.gpus // 2)


class Gpu(NamedTuple):
    """An NVIDIA GPU generation (recipes/gpus.yaml)."""

    name: str
    title: str
    architecture: str
    compute_capability: str  # "9.0"
    min_cuda: str  # "11.8"
    min_driver: str
    product_labels: Tuple[str, ...]
    prov: Provenance
    gpus_per_node: Optional[int] = None  # 8 on DGX/HGX, 4 on a GB200/GB300 tray
    # the arch of every host the GPU comes in (GB200: aarch64, Grace); None when it varies
    host_arch: Optional[str] = None
    host_cpu: Optional[str] = None  # "NVIDIA Grace", for messages
    # the last CUDA line that targets it (Pascal, Volta: 12.9); None while current ones do
    max_cuda: Optional[str] = None
    # an NVIDIA data-center GPU, on which CUDA's forward compatibility works; False where
    # the product is not known to qualify (RTX PRO 6000: workstation and server editions)
    data_center: bool = False

    @property
    def sm(self) -> str:
        return "sm_" + self.compute_capability.replace(".", "")


def spell_target(template: str, capability: str, listed: str = "") -> str:
    """One GPU as an arch-list variable spells it: "{capability}" -> "10.0", "{sm}a" ->
    "100a" (recipes/gpus.yaml arch_list_env, a benchmark's build.arch_list_env).

    "{sm_listed}" is the SM number with the suffix the variable's own default list
    (``listed``, the recipe's build.env value) gives that SM, and the plain number where the
    list does not name it: NVIDIA's v5.1 TransformerEngine list "100a;103a" spells a GB200
    100a, while an H100, which the list lacks, gets plain 90, as NVIDIA's v5.0 H100 build
    spelled it.
    """
    sm = capability.replace(".", "")
    entries = set(re.split(r"[;, ]+", listed.strip()))
    as_listed = next((sm + suffix for suffix in ("a", "f") if sm + suffix in entries), sm)
    return template.format(capability=capability, sm=sm, sm_listed=as_listed)


class ArchListEnv(NamedTuple):
    """The variables through which every build takes the CUDA targets to compile for, each
    with how it spells one GPU (recipes/gpus.yaml arch_list_env)."""

    variables: Tuple[Tuple[str, str], ...]  # (name, template)
    prov: Provenance


class PublicHost(NamedTuple):
    """A public host the recipes fetch from, which a mirror can replace (recipes/hosts.yaml)."""

    name: str  # the mirror option it belongs to (HOST_MIRRORS): git, conda ...
    url: str  # the URL prefix, no trailing slash
    serves: str  # what comes from there, for --help
    prov: Provenance
    # the Package URL type of a repository there (pkg:github/<owner>/<repo>), for SBOMs
    purl_type: Optional[str] = None


class NcclProfile(NamedTuple):
    """Named NCCL settings for the ranks of a multi-node run (recipes/nccl-profiles.yaml)."""

    name: str
    description: str
    env: Tuple[Tuple[str, str], ...]  # NCCL environment variables, sorted by name
    # taken without --nccl-profile: "rdma" with an RDMA device in the pod, "sockets" without
    default_for: Optional[str]
    prov: Provenance


class HostMirror(NamedTuple):
    """mlcc's mirror option for one public host: its own interface, not a fact. Where the
    host is and what it serves are in recipes/hosts.yaml, which must name one host for
    each of :data:`HOST_MIRRORS` and no other (the knowledge base refuses a mismatch)."""

    host: str  # the host's name in recipes/hosts.yaml
    var: str  # the build argument
    flag: str  # the `mlcc gen` / `mlcc build` option


GIT = HostMirror("git", "GIT_MIRROR", "--git-mirror")
CONDA = HostMirror("conda", "CONDA_MIRROR", "--conda-mirror")
WMLCE = HostMirror("wmlce", "WMLCE_MIRROR", "--wmlce-mirror")
PYTORCH = HostMirror("pytorch", "PYTORCH_MIRROR", "--pytorch-mirror")
# In this order the build arguments are declared and passed.
HOST_MIRRORS: Tuple[HostMirror, ...] = (GIT, CONDA, WMLCE, PYTORCH)


class KnowledgeBase(NamedTuple):
    """Everything mlcc knows, loaded and validated. Treat the mappings as read-only."""

    root: str
    digest: str
    arches: Dict[str, Arch]
    arch_aliases: Dict[str, str]
    bases: Tuple[Base, ...]
    cuda: Tuple[CudaRelease, ...]
    cudnn: Tuple[LibBuild, ...]
    nccl: Tuple[LibBuild, ...]
    frameworks: Dict[str, Framework]
    benchmarks: Dict[str, Benchmark]
    download_host: str
    repositories: Dict[str, NvidiaRepo]
    python_tooling: Dict[str, PythonTooling]
    downloads: Dict[str, Download]
    families: Dict[str, Family]
    gpus: Dict[str, Gpu]
    # The public hosts by name, in HOST_MIRRORS order.
    hosts: Dict[str, PublicHost]
    systems: Dict[str, System]  # recipes/systems.yaml, by name (DGXA100)
    files: Tuple[str, ...] = ()
    source_builds: Tuple[SourceBuild, ...] = ()
    sdist_requires: Tuple[SdistRequires, ...] = ()
    build_only: Tuple[BuildOnly, ...] = ()
    pip_locks: LockFiles = LockFiles()  # recipes/locks/, parsed
    nccl_profiles: Tuple[NcclProfile, ...] = ()  # recipes/nccl-profiles.yaml, in file order
    round_records: Tuple[Round, ...] = ()  # recipes/rounds/, oldest first
    # the arch-list variables every build takes with --gpu (recipes/gpus.yaml)
    arch_list_env: ArchListEnv = ArchListEnv((), Provenance((), True, ""))

    def rounds(self) -> Tuple[str, ...]:
        """Every MLPerf round recipes/rounds/ records, oldest first."""
        return tuple(r.name for r in self.round_records)

    def round(self, name: str) -> Round:
        """The round record ``name``.

        Raises:
            KeyError: recipes/rounds/ has no such round.
        """
        for record in self.round_records:
            if record.name == name:
                return record
        raise KeyError(name)

    @property
    def default_round(self) -> Optional[str]:
        """The round a benchmark name means when several rounds hold it (its ``default: true``)."""
        return next((r.name for r in self.round_records if r.default), None)

    def benchmark_id(self, name: str, round_: Optional[str]) -> str:
        """``name``'s id in ``round_`` (see :func:`benchmark_id`)."""
        return benchmark_id(name, round_, self.default_round)

    def rounds_of(self, name: str) -> Tuple[str, ...]:
        """The rounds holding a benchmark called ``name`` (its base name), oldest first."""
        found = {b.round for b in self.benchmarks.values() if b.base_name == name and b.round is not None}
        return tuple(sorted(found, key=round_key))

    def packaging(self, package_format: str) -> Family:
        """The family whose packages have ``package_format`` (a cuDNN/NCCL build's method)."""
        for family in self.families.values():
            if family.package_format == package_format:
                return family
        raise KeyError(package_format)

    def base(self, name: str) -> Base:
        for base in self.bases:
            if base.name == name:
                return base
        raise KeyError(name)

    def cuda_release(self, version: str) -> CudaRelease:
        for release in self.cuda:
            if release.version == version:
                return release
        raise KeyError(version)


def round_key(round_: str) -> Tuple[int, ...]:
    """``v2.1`` -> (2, 1): rounds sort by number, so v0.6 comes before v2.1 and v10.0 last."""
    return tuple(int(part) for part in round_.lstrip("v").split("."))
