"""PyTorch from PyPI's wheels, built in the e2e world: the stack of retinanet-reference's
published cells (torch 2.11.0 cu130, its nvidia-* wheels the stack's cuDNN and NCCL, CUDA 13.0
RPMs for rhel9, UBI 9) for x86_64 and, under qemu, aarch64 (GB200's Grace) as one manifest list.

Real torch wheels are half a GB each (and their nvidia-* wheels more), so the world's local
index serves stand-ins named and versioned like them: a pure-Python ``torch`` 2.11.0 that
answers what the real one does (``torch.version.cuda``, cuDNN and NCCL versions), a
``torchvision`` 0.26.0 requiring it, and pip/setuptools/wheel as PyPI has them (the image
upgrades its own pip with them). The UBI 9 stand-in is the world's RPM-family base with a real
CPython 3.11 (Debian's, with venv): the test benchmark (tests/e2e/recipes e2e-wheels) asks for
Python 3.11 so that mlcc verify checks a real interpreter against the stack. CUDA 13.0's
packages are the world's signed fixture RPMs at NVIDIA's rhel9 paths (x86_64 and sbsa).

``MLCC_E2E_WHEEL_ARCHES`` (default ``x86_64,aarch64``) says which arches are built; the
aarch64 half runs its RUN steps under qemu-user, as ppc64le does in the rest of the suite.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import subprocess
import urllib.request
import zipfile
from pathlib import Path
from typing import Dict, Iterator, List, NamedTuple, Sequence, Set, Tuple

import pytest

from mlcc.image.reference import parse_reference
from mlcc.image.registry import Registry
from tests.e2e import fixtures as fx
from tests.e2e.conftest import World, mlcc
from tests.unit.simple_index import IndexServer, serve

BENCHMARK = "e2e-wheels"
# what the real wheels' torch/version.py and libraries report (recipes/frameworks/pytorch.yaml)
TORCH = {"version": "2.11.0+cu130", "cuda": "13.0", "cudnn": 91900, "nccl": (2, 28, 9)}
# the image's own pip tooling for Python 3.11 (recipes/tools.yaml), and packaging, which
# wheel 0.48.0 requires (the release kb lock takes): real wheels from PyPI
TOOLING = (("pip", "26.3"), ("setuptools", "84.2.1"), ("wheel", "0.48.0"), ("packaging", "26.4"))
PYPI_SIMPLE = "https://pypi.org/simple/{name}/"
PEP_691 = "application/vnd.pypi.simple.v1+json"


class WheelWorld(NamedTuple):
    base_image: str  # a manifest list of the UBI 9 stand-in, one image per arch
    mirror: str
    index: IndexServer
    arches: Tuple[str, ...]


def _arches() -> Tuple[str, ...]:
    wanted = os.environ.get("MLCC_E2E_WHEEL_ARCHES", "x86_64,aarch64").split(",")
    return tuple(a for a in wanted if a)


# ----------------------------------------------------------------------------- the index


def pure_wheel(
    name: str, version: str, files: Dict[str, str], requires: Sequence[str] = ()
) -> Tuple[str, bytes]:
    """A py3-none-any wheel as the wheel spec writes one (RECORD with sha256s)."""
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    metadata += "".join(f"Requires-Dist: {r}\n" for r in requires)
    members = {path: text.encode() for path, text in files.items()}
    members[f"{info}/METADATA"] = metadata.encode()
    members[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: mlcc-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = ""
    for path, body in members.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()
        record += f"{path},sha256={digest},{len(body)}\n"
    members[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\n").encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, body in members.items():
            archive.writestr(zipfile.ZipInfo(path, (2026, 3, 23, 0, 0, 0)), body)
    return f"{dist}-{version}-py3-none-any.whl", buffer.getvalue()


def stand_in_wheels() -> List[Tuple[str, str, bytes]]:
    """(project, file name, bytes) of the stand-ins for torch, torchvision and the test step."""
    torch = {
        "torch/__init__.py": (
            f"__version__ = {TORCH['version']!r}\nfrom torch import backends, cuda, version\n"
        ),
        "torch/version.py": f"from typing import Optional\ncuda: Optional[str] = {TORCH['cuda']!r}\n",
        "torch/backends/__init__.py": "from torch.backends import cudnn\n",
        "torch/backends/cudnn.py": f"def version():\n    return {TORCH['cudnn']}\n",
        "torch/cuda/__init__.py": "from torch.cuda import nccl\n",
        "torch/cuda/nccl.py": f"def version():\n    return {TORCH['nccl']!r}\n",
    }
    wheels = [
        ("torch", *pure_wheel("torch", "2.11.0", torch)),
        (
            "torchvision",
            *pure_wheel(
                "torchvision",
                "0.26.0",
                {"torchvision/__init__.py": "__version__ = '0.26.0'\n"},
                ["torch==2.11.0"],
            ),
        ),
        (
            "e2e-wheels-step",
            *pure_wheel("e2e-wheels-step", "1.0", {"e2e_wheels_step/__init__.py": "STEP = 1\n"}),
        ),
    ]
    return wheels


def pypi_wheel(cache: Path, name: str, version: str) -> Tuple[str, bytes]:
    """PyPI's own py3-none-any wheel of ``name`` ``version`` (its PEP 691 page names it and
    its sha256), kept in the e2e cache and checked against that sha256."""
    request = urllib.request.Request(PYPI_SIMPLE.format(name=name), headers={"Accept": PEP_691})
    with urllib.request.urlopen(request, timeout=60) as answer:
        page = json.load(answer)
    wanted = f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    [file] = [f for f in page["files"] if f["filename"] == wanted]
    kept = cache / "pypi" / wanted
    if not kept.exists():
        kept.parent.mkdir(parents=True, exist_ok=True)
        with urllib.request.urlopen(file["url"], timeout=300) as answer:
            kept.write_bytes(answer.read())
    body = kept.read_bytes()
    assert hashlib.sha256(body).hexdigest() == file["hashes"]["sha256"], f"{kept} is not PyPI's file"
    return wanted, body


def _serve_index(index: IndexServer, wheels: Sequence[Tuple[str, str, bytes]]) -> None:
    """PEP 503 pages, one per project, linking its files with their sha256."""
    links: Dict[str, List[str]] = {}
    for project, filename, body in wheels:
        index.add(f"/files/{filename}", body, "application/octet-stream")
        sha = hashlib.sha256(body).hexdigest()
        links.setdefault(project, []).append(f'<a href="../../files/{filename}#sha256={sha}">{filename}</a>')
    for project, anchors in links.items():
        index.add(f"/simple/{project}/", f"<html><body>{''.join(anchors)}</body></html>".encode())


# ----------------------------------------------------------------------------- RPMs and bases


def _packages(
    world: World, arches: Sequence[str]
) -> Tuple[List[fx.FakePackage], List[fx.FakePackage], Set[Tuple[str, str]]]:
    """The UBI 9 stand-in's packages, CUDA 13.0's and the mirror paths the stacks install from."""
    from mlcc.api import Pins, request_for
    from mlcc.kb import load
    from mlcc.kbtools.check import _system_packages
    from mlcc.resolve import Resolver

    kb = load(str(world.recipes))
    resolver = Resolver(kb)
    base: Dict[str, fx.FakePackage] = {}
    nvidia: Dict[Tuple[str, str], fx.FakePackage] = {}
    paths: Set[Tuple[str, str]] = set()
    for arch in arches:
        stack = resolver.resolve(request_for(kb, BENCHMARK, Pins(base="ubi9", arch=arch)))
        assert stack.framework is not None and stack.framework.version == "2.11.0", stack.variant
        assert stack.cudnn is not None and stack.cudnn.method == "bundled"
        for name in [*_system_packages(stack), *stack.base.packaging.runtime_packages]:
            files: Tuple[Tuple[str, str, int], ...] = ()
            if name == "gcc":  # mlcc-record asks gcc -dumpversion; nothing here compiles
                script = f'#!/bin/sh\ncase "$1" in -dump*) echo {stack.gcc.version} ;; *) exit 1 ;; esac\n'
                files = (("/usr/bin/gcc", script, 0o755),)
            if name == "probe-tools":
                files = (("/usr/local/bin/probe", "#!/bin/sh\ncat /etc/mlcc/installed.json\n", 0o755),)
            # python3.11 and its -pip/-devel stand in for RHEL's: the base's Debian CPython 3.11
            # is the real interpreter, so they carry no file of their own
            base[name] = fx.FakePackage(name, "1.0", "1", files)
        cuda = stack.cuda
        assert cuda is not None
        packages = list(cuda.packages_for(stack.base.packaging, arch))
        nvcc_owner = next(p for p in packages if p.name.startswith("cuda-minimal-build"))
        for package in packages:
            version, release = package.version.rsplit("-", 1)
            files = fx.cuda_stand_in_files(
                package.name, cuda.minor, stack.base.packaging.is_devel(package.name)
            )
            if package is nvcc_owner:
                nvcc = f"#!/bin/sh\necho 'Cuda compilation tools, release {cuda.minor}, V{cuda.minor}.99'\n"
                files += ((f"/usr/local/cuda-{cuda.minor}/bin/nvcc", nvcc, 0o755),)
            nvidia[(package.name, package.version)] = fx.FakePackage(package.name, version, release, files)
        directory = stack.arch.nvidia_repo(stack.base.family)
        paths.add((f"compute/cuda/repos/{stack.base.repo_distro}/{directory}", "D42D0685.pub"))
    return list(base.values()), list(nvidia.values()), paths


def _base_image(world: World, root: Path, base_repo: Path, arches: Sequence[str]) -> str:
    """The UBI 9 stand-in per arch (Debian minbase with dnf, rpm and CPython 3.11 with venv),
    pushed, and a manifest list over them."""
    cache = Path(os.environ.get("MLCC_E2E_CACHE", root / "cache"))
    target = f"{world.registry.host}/e2e/rpmbase9:9"
    refs = []
    for arch in arches:
        rootfs = fx.debian_rootfs(
            cache / f"rpmbase-py311-{arch}.tar", arch, include=["dnf", "rpm", "python3-venv"]
        )
        context = fx.rpm_base_context(root / f"ctx-rpmbase9-{arch}", rootfs, base_repo, "9.5")
        ref = f"{target}-{arch}"
        platform = f"linux/{fx.DEBIAN_ARCH[arch]}"
        fx.run("buildah", "bud", "--quiet", "--platform", platform, "-t", ref, str(context), env=world.env)
        fx.run("buildah", "push", "--quiet", "--tls-verify=false", ref, env=world.env)
        refs.append(ref)
    subprocess.run(
        ["buildah", "manifest", "rm", target], capture_output=True, env={**os.environ, **world.env}
    )
    fx.run("buildah", "manifest", "create", target, env=world.env)
    for ref in refs:
        fx.run("buildah", "manifest", "add", "--tls-verify=false", target, f"docker://{ref}", env=world.env)
    fx.run(
        "buildah",
        "manifest",
        "push",
        "--all",
        "--tls-verify=false",
        target,
        f"docker://{target}",
        env=world.env,
    )
    return target


@pytest.fixture(scope="module")
def wheel_world(world: World, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WheelWorld]:
    root = tmp_path_factory.mktemp("wheels")
    arches = _arches()
    cache = Path(os.environ.get("MLCC_E2E_CACHE", root / "cache"))
    base_packages, nvidia_packages, paths = _packages(world, arches)
    base_repo = root / "base-repo"
    fx.build_rpms(base_packages, base_repo, root / "work")
    fx.make_repo(base_repo)
    key = fx.signing_key(root)
    nvidia_repo = root / "nvidia-repo"
    fx.sign_rpms(fx.build_rpms(nvidia_packages, nvidia_repo, root / "work"), key)
    fx.make_repo(nvidia_repo)
    fx.nvidia_mirror(root / "mirror", nvidia_repo, key, sorted(paths))
    mirror = fx.serve(root / "mirror")
    base_image = _base_image(world, root, base_repo, arches)
    wheels = stand_in_wheels() + [(name, *pypi_wheel(cache, name, version)) for name, version in TOOLING]
    try:
        for index in serve():
            _serve_index(index, wheels)
            yield WheelWorld(base_image, mirror.url, index, arches)
    finally:
        mirror.stop()


# ----------------------------------------------------------------------------- the test


def test_a_pypi_wheel_stack_builds_for_b200_and_gb200_and_verifies(
    world: World, wheel_world: WheelWorld
) -> None:
    """The wheel stack builds from the local index for each arch (a manifest list when there
    are two), its framework answers with the cuDNN and NCCL of its nvidia-* wheels, and
    mlcc verify finds each image as its stack.json says."""
    built = mlcc(
        world,
        "build",
        BENCHMARK,
        "--base",
        "ubi9",
        "--arch",
        ",".join(wheel_world.arches),
        "--base-image",
        wheel_world.base_image,
        "--mirror",
        wheel_world.mirror,
        "--pip-index-url",
        f"{wheel_world.index.url}/simple",
        "--push",
        "--registry",
        f"{world.registry.host}/wheels",
        "--no-tls-verify",
        "--backend",
        "buildah",
        timeout=3600,
    )
    assert built.code == 0, built.err[-6000:] + built.out
    # torch and torchvision came from the index, as pip would take them from PyPI
    assert "/simple/torch/" in wheel_world.index.hits and "/simple/torchvision/" in wheel_world.index.hits
    lines = built.out.splitlines()
    if len(wheel_world.arches) > 1:
        reference = next(line.split()[2] for line in lines if line.startswith("manifest list"))
        parsed = parse_reference(reference)
        listed = Registry(world.registry.host, tls_verify=False).manifest(parsed.repository, parsed.tag or "")
        assert listed is not None and listed.is_index
        platforms = sorted(m["platform"]["architecture"] for m in listed.data["manifests"])
        assert platforms == sorted(fx.DEBIAN_ARCH[a] for a in wheel_world.arches)
    else:
        reference = next(line.split()[-1] for line in lines if "content tag" in line)
    verified = mlcc(world, "verify", reference, "--no-tls-verify")
    assert verified.code == 0, verified.out + verified.err
    for arch in wheel_world.arches:
        shown = mlcc(world, "inspect", reference, "--no-tls-verify", "--arch", arch, "--json")
        assert shown.code == 0, shown.err
        document = json.loads(shown.out)
        installed, stack = document["installed"], document["stack"]
        assert installed["arch"] == arch  # uname -m: aarch64 ran under qemu
        torch = installed["modules"]["torch"]
        assert (torch["version"], torch["cuda"]) == ("2.11.0+cu130", "13.0")
        assert (torch["cudnn"], torch["nccl"]) == ("9.19.0", "2.28.9")
        assert stack["components"]["cudnn"]["version"] == "9.19.0.56"
        assert stack["components"]["cudnn"]["method"] == "bundled"
        assert stack["components"]["nccl"]["version"] == "2.28.9"
        # the newest CUDA 13.0 release recipes/cuda.yaml records (the RPMs the world served)
        assert stack["components"]["cuda"]["version"].startswith("13.0.")
