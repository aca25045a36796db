"""The revisions and pip locks of NVIDIA's v5.x NGC-based recipes, checked by machine: the
PyPI release that stands for NeMo-Run v0.5.0 against the commit its recipe cites, the pip
steps on an NGC base (their exact pins hash-locked, their dependencies left to the base),
and the committed locks of those steps against the real PyPI."""

from __future__ import annotations

import hashlib
import io
import re
import tarfile
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
import yaml
from packaging.utils import canonicalize_name

from mlcc.kb.index import MAX_FILE_BYTES, IndexClient
from mlcc.kbtools.check import stack_label
from mlcc.kbtools.lock import EMPTY, Locker, image_base_stacks, stale_installs, target_of
from mlcc.render.plan import build_plan
from mlcc.resolve import Resolver, Stack, build_request

ROOT = Path(__file__).resolve().parents[2]
V51 = ROOT / "recipes" / "benchmarks" / "v5.1"
# the NGC-based recipes whose pip steps the locks must hold, on every arch their base offers
NGC_RECIPES = {
    "llama31_405b-v5.1",
    "llama31_8b-v5.1",
    "llama2_70b_lora-v5.1",
    "flux1-v5.1",
    "retinanet-v5.1",
    "dlrm_dcnv2-v5.1",
    "rgat-v5.1",
    "llama31_405b-v5.0",
    "llama2_70b_lora-v5.0",
}


def _git_tree(files: Dict[str, bytes]) -> str:
    """The id git gives the tree of ``files`` (path -> bytes), every file a plain 100644 blob."""
    root: Dict[str, Any] = {}
    for path, data in files.items():
        node = root
        *folders, leaf = path.split("/")
        for folder in folders:
            node = node.setdefault(folder, {})
        node[leaf] = data

    def write(node: Dict[str, Any]) -> bytes:
        entries: List[Tuple[bytes, bytes]] = []
        for name, value in node.items():
            key = name.encode()
            if isinstance(value, dict):  # git sorts a tree as if its name ended in "/"
                entries.append((key + b"/", b"40000 " + key + b"\0" + write(value)))
            else:
                blob = hashlib.sha1(b"blob %d\0" % len(value) + value).digest()
                entries.append((key, b"100644 " + key + b"\0" + blob))
        body = b"".join(entry for _, entry in sorted(entries))
        return hashlib.sha1(b"tree %d\0" % len(body) + body).digest()

    return write(root).hex()


def _nemo_run_source(recipe: str) -> str:
    data = yaml.safe_load((V51 / f"{recipe}.yaml").read_text(encoding="utf-8"))
    return str(data["sources"]["nemo-run"])


def _download(client: IndexClient, project: str, filename: str, sha256: str) -> bytes:
    page = client.project(project)
    offered = {f.filename: f for f in page.files}
    assert filename in offered, f"{filename} is gone from {page.url}"
    assert offered[filename].hash("sha256") == sha256, f"PyPI gives {filename} another sha256 than the recipe"
    fetched = client.read(offered[filename].url, limit=MAX_FILE_BYTES)
    assert fetched is not None
    assert hashlib.sha256(fetched.body).hexdigest() == sha256
    return fetched.body


def test_pypi_nemo_run_0_5_0_is_the_commit_the_recipes_cite_but_for_its_version_string(
    tmp_path: Path,
) -> None:
    source = _nemo_run_source("llama31_405b")
    assert source == _nemo_run_source("llama31_8b")
    sdist_sha = re.search(r"nemo_run-0\.5\.0\.tar\.gz sha256 ([0-9a-f]{64})", source)
    wheel_sha = re.search(r"nemo_run-0\.5\.0-py3-none-any\.whl sha256 ([0-9a-f]{64})", source)
    tree = re.search(r"that commit's tree, ([0-9a-f]{40})", source)
    assert sdist_sha and wheel_sha and tree, source
    client = IndexClient("https://pypi.org/simple/", cache=str(tmp_path / "index"))
    sdist = _download(client, "nemo-run", "nemo_run-0.5.0.tar.gz", sdist_sha.group(1))
    with tarfile.open(fileobj=io.BytesIO(sdist)) as tar:
        files = {
            m.name.split("/", 1)[1]: tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }
    assert files.pop("PKG-INFO").startswith(b"Metadata-Version:")  # written by the build
    # the two one-line changes the recipe names, undone: then the files are the commit's tree
    release = ("nemo_run/package_info.py", b'__version__ = "0.5.0"', b'__version__ = "0.5.0rc0.dev0"')
    workflow = (
        ".github/workflows/release.yml",
        b"_release_library.yml@v0.40.0",
        b"_release_library.yml@v0.22.6",
    )
    for path, released, committed in (release, workflow):
        assert files[path].count(released) == 1, path
        files[path] = files[path].replace(released, committed)
    assert _git_tree(files) == tree.group(1)
    # the wheel mlcc installs holds the sdist's package byte for byte
    wheel = _download(client, "nemo-run", "nemo_run-0.5.0-py3-none-any.whl", wheel_sha.group(1))
    with zipfile.ZipFile(io.BytesIO(wheel)) as archive:
        package = {n: archive.read(n) for n in archive.namelist() if n.startswith("nemo_run/")}
    in_sdist = {p: d for p, d in files.items() if p.startswith("nemo_run/")}
    in_sdist[release[0]] = in_sdist[release[0]].replace(release[2], release[1])
    assert package == in_sdist and len(package) == 81


def _stack(kb: Any, name: str, arch: str) -> Stack:
    return Resolver(kb).resolve(build_request(kb, name, arch=arch))


def test_a_pip_step_on_an_ngc_base_locks_its_exact_pins_and_leaves_their_dependencies_to_the_base(
    kb: Any,
) -> None:
    stack = _stack(kb, "llama31_405b-v5.1", "aarch64")
    installs = [install for _, _, install in build_plan(stack).pip_installs]
    pins = ("transformers==4.46.1", "blobfile==3.0.0", "prettytable==3.11.0", "multi-storage-client==0.25.0")
    at = [i for i, install in enumerate(installs) if install.requirements == pins]
    assert len(at) == 2 and at[1] == at[0] + 1, installs
    first, second = installs[at[0]], installs[at[1]]
    assert first.no_deps and first.unlockable is None
    assert (
        not second.no_deps and second.unlockable and "nvcr.io/nvidia/pytorch:25.09-py3" in second.unlockable
    )
    locks = stack.pip_locks
    assert locks is not None
    ident = build_plan(stack).pip_installs[at[0]][0]
    locked = locks.get(ident)
    assert locked is not None and locked.unlocked is None
    # the pins alone, each with the sha256 of its file: no dependency replaces the base's own
    assert sorted(canonicalize_name(p.name) for p in locked.packages) == sorted(
        canonicalize_name(p.split("==")[0]) for p in pins
    )
    assert all(len(p.sha256) == 64 for p in locked.packages)
    # a git requirement cannot be hashed: on an NGC base it stays one install, waived as a checkout
    rgat = _stack(kb, "rgat-v5.1", "aarch64")
    assert rgat.from_base
    for _, _, install in build_plan(rgat).pip_installs:
        assert not install.unlockable or "lacks" not in install.unlockable, install
    # a plain base (UBI) has no packages of its own: its steps lock their whole tree, in one install
    ubi = _stack(kb, "retinanet-reference", "x86_64")
    assert ubi.from_base == ()
    assert all(not i.unlockable or "lacks" not in i.unlockable for _, _, i in build_plan(ubi).pip_installs)


def test_the_ngc_recipes_pip_steps_are_all_in_the_committed_locks(kb: Any) -> None:
    stacks = image_base_stacks(kb)
    labels = {stack_label(s) for s in stacks}
    assert {label.split("/")[0] for label in labels} == NGC_RECIPES
    # both arches where the base has both (NGC 25.01 is x86_64 only in the v5.0 recipe)
    assert sum(1 for label in labels if label.endswith("-aarch64")) == len(NGC_RECIPES) - 1
    assert stale_installs(stacks) == []


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_the_committed_ngc_pin_locks_are_what_pypi_serves_today(kb: Any, tmp_path: Path, arch: str) -> None:
    """Each exact-pin install of the v5.1 NeMo recipes, locked again against the real PyPI,
    gives the files and sha256 the committed lock holds."""
    client = IndexClient("https://pypi.org/simple/", cache=str(tmp_path / "index"))
    locker = Locker(client)
    checked = 0
    for name in ("llama31_405b-v5.1", "flux1-v5.1", "llama2_70b_lora-v5.1"):
        stack = _stack(kb, name, arch)
        target = target_of(stack)
        assert target is not None and stack.pip_locks is not None
        for ident, _, install in build_plan(stack).pip_installs:
            if not install.no_deps or install.unlockable is not None:
                continue
            committed = stack.pip_locks.get(ident)
            assert committed is not None and committed.unlocked is None, (name, install.requirements)
            packages, _ = locker.resolve(target, install, EMPTY)
            assert {(p["file"], p["sha256"]) for p in packages} == {
                (p.filename, p.sha256) for p in committed.packages
            }, (name, install.requirements)
            checked += 1
    assert checked >= 5


def test_two_steps_filling_one_shared_script_run_two_files_each_with_its_own_values(kb: Any) -> None:
    """NeMo's, NeMo-Run's and Megatron-LM's checkouts fill the same git-pip.sh: each step runs a
    copy of its own, never the last one written under the shared name."""
    for name in ("llama31_405b-v5.0", "llama31_405b-v5.1", "flux1-v5.1"):
        build = kb.benchmarks[name].build
        scripts = dict(build.scripts)
        assert len(scripts) == len(build.scripts), f"{name}: two copies under one file name"
        checkouts = [s for s in build.steps if s.kind == "script" and s.script.startswith("git-pip")]
        assert len(checkouts) >= 2
        for step in checkouts:
            assert (step.note or "") and f"commit={_commit_of(scripts[step.script])}" in scripts[step.script]
        commits = [_commit_of(scripts[s.script]) for s in checkouts]
        assert len(set(commits)) == len(commits), (name, commits)
        plan = build_plan(_stack(kb, name, "x86_64"))
        copies = [c for step in plan.steps for c in step.copies if c[0].startswith("scripts/git-pip")]
        assert [source for source, _ in copies] == [f"scripts/{s.script}" for s in checkouts]


def _commit_of(script: str) -> str:
    found = re.search(r"^commit=([0-9a-f]{40})$", script, re.MULTILINE)
    assert found, script
    return found.group(1)
