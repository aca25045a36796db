"""Hash locks of pip installs: the committed lock files (offline), the published set that
renders them, lint's DF011, and `mlcc kb lock` against the real PyPI."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any, Dict, List

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from mlcc.errors import IndexUnreachable
from mlcc.kb.index import IndexClient
from mlcc.kb.model import Provenance, SdistRequires
from mlcc.kb.pip_locks import LOCK_FORMAT, LockTarget, PipInstall, parse_install
from mlcc.kbtools.check import NOTE, WARNING, Checker, Pin, Target
from mlcc.kbtools.lock import (
    EMPTY,
    NO_REQUIRES_SOURCE,
    Locker,
    Unlockable,
    _declares_no_requires,
    fact_source,
    install_requires_strings,
    lock,
    matrix_stacks,
    stale_installs,
    verify,
)
from mlcc.lint.dockerfile import lint_dockerfile
from mlcc.render.plan import locked_pip_command

from .simple_index import IndexServer, serve

ROOT = Path(__file__).resolve().parents[2]
LOCKS = ROOT / "recipes" / "locks"
HEX64 = re.compile(r"^[0-9a-f]{64}\Z")


def _locks() -> Dict[str, Dict[str, Any]]:
    return {p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted(LOCKS.glob("pip-*.json"))}


def test_lock_files_are_sorted_json_of_the_current_format() -> None:
    locks = _locks()
    assert locks, "recipes/locks/ holds no lock file: run `mlcc kb lock`"
    for name, data in locks.items():
        text = (LOCKS / name).read_text(encoding="utf-8")
        assert text == json.dumps(data, indent=1, sort_keys=True) + "\n", f"{name} is not canonical"
        assert data["format"] == LOCK_FORMAT
        target = LockTarget(data["target"]["python"], data["target"]["arch"], data["target"]["glibc"])
        assert target.file_name == name


def test_every_install_is_locked_with_hashes_or_says_why_not() -> None:
    locked = unlocked = 0
    for name, data in _locks().items():
        for ident, install in data["installs"].items():
            assert re.match(r"^[0-9a-f]{16}\Z", ident), (name, ident)
            assert install["stacks"] and install["requirements"], (name, ident)
            if "unlocked" in install:
                assert len(install["unlocked"].split()) >= 5, f"{name} {ident}: a reason, not a word"
                unlocked += 1
                continue
            locked += 1
            assert install["packages"], (name, ident)
            for package in install["packages"]:
                if package.get("installed_by_earlier"):
                    assert package["requested"] and "sha256" not in package
                    continue
                assert HEX64.match(package["sha256"]), package
                # each file cites the index page it was read from, and is a file of that project
                assert package["index"].endswith(f"/{canonicalize_name(package['name'])}/"), package
                assert package["url"].split("#")[0].endswith("/" + package["file"]), package
    assert locked >= 20 and unlocked >= 1


def test_locked_installs_take_the_versions_the_recipes_pin() -> None:
    for name, data in _locks().items():
        for ident, install in data["installs"].items():
            if "unlocked" in install:
                continue
            have = {canonicalize_name(p["name"]): p["version"] for p in install["packages"]}
            have.update({canonicalize_name(p["name"]): p["version"] for p in install.get("satisfied", [])})
            for text in install["requirements"]:
                requirement = Requirement(text)
                if requirement.marker is not None and not requirement.marker.evaluate(
                    {"python_version": data["target"]["python"], "platform_machine": data["target"]["arch"]}
                ):
                    continue
                version = have.get(canonicalize_name(requirement.name))
                assert version is not None, f"{name} {ident}: {text} is not in the lock"
                assert requirement.specifier.contains(version, prereleases=True), (name, ident, text, version)


def test_every_matrix_stack_finds_its_installs_in_the_lock(kb) -> None:  # type: ignore[no-untyped-def]
    assert stale_installs(matrix_stacks(kb)) == []


def test_a_changed_pin_is_a_stale_lock_naming_the_recipe_line(kb) -> None:  # type: ignore[no-untyped-def]
    stack = matrix_stacks(kb)[0]
    assert stack.python_tooling is not None
    changed = stack._replace(python_tooling=stack.python_tooling._replace(pip="99.0"))
    problems = stale_installs([changed])
    assert problems, "a pin the lock never saw must be reported"
    first = problems[0]
    assert first.startswith(stack.python_tooling.prov.origin + ": pip install pip==99.0")
    assert "mlcc kb lock" in first and stack.pip_locks is not None and stack.pip_locks.path in first


def _published_dockerfiles() -> List[Path]:
    return sorted((ROOT / "dockerfiles").glob("*/*/Dockerfile"))


def test_published_set_every_pip_install_is_hash_locked_or_waived_with_a_reason() -> None:
    files = _published_dockerfiles()
    assert files
    locked = waived = 0
    for path in files:
        assert [f for f in lint_dockerfile(path) if f.rule == "DF011"] == [], path
        text = path.read_text(encoding="utf-8")
        assert "mlcc: not hash-locked" not in text, path  # the lock lacks the install
        locked += text.count("--require-hashes -r ")
        waived += len(re.findall(r"^# mlcc: DF011 waived: \S.{20,}$", text, re.M))
    assert locked > len(files)  # the venv's pip tooling at least, in every file
    # 80 locked / 43 waived before the Cython and numpy sdists and minigo's set were locked,
    # 84 / 39 before NCF's ppc64le set (scipy 1.2.1 by its sdist_requires); maskrcnn v2.1 adds
    # four waivers: its two VCS checkouts (mlcommons/logging, NVIDIA/mlperf-common) and its two
    # packages built from the pinned source checkout (NVIDIA's cocoapi, maskrcnn itself); its
    # torchvision 0.14.0 (PyPI) is hash-locked; bert v2.1 adds two: the same two VCS checkouts (its
    # requirements.txt, hash-locked, and apex, a git: step, are not pip installs of the index); ssd
    # v2.1 adds three: the same two VCS checkouts and NVIDIA's cocoapi from its pinned source checkout;
    # retinanet-reference's two cells add one each: their mlcommons/logging VCS checkout; rgat v5.1
    # three in each of its two cells: its requirements.txt's three VCS checkouts; dlrm_dcnv2 v5.1
    # three in each of its two cells: mlcommons/logging and NVIDIA/mlperf-common, and the
    # dependencies of its hash-locked mpi4py pin that pip resolves against the NGC base's own;
    # llama2_70b_lora v5.0 four in each of its two cells: the dependencies of its numcodecs pin
    # likewise, and its requirements.txt's three VCS checkouts (logging, mlperf-common, NeMo-Run);
    # llama31_405b v5.0 five in its one cell: the dependencies of its three hash-locked pip steps
    # (numcodecs, cython, requirements.txt's pins) likewise, and its two VCS checkouts (logging,
    # mlperf-common; NeMo, NeMo-Run and Megatron-LM are git: checkouts, not pip installs of the index);
    # llama31_8b-pypi, llama31_405b-pypi and llama2_70b_lora-pypi two in each of their two cells:
    # requirements.txt's two VCS checkouts (logging, mlperf-common); their pip installs of the
    # index (NeMo-Run too: PyPI's release) are all hash-locked
    assert locked >= 85 and 0 < waived <= 86, (locked, waived)


def test_published_set_waives_no_buildable_sdist_and_no_resolution_conflict() -> None:
    for path in _published_dockerfiles():
        for line in re.findall(r"^# mlcc: DF011 waived: .*$", path.read_text(encoding="utf-8"), re.M):
            assert "resolution conflict" not in line, (path, line)
            assert "Cython-0.29.7" not in line and "numpy-1.16.3" not in line, (path, line)
            assert "scipy-1.2.1" not in line, (path, line)


SCIPY_SDIST_SHA256 = "e085d1babcb419bbe58e2e805ac61924dac4ca45a07c9fa081144739e500aa3c"


def test_scipy_sdist_is_locked_by_its_recipe_fact(kb) -> None:  # type: ignore[no-untyped-def]
    """scipy 1.2.1 has no ppc64le wheel, pip cannot prepare its sdist on a new Python and it
    has no egg-info: its numpy>=1.8.2 comes from recipes/tools.yaml sdist_requires."""
    facts = {(f.name, f.version): f for f in kb.sdist_requires}
    fact = facts[("scipy", "1.2.1")]
    seen = 0
    for _, data in _locks().items():
        for install in data["installs"].values():
            for package in install.get("packages", []):
                if package.get("file") == "scipy-1.2.1.tar.gz":
                    assert package["sha256"] == SCIPY_SDIST_SHA256
                    assert package["dependencies"] == list(fact.requires) == ["numpy>=1.8.2"]
                    assert package["dependencies_from"] == fact_source(fact)
                    seen += 1
    assert seen >= 2  # both NCF ppc64le installs


def test_old_sdists_without_egg_info_are_locked_by_their_setup_py() -> None:
    """Cython 0.29.7 and numpy 1.16.3 ship no egg-info and cannot be prepared on a new
    Python; their setup.py never names install_requires (read from the sdists themselves)."""
    expected = {
        "Cython-0.29.7.tar.gz": "55d081162191b7c11c7bfcb7c68e913827dfd5de6ecdbab1b99dab190586c1e8",
        "numpy-1.16.3.zip": "78a6f89da87eeb48014ec652a65c4ffde370c036d780a995edaeb121d3625621",
    }
    seen = set()
    for _, data in _locks().items():
        for install in data["installs"].values():
            for package in install.get("packages", []):
                if package.get("file") in expected and package["dependencies_from"] == NO_REQUIRES_SOURCE:
                    assert package["sha256"] == expected[package["file"]]
                    assert package["dependencies"] == []
                    seen.add(package["file"])
    assert seen == set(expected)


def _sdist(kind: str, files: Dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    if kind == "zip":
        with zipfile.ZipFile(buffer, "w") as archive:
            for name, text in files.items():
                archive.writestr(f"p-1.0/{name}", text)
    else:
        with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
            for name, text in files.items():
                data = text.encode()
                info = tarfile.TarInfo(f"p-1.0/{name}")
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_only_a_setup_py_that_cannot_declare_dependencies_counts_as_none(kind: str) -> None:
    name = f"p-1.0.{kind}"
    plain = "from setuptools import setup\nsetup(name='p', python_requires='>=2.7')\n"
    assert _declares_no_requires(name, _sdist(kind, {"setup.py": plain, "PKG-INFO": "Name: p\n"}))
    asking = plain.replace("python_requires='>=2.7'", "install_requires=['six']")
    assert not _declares_no_requires(name, _sdist(kind, {"setup.py": asking}))
    # setup.cfg, pyproject.toml or a module the setup.py imports may declare them instead
    cfg = "[options]\ninstall_requires =\n    six\n"
    assert not _declares_no_requires(name, _sdist(kind, {"setup.py": plain, "setup.cfg": cfg}))
    pyproject = '[project]\nname = "p"\ndependencies = ["six"]\n'
    assert not _declares_no_requires(name, _sdist(kind, {"setup.py": plain, "pyproject.toml": pyproject}))
    helper = "CONFIG = dict(install_requires=['six'])\n"
    assert not _declares_no_requires(name, _sdist(kind, {"setup.py": plain, "setup_config.py": helper}))
    # ones that name nothing (Pillow 6.0.0's, PyYAML 5.1's, typing 3.7.4.3's setup.cfg) do not
    quiet_cfg = "[metadata]\nlicense_file = LICENSE\n\n[egg_info]\ntag_build =\n"
    assert _declares_no_requires(name, _sdist(kind, {"setup.py": plain, "setup.cfg": quiet_cfg}))
    build_only = "[build-system]\n"
    assert _declares_no_requires(name, _sdist(kind, {"setup.py": plain, "pyproject.toml": build_only}))
    assert not _declares_no_requires(name, _sdist(kind, {"PKG-INFO": "Name: p\n"}))
    # a setup.py in a subfolder is not the sdist's
    assert not _declares_no_requires(name, _sdist(kind, {"sub/setup.py": plain}))


def test_compliance_checkouts_install_without_dependencies() -> None:
    """mlperf_compliance at 6289993 declares no install_requires (its compliance/setup.py):
    --no-deps installs the same thing and nothing unhashed comes with it."""
    seen = 0
    for _, data in _locks().items():
        for install in data["installs"].values():
            if any("mlperf/training.git@" in r for r in install["requirements"]):
                assert install.get("no_deps") is True, install["requirements"]
                assert "installed with --no-deps" in install["unlocked"]
                seen += 1
    assert seen >= 6


def test_minigo_set_locks_with_gsutil_and_the_oauth2client_it_pins() -> None:
    found = []
    for _, data in _locks().items():
        for install in data["installs"].values():
            if "gsutil==4.40" in install["requirements"]:
                assert "unlocked" not in install, install.get("unlocked")
                versions = {canonicalize_name(p["name"]): p["version"] for p in install["packages"]}
                assert versions["oauth2client"] == "4.1.3" and versions["gsutil"] == "4.40"
                found.append(install)
    assert found


def test_lint_flags_a_pip_install_without_hashes_unless_waived(tmp_path: Path) -> None:
    path = _published_dockerfiles()[0]
    text = path.read_text(encoding="utf-8")
    plain = text.replace("--require-hashes -r ", "-r ", 1)
    findings = [f for f in lint_dockerfile(path, content=plain) if f.rule == "DF011"]
    assert len(findings) == 1 and "mlcc kb lock" in findings[0].message
    lines = plain.splitlines(keepends=True)
    run = max(i for i, line in enumerate(lines) if line.startswith("RUN ") and i < _line_of(lines))
    waived = "".join([*lines[:run], "# mlcc: DF011 waived: a reason\n", *lines[run:]])
    assert [f for f in lint_dockerfile(path, content=waived) if f.rule == "DF011"] == []


def _line_of(lines: List[str]) -> int:
    return next(i for i, line in enumerate(lines) if "-r /tmp/mlcc-pip" in line and "--require" not in line)


def test_real_pypi_resolves_dependencies_with_markers_and_hashes(tmp_path: Path) -> None:
    client = IndexClient("https://pypi.org/simple/", cache=str(tmp_path / "index"))
    locker = Locker(client)
    target = LockTarget("3.6", "x86_64", "2.17")
    packages, satisfied = locker.resolve(target, PipInstall(("requests==2.21.0",)), EMPTY)
    names = {canonicalize_name(p["name"]): p for p in packages}
    # requests 2.21.0 declares chardet<3.1,>=3.0.2, idna<2.9,>=2.5, urllib3<1.25,>=1.21.1, certifi
    assert set(names) == {"requests", "chardet", "idna", "urllib3", "certifi"}
    assert names["requests"]["requested"] and not names["idna"]["requested"]
    assert names["chardet"]["version"].startswith("3.0.") and names["urllib3"]["version"].startswith("1.24.")
    page = client.project("urllib3")
    offered = {f.filename: f.hash("sha256") for f in page.files}
    assert offered[names["urllib3"]["file"]] == names["urllib3"]["sha256"]
    assert satisfied == []


@pytest.mark.parametrize("python", ["3.6"])
def test_an_earlier_install_satisfies_a_pin_without_downloading_it(tmp_path: Path, python: str) -> None:
    client = IndexClient("https://pypi.org/simple/", cache=str(tmp_path / "index"))
    locker = Locker(client)
    target = LockTarget(python, "x86_64", "2.17")
    first, _ = locker.resolve(target, PipInstall(("six==1.12.0",)), EMPTY)
    state = EMPTY._replace(installed={"six": ("1.12.0", first[0])})
    packages, satisfied = locker.resolve(target, PipInstall(("six==1.12.0", "python-dateutil==2.8.0")), state)
    assert [p["name"] for p in packages if not p.get("earlier")] == ["python_dateutil"] or [
        canonicalize_name(p["name"]) for p in packages if not p.get("earlier")
    ] == ["python-dateutil"]
    six = [p for p in packages if canonicalize_name(p["name"]) == "six"]
    assert six and six[0]["earlier"] and six[0]["sha256"] == first[0]["sha256"]
    assert satisfied == []


def test_published_conda_installs_name_builds_or_say_why_not() -> None:
    seen = 0
    for path in _published_dockerfiles():
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            if "conda create" not in line:
                continue
            seen += 1
            words = line.split("conda create", 1)[1].split()
            unbuilt = [w for w in words if "=" in w and not w.startswith("python=") and w.count("=") < 2]
            if not unbuilt:
                continue
            start = max(
                i for i in range(number) if lines[i].startswith("# ") and not lines[i].startswith("# mlcc")
            )
            notes = [x for x in lines[start:number] if x.startswith("# mlcc: conda builds not named")]
            assert notes, f"{path}:{number + 1}: {unbuilt} name no build and no reason is given"
            assert "no reason recorded" not in notes[0] and len(notes[0].split(": ", 2)[2].split()) >= 10
    assert seen > 0


def test_kb_check_turns_a_recorded_conda_reason_into_a_note(kb) -> None:  # type: ignore[no-untyped-def]
    checker = Checker(IndexClient("http://127.0.0.1:9/simple/", cache=""), kb)
    target = Target("3.6", "ppc64le", "2.17")
    bare = Pin("pytorch=1.1.0", "recipes/frameworks/pytorch.yaml:1", target, kind="conda")
    verdict = checker.judge(bare)
    assert verdict is not None and verdict[0] == WARNING
    explained = checker.judge(bare._replace(reason="the channel cannot be read from here"))
    assert explained is not None and explained[0] == NOTE and "cannot be read" in explained[1]
    assert checker.judge(bare._replace(requirement="pytorch=1.1.0=py36_123.gabc")) is None


def _wheel(name: str, version: str, requires: List[str], payload: str = "") -> bytes:
    """A real, minimal py3-none-any wheel (no PEP 658 file beside it on the index)."""
    dist = f"{name}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires
    )
    files = {
        f"{name}/__init__.py": f"VALUE = {payload!r}\n",
        f"{dist}/METADATA": metadata,
        f"{dist}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: mlcc-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = "".join(f"{n},,\n" for n in files) + f"{dist}/RECORD,,\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for member, text in [*files.items(), (f"{dist}/RECORD", record)]:
            archive.writestr(member, text)
    return buffer.getvalue()


def _publish(index: IndexServer, wheels: Dict[str, bytes]) -> None:
    projects: Dict[str, List[str]] = {}
    for filename, data in wheels.items():
        index.add(f"/files/{filename}", data, "application/octet-stream")
        digest = hashlib.sha256(data).hexdigest()
        projects.setdefault(filename.split("-")[0], []).append(
            f'<a href="/files/{filename}#sha256={digest}">{filename}</a>'
        )
    for project, links in projects.items():
        index.add(f"/simple/{project}/", ("<html><body>" + "".join(links) + "</body></html>").encode())


def test_a_lock_from_a_local_index_installs_those_bytes_or_fails(tmp_path: Path) -> None:
    """The whole path on a real PEP 503 index on 127.0.0.1 and a real pip: the lock reads
    the wheels' METADATA by range requests, the rendered RUN command installs them with
    --require-hashes, and the same command fails once the index serves other bytes."""
    wheels = {
        "mlccprobe-1.0-py3-none-any.whl": _wheel("mlccprobe", "1.0", ["mlccdep>=1.0"]),
        "mlccdep-1.0-py3-none-any.whl": _wheel("mlccdep", "1.0", []),
        "mlccdep-1.1-py3-none-any.whl": _wheel("mlccdep", "1.1", []),
    }
    for index in serve():
        _publish(index, wheels)
        client = IndexClient(index.url + "/simple/", cache=str(tmp_path / "cache"))
        locker = Locker(client, metadata_cache="")
        python = f"{sys.version_info[0]}.{sys.version_info[1]}"
        packages, _ = locker.resolve(
            LockTarget(python, "x86_64", "2.17"), PipInstall(("mlccprobe==1.0",)), EMPTY
        )
        assert [(p["name"], p["version"], p["requested"]) for p in packages] == [
            ("mlccdep", "1.1", False),
            ("mlccprobe", "1.0", True),
        ]
        assert packages[0]["dependencies_from"].startswith("the wheel's METADATA (read by range requests")
        assert packages[0]["sha256"] == hashlib.sha256(wheels["mlccdep-1.1-py3-none-any.whl"]).hexdigest()
        assert any(hit.startswith("/files/") for hit in index.hits)
        locked = parse_install("x" * 16, {"requirements": ["mlccprobe==1.0"], "packages": packages})
        command = locked_pip_command(f"{sys.executable} -m pip install --no-cache-dir", locked)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PIP_CONFIG_FILE": os.devnull,
            "PIP_INDEX_URL": index.url + "/simple/",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        }
        good = subprocess.run(
            ["bash", "-c", command],
            env={**env, "PIP_TARGET": str(tmp_path / "good")},
            capture_output=True,
            text=True,
            check=False,
        )
        assert good.returncode == 0, good.stderr
        assert (tmp_path / "good" / "mlccdep" / "__init__.py").exists()
        # the same release, other bytes: what a compromised or rebuilt index would serve
        _publish(index, {**wheels, "mlccdep-1.1-py3-none-any.whl": _wheel("mlccdep", "1.1", [], "changed")})
        bad = subprocess.run(
            ["bash", "-c", command],
            env={**env, "PIP_TARGET": str(tmp_path / "bad")},
            capture_output=True,
            text=True,
            check=False,
        )
        assert bad.returncode != 0
        assert "DO NOT MATCH THE HASHES" in bad.stderr and "mlccdep" in bad.stderr
        assert not (tmp_path / "bad" / "mlccdep").exists()
        # `mlcc kb lock --verify` sees it too: the index no longer gives the locked bytes
        root = tmp_path / "recipes"
        (root / "locks").mkdir(parents=True)
        document = {"format": LOCK_FORMAT, "installs": {"x" * 16: {"packages": packages}}}
        (root / "locks" / "pip-test.json").write_text(json.dumps(document))
        fresh = IndexClient(index.url + "/simple/", cache="")
        problems, checked = verify(str(root), [], fresh)
        assert checked == 2 and len(problems) == 1
        assert (
            "mlccdep-1.1-py3-none-any.whl the sha256" in problems[0]
            and "recipes/locks/pip-test.json" in problems[0]
        )
        _publish(index, wheels)
        assert verify(str(root), [], IndexClient(index.url + "/simple/", cache="")) == ([], 2)


# an sdist whose setup.py pip cannot run (as scipy 1.2.1's needs a numpy.distutils of its
# era) and that has no egg-info: install_requires is read through a variable, as scipy's is
UNBUILDABLE_SETUP_PY = """\
from setuptools import setup
try:
    import mlccdep
except ImportError:
    build_requires = ['mlccdep>=1.0']
else:
    build_requires = (['mlccdep>=1.0'] if 'bdist_wheel' in sys.argv[1:] else [])
raise RuntimeError('this setup.py needs numpy.distutils of its era')
setup(name='mlccsci', version='1.0', install_requires=build_requires, python_requires='>=3')
"""


def _sdist_fact(requires: List[str], line: int = 39) -> SdistRequires:
    prov = Provenance(("mlccsci-1.0.tar.gz setup.py line 11",), True, f"recipes/tools.yaml:{line}")
    return SdistRequires("mlccsci", "1.0", tuple(requires), prov)


def _publish_sdist(index: IndexServer, setup_py: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, text in {"setup.py": setup_py, "PKG-INFO": "Name: mlccsci\nVersion: 1.0\n"}.items():
            data = text.encode()
            info = tarfile.TarInfo(f"mlccsci-1.0/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    sdist = buffer.getvalue()
    index.add("/files/mlccsci-1.0.tar.gz", sdist, "application/octet-stream")
    digest = hashlib.sha256(sdist).hexdigest()
    link = f'<a href="/files/mlccsci-1.0.tar.gz#sha256={digest}">mlccsci-1.0.tar.gz</a>'
    index.add("/simple/mlccsci/", f"<html><body>{link}</body></html>".encode())
    return sdist


def test_an_sdist_pip_cannot_prepare_takes_its_dependencies_from_the_recipe_fact(tmp_path: Path) -> None:
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    target = LockTarget(python, "x86_64", "2.17")
    for index in serve():
        _publish(index, {"mlccdep-1.0-py3-none-any.whl": _wheel("mlccdep", "1.0", [])})
        sdist = _publish_sdist(index, UNBUILDABLE_SETUP_PY)
        url = index.url + "/simple/"
        # without the fact: no static metadata, no egg-info, and setup.py names install_requires
        bare = Locker(IndexClient(url, cache=""), metadata_cache="")
        unprepared = re.escape("mlccsci-1.0.tar.gz: its dependencies are known only by running its setup.py")
        with pytest.raises(Unlockable, match=unprepared):
            bare.resolve(target, PipInstall(("mlccsci==1.0",)), EMPTY)
        # with it: the declared requirement is locked, and the sdist by the sha256 of its bytes
        fact = _sdist_fact(["mlccdep>=1.0"])
        locker = Locker(IndexClient(url, cache=""), metadata_cache="", sdist_facts=[fact])
        packages, _ = locker.resolve(target, PipInstall(("mlccsci==1.0",)), EMPTY)
        by_name = {p["name"]: p for p in packages}
        assert set(by_name) == {"mlccsci", "mlccdep"} and locker.problems == []
        sci = by_name["mlccsci"]
        assert sci["file"] == "mlccsci-1.0.tar.gz" and sci["requested"]
        assert sci["sha256"] == hashlib.sha256(sdist).hexdigest()
        assert sci["dependencies"] == ["mlccdep>=1.0"]
        assert sci["dependencies_from"] == fact_source(fact)
        assert "recipes/tools.yaml sdist_requires mlccsci 1.0" in sci["dependencies_from"]
        assert "dependencies_unknown" not in sci and by_name["mlccdep"]["version"] == "1.0"
        assert index.hits.count("/files/mlccsci-1.0.tar.gz") >= 1  # the sdist itself was read
        # `kb lock --verify` checks the fact against the same setup.py
        assert Locker(IndexClient(url, cache=""), metadata_cache="").check_fact(fact) is None


@pytest.mark.parametrize(
    "requires, said",
    [
        (["mlccdep>=2.0"], "does not name mlccdep>=2.0 in install_requires and also names mlccdep>=1.0"),
        ([], "also names mlccdep>=1.0 there"),
        (["mlccdep>=1.0", "six"], "does not name six in install_requires"),
    ],
)
def test_a_recipe_fact_its_setup_py_does_not_declare_is_an_error_at_the_recipe_line(
    tmp_path: Path, requires: List[str], said: str
) -> None:
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    target = LockTarget(python, "x86_64", "2.17")
    fact = _sdist_fact(requires, line=41)
    for index in serve():
        _publish(index, {"mlccdep-1.0-py3-none-any.whl": _wheel("mlccdep", "1.0", [])})
        _publish_sdist(index, UNBUILDABLE_SETUP_PY)
        url = index.url + "/simple/"
        locker = Locker(IndexClient(url, cache=""), metadata_cache="", sdist_facts=[fact])
        with pytest.raises(Unlockable, match=re.escape(said)):
            locker.resolve(target, PipInstall(("mlccsci==1.0",)), EMPTY)
        assert len(locker.problems) == 1
        assert locker.problems[0].startswith("recipes/tools.yaml:41: error: sdist_requires mlccsci 1.0:")
        assert said in locker.problems[0]
        problem = Locker(IndexClient(url, cache=""), metadata_cache="").check_fact(fact)
        assert problem is not None and problem == locker.problems[0]
        # verify reports it too, at the recipe line
        root = tmp_path / "recipes"
        (root / "locks").mkdir(parents=True, exist_ok=True)
        problems, _ = verify(str(root), [], IndexClient(url, cache=""), [fact])
        assert problems == [problem]
        assert not os.path.exists("metadata"), "a client without a cache must not cache metadata"


def test_install_requires_is_read_from_the_setup_py_without_running_it() -> None:
    strings = install_requires_strings(UNBUILDABLE_SETUP_PY)
    assert strings == {"mlccdep>=1.0"}  # not 'bdist_wheel' from the condition
    added = "setup(install_requires=['a'] + EXTRA)\nEXTRA = ['b>1']\n"
    assert install_requires_strings(added) == {"a", "b>1"}
    assert install_requires_strings("kw = {'install_requires': ['c']}\nsetup(**kw)\n") == {"c"}
    assert install_requires_strings("print 'python 2'\n") is None


def test_an_unreachable_index_stops_the_lock_instead_of_recording_it(kb, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "recipes"
    client = IndexClient("http://127.0.0.1:9/simple/", cache="", timeout=5)
    with pytest.raises(IndexUnreachable):
        lock(kb, matrix_stacks(kb)[:1], client)
    assert not root.exists()


# install_requires of the benchmarks' own setup.py at training_results_v0.6 f312518 (their
# requirements.txt; ssd's and maskrcnn's are commented out), torch aside: the framework's
OWN_PACKAGE_REQUIRES = {
    "gnmt": {"mlperf-compliance", "sacrebleu"},
    "transformer": {"cffi", "mlperf-compliance", "numpy", "sacrebleu", "tqdm"},
    "ssd": set(),
    "maskrcnn": set(),
}


def test_own_packages_install_without_deps_after_what_their_setup_py_declares(kb) -> None:  # type: ignore[no-untyped-def]
    from mlcc.render.plan import build_plan

    seen = set()
    for stack in matrix_stacks(kb):
        bench = stack.benchmark.name
        if bench not in OWN_PACKAGE_REQUIRES:
            continue
        installs = [install for _, _, install in build_plan(stack).pip_installs]
        own = [i for i, install in enumerate(installs) if install.requirements in ((".",), ("-e .",))]
        assert len(own) == 1, (bench, installs)
        assert installs[own[0]].no_deps and "--no-deps" in str(installs[own[0]].unlockable)
        before = set()
        for install in installs[: own[0]]:
            for text in install.requirements:
                if "mlperf/training.git@" in text:
                    before.add("mlperf-compliance")
                elif not text.startswith(("git+", "http", "-")):
                    before.add(canonicalize_name(Requirement(text).name))
        missing = OWN_PACKAGE_REQUIRES[bench] - before
        assert not missing, (bench, sorted(missing), "not installed before its --no-deps install")
        seen.add(bench)
    assert seen == set(OWN_PACKAGE_REQUIRES)


# ---------------------------------------------------------------- locks in the knowledge base


def test_the_knowledge_base_carries_every_lock_file_parsed(kb: Any) -> None:
    """The warm path parses no lock JSON: the files are in the pickled knowledge base."""
    parsed = dict(kb.pip_locks.parsed)
    assert sorted(parsed) == sorted(_locks()), "a lock file of recipes/locks/ is missing from the kb"
    assert not kb.pip_locks.damaged
    for name, data in _locks().items():
        assert {key for key, _ in parsed[name].installs} == set(data["installs"]), name


def test_a_lock_file_edit_reaches_the_cached_knowledge_base(recipes_copy: Path) -> None:
    from mlcc.kb import load

    name = "pip-py3.6-x86_64-glibc2.17.json"
    before = dict(load(str(recipes_copy)).pip_locks.parsed)[name]
    path = recipes_copy / "locks" / name
    data = json.loads(path.read_text(encoding="utf-8"))
    dropped = sorted(data["installs"])[0]
    del data["installs"][dropped]
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    after = dict(load(str(recipes_copy)).pip_locks.parsed)[name]
    assert len(after.installs) == len(before.installs) - 1
    assert dropped not in dict(after.installs)


@pytest.mark.parametrize(
    "damage", ["{not json", json.dumps({"format": 99}), json.dumps({"format": 1, "installs": {"x": 3}})]
)
def test_a_damaged_lock_file_is_a_clear_error_where_a_stack_needs_it(
    recipes_copy: Path, damage: str, tmp_path: Path
) -> None:
    """Resolving a stack of that target names the file and the refresh command; commands
    that need no lock (and `mlcc kb lock`, which rewrites it) still load the recipes."""
    from .. import conftest

    # maskrcnn --cuda 10.1 resolves to UBI 8: Python 3.6, x86_64, glibc 2.28

    (recipes_copy / "locks" / "pip-py3.6-x86_64-glibc2.28.json").write_text(damage, encoding="utf-8")
    env = {"MLCC_RECIPES": str(recipes_copy), "MLCC_CACHE_DIR": str(tmp_path / "cache")}
    failed = conftest.run_mlcc(["resolve", "maskrcnn", "--cuda", "10.1", "--json"], **env)
    assert failed.code == 2, failed
    assert "recipes/locks/pip-py3.6-x86_64-glibc2.28.json" in failed.err
    assert "mlcc kb lock" in failed.err
    assert "Traceback" not in failed.err and "internal error" not in failed.err
    listed = conftest.run_mlcc(["list", "benchmarks"], **env)
    assert listed.code == 0 and "maskrcnn" in listed.out, listed
