"""Real test infrastructure for the end-to-end suite: container configuration, local
registries (plain and htpasswd), signed fixture RPMs served as an NVIDIA mirror, and
offline base images. Nothing here is mocked: the builds run buildah, podman and docker
against these.

The RPM-family base is Debian minbase with dnf and rpm, plus a file:// repository of
empty packages named like the RHEL base packages; the mirror serves, at NVIDIA's
repository paths, packages under the exact names and versions the recipes pin for CUDA
and NCCL, signed with a throwaway key, so a generated Dockerfile runs its real
`dnf install` lines with gpgcheck on.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import os
import shutil
import socket
import subprocess
import textwrap
import threading
import time
import urllib.request
from pathlib import Path
from typing import Dict, Iterator, List, NamedTuple, Optional, Sequence, Set, Tuple

DEBIAN_MIRROR = os.environ.get("MLCC_E2E_DEBIAN_MIRROR", "http://deb.debian.org/debian")
DEBIAN_ARCH = {"x86_64": "amd64", "ppc64le": "ppc64el", "aarch64": "arm64"}
# Ubuntu 24.04 (noble), the OS of NVIDIA's NGC images since 24.xx: the NGC stand-in's rootfs
UBUNTU_MIRROR = os.environ.get("MLCC_E2E_UBUNTU_MIRROR", "http://archive.ubuntu.com/ubuntu")
UBUNTU_KEYRING_DEB = "pool/main/u/ubuntu-keyring/ubuntu-keyring_2023.11.28.1_all.deb"
# "Ubuntu Archive Automatic Signing Key (2018) <ftpmaster@ubuntu.com>", which signs noble's
# InRelease: the keyring fetched over http is trusted only if it holds this key
UBUNTU_ARCHIVE_KEY = "F6ECB3762474EDA9D21B7022871920D1991BC93C"


def run(
    *args: str, cwd: Optional[Path] = None, env: Optional[Dict[str, str]] = None, timeout: int = 900
) -> str:
    """Run a command; on failure raise with its output (the suite must fail loudly)."""
    proc = subprocess.run(
        list(args),
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    return proc.stdout


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(url: str, timeout: float = 20.0, **kwargs: str) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except urllib.error.HTTPError:
            return  # it answers
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not come up in {timeout} s") from None
            time.sleep(0.1)


# ----------------------------------------------------------------------------- host


def containers_environment(root: Path, insecure: Sequence[str]) -> Dict[str, str]:
    """containers.conf / storage.conf / registries.conf for this host, as env variables.

    The host quirks from the container-tools guide: runc instead of crun (hybrid cgroups),
    rlimits within the hard limit (no CAP_SYS_RESOURCE), chroot isolation for buildah and
    podman builds, plain-HTTP loopback registries marked insecure.
    """
    import resource

    root.mkdir(parents=True, exist_ok=True)
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    nofile = hard if hard != resource.RLIM_INFINITY else 65536
    (root / "storage.conf").write_text(
        f'[storage]\ndriver = "overlay"\ngraphroot = "{root}/storage"\nrunroot = "{root}/run"\n'
    )
    (root / "containers.conf").write_text(
        f'[containers]\ndefault_ulimits = ["nofile={nofile}:{nofile}", "nproc=4096:4096"]\n'
        '[engine]\nruntime = "runc"\n'
    )
    registries = "unqualified-search-registries = []\n" + "".join(
        f'[[registry]]\nlocation = "{host}"\ninsecure = true\n' for host in insecure
    )
    (root / "registries.conf").write_text(registries)
    return {
        "CONTAINERS_STORAGE_CONF": str(root / "storage.conf"),
        "CONTAINERS_CONF": str(root / "containers.conf"),
        "CONTAINERS_REGISTRIES_CONF": str(root / "registries.conf"),
        "BUILDAH_ISOLATION": "chroot",
    }


def enable_binfmt() -> None:
    """qemu for foreign-arch RUN steps (the qemu-user-static postinst cannot do it here)."""
    if not Path("/proc/sys/fs/binfmt_misc/register").exists():
        run("mount", "-t", "binfmt_misc", "binfmt_misc", "/proc/sys/fs/binfmt_misc")
    for handler in ("qemu-ppc64le", "qemu-aarch64"):
        if not Path(f"/proc/sys/fs/binfmt_misc/{handler}").exists():
            run("update-binfmts", "--enable", handler)


# ----------------------------------------------------------------------------- registry


class RegistryServer(NamedTuple):
    host: str  # 127.0.0.1:port
    process: subprocess.Popen  # type: ignore[type-arg]
    user: Optional[str] = None
    password: Optional[str] = None

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def start_registry(
    root: Path, *, auth: Optional[Tuple[str, str]] = None, port: Optional[int] = None
) -> RegistryServer:
    """The distribution registry (Debian's docker-registry) on 127.0.0.1, plain HTTP."""
    root.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    host = f"127.0.0.1:{port}"
    config = textwrap.dedent(
        f"""\
        version: 0.1
        log: {{level: warn}}
        storage:
          filesystem: {{rootdirectory: {root}/data}}
          delete: {{enabled: true}}
        http: {{addr: {host}}}
        """
    )
    if auth is not None:
        import bcrypt

        user, password = auth
        hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=5)).decode()
        (root / "htpasswd").write_text(f"{user}:{hashed}\n")
        config += f"auth:\n  htpasswd:\n    realm: mlcc-test\n    path: {root}/htpasswd\n"
    (root / "config.yml").write_text(config)
    log = (root / "registry.log").open("w")
    process = subprocess.Popen(["docker-registry", "serve", str(root / "config.yml")], stdout=log, stderr=log)
    wait_for(f"http://{host}/v2/")
    return RegistryServer(host, process, *(auth or (None, None)))


# ----------------------------------------------------------------------------- RPMs


# What a CUDA package holds, in proportion: a runtime package its shared library, a
# development package a header tree and a static archive several times that size (NVIDIA's
# libcublas_static.a is about twice libcublas.so), so that a runtime image's size against a
# devel one's measures what the runtime stage drops rather than empty packages.
STAND_IN_LIBRARY = 1 << 20  # bytes of a runtime package's shared library
STAND_IN_STATIC = 4 << 20  # bytes of a development package's static archive
STAND_IN_HEADERS = 40  # headers in a development package's include tree


def _filler(name: str, size: int) -> str:
    """``size`` characters that do not compress away (a library's bytes barely do), the
    same for the same name on every run."""
    block = hashlib.sha256(name.encode()).hexdigest()
    out, counter = [], 0
    while len(out) * 64 < size:
        block = hashlib.sha256(f"{block}{counter}".encode()).hexdigest()
        out.append(block)
        counter += 1
    return "".join(out)[:size]


def cuda_stand_in_files(name: str, minor: str, devel: bool) -> Tuple[Tuple[str, str, int], ...]:
    """The files of the stand-in for CUDA package ``name`` (see STAND_IN_LIBRARY)."""
    root = f"/usr/local/cuda-{minor}"
    if not devel:
        return ((f"{root}/lib64/lib{name}.so.{minor}", _filler(name, STAND_IN_LIBRARY), 0o755),)
    headers = tuple(
        (f"{root}/include/{name}/h{index}.h", f"/* {name} */\n" + _filler(f"{name}{index}", 8 << 10), 0o644)
        for index in range(STAND_IN_HEADERS)
    )
    return (*headers, (f"{root}/lib64/lib{name}_static.a", _filler(name + ".a", STAND_IN_STATIC), 0o644))


class FakePackage(NamedTuple):
    name: str
    version: str
    release: str = "1"
    files: Tuple[Tuple[str, str, int], ...] = ()  # (path, content, mode)
    tree: Optional[Path] = None  # a directory whose files and links it carries, at / (real programs)


SPEC = """\
%define _binaries_in_noarch_packages_terminate_build 0
%define __os_install_post %{{nil}}
%define _build_id_links none
Name: {name}
Version: {version}
Release: {release}
Summary: mlcc test fixture standing in for {name}
License: MIT
BuildArch: noarch
AutoReqProv: no
%description
An empty package named like a real one, for mlcc's end-to-end tests.
%install
mkdir -p %{{buildroot}}/usr/share/mlcc-fixture
echo {name} > %{{buildroot}}/usr/share/mlcc-fixture/{name}
{install}
%files
/usr/share/mlcc-fixture/{name}
{files}
"""


def build_rpms(packages: Sequence[FakePackage], out: Path, work: Path) -> List[Path]:
    out.mkdir(parents=True, exist_ok=True)
    built = []
    for package in packages:
        top = work / f"rpmbuild-{package.name}"
        sources = top / "payload"
        install, listed = [], []
        for index, (path, content, mode) in enumerate(package.files):
            source = sources / f"f{index}"
            source.parent.mkdir(parents=True, exist_ok=True)
            source.write_text(content)
            install.append(f"install -D -m {mode:o} {source} %{{buildroot}}{path}")
            listed.append(path)
        if package.tree is not None:
            install.insert(0, f"mkdir -p %{{buildroot}} && cp -a {package.tree}/. %{{buildroot}}/")
            listed += _tree_files(package.tree, skip=set(listed))
        spec = top / f"{package.name}.spec"
        spec.parent.mkdir(parents=True, exist_ok=True)
        spec.write_text(
            SPEC.format(
                name=package.name,
                version=package.version,
                release=package.release,
                install="\n".join(install),
                files="\n".join(listed),
            )
        )
        run(
            "rpmbuild",
            "-bb",
            "--quiet",
            "--define",
            f"_topdir {top}",
            "--define",
            f"_rpmdir {out}",
            "--define",
            "_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm",
            str(spec),
        )
        built.append(out / f"{package.name}-{package.version}-{package.release}.noarch.rpm")
    return built


def _tree_files(tree: Path, skip: Set[str]) -> List[str]:
    """The files and links under ``tree`` as a spec's %files lists them (directories are
    left unowned: /usr/include is the base's too)."""
    found = []
    for path in sorted(tree.rglob("*")):
        if path.is_symlink() or path.is_file():
            name = "/" + str(path.relative_to(tree))
            if name not in skip:
                found.append(f'"{name}"')
    return found


def toolchain_tree(cache: Path, arch: str) -> Path:
    """A real C compiler for the build stage of the e2e images: Debian's tcc, with the C
    library's headers and start files it compiles and links against (libc6-dev,
    linux-libc-dev), unpacked from Debian's packages without installing them
    (mmdebstrap --variant=extract). Only usr/ is kept."""
    out = cache / f"toolchain-{arch}"
    if out.exists():
        return out
    cache.mkdir(parents=True, exist_ok=True)
    archive = cache / f"toolchain-{arch}.tar"
    args = ["mmdebstrap", "--quiet", "--variant=extract", "--mode=root", "--format=tar"]
    args += [f"--architectures={DEBIAN_ARCH[arch]}", "--include=tcc,libc6-dev,linux-libc-dev"]
    run(*args, "bookworm", str(archive), DEBIAN_MIRROR, timeout=1800)
    partial = out.with_suffix(".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    run("tar", "-xf", str(archive), "-C", str(partial), "./usr")
    archive.unlink()
    partial.rename(out)
    return out


class SigningKey(NamedTuple):
    home: Path
    name: str
    public: Path


def signing_key(work: Path) -> SigningKey:
    home = work / "gnupg"
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    name = "mlcc test repository signing key"
    env = {"GNUPGHOME": str(home)}
    run("gpg", "--batch", "--passphrase", "", "--quick-gen-key", name, "rsa2048", "sign", "never", env=env)
    public = work / "signing.pub"
    public.write_text(run("gpg", "--armor", "--export", name, env=env))
    return SigningKey(home, name, public)


def sign_rpms(paths: Sequence[Path], key: SigningKey) -> None:
    run(
        "rpmsign",
        "--addsign",
        "--define",
        f"_gpg_name {key.name}",
        "--define",
        f"_gpg_path {key.home}",
        "--define",
        f"__gpg {shutil.which('gpg')}",
        *map(str, paths),
        env={"GNUPGHOME": str(key.home)},
    )


def make_repo(folder: Path) -> None:
    run("createrepo_c", "--quiet", str(folder))


# ----------------------------------------------------------------------------- mirror


class Mirror(NamedTuple):
    url: str
    root: Path
    server: http.server.ThreadingHTTPServer

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def serve(root: Path) -> Mirror:
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return Mirror(f"http://127.0.0.1:{server.server_address[1]}", root, server)


def nvidia_mirror(root: Path, repo: Path, key: SigningKey, paths: Sequence[Tuple[str, str]]) -> None:
    """Lay out ``repo`` at NVIDIA's paths: (repository path, key file name) pairs such as
    ("compute/cuda/repos/rhel8/x86_64", "D42D0685.pub")."""
    for path, key_name in paths:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            shutil.copytree(repo, target)
        shutil.copy(key.public, target / key_name)


# ----------------------------------------------------------------------------- bases


def debian_rootfs(out: Path, arch: str, include: Sequence[str] = ()) -> Path:
    """A Debian bookworm minbase rootfs tarball (mmdebstrap; foreign arches via qemu)."""
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    args = ["mmdebstrap", "--quiet", "--variant=minbase", "--mode=root", "--format=tar"]
    args.append(f"--architectures={DEBIAN_ARCH[arch]}")
    if include:
        args.append("--include=" + ",".join(include))
    partial = out.with_suffix(".partial")
    run(*args, "bookworm", str(partial), DEBIAN_MIRROR, timeout=1800)
    partial.rename(out)
    return out


def ubuntu_keyring(cache: Path) -> Path:
    """Ubuntu's archive keyring (from its ubuntu-keyring package), checked to hold the key
    that signs noble; cached."""
    out = cache / "ubuntu-archive-keyring.gpg"
    if out.exists():
        return out
    work = cache / "ubuntu-keyring"
    work.mkdir(parents=True, exist_ok=True)
    deb = work / "ubuntu-keyring.deb"
    with urllib.request.urlopen(f"{UBUNTU_MIRROR}/{UBUNTU_KEYRING_DEB}", timeout=60) as answer:
        deb.write_bytes(answer.read(1 << 20))
    run("dpkg-deb", "-x", str(deb), str(work / "tree"))
    keyring = work / "tree" / "usr" / "share" / "keyrings" / "ubuntu-archive-keyring.gpg"
    listed = run("gpg", "--show-keys", "--with-colons", str(keyring))
    if f"fpr:::::::::{UBUNTU_ARCHIVE_KEY}:" not in listed:
        raise RuntimeError(f"{keyring} does not hold Ubuntu's archive key {UBUNTU_ARCHIVE_KEY}")
    shutil.copy(keyring, out)
    return out


def ubuntu_rootfs(out: Path, arch: str, include: Sequence[str]) -> Path:
    """An Ubuntu 24.04 (noble) minbase rootfs tarball with ``include``, signatures checked."""
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    keyring = ubuntu_keyring(out.parent)
    args = ["mmdebstrap", "--quiet", "--variant=minbase", "--mode=root", "--format=tar"]
    args += [f"--architectures={DEBIAN_ARCH[arch]}", f"--keyring={keyring}", "--components=main,universe"]
    # apt fetches and checks signatures as its sandbox user _apt, which cannot read a keyring
    # under pytest's 0700 temporary root (where the world's cache is without MLCC_E2E_CACHE):
    # apt-get update then fails. mmdebstrap runs as root here, so apt may too.
    args.append('--aptopt=APT::Sandbox::User "root"')
    args.append("--include=" + ",".join(include))
    partial = out.with_suffix(".partial")
    run(*args, "noble", str(partial), UBUNTU_MIRROR, timeout=1800)
    partial.rename(out)
    return out


def ngc_stand_in_context(folder: Path, rootfs: Path, torch: str, cuda: str, gcc: str) -> Path:
    """Build context of a stand-in for an NGC PyTorch image: Ubuntu 24.04 with its Python
    3.12, a ``torch`` package that is only its version (``torch``; ``torch.version.cuda`` is
    ``cuda``) where NGC installs it, an nvcc that reports ``cuda`` and a gcc that reports
    ``gcc`` (what mlcc-record asks of them)."""
    if folder.exists():
        shutil.rmtree(folder)
    site = folder / "site" / "torch"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text(f"__version__ = {torch!r}\nfrom . import version\n")
    (site / "version.py").write_text(f"__version__ = {torch!r}\ncuda = {cuda!r}\n")
    info = folder / "site" / f"torch-{torch}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {torch}\n")
    (info / "RECORD").write_text("")
    (info / "INSTALLER").write_text("mlcc-e2e\n")
    (folder / "nvcc").write_text(f"#!/bin/sh\necho 'Cuda compilation tools, release {cuda}, V{cuda}.88'\n")
    (folder / "gcc").write_text(f'#!/bin/sh\ncase "$1" in -dump*) echo {gcc} ;; *) exit 1 ;; esac\n')
    source = rootfs.resolve()
    try:
        os.link(source, folder / "rootfs.tar")
    except OSError:
        shutil.copy(source, folder / "rootfs.tar")
    (folder / "Dockerfile").write_text(
        "FROM scratch\n"
        "ADD rootfs.tar /\n"
        "COPY site /usr/local/lib/python3.12/dist-packages/\n"
        "COPY --chmod=0755 nvcc /usr/local/cuda/bin/nvcc\n"
        "COPY --chmod=0755 gcc /usr/bin/gcc\n"
        'CMD ["/bin/bash"]\n'
    )
    return folder


OS_RELEASE = (
    'NAME="mlcc RPM-family test base"\nID="rhel"\nID_LIKE="fedora"\n'
    'VERSION_ID="{version}"\nPLATFORM_ID="platform:el{major}"\n'
)


def rpm_base_context(folder: Path, rootfs: Path, local_repo: Path, version_id: str) -> Path:
    """Build context of the RPM-family base: rootfs + a file:// repository of base packages."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    source = rootfs.resolve()
    try:
        os.link(source, folder / "rootfs.tar")  # 300 MB: link rather than copy where we can
    except OSError:
        shutil.copy(source, folder / "rootfs.tar")
    shutil.copytree(local_repo, folder / "localrepo")
    (folder / "base.repo").write_text(
        "[base]\nname=mlcc test base packages\nbaseurl=file:///opt/localrepo\nenabled=1\ngpgcheck=0\n"
    )
    (folder / "os-release").write_text(OS_RELEASE.format(version=version_id, major=version_id.split(".")[0]))
    # Debian's rpm keeps its database under /root/.rpmdb; RHEL's (and dnf's) is /var/lib/rpm
    (folder / "rpm-macros").write_text("%_dbpath /var/lib/rpm\n")
    (folder / "Dockerfile").write_text(
        "FROM scratch\n"
        "ADD rootfs.tar /\n"
        "COPY localrepo /opt/localrepo\n"
        "COPY base.repo /etc/yum.repos.d/base.repo\n"
        "COPY os-release /etc/os-release\n"
        "COPY rpm-macros /etc/rpm/macros\n"
        'CMD ["/bin/bash"]\n'
    )
    return folder


@contextlib.contextmanager
def environment(values: Dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
