"""The end-to-end world, reusable outside pytest (perf/bench_build.py uses it too):
registries, an NVIDIA mirror of signed fixture RPMs, offline base images, engine daemons.
Every piece is real and started here; ``open_world`` tears it all down again.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Iterator, List, NamedTuple, Optional, Sequence, Set, Tuple

from tests.conftest import RECIPES, REPO, Result
from tests.e2e import fixtures as fx

E2E_RECIPES = Path(__file__).parent / "recipes"
BASE_TAG = "8"
ALIASES = ("a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "a10", "a11")
REQUIRED = (
    "buildah",
    "podman",
    "skopeo",
    "docker-registry",
    "mmdebstrap",
    "rpmbuild",
    "rpmsign",
    "createrepo_c",
    "gpg",
    "runc",
    "curl",
)


class Stage(NamedTuple):
    """A base image and the mirror it is built against."""

    base_image: str  # <registry>/e2e/rpmbase:<tag> (a manifest list: x86_64 [+ ppc64le])
    mirror: str


class World(NamedTuple):
    root: Path
    env: Dict[str, str]
    registry: fx.RegistryServer
    auth_registry: fx.RegistryServer
    recipes: Path
    stage: Stage
    drifted_base: str  # the same base, but its gcc is GCC 11: what a base update can do
    podman_socket: str
    docker_socket: Optional[str]
    arches: Tuple[str, ...]


def missing_tools() -> List[str]:
    return [p for p in REQUIRED if shutil.which(p) is None]


def _recipes(root: Path) -> Path:
    target = root / "recipes"
    if not target.exists():
        shutil.copytree(RECIPES, target)
        shutil.copytree(E2E_RECIPES / "benchmarks", target / "benchmarks", dirs_exist_ok=True)
    return target


def _packages(
    recipes: Path, arches: Sequence[str], pins: Sequence[Dict[str, str]], toolchain: Optional[Path] = None
) -> Tuple[List[fx.FakePackage], List[fx.FakePackage], Set[Tuple[str, str]]]:
    """(base packages, NVIDIA packages, mirror paths) that the probe's Dockerfiles install.

    ``toolchain`` (:func:`fx.toolchain_tree`) makes the base's gcc package a real compiler,
    for the benchmarks that compile in their build stage (e2e-compiled)."""
    from mlcc.api import Pins, request_for
    from mlcc.kb import load
    from mlcc.resolve import Resolver

    kb = load(str(recipes))
    resolver = Resolver(kb)
    base: Dict[str, fx.FakePackage] = {}
    nvidia: Dict[Tuple[str, str], fx.FakePackage] = {}
    paths: Set[Tuple[str, str]] = set()
    for arch in arches:
        for extra in pins:
            stack = resolver.resolve(request_for(kb, "e2e-probe", Pins(base="ubi8", arch=arch, **extra)))
            names = [
                *stack.base.build_packages,
                *stack.base.gcc_packages,
                *stack.base.packaging.runtime_packages,
                "probe-tools",
                "probe-mpi",
            ]
            for name in names:
                files: Tuple[Tuple[str, str, int], ...] = ()
                tree = None
                if name == "gcc":  # mlcc-record asks gcc -dumpversion; the rest is tcc's work
                    answer = f"-dump*) echo {stack.gcc.version} ;;"
                    script = f'#!/bin/sh\ncase "$1" in {answer} *) exec tcc "$@" ;; esac\n'
                    files = (("/usr/bin/gcc", script, 0o755),)
                    tree = toolchain
                if name == "probe-tools":
                    files = (("/usr/local/bin/probe", "#!/bin/sh\ncat /etc/mlcc/installed.json\n", 0o755),)
                if name == "probe-mpi":  # what the MPIJob's sshd step touches (e2e-launch)
                    files = (
                        ("/usr/bin/ssh-keygen", "#!/bin/sh\nexit 0\n", 0o755),
                        ("/usr/sbin/sshd", "#!/bin/sh\nexit 0\n", 0o755),
                        ("/etc/ssh/sshd_config", "#StrictModes yes\n", 0o644),
                        ("/etc/ssh/ssh_config", "", 0o644),
                    )
                base[name] = fx.FakePackage(name, "1.0", "1", files, tree)
            cuda = stack.cuda
            assert cuda is not None and stack.nccl is not None
            packages = list(cuda.packages_for(stack.base.packaging, arch))
            nvcc_owner = next((p for p in packages if p.name.startswith("cuda-minimal-build")), packages[0])
            for package in packages:
                version, release = package.version.rsplit("-", 1)
                files = fx.cuda_stand_in_files(
                    package.name, cuda.minor, stack.base.packaging.is_devel(package.name)
                )
                if package is nvcc_owner:
                    nvcc = (
                        f"#!/bin/sh\necho 'Cuda compilation tools, release {cuda.minor}, V{cuda.minor}.99'\n"
                    )
                    files += ((f"/usr/local/cuda-{cuda.minor}/bin/nvcc", nvcc, 0o755),)
                nvidia[(package.name, package.version)] = fx.FakePackage(
                    package.name, version, release, files
                )
            major, minor, patch = stack.nccl.version.split(".")[:3]
            header = f"#define NCCL_MAJOR {major}\n#define NCCL_MINOR {minor}\n#define NCCL_PATCH {patch}\n"
            for package in stack.nccl.packages:
                version, release = package.version.rsplit("-", 1)
                files = (("/usr/include/nccl.h", header, 0o644),) if package.name.endswith("devel") else ()
                nvidia[(package.name, package.version)] = fx.FakePackage(
                    package.name, version, release, files
                )
            directory = stack.arch.nvidia_repo(stack.base.family)
            paths.add((f"compute/cuda/repos/{stack.base.repo_distro}/{directory}", "D42D0685.pub"))
            for lib in (stack.nccl,):
                if lib.repo and lib.repo != "cuda":
                    repo = kb.repositories[lib.repo]
                    paths.add(
                        (f"{repo.path}/{stack.base.repo_distro}/{directory}", repo.key(stack.base.family))
                    )
    return list(base.values()), list(nvidia.values()), paths


def _base_images(world_root: Path, registry: str, base_repo: Path, arches: Sequence[str]) -> str:
    """The RPM-family base for each arch, pushed, and a manifest list over them."""
    target = f"{registry}/e2e/rpmbase:{BASE_TAG}"
    cache = Path(os.environ.get("MLCC_E2E_CACHE", world_root / "cache"))
    refs = []
    for arch in arches:
        rootfs = fx.debian_rootfs(cache / f"rpmbase-{arch}.tar", arch, include=["dnf", "rpm"])
        context = fx.rpm_base_context(world_root / f"ctx-rpmbase-{arch}", rootfs, base_repo, "8.10")
        ref = f"{registry}/e2e/rpmbase:{BASE_TAG}-{arch}"
        fx.run(
            "buildah",
            "bud",
            "--quiet",
            "--platform",
            f"linux/{fx.DEBIAN_ARCH[arch].replace('ppc64el', 'ppc64le')}",
            "-t",
            ref,
            str(context),
        )
        fx.run("buildah", "push", "--quiet", "--tls-verify=false", ref)
        refs.append(ref)
    subprocess.run(["buildah", "manifest", "rm", target], capture_output=True)
    fx.run("buildah", "manifest", "create", target)
    for ref in refs:
        fx.run("buildah", "manifest", "add", "--tls-verify=false", target, f"docker://{ref}")
    fx.run("buildah", "manifest", "push", "--all", "--tls-verify=false", target, f"docker://{target}")
    return target


def _drifted_base(root: Path, registry: str, packages: Sequence[fx.FakePackage]) -> str:
    script = '#!/bin/sh\ncase "$1" in -dump*) echo 11.4.1 ;; *) echo gcc ;; esac\n'
    drifted = [
        p._replace(files=(("/usr/bin/gcc", script, 0o755),)) if p.name == "gcc" else p for p in packages
    ]
    repo = root / "base-repo-drifted"
    fx.build_rpms(drifted, repo, root / "work-drifted")
    fx.make_repo(repo)
    cache = Path(os.environ.get("MLCC_E2E_CACHE", root / "cache"))
    context = fx.rpm_base_context(root / "ctx-rpmbase-drifted", cache / "rpmbase-x86_64.tar", repo, "8.10")
    ref = f"{registry}/e2e/rpmbase:{BASE_TAG}-drifted"
    fx.run("buildah", "bud", "--quiet", "--platform", "linux/amd64", "-t", ref, str(context))
    fx.run("buildah", "push", "--quiet", "--tls-verify=false", ref)
    return ref


NGC_BASE = "ngc-pytorch-25.09"


def ngc_stand_in(world: World) -> str:
    """A stand-in for nvcr.io/nvidia/pytorch:25.09-py3 in the world's registry, as an
    air-gapped site mirrors nvcr.io: Ubuntu 24.04 with Python 3.12 and a torch that is only
    the version the base's record names. Built once per world (x86_64), on first use: only
    the tests of NGC bases pay for it."""
    from mlcc.kb import load

    ref = f"{world.registry.host}/nvidia/pytorch:25.09-py3"
    marker = world.root / "ngc-stand-in.pushed"
    if marker.exists():
        return ref
    base = load(str(world.recipes)).base(NGC_BASE)
    contents = base.contents
    assert contents is not None
    cache = Path(os.environ.get("MLCC_E2E_CACHE", world.root / "cache"))
    rootfs = fx.ubuntu_rootfs(cache / "ngcbase-x86_64.tar", "x86_64", ["python3.12", "python3.12-venv"])
    major_minor = ".".join(contents.cuda_release.split(".")[:2])
    context = fx.ngc_stand_in_context(
        world.root / "ctx-ngc", rootfs, contents.framework.version, major_minor, base.gcc_system
    )
    with fx.environment(world.env):
        fx.run("buildah", "bud", "--quiet", "--platform", "linux/amd64", "-t", ref, str(context))
        fx.run("buildah", "push", "--quiet", "--tls-verify=false", ref)
    marker.write_text(ref)
    return ref


def _start_podman_service(root: Path) -> Tuple[str, subprocess.Popen]:  # type: ignore[type-arg]
    socket_path = root / "podman.sock"
    log = (root / "podman-service.log").open("w")
    process = subprocess.Popen(
        ["podman", "system", "service", "--time=0", f"unix://{socket_path}"], stdout=log, stderr=log
    )
    _wait_socket(socket_path)
    return f"unix://{socket_path}", process


def _start_dockerd(root: Path) -> Tuple[Optional[str], Optional[subprocess.Popen]]:  # type: ignore[type-arg]
    if shutil.which("dockerd") is None:
        return None, None
    socket_path = root / "docker.sock"
    log = (root / "dockerd.log").open("w")
    process = subprocess.Popen(
        [
            "dockerd",
            "--data-root",
            str(root / "docker"),
            "--exec-root",
            str(root / "docker-exec"),
            "--pidfile",
            str(root / "dockerd.pid"),
            "-H",
            f"unix://{socket_path}",
            "--storage-driver",
            "overlay2",
            "--iptables=false",
            "--bridge=none",
        ],
        stdout=log,
        stderr=log,
    )
    _wait_socket(socket_path, timeout=60)
    return f"unix://{socket_path}", process


def _wait_socket(path: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        probe = subprocess.run(
            ["curl", "-sf", "--unix-socket", str(path), "http://d/_ping"], capture_output=True
        )
        if probe.returncode == 0:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{path} did not answer in {timeout} s")
        time.sleep(0.1)


def _release_storage(root: Path) -> None:
    """Working containers and overlay mounts would outlive the session: remove them."""
    for command in (["buildah", "rm", "--all"], ["podman", "rm", "--all", "--force"]):
        subprocess.run(command, capture_output=True)
    mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
    for mount in sorted((m for m in mounts if m.startswith(str(root))), reverse=True):
        subprocess.run(["umount", "-l", mount], capture_output=True)


@contextlib.contextmanager
def open_world(root: Path, arches: Sequence[str]) -> Iterator[World]:
    """Set everything up under ``root``; stop and unmount it all on exit."""
    fx.enable_binfmt()
    registry = fx.start_registry(root / "registry")
    auth_registry = fx.start_registry(root / "auth-registry", auth=("mlcc", secrets.token_hex(12)))
    env = fx.containers_environment(root / "containers", [registry.host, auth_registry.host])
    # mlcc's own state (build history, caches, locks) lives in the world, never in the
    # user's ~/.local/share or ~/.cache (the e2e conftest checks those stay untouched).
    env.update(
        XDG_DATA_HOME=str(root / "xdg-data"),
        XDG_CACHE_HOME=str(root / "xdg-cache"),
        MLCC_CACHE_DIR=str(root / "mlcc-cache"),
    )
    processes: List[subprocess.Popen] = []  # type: ignore[type-arg]
    mirror = None
    with fx.environment(env):
        try:
            recipes = _recipes(root)
            cache = Path(os.environ.get("MLCC_E2E_CACHE", root / "cache"))
            toolchain = fx.toolchain_tree(cache, "x86_64") if "x86_64" in arches else None
            base_packages, nvidia_packages, paths = _packages(
                recipes, arches, [{}, {"cuda": "12.4"}], toolchain
            )
            key = fx.signing_key(root)
            base_repo = root / "base-repo"
            fx.build_rpms(base_packages, base_repo, root / "work")
            fx.make_repo(base_repo)
            nvidia_repo = root / "nvidia-repo"
            fx.sign_rpms(fx.build_rpms(nvidia_packages, nvidia_repo, root / "work"), key)
            fx.make_repo(nvidia_repo)
            fx.nvidia_mirror(root / "mirror", nvidia_repo, key, sorted(paths))
            for alias in ALIASES:  # the same mirror under other URLs: other build inputs, new content
                (root / "mirror" / alias).symlink_to(".")
            mirror = fx.serve(root / "mirror")
            base_image = _base_images(root, registry.host, base_repo, arches)
            drifted = _drifted_base(root, registry.host, base_packages)
            podman_socket, podman = _start_podman_service(root)
            processes.append(podman)
            docker_socket, dockerd = _start_dockerd(root)
            if dockerd is not None:
                processes.append(dockerd)
            yield World(
                root,
                env,
                registry,
                auth_registry,
                recipes,
                Stage(base_image, mirror.url),
                drifted,
                podman_socket,
                docker_socket,
                tuple(arches),
            )
        finally:
            for process in processes:
                process.terminate()
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
            if mirror is not None:
                mirror.stop()
            registry.stop()
            auth_registry.stop()
            _release_storage(root)


def _command(world: World, args: Sequence[str]) -> List[str]:
    return [sys.executable, "-m", "mlcc", "--recipes", str(world.recipes), *args]


def _environment(world: World, env: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    return {**os.environ, **world.env, "PYTHONPATH": str(REPO), **(env or {})}


def mlcc(world: World, *args: str, env: Optional[Dict[str, str]] = None, timeout: int = 1200) -> Result:
    """mlcc as a real process, in the world's container configuration."""
    proc = subprocess.run(
        _command(world, args),
        capture_output=True,
        text=True,
        env=_environment(world, env),
        cwd=world.root,
        timeout=timeout,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def start_mlcc(world: World, *args: str, new_session: bool = False) -> subprocess.Popen[str]:
    """mlcc started like ``mlcc()`` but not waited for: for races and interrupts."""
    return subprocess.Popen(
        _command(world, args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_environment(world),
        cwd=world.root,
        start_new_session=new_session,
    )
