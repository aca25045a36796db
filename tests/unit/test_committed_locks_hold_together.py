"""Every committed lock install is a set pip installs with --require-hashes: each locked
package's requirements (markers evaluated for the lock file's target, with the extras the
install asks for) that name another package of the same install accept that package's
locked version.

`mlcc kb lock` resolves breadth-first without backtracking, and a requirement an earlier
install already meets does not bind a later choice of the same package (it once locked numpy
2.x under nemo-toolkit's numpy<2). pip refuses such a set at build time, hours into a build;
this guard refuses it when the lock is committed. Requirements met by an earlier install of
the chain are the lock's own business (tests/unit/test_llama31_8b_pypi.py replays one chain).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from mlcc.kb.pip_locks import LOCK_DIR, LockTarget
from mlcc.kbtools.lock import marker_environment

LOCKS = Path(__file__).resolve().parents[2] / "recipes" / LOCK_DIR
LOCK_NAME = re.compile(
    r"pip-py(?P<python>[0-9.]+)-(?P<arch>[a-z0-9_]+)-glibc(?P<glibc>[0-9.]+|unknown)\.json"
)


def _target(path: Path) -> LockTarget:
    found = LOCK_NAME.fullmatch(path.name)
    assert found is not None, f"{path.name} is not named as LockTarget.file_name names lock files"
    glibc = found["glibc"]
    return LockTarget(found["python"], found["arch"], None if glibc == "unknown" else glibc)


def _parsed(text: str) -> Requirement | None:
    try:
        return Requirement(text)
    except InvalidRequirement:  # a legacy version such as pytz>=2011k: no PEP 440 answer to give
        return None


def _asked_extras(requirements: List[str]) -> Dict[str, Set[str]]:
    extras: Dict[str, Set[str]] = {}
    for text in requirements:
        requirement = _parsed(text)
        if requirement is not None:
            extras[canonicalize_name(requirement.name)] = set(requirement.extras)
    return extras


def _broken(record: Dict[str, object], environment: Dict[str, str]) -> Iterator[Tuple[str, str, str]]:
    packages = record["packages"]
    assert isinstance(packages, list)
    requirements = record.get("requirements", [])
    assert isinstance(requirements, list)
    extras = _asked_extras(requirements)
    held = {canonicalize_name(p["name"]): p["version"] for p in packages}
    for package in packages:
        wanted = {""} | extras.get(canonicalize_name(package["name"]), set())
        for text in package.get("dependencies", []):
            dependency = _parsed(text)
            if dependency is None:
                continue
            marker = dependency.marker
            if marker is not None and not any(marker.evaluate({**environment, "extra": e}) for e in wanted):
                continue
            version = held.get(canonicalize_name(dependency.name))
            if version is not None and not dependency.specifier.contains(version, prereleases=True):
                yield package["name"], text, version


@pytest.mark.parametrize("path", sorted(LOCKS.glob("*.json")), ids=lambda p: p.name)
def test_each_locked_install_meets_its_own_packages_requirements(path: Path) -> None:
    environment = marker_environment(_target(path))
    installs = json.loads(path.read_text())["installs"]
    locked = {ident: record for ident, record in installs.items() if "packages" in record}
    assert locked, f"{path.name} locks no install"
    broken = {ident: list(_broken(record, environment)) for ident, record in locked.items()}
    assert {ident: found for ident, found in broken.items() if found} == {}


def test_the_guard_finds_a_version_its_own_install_refuses() -> None:
    environment = marker_environment(LockTarget("3.12", "x86_64", "2.34"))
    record: Dict[str, object] = {
        "requirements": ["nemo-toolkit[nlp]==2.5.0"],
        "packages": [
            {"name": "nemo-toolkit", "version": "2.5.0", "dependencies": ['numpy<2; extra == "nlp"']},
            {"name": "numpy", "version": "2.3.0", "dependencies": []},
        ],
    }
    assert list(_broken(record, environment)) == [("nemo-toolkit", 'numpy<2; extra == "nlp"', "2.3.0")]
    record["requirements"] = ["nemo-toolkit==2.5.0"]  # without the extra, its marker is false
    assert list(_broken(record, environment)) == []
