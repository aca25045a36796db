"""Renderers read the Stack alone: the resolver puts every fact they need into it, and a
fact the knowledge base lacks is a resolver failure, never an assert in a renderer."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlcc.api import Pins, request_for
from mlcc.errors import ConflictError
from mlcc.kb import load
from mlcc.render import render
from mlcc.resolve import Resolver


def _without_ppc64le_miniforge(recipes: Path) -> None:
    tools = recipes / "tools.yaml"
    text = tools.read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if "Miniforge3-24.3.0-0-Linux-ppc64le.sh" not in line]
    edited = "\n".join(lines).replace(
        "unverified_fields: [urls.ppc64le, urls.aarch64]", "unverified_fields: [urls.aarch64]"
    )
    assert edited != text
    tools.write_text(edited + "\n", encoding="utf-8")


def test_conda_builds_carry_their_installer(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(request_for(kb, "ssd", Pins(arch="ppc64le")))
    assert stack.framework is not None and stack.framework.install.method == "conda"
    assert stack.installer is not None and stack.installer.url.endswith("-Linux-ppc64le.sh")
    # fetched through GIT_MIRROR (a GitHub release file), whose default is GitHub
    github = "https://github.com/"
    assert stack.installer.url.startswith(github)
    assert '"${GIT_MIRROR}/' + stack.installer.url[len(github) :] + '"' in render(stack).content("Dockerfile")
    assert stack.framework_module == kb.frameworks[stack.framework.framework].import_name
    assert stack.python_tooling is not None and stack.python is not None
    assert stack.python_tooling.python == stack.python.version
    assert [r.name for r in stack.repositories] == sorted(
        {"cuda"} | {lib.repo for lib in (stack.cudnn, stack.nccl) if lib is not None and lib.repo}
    )


def test_a_missing_miniforge_arch_is_a_resolver_failure(recipes_copy: Path) -> None:
    _without_ppc64le_miniforge(recipes_copy)
    kb = load(str(recipes_copy), use_cache=False)
    resolver = Resolver(kb)
    with pytest.raises(ConflictError) as raised:
        resolver.resolve(request_for(kb, "ssd", Pins(arch="ppc64le")))
    text = str(raised.value)
    assert "framework-installer" in text and "recipes/tools.yaml" in text
    # x86_64 still resolves: only the conda builds of the missing arch are excluded
    assert resolver.resolve(request_for(kb, "ssd", Pins())).arch.name == "x86_64"


def test_gen_reports_a_missing_miniforge_arch_as_a_conflict(
    recipes_copy: Path, tmp_path: Path, cli, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    _without_ppc64le_miniforge(recipes_copy)
    monkeypatch.setenv("MLCC_RECIPES", str(recipes_copy))
    out = tmp_path / "out"
    result = cli("gen", "ssd", "--arch", "ppc64le", "-o", str(out))
    assert result.code == ConflictError.exit_code, result.err
    assert "framework-installer" in result.err and "internal error" not in result.err.lower()
    assert not out.exists()  # nothing half-written
