"""stack.json's ``fetches`` (format 2) say what the generated file does: every download,
git checkout, pip and conda install of each published Dockerfile is recorded, with the
pin the Dockerfile checks; URLs are as the build fetches them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict

import pytest

from mlcc.kb.pip_locks import LockedInstall, LockedPackage, PipInstall
from mlcc.render.fetches import as_fetched, download, git, pip
from mlcc.render.mirror import MIRROR_VAR, Route
from mlcc.stackfile.document import GitRecord, PipRecord

REPO = Path(__file__).resolve().parents[2]
VARIANTS = sorted(p.parent for p in (REPO / "dockerfiles").glob("*/*/stack.json"))
GITHUB = (Route("GIT_MIRROR", "https://github.com"),)


def _read(folder: Path) -> Dict[str, Any]:
    fetches: Dict[str, Any] = json.loads((folder / "stack.json").read_text())["fetches"]
    return fetches


@pytest.mark.parametrize("folder", VARIANTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_fetch_of_the_dockerfile_is_recorded_with_its_pin(folder: Path) -> None:
    # the instructions, without the comments (notes quote requirements and reasons)
    dockerfile = "\n".join(
        line for line in (folder / "Dockerfile").read_text().splitlines() if not line.lstrip().startswith("#")
    )
    fetches = _read(folder)
    # downloads: each sourced sha256 is the one the Dockerfile checks, and nothing else is checked
    checked = [d for d in fetches["downloads"] if d["sha256"] or d["checksum_url"]]
    # a runtime image's final stage installs the cuDNN / NCCL tarballs again: the same
    # records, checked the same way in each stage
    stages = re.split(r"\nFROM ", dockerfile)
    assert stages[1].count("sha256sum -c") == len(checked)
    for stage in stages[2:]:
        again = re.findall(r"echo '([0-9a-f]{64})  /tmp/", stage)
        assert stage.count("sha256sum -c") == len(again)
        assert set(again) <= {d["sha256"] for d in checked}
    for record in fetches["downloads"]:
        assert (record["sha256"] is None) == bool(record["sha256_unavailable"]), record["name"]
        if record["sha256"]:
            assert f"echo '{record['sha256']}  /tmp/" in dockerfile
        file = record["url"].rsplit("/", 1)[1]
        assert file in dockerfile
    # git: every checkout the Dockerfile proves, and the commits of pip's git+ requirements
    proved = re.findall(r"git checkout -q --detach ([0-9a-f]+)", dockerfile)
    vcs = re.findall(r"git\+\S+?@([0-9a-f]{40})", dockerfile)
    recorded = [g["commit"] for g in fetches["git"]]
    assert sorted(recorded) == sorted([*proved, *vcs])
    # pip: one record per pip install, the hash-locked ones with the very hashes pip checks
    assert len(fetches["pip"]) == len(re.findall(r"-m pip install ", dockerfile))
    locked = [i for i in fetches["pip"] if i["unlocked"] is None]
    assert dockerfile.count("--require-hashes") == len(locked)
    hashes = set(re.findall(r"--hash=sha256:([0-9a-f]{64})", dockerfile))
    assert {p["sha256"] for i in locked for p in i["packages"] if p["sha256"]} == hashes
    for install in locked:
        assert f"/tmp/mlcc-pip-{install['lock']}.txt" in dockerfile
    # conda
    assert len(fetches["conda"]) == dockerfile.count("conda create ")


def test_the_published_set_exercises_every_kind() -> None:
    kinds = {kind for folder in VARIANTS for kind, records in _read(folder).items() if records}
    assert kinds == {"downloads", "git", "pip", "conda"}
    everything = [_read(folder) for folder in VARIANTS]
    assert any(d["checksum_url"] for f in everything for d in f["downloads"])  # Miniforge
    assert any(g["commit_unresolved"] for f in everything for g in f["git"])  # PyTorch 828a6a3
    assert any(i["unlocked"] for f in everything for i in f["pip"])


def test_urls_are_as_the_build_fetches_them() -> None:
    records = [
        download("cudnn", MIRROR_VAR + "/compute/redist/cudnn.tgz", "ab" * 32, None),
        git("apex", "${GIT_MIRROR}/NVIDIA/apex.git", "c" * 40),
        *pip(
            "0123456789abcdef",
            PipInstall(
                ("git+https://github.com/NVIDIA/cocoapi.git@" + "d" * 40 + "#subdirectory=PythonAPI",)
            ),
            None,
            "recipes/locks/x.json",
            GITHUB,
        ),
    ]
    fetched = as_fetched(records, "https://mirror.example/nvidia", [("GIT_MIRROR", "https://git.example")])
    assert fetched.downloads[0].url == "https://mirror.example/nvidia/compute/redist/cudnn.tgz"
    assert [g.repository for g in fetched.git] == [
        "https://git.example/NVIDIA/apex.git",
        "https://git.example/NVIDIA/cocoapi.git",  # pip's git+ requirement, recorded with its install
    ]
    assert fetched.git[1] == GitRecord(
        "pip:PythonAPI", "https://git.example/NVIDIA/cocoapi.git", "d" * 40, None
    )
    install = fetched.pip[0]
    assert install.requirements == (
        "git+https://git.example/NVIDIA/cocoapi.git@" + "d" * 40 + "#subdirectory=PythonAPI",
    )
    assert install.unlocked == "recipes/locks/x.json has no lock for this pip install"


def test_why_a_pip_install_is_not_hash_locked() -> None:
    install = PipInstall(("numpy==1.16.3",))
    package = LockedPackage("numpy", "1.16.3", "numpy-1.16.3.whl", "ef" * 32)
    locked = LockedInstall("0123456789abcdef", install.requirements, (package,), None)
    (record,) = pip("0123456789abcdef", install, locked, "l.json", GITHUB)
    assert isinstance(record, PipRecord) and record.unlocked is None
    assert [(p.name, p.version, p.file, p.sha256) for p in record.packages] == [
        ("numpy", "1.16.3", "numpy-1.16.3.whl", "ef" * 32)
    ]
    said = locked._replace(packages=(), unlocked="a wheel host\n   that could not be read")
    (record,) = pip("0123456789abcdef", install, said, "l.json", GITHUB)
    assert record.packages == () and record.unlocked == "a wheel host that could not be read"
    local = install._replace(requirements=(".",), unlockable="pip cannot hash a directory")
    (record,) = pip("0123456789abcdef", local, None, "l.json", GITHUB)
    assert record.unlocked == "pip cannot hash a directory"


def test_a_short_commit_keeps_its_reason_and_a_full_one_needs_none() -> None:
    assert git("x", "r", "828a6a3", "only the short hash is known").commit_unresolved == (
        "only the short hash is known"
    )
    assert git("x", "r", "a" * 40, "ignored").commit_unresolved is None
    assert download("k", "u", None, "  no\n source ").sha256_unavailable == "no source"
    assert download("k", "u", "ab" * 32, "stale reason").sha256_unavailable is None
