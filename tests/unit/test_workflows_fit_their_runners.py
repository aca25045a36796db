"""The workflows' set-up steps work on the runner images they name.

actionlint and the workflow schema cannot see that a package has no installation candidate
on a runner, or conflicts with what the image ships (Ubuntu's docker.io and runc beside
Docker's containerd.io; Chromium, a snap on Ubuntu 24.04). These tests check every
`apt-get install` of the workflows, and what tests/run would install there, against what
the runner image provides (tests/runners/<image>.yaml, from the runner-images readme).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any, Dict, Iterator, List, NamedTuple, Set

import pytest
import yaml

from tests.conftest import REPO

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
RUNNERS = REPO / "tests" / "runners"
SYSTEM_TOOLS = REPO / "tests" / "system-tools.txt"


class Runner(NamedTuple):
    image: str
    commands: Set[str]
    conflicts: Dict[str, str]
    installable: Set[str]


class Tool(NamedTuple):
    commands: List[str]  # any one of them on PATH is enough
    package: str


def _runner(image: str) -> Runner:
    path = RUNNERS / f"{image}.yaml"
    if not path.is_file():
        pytest.fail(f"no description of the runner image {image!r}: add {path.relative_to(REPO)}")
    data: Dict[str, Any] = yaml.safe_load(path.read_text())
    assert data["image"] == image and data["source"].startswith("https://github.com/actions/runner-images/")
    return Runner(image, set(data["commands"]), dict(data["conflicts"]), set(data["installable"]))


def _system_tools() -> List[Tool]:
    tools = []
    for line in SYSTEM_TOOLS.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            commands, package = line.split()
            tools.append(Tool(commands.split("|"), package))
    return tools


def packages_tests_run_installs(runner: Runner) -> List[str]:
    """What tests/run's loop installs on a machine with ``runner``'s commands."""
    wanted: List[str] = []
    for tool in _system_tools():
        if not set(tool.commands) & runner.commands and tool.package not in wanted:
            wanted.append(tool.package)
    return wanted


def apt_installs(script: str) -> Iterator[str]:
    """The packages of every ``apt-get install`` (or ``apt install``) in a shell script."""
    for line in script.replace("\\\n", " ").splitlines():
        if not re.search(r"\bapt(-get)?\b.*\binstall\b", line):
            continue
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words: List[str] = []
        for word in [*lexer, ";"]:
            if word not in ("&&", "||", ";", "|"):
                words.append(word)
                continue
            while words and (words[0] in ("sudo", "env") or "=" in words[0]):
                words = words[1:]
            if len(words) > 1 and words[0] in ("apt-get", "apt") and "install" in words[1:]:
                after = words[words.index("install") + 1 :]
                yield from (w for w in after if not w.startswith("-"))
            words = []


def findings(runner: Runner, packages: List[str]) -> List[str]:
    """Why each package cannot be installed on ``runner``: a conflict, or not known to exist."""
    found = []
    for package in packages:
        if package in runner.conflicts:
            found.append(f"{package}: conflicts on {runner.image} ({runner.conflicts[package]})")
        elif package not in runner.installable:
            found.append(f"{package}: not known to be installable on {runner.image}")
    return found


def _jobs() -> Iterator[Any]:
    for path in WORKFLOWS:
        for name, job in yaml.safe_load(path.read_text())["jobs"].items():
            if "uses" not in job:  # a call of a reusable workflow runs that workflow's jobs
                yield pytest.param(job, id=f"{path.name}:{name}")


@pytest.mark.parametrize("job", list(_jobs()))
def test_every_apt_install_of_a_job_works_on_its_runner(job: Dict[str, Any]) -> None:
    runner = _runner(job["runs-on"])
    scripts = "\n".join(step.get("run", "") for step in job.get("steps", []))
    assert findings(runner, list(apt_installs(scripts))) == []


@pytest.mark.parametrize("job", list(_jobs()))
def test_what_tests_run_installs_on_a_jobs_runner_works_there(job: Dict[str, Any]) -> None:
    scripts = "\n".join(step.get("run", "") for step in job.get("steps", []))
    if "tests/run" not in scripts:
        return
    runner = _runner(job["runs-on"])
    wanted = packages_tests_run_installs(runner)
    assert findings(runner, wanted) == []
    # the runner's own engines and browser are used, not replaced
    assert not {"docker.io", "runc", "chromium"} & set(wanted)


def test_the_check_finds_what_the_old_set_up_installed() -> None:
    """The set-up these workflows had before: Ubuntu's Docker, runc and Chromium."""
    runner = _runner("ubuntu-24.04")
    old = (
        "sudo apt-get update -qq && \\\n"
        "  sudo apt-get install -y -qq buildah runc docker.io chromium qemu-user-static"
    )
    assert list(apt_installs(old)) == ["buildah", "runc", "docker.io", "chromium", "qemu-user-static"]
    assert [f.split(":")[0] for f in findings(runner, list(apt_installs(old)))] == [
        "runc",
        "docker.io",
        "chromium",
    ]
    assert findings(runner, ["no-such-package"]) == [
        "no-such-package: not known to be installable on ubuntu-24.04"
    ]


def test_tests_run_installs_only_the_missing_tools() -> None:
    """On a machine with nothing, tests/run wants every package once; the list it reads is
    the one this file reads (no second list inside tests/run)."""
    empty = Runner("none", set(), {}, set())
    wanted = packages_tests_run_installs(empty)
    assert len(wanted) == len(set(wanted)) and {"buildah", "docker-registry", "chromium"} <= set(wanted)
    script = (REPO / "tests" / "run").read_text()
    assert "tests/system-tools.txt" in script and 'apt-get install -y -qq "${missing[@]}"' in script


def test_workflows_install_the_cpu_build_of_the_framework() -> None:
    """PyPI's torch wheel is the CUDA build with several GB of NVIDIA libraries; every job
    that installs the test extra takes the CPU build first, itself or through tests/run."""
    tests_run = (REPO / "tests" / "run").read_text()
    cpu_build = "'torch==2.13.0+cpu' --extra-index-url https://download.pytorch.org/whl/cpu"
    assert cpu_build in tests_run
    assert tests_run.index(cpu_build) < tests_run.index("-e '.[test]'")
    for path in WORKFLOWS:
        for name, job in yaml.safe_load(path.read_text())["jobs"].items():
            steps = job.get("steps", [])
            assert all("working-directory" not in step for step in steps), f"{path.name}:{name}"
            scripts = "\n".join(step.get("run", "") for step in steps)
            if ".[test]" in scripts:
                assert cpu_build in scripts, f"{path.name}:{name}"


def test_the_runner_description_names_its_source_and_what_it_could_not_confirm() -> None:
    for path in RUNNERS.glob("*.yaml"):
        data = yaml.safe_load(path.read_text())
        assert "actions/runner-images" in data["source"]
        assert "installable" in data["unconfirmed"]
    assert Path(SYSTEM_TOOLS).is_file()
