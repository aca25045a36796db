"""Every published runtime image's final stage takes only what runs: cuDNN's and NCCL's
shared libraries from the build stage (no second download, no headers, no static
archives), an environment without the build-only Python packages (recipes/tools.yaml
build_only), and no package-manager or pip caches."""

from __future__ import annotations

import re
from typing import List, Tuple

import pytest

from mlcc.app.published_set import published
from mlcc.kb import load
from mlcc.kb.model import KnowledgeBase
from mlcc.kb.pip_locks import pip_names
from mlcc.render import render
from mlcc.render.plan import HANDOFF
from mlcc.resolve.stack import Stack
from tests.conftest import RECIPES


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return load(str(RECIPES))


@pytest.fixture(scope="module")
def runtime_cells(kb: KnowledgeBase) -> List[Tuple[str, Stack, str]]:
    """(cell, stack, Dockerfile) of every published runtime cell."""
    cells = []
    for result in published(kb):
        if result.published and result.stack is not None and result.stack.runtime:
            stack = result.stack
            files = dict(render(stack).files)
            cell = f"{stack.benchmark.name}/{stack.base.name}-{stack.arch.name}"
            cells.append((cell, stack, files["Dockerfile"]))
    assert cells, "the published set has runtime cells"
    return cells


FINAL_STAGE = "\n# The runtime stage: runtime packages, and what the build stage made\n"


def _stages(dockerfile: str) -> Tuple[str, str]:
    head, _, final = dockerfile.partition(FINAL_STAGE)
    assert final, "a runtime Dockerfile has two stages"
    return head, final


def _instructions(text: str) -> List[str]:
    """The stage's instructions, continuation lines joined."""
    return [line for line in text.replace("\\\n", " ").splitlines() if line and not line.startswith("#")]


def test_no_final_stage_downloads_or_unpacks_cudnn_or_nccl(
    runtime_cells: List[Tuple[str, Stack, str]],
) -> None:
    for cell, stack, dockerfile in runtime_cells:
        _build, final = _stages(dockerfile)
        for lib in (stack.cudnn, stack.nccl):
            if lib is None or lib.method != "tarball":
                continue
            assert lib.url is not None
            name = lib.url.rsplit("/", 1)[1]
            assert name in _build, cell
            assert name not in final, f"{cell}: the final stage fetches {name} again"
        assert "tar -x" not in final, f"{cell}: the final stage unpacks an archive"
        assert "_static" not in final, f"{cell}: the final stage names a static archive"


def test_the_final_stage_takes_only_shared_libraries_from_the_build_stage(
    runtime_cells: List[Tuple[str, Stack, str]],
) -> None:
    tarballs = 0
    for cell, stack, dockerfile in runtime_cells:
        build, final = _stages(dockerfile)
        uses = [lib for lib in (stack.cudnn, stack.nccl) if lib is not None and lib.method == "tarball"]
        if not uses:
            assert HANDOFF not in final, cell
            continue
        tarballs += 1
        assert f"COPY --from=build {HANDOFF}/ /" in final, cell
        gathered = [line for line in _instructions(build) if HANDOFF in line]
        assert gathered, cell
        # only versioned shared objects are gathered: no headers, no static archives
        patterns = re.findall(r"-name '([^']+)'", gathered[0])
        assert patterns and all(p.endswith(".so*") for p in patterns), (cell, patterns)
        assert "--library" in final and "--header" not in final, f"{cell}: records versions without headers"
    assert tarballs, "some published runtime cell installs cuDNN or NCCL from a tarball"


def test_build_only_packages_leave_the_environment_the_final_stage_copies(
    kb: KnowledgeBase, runtime_cells: List[Tuple[str, Stack, str]]
) -> None:
    names = [rule.name for rule in kb.build_only]
    assert {"cmake", "ninja", "pybind11"} <= set(names)
    uninstalled = 0
    for cell, _stack, dockerfile in runtime_cells:
        build, final = _stages(dockerfile)
        lines = _instructions(build)
        pinned = {n for n in names if re.search(rf"'{n}==", build, re.IGNORECASE)}
        if not pinned:
            continue
        uninstall = [i for i, line in enumerate(lines) if "pip uninstall -y" in line]
        assert uninstall, f"{cell}: pins {sorted(pinned)} and never uninstalls them"
        last_install = max(i for i, line in enumerate(lines) if "pip install" in line)
        assert uninstall[-1] > last_install, f"{cell}: a pip install follows the uninstall"
        assert all(n in lines[uninstall[-1]].split() for n in pinned), (cell, lines[uninstall[-1]])
        assert not any(f"'{n}==" in final for n in names), cell
        uninstalled += 1
    assert uninstalled, "some published runtime cell pins a build-only package"


def test_an_install_no_lock_file_has_still_names_its_build_only_packages(
    runtime_cells: List[Tuple[str, Stack, str]],
) -> None:
    # a locked install's names were recorded when the knowledge base was built; without the
    # lock files the render names the requirements itself, and uninstalls the same packages
    cell, stack, dockerfile = next(c for c in runtime_cells if "pip uninstall -y" in c[2])
    uninstall = next(line for line in _instructions(_stages(dockerfile)[0]) if "pip uninstall -y" in line)
    unlocked = dict(render(stack._replace(pip_locks=None)).files)["Dockerfile"]
    assert "--require-hashes" not in unlocked, cell
    assert uninstall in _instructions(_stages(unlocked)[0]), cell


def test_pip_names_are_pep_503_names_of_what_names_a_package() -> None:
    requirements = [
        "PyBind11==2.6.2",
        "Ninja[extra]>=1.10",
        "https://host/torch-1.5.0-cp36.whl",
        "./embedding_lib",
    ]
    assert pip_names(requirements, ["CMake", "ruamel.yaml"]) == ("cmake", "ninja", "pybind11", "ruamel-yaml")


def test_the_final_stage_leaves_no_package_manager_or_pip_cache(
    runtime_cells: List[Tuple[str, Stack, str]],
) -> None:
    for cell, _stack, dockerfile in runtime_cells:
        _build, final = _stages(dockerfile)
        for line in _instructions(final):
            if "dnf install" in line or "yum install" in line:
                assert "dnf clean all" in line or "yum clean all" in line, (cell, line)
            if "apt-get install" in line:
                assert "rm -rf /var/lib/apt/lists" in line, (cell, line)
            if "pip install" in line:
                assert "--no-cache-dir" in line, (cell, line)
