"""Issue 37: the e2e world builds an NGC-based stage chain against a local stand-in for the
NGC base (tests/e2e/world.py ``ngc_stand_in``: Ubuntu 24.04, Python 3.12 and a torch that is
only the version recipes/bases-ngc.yaml names), served from the world's registry as an
air-gapped site mirrors nvcr.io.

``mlcc build --chain`` resolves the base's tag to the manifest the registry serves, builds the
stack stage (the virtual environment over the base's packages; no CUDA install, no framework
stage) FROM that digest and the benchmark stage on it, and records the digest in the build
history, in the image's stack.json and in its base-digest annotation; ``mlcc verify`` then
finds the image holding what its manifest says came with the base.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from mlcc.image.content import STACK_FILE, read_from_registry
from mlcc.image.reference import parse_reference
from mlcc.image.registry import Registry
from tests.e2e.conftest import World, mlcc
from tests.e2e.test_build import _tag
from tests.e2e.world import ngc_stand_in
from tests.unit.simple_index import IndexServer, serve

RECIPE = """kind: benchmark
schema_version: 1
name: e2e-ngc
title: mlcc end-to-end probe on an NGC base (test only)
suite: mlcc tests
sources:
  mlcc-tests: "tests/e2e in the mlcc repository"
constraints:
  accelerators: [cuda]
  arches: [x86_64]
  requires: [nccl]
  bases: [ngc-pytorch-25.09]
  gpus: {min: 1, reference: 1}
source: [mlcc-tests]
verified: true
build:
  workdir: /workspace/ngc
  packages:
    rhel: []
    ubuntu: []
  steps: []
  env:
    LOGDIR: /results
  entrypoint: [python]
  writable: [/results]
  datasets: []
  quality_target: none (a test fixture)
  source_ids: [mlcc-tests]
  verified: true
"""


@pytest.fixture
def tooling_index(world: World) -> Iterator[IndexServer]:
    """A local package index with the pip, setuptools and wheel recipes/tools.yaml pins for
    Python 3.12 (the environment step installs them): downloaded once into the e2e cache,
    served on 127.0.0.1, as an air-gapped site serves PyPI."""
    from mlcc.kb import load

    tooling = load(str(world.recipes)).python_tooling["3.12"]
    pins = [f"pip=={tooling.pip}", f"setuptools=={tooling.setuptools}", f"wheel=={tooling.wheel}"]
    folder = Path(os.environ.get("MLCC_E2E_CACHE", world.root / "cache")) / "wheels-py3.12"
    marker = folder / ("downloaded " + " ".join(pins))
    if not marker.exists():  # with their dependencies (wheel needs packaging), for Python 3.12
        command = [sys.executable, "-m", "pip", "download", "--only-binary=:all:", "--python-version", "3.12"]
        subprocess.run([*command, "-d", str(folder), *pins], check=True, capture_output=True, timeout=300)
        marker.write_text("")
    for server in serve():
        for wheel in sorted(folder.glob("*.whl")):
            body = wheel.read_bytes()
            server.add(f"/files/{wheel.name}", body, "application/octet-stream")
            project = wheel.name.split("-")[0].lower()
            sha = hashlib.sha256(body).hexdigest()
            link = f'<a href="../../files/{wheel.name}#sha256={sha}">{wheel.name}</a>'
            server.add(f"/simple/{project}/", f"<html><body>{link}</body></html>".encode())
        yield server


def test_an_ngc_stage_chain_builds_on_the_stand_in_and_records_its_digest(
    world: World, tmp_path: Path, tooling_index: IndexServer
) -> None:
    base = ngc_stand_in(world)
    ref = parse_reference(base)
    registry = Registry(ref.registry, tls_verify=False)
    served = registry.manifest(ref.repository, "25.09-py3")
    assert served is not None
    recipes = tmp_path / "recipes"
    shutil.copytree(world.recipes, recipes)
    (recipes / "benchmarks" / "e2e-ngc.yaml").write_text(RECIPE)
    log = tmp_path / "build.log"
    built = mlcc(
        world,
        "--recipes",
        str(recipes),
        "build",
        "e2e-ngc",
        "--base-image",
        base,
        "--backend",
        "buildah",
        "--chain",
        "--network",
        "host",  # the environment's pip, setuptools and wheel come from the local index
        "--pip-index-url",
        f"{tooling_index.url}/simple",
        "--push",
        "--registry",
        f"{world.registry.host}/ngc",
        "--no-tls-verify",
        "--log",
        str(log),
    )
    assert built.code == 0, built.err[-4000:]
    text = log.read_text()
    assert f"base image {base} is {served.digest}" in text  # the tag, resolved at build time
    assert "mlcc: building the stack stage" in text and "framework stage" not in text
    assert "/simple/pip/" in tooling_index.hits
    image = _tag(built.out)

    # the image's stack.json names the base manifest the registry served
    pushed = parse_reference(image)
    [content] = read_from_registry(Registry(pushed.registry, tls_verify=False), pushed)
    stack = json.loads(content.files[STACK_FILE])
    assert stack["base"]["digest"] == served.digest
    assert (
        stack["base"]["image"] == base
        and stack["base"]["default_image"] == "nvcr.io/nvidia/pytorch:25.09-py3"
    )
    assert stack["base"]["provides"] == ["cuda", "cudnn", "nccl", "python", "framework"]
    assert content.labels["org.opencontainers.image.base.digest"] == served.digest

    # the build history records it
    rows = json.loads(mlcc(world, "--recipes", str(recipes), "history", "e2e-ngc", "--json").out)
    assert rows[0]["status"] in ("built", "pushed") and rows[0]["base_digest"] == served.digest

    # the image holds what its manifest says came with the base: Python 3.12 and its torch
    verified = mlcc(world, "--recipes", str(recipes), "verify", image, "--no-tls-verify")
    assert verified.code == 0, verified.out + verified.err[-4000:]
