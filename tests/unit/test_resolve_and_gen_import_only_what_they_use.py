"""`mlcc resolve` and `mlcc gen` start without the build engines and their clients: the
modules a command imports are read from ``python -X importtime`` of a real process, so
an import that creeps back in (a shared CLI module importing mlcc.engines) fails here
rather than as a slower start-up in perf/."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Set

import pytest

from tests.conftest import REPO

# Never needed to resolve a stack or write its files: the engines (and the Docker SDK,
# Kubernetes client and sh module only they use), and the published set that only
# `gen --all` reads (recipes/matrix.yaml and its schema check).
NOT_IMPORTED = ("mlcc.engines", "docker", "kubernetes", "sh")
NOT_IMPORTED_MODULES = ("mlcc.app.published_set", "mlcc.matrix")
IMPORTED = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$")


def _imported(args: List[str], cwd: Path, extra_env: Optional[Dict[str, str]] = None) -> Set[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), **(extra_env or {})}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "mlcc", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = {m.group(1) for m in map(IMPORTED.match, proc.stderr.splitlines()) if m}
    assert "mlcc.cli" in names, "importtime lists what the command imported"
    return names


@pytest.mark.parametrize(
    "args",
    [
        ["resolve", "nccl-tests", "--cuda", "12.6", "--base", "ubi8"],
        ["gen", "nccl-tests", "--cuda", "12.6", "--base", "ubi8", "-o", "out"],
        ["gen", "maskrcnn", "--cuda", "10.1", "--only", "openshift", "-o", "out"],
    ],
)
def test_resolve_and_gen_never_import_the_engines(args: List[str], tmp_path: Path) -> None:
    names = _imported(args, tmp_path)
    unwanted = sorted(
        n
        for n in names
        if n.split(".")[0] in NOT_IMPORTED or n.startswith("mlcc.engines") or n in NOT_IMPORTED_MODULES
    )
    assert unwanted == [], f"mlcc {args[0]} imports {unwanted}"


def test_build_does_import_the_engines(tmp_path: Path) -> None:
    # the check above can fail: the same reading sees mlcc.engines where it is used
    assert "mlcc.engines" in _imported(["build", "--help"], tmp_path)


def test_gen_all_does_import_the_published_set(tmp_path: Path) -> None:
    # likewise for the published set: `gen --all` reads the matrix through it
    names = _imported(["gen", "--all", "--only", "openshift", "-o", "out"], tmp_path)
    assert {"mlcc.app.published_set", "mlcc.matrix"} <= names


# What only some paths of a command use, imported where it is used: the knowledge-base
# cache's writer (tempfile, and through it shutil and random: a warm start only reads),
# pathlib (urllib.parse, ipaddress: resolve takes no path), the terminal's width (shutil:
# no table in --json), and packaging.utils (packaging.tags, logging, subprocess, platform:
# the knowledge base's build records the PEP 503 names a runtime image's build-only
# uninstall compares, so a warm gen asks packaging only of an install no lock file has).
RESOLVE_JSON_NEVER = ("tempfile", "shutil", "random", "pathlib", "urllib.parse", "packaging.utils", "logging")
GEN_NEVER = (
    "packaging.utils",
    "packaging.tags",
    "logging",
    "subprocess",
    "importlib.resources",
    # the URL checks of a --git-uri, which gen without one never runs
    "mlcc.secrets",
)


def test_a_warm_resolve_json_imports_no_cache_writer_paths_or_tables(tmp_path: Path) -> None:
    _imported(["resolve", "nccl-tests", "--cuda", "12.6", "--base", "ubi8"], tmp_path)  # the cache is warm
    names = _imported(["resolve", "maskrcnn", "--cuda", "10.1", "--json"], tmp_path)
    assert sorted(set(RESOLVE_JSON_NEVER) & names) == []


def test_gen_of_a_devel_image_never_imports_packaging_utils(tmp_path: Path) -> None:
    names = _imported(
        ["gen", "nccl-tests", "--cuda", "12.6", "--base", "ubi8", "--flavour", "devel", "-o", "out"], tmp_path
    )
    assert sorted(set(GEN_NEVER) & names) == []


def test_a_warm_gen_of_a_runtime_image_never_imports_packaging_utils(tmp_path: Path) -> None:
    # maskrcnn's runtime image uninstalls cmake and ninja after its build (recipes/tools.yaml
    # build_only): the names it compares were recorded when the knowledge base was built
    args = ["gen", "maskrcnn", "--cuda", "10.1", "--flavour", "runtime", "-o", "out"]
    _imported(args, tmp_path)  # the knowledge-base cache is warm
    names = _imported(args, tmp_path)
    assert sorted(set(GEN_NEVER) & names) == []
    dockerfile = (tmp_path / "out" / "maskrcnn" / "cuda10.1-cudnn7-ubi8-x86_64" / "Dockerfile").read_text()
    assert "pip uninstall -y cmake ninja" in dockerfile


def test_a_cold_gen_does_import_packaging_utils(tmp_path: Path) -> None:
    # the checks above can fail: the same reading sees packaging.utils where it is used,
    # building the knowledge base (its cache in an empty folder) to record the names
    env_cache = {"MLCC_CACHE_DIR": str(tmp_path / "cache")}
    names = _imported(["gen", "maskrcnn", "--cuda", "10.1", "-o", "out"], tmp_path, env_cache)
    assert "packaging.utils" in names


def test_a_git_uri_does_import_the_url_checks(tmp_path: Path) -> None:
    # the check above can fail: a --git-uri given is checked by mlcc.secrets, where it is used
    args = ["gen", "maskrcnn", "--cuda", "10.1", "--git-uri", "https://git.example.com/a.git", "-o", "out"]
    assert "mlcc.secrets" in _imported(args, tmp_path)


def test_the_knowledge_bases_records_are_made_without_compiling_annotations() -> None:
    # typing.NamedTuple compiles every string annotation (``from __future__ import
    # annotations``) into a ForwardRef when the class is made; every command that loads the
    # knowledge base makes these classes, so their annotations are evaluated objects
    from mlcc.kb import model, pip_locks

    records = [
        value
        for module in (model, pip_locks)
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, tuple) and hasattr(value, "_fields")
    ]
    assert len(records) > 40
    strings = sorted(
        f"{record.__name__}.{name}"
        for record in records
        for name, annotation in record.__annotations__.items()
        if isinstance(annotation, str)
    )
    assert strings == []
