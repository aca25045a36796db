"""Issue 23 item 4: a source build fetches its submodules through the git mirror.

PyTorch's ``.gitmodules`` names github.com URLs; without a rewrite ``git submodule update``
fetches them from GitHub whatever ``GIT_MIRROR`` says, and an air-gapped build fails. The
rendered step rewrites them for that one command, at the commits the superproject pins.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Dict

import pytest

from mlcc.api import Pins, request_for
from mlcc.render import render

_GIT = shutil.which("git")
_ENV = {
    "GIT_AUTHOR_NAME": "mlcc",
    "GIT_AUTHOR_EMAIL": "mlcc@example.com",
    "GIT_COMMITTER_NAME": "mlcc",
    "GIT_COMMITTER_EMAIL": "mlcc@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def _submodule_line(dockerfile: str) -> str:
    """The one submodule command every source build of the Dockerfile runs (ssd: PyTorch
    from source and apex's git: step)."""
    found = {
        line.strip().removeprefix("&& ").removesuffix(" \\")
        for line in dockerfile.splitlines()
        if "submodule update" in line
    }
    assert len(found) == 1
    return found.pop()


def test_every_source_build_updates_its_submodules(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    dockerfile = render(resolver.resolve(request_for(kb, "ssd", Pins()))).content("Dockerfile")
    runs = dockerfile.split("\nRUN ")
    for marker in ("pytorch/pytorch.git", "NVIDIA/apex.git"):
        step = next(r for r in runs if marker in r)
        assert "submodule update --init --recursive" in step


def test_the_source_build_rewrites_github_to_the_git_mirror(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(request_for(kb, "ssd", Pins()))
    assert stack.framework is not None and stack.framework.install.method == "source"
    line = _submodule_line(render(stack).content("Dockerfile"))
    for scheme in ("https://", "http://", "git://"):
        assert f'-c "url.${{GIT_MIRROR}}/.insteadOf={scheme}github.com/"' in line
    assert line.endswith("submodule update --init --recursive")


def test_the_step_is_the_same_whatever_the_mirror(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    """The mirror is a build argument: the step names ${GIT_MIRROR}, never its value."""
    from mlcc.app.generate import SourceFlags

    stack = resolver.resolve(request_for(kb, "ssd", Pins()))
    options = SourceFlags(git_mirror="https://git.example.com/github").options()
    with_mirror = _submodule_line(render(stack, options=options).content("Dockerfile"))
    assert with_mirror == _submodule_line(render(stack).content("Dockerfile"))
    assert "git.example.com" not in with_mirror


def _git(*args: str, cwd: Path, env: Dict[str, str]) -> str:
    return subprocess.run(
        [_GIT or "git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


@pytest.mark.skipif(_GIT is None, reason="needs git")
def test_the_rendered_step_fetches_nested_submodules_from_the_mirror(kb, resolver, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The rendered command, run by sh in a clone whose .gitmodules name github.com, takes
    the submodule (and its own submodule) from a mirror folder, at the pinned commits."""
    env = {**os.environ, **_ENV, "HOME": str(tmp_path)}
    mirror = tmp_path / "mirror"
    leaf, inner, outer = (mirror / "org" / f"{name}.git" for name in ("leaf", "inner", "outer"))
    for repo in (leaf, inner, outer):
        repo.mkdir(parents=True)
        _git("init", "-q", ".", cwd=repo, env=env)
    (leaf / "leaf.txt").write_text("leaf\n")
    _git("add", ".", cwd=leaf, env=env)
    _git("commit", "-qm", "leaf", cwd=leaf, env=env)
    pinned_leaf = _git("rev-parse", "HEAD", cwd=leaf, env=env).strip()
    for parent, child, name in ((inner, leaf, "leaf"), (outer, inner, "inner")):
        _git(
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            str(child),
            name,
            cwd=parent,
            env=env,
        )
        _git(
            "config",
            "-f",
            ".gitmodules",
            f"submodule.{name}.url",
            f"https://github.com/org/{name}.git",
            cwd=parent,
            env=env,
        )
        _git("add", ".gitmodules", cwd=parent, env=env)
        _git("commit", "-qm", name, cwd=parent, env=env)
    # a commit after the pinned one: the build must take the superproject's gitlink, not the tip
    (leaf / "later.txt").write_text("later\n")
    _git("add", ".", cwd=leaf, env=env)
    _git("commit", "-qm", "later", cwd=leaf, env=env)

    work = tmp_path / "work"
    work.mkdir()
    _git("clone", "-q", outer.as_uri(), ".", cwd=work, env=env)
    stack = resolver.resolve(request_for(kb, "ssd", Pins()))
    command = _submodule_line(render(stack).content("Dockerfile"))
    # file:// submodules need git >= 2.38.1's opt-in; the build's mirror is http(s)
    command = command.replace("git -c", "git -c protocol.file.allow=always -c", 1)
    run_env = {**env, "GIT_MIRROR": mirror.as_uri(), "GIT_TERMINAL_PROMPT": "0"}
    subprocess.run(["sh", "-ec", command], cwd=work, env=run_env, check=True, capture_output=True)
    assert (work / "inner" / "leaf" / "leaf.txt").read_text() == "leaf\n"
    assert not (work / "inner" / "leaf" / "later.txt").exists()
    assert _git("rev-parse", "HEAD", cwd=work / "inner" / "leaf", env=env).strip() == pinned_leaf
    # and nothing was left in the configuration of the checkout
    assert not re.search(r"insteadof", (work / ".git" / "config").read_text(), re.IGNORECASE)
