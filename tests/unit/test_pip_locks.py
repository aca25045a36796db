"""Hash locks of pip installs: the committed lock files (offline), the published set that
renders them, lint's DF011, and `mlcc kb lock` against the real PyPI."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, List

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from mlcc.app.kb_lock import EMPTY, Locker, matrix_stacks, stale_installs
from mlcc.kb.index import IndexClient
from mlcc.kb.pip_locks import LOCK_FORMAT, LockTarget, PipInstall
from mlcc.lint.dockerfile import lint_dockerfile

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
        assert "not hash-locked" not in text, path
        locked += text.count("--require-hashes -r ")
        waived += len(re.findall(r"^# mlcc: DF011 waived: \S.{20,}$", text, re.M))
    assert locked > len(files)  # the venv's pip tooling at least, in every file
    assert waived > 0


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
