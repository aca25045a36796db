"""Issue 12 item 4: an air-gapped build, with a local package index and a local git server
standing in for PyPI and GitHub.

The fixture benchmark clones its source from https://github.com/mlcc-e2e/... (a repository
that does not exist, on a host this machine cannot reach), builds a library from source
whose submodule .gitmodules names on github.com too, and pip-installs a package only the
local index has. Built as generated, it fails; with only --git-mirror it fails at pip;
from a git mirror whose repository holds other commits it fails at the checkout (a mirror
cannot substitute bytes); with --git-mirror and --pip-index-url it builds, the source is
the pinned commit, the library's submodule is the commit its superproject pins (fetched
through the git mirror), the package comes from the local index, which saw the requests.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Iterator, NamedTuple, Tuple

import pytest

from tests.conftest import Result
from tests.e2e import fixtures as fx
from tests.e2e.conftest import World
from tests.e2e.world import BASE_TAG
from tests.unit.simple_index import IndexServer, serve

PACKAGE = "mlcc-e2e-mirrored"  # on no public index: only the local one has it
OWNER_REPO = "mlcc-e2e/fixture-src"
LIB_REPO = "mlcc-e2e/fixture-lib"  # a source build (setup.py) with a submodule
SUB_REPO = "mlcc-e2e/fixture-sub"  # its submodule, named by a github.com URL
COMMIT_ENV = {
    "GIT_AUTHOR_NAME": "mlcc",
    "GIT_AUTHOR_EMAIL": "mlcc@example.com",
    "GIT_COMMITTER_NAME": "mlcc",
    "GIT_COMMITTER_EMAIL": "mlcc@example.com",
    "GIT_AUTHOR_DATE": "2019-06-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2019-06-01T00:00:00Z",
}


def _wheel() -> Tuple[str, bytes]:
    """A pure-Python wheel, written the way the wheel spec says (RECORD with sha256s)."""
    name = PACKAGE.replace("-", "_")
    files = {
        f"{name}/__init__.py": b"MIRRORED = 'from the local index'\n",
        f"{name}-1.0.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {PACKAGE}\nVersion: 1.0\n".encode(),
        f"{name}-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: mlcc-tests\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = ""
    for path, body in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()
        record += f"{path},sha256={digest},{len(body)}\n"
    record += f"{name}-1.0.dist-info/RECORD,,\n"
    files[f"{name}-1.0.dist-info/RECORD"] = record.encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, body in files.items():
            archive.writestr(zipfile.ZipInfo(path, (2019, 6, 1, 0, 0, 0)), body)
    return f"{name}-1.0-py3-none-any.whl", buffer.getvalue()


@pytest.fixture
def index() -> Iterator[IndexServer]:
    """A PEP 503 simple index on 127.0.0.1 (tests/unit/simple_index.py) with one wheel."""
    for server in serve():
        filename, wheel = _wheel()
        sha = hashlib.sha256(wheel).hexdigest()
        server.add(f"/files/{filename}", wheel, "application/octet-stream")
        link = f'<a href="../../files/{filename}#sha256={sha}">{filename}</a>'
        server.add(f"/simple/{PACKAGE}/", f"<html><body>{link}</body></html>".encode())
        yield server


def _git(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True, env={**os.environ, **COMMIT_ENV}
    )
    return done.stdout.strip()


def _repository(tmp_path: Path, served: Path, text: str) -> str:
    """A bare repository at <served>/<owner>/<repo>.git, as GitHub lays them out, readable
    over git's dumb HTTP protocol; returns its one commit's full SHA."""
    work = tmp_path / f"src-{served.name}"
    work.mkdir()
    _git("init", "-q", "-b", "main", cwd=work)
    (work / "run.sh").write_text(f"#!/bin/sh\necho {text}\n")
    _git("add", "run.sh", cwd=work)
    _git("commit", "-q", "-m", "fixture source", cwd=work)
    bare = served / f"{OWNER_REPO}.git"
    bare.parent.mkdir(parents=True)
    _git("clone", "-q", "--bare", str(work), str(bare), cwd=tmp_path)
    _git("update-server-info", cwd=bare)
    return _git("rev-parse", "HEAD", cwd=work)


def _commit_all(work: Path, message: str) -> str:
    _git("add", "-A", cwd=work)
    _git("commit", "-q", "-m", message, cwd=work)
    return _git("rev-parse", "HEAD", cwd=work)


def _publish(work: Path, served: Path, owner_repo: str) -> None:
    bare = served / f"{owner_repo}.git"
    bare.parent.mkdir(parents=True, exist_ok=True)
    _git("clone", "-q", "--bare", str(work), str(bare), cwd=work.parent)
    _git("update-server-info", cwd=bare)


def _library_with_submodule(tmp_path: Path, served: Path) -> Tuple[str, str]:
    """<served>/mlcc-e2e/fixture-lib.git, a setup.py project whose submodule ``sub``
    .gitmodules names at https://github.com/mlcc-e2e/fixture-sub.git, pinned at a commit
    that is not the submodule's tip. Returns (the library's SHA, the pinned submodule SHA)."""
    sub = tmp_path / "src-sub"
    sub.mkdir()
    _git("init", "-q", "-b", "main", cwd=sub)
    (sub / "sub.txt").write_text("pinned submodule commit\n")
    pinned = _commit_all(sub, "the commit the library pins")
    lib = tmp_path / "src-lib"
    lib.mkdir()
    _git("init", "-q", "-b", "main", cwd=lib)
    (lib / "setup.py").write_text(
        "from setuptools import setup\nsetup(name='mlcc-e2e-lib', version='1.0', py_modules=[])\n"
    )
    _git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "sub", cwd=lib)
    _git("config", "-f", ".gitmodules", "submodule.sub.url", f"https://github.com/{SUB_REPO}.git", cwd=lib)
    sha = _commit_all(lib, "a source build with a submodule")
    # the submodule moves on: the build must take the commit the library pins, not the tip
    (sub / "sub.txt").write_text("a later commit\n")
    _commit_all(sub, "later")
    _publish(sub, served, SUB_REPO)
    _publish(lib, served, LIB_REPO)
    return sha, pinned


class GitServer(NamedTuple):
    url: str
    sha: str  # the benchmark source's commit
    lib_sha: str  # the source-built library's commit
    sub_sha: str  # the commit the library pins its submodule at


@pytest.fixture
def git_server(tmp_path: Path) -> Iterator[GitServer]:
    """A git server over HTTP: <url>/good holds the pinned commits (the benchmark source, a
    library with a submodule), <url>/tampered the source with other content (a mirror that
    would substitute bytes)."""
    root = tmp_path / "git"
    sha = _repository(tmp_path, root / "good", "mirrored source")
    lib_sha, sub_sha = _library_with_submodule(tmp_path, root / "good")
    _repository(tmp_path, root / "tampered", "substituted source")
    mirror = fx.serve(root)
    try:
        yield GitServer(mirror.url, sha, lib_sha, sub_sha)
    finally:
        mirror.stop()


RECIPE = """kind: benchmark
schema_version: 1
name: e2e-mirrors
title: mlcc end-to-end mirrors probe (test only)
suite: mlcc tests
sources:
  mlcc-tests: "tests/e2e in the mlcc repository"
constraints:
  accelerators: [cuda]
  arches: [x86_64]
  requires: [nccl]
  python: none
  gpus: {{min: 1, reference: 1}}
  cuda: "<12.7"  # the CUDA the world's stand-in mirror serves (as e2e-probe's)
source: [mlcc-tests]
verified: true
build:
  source:
    repository: https://github.com/{owner_repo}
    commit: {sha}
  workdir: /workspace/mirrored
  packages:
    rhel: [probe-tools]
    ubuntu: [probe-tools]
  steps:
    - git: {{url: https://github.com/{lib_repo}.git, ref: {lib_sha}, dest: /opt/src/fixture-lib}}
    - pip: [{package}==1.0]
  env:
    LOGDIR: /results
  entrypoint: [/usr/local/bin/probe]
  writable: [/results]
  datasets: []
  quality_target: none (a test fixture)
  source_ids: [mlcc-tests]
  verified: true
"""


def _recipes(world: World, tmp_path: Path, git: GitServer) -> Path:
    recipes = tmp_path / "recipes"
    shutil.copytree(world.recipes, recipes)
    text = RECIPE.format(
        owner_repo=OWNER_REPO, sha=git.sha, package=PACKAGE, lib_repo=LIB_REPO, lib_sha=git.lib_sha
    )
    (recipes / "benchmarks" / "e2e-mirrors.yaml").write_text(text)
    return recipes


def _tools_base(world: World) -> str:
    """The world's RPM-family base plus git and pip (from Debian: the base is a Debian
    rootfs), which the benchmark's checkout and pip step need. Built once per world."""
    ref = f"{world.registry.host}/e2e/rpmbase:{BASE_TAG}-git-pip"
    context = world.root / "ctx-git-pip"
    if not context.exists():
        context.mkdir()
        (context / "Dockerfile").write_text(
            f"FROM {world.registry.host}/e2e/rpmbase:{BASE_TAG}-x86_64\n"
            "RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq"
            " --no-install-recommends git python3-pip python-is-python3 > /dev/null"
            " && rm -rf /var/lib/apt/lists/*\n"
            # Debian marks its Python externally managed (PEP 668); the image is the environment
            "ENV PIP_BREAK_SYSTEM_PACKAGES=1\n"
        )
        fx.run(
            "buildah", "bud", "--quiet", "--tls-verify=false", "--network", "host", "-t", ref, str(context)
        )
        fx.run("buildah", "push", "--quiet", "--tls-verify=false", ref)
    return ref


def _mlcc(world: World, recipes: Path, *args: str) -> Result:
    from tests.e2e.world import _environment

    proc = subprocess.run(
        [sys.executable, "-m", "mlcc", "--recipes", str(recipes), *args],
        capture_output=True,
        text=True,
        env=_environment(world),
        cwd=world.root,
        timeout=900,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def _build(world: World, recipes: Path, base: str, *mirrors: str) -> Result:
    return _mlcc(
        world,
        recipes,
        "build",
        "e2e-mirrors",
        "--base",
        "ubi8",
        "--base-image",
        base,
        "--mirror",
        world.stage.mirror,
        *mirrors,
        "--backend",
        "buildah",
        "--network",
        "host",
        "--push",
        "--registry",
        f"{world.registry.host}/mirrors",
        "--no-tls-verify",
    )


def test_an_air_gapped_build_fetches_pip_packages_and_git_sources_from_mirrors(
    world: World, tmp_path: Path, index: IndexServer, git_server: GitServer
) -> None:
    server, sha = git_server.url, git_server.sha
    git_url = f"{server}/good"
    recipes = _recipes(world, tmp_path, git_server)
    base = _tools_base(world)

    public = _build(world, recipes, base)
    assert public.code != 0, "built without mirrors: the public hosts are reachable after all?"
    assert f"https://github.com/{OWNER_REPO}" in public.err + public.out  # it tried the public host

    git_only = _build(world, recipes, base, "--git-mirror", git_url)
    assert git_only.code != 0, "built without the index mirror: is the package on a public index?"
    assert PACKAGE in git_only.err + git_only.out  # the clone passed; pip found no such package
    assert not index.hits

    tampered = _build(world, recipes, base, "--git-mirror", f"{server}/tampered")
    assert tampered.code != 0, "a mirror without the pinned commit passed the checkout"
    assert sha in tampered.err + tampered.out

    built = _build(world, recipes, base, "--git-mirror", git_url, "--pip-index-url", f"{index.url}/simple")
    assert built.code == 0, built.err[-4000:]
    assert f"/simple/{PACKAGE}/" in index.hits and any(h.startswith("/files/") for h in index.hits)
    tag = next(line.split()[-1] for line in built.out.splitlines() if "content tag" in line)

    # inside the image: the source at its pinned commit, the package from the mirror
    container = subprocess.run(
        ["buildah", "from", "--quiet", "--tls-verify=false", f"docker://{tag}"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **world.env},
    ).stdout.strip()
    try:
        ran = subprocess.run(
            [
                "buildah",
                "run",
                container,
                "--",
                "sh",
                "-c",
                "cat /workspace/mirrored/run.sh;"
                " python -c 'import mlcc_e2e_mirrored as m; print(m.MIRRORED)';"
                " cat /opt/src/fixture-lib/sub/sub.txt;"
                # the submodule's detached HEAD, read without git (which refuses a checkout
                # another user owns)
                " cat /opt/src/fixture-lib/.git/modules/sub/HEAD",
            ],
            capture_output=True,
            text=True,
            env={**os.environ, **world.env},
        )
    finally:
        subprocess.run(["buildah", "rm", container], capture_output=True, env={**os.environ, **world.env})
    assert ran.returncode == 0, ran.stderr
    assert "echo mirrored source" in ran.stdout and "from the local index" in ran.stdout
    # the submodule came through the git mirror (github.com is unreachable), at its pinned commit
    assert "pinned submodule commit" in ran.stdout and "a later commit" not in ran.stdout
    assert git_server.sub_sha in ran.stdout

    text = _generated(world, recipes, "--git-mirror", git_url, "--pip-index-url", f"{index.url}/simple")
    assert f'test "$(git rev-parse HEAD)" = {sha}' in text  # the checkout proves its full SHA
    assert f'"${{GIT_MIRROR}}/{OWNER_REPO}.git"' in text and f"ARG GIT_MIRROR={git_url}" in text
    assert f"ARG PIP_INDEX_URL={index.url}/simple" in text
    assert 'git -c "url.${GIT_MIRROR}/.insteadOf=https://github.com/"' in text


def _generated(world: World, recipes: Path, *mirrors: str, out: str = "mirrors-gen") -> str:
    folder = world.root / out
    args = ["gen", "e2e-mirrors", "--base", "ubi8", *mirrors, "--only", "dockerfile", "-o", str(folder)]
    result = _mlcc(world, recipes, *args)
    assert result.code == 0, result.err
    return next(folder.glob("e2e-mirrors/*/Dockerfile")).read_text()


def test_files_generated_without_mirrors_build_from_mirrors_given_as_build_args(
    world: World, tmp_path: Path, index: IndexServer, git_server: GitServer
) -> None:
    """What an air-gapped OpenShift BuildConfig does with the published set: the files as
    generated for the public hosts, the mirrors only as build arguments."""
    server = git_server.url
    recipes = _recipes(world, tmp_path, git_server)
    text = _generated(world, recipes, out="public-gen")
    assert "ARG GIT_MIRROR=https://github.com\n" in text and "ARG PIP_INDEX_URL\n" in text
    context = next((world.root / "public-gen").glob("e2e-mirrors/*"))
    build_args = {
        "BASE_IMAGE": _tools_base(world),
        "NVIDIA_MIRROR": world.stage.mirror,
        "GIT_MIRROR": f"{server}/good",
        "PIP_INDEX_URL": f"{index.url}/simple",
    }
    words = [w for name, value in build_args.items() for w in ("--build-arg", f"{name}={value}")]
    fx.run("buildah", "bud", "--quiet", "--tls-verify=false", "--network", "host", *words, str(context))
    assert f"/simple/{PACKAGE}/" in index.hits
