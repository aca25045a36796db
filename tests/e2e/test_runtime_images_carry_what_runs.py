"""Flavours against a real engine and registry: a benchmark whose build compiles a shared
library and a program (tests/e2e/recipes/benchmarks/e2e-compiled) builds as a devel image
and as a runtime one; both run its smoke program; the runtime image holds no compiler, and
mlcc verify says so; it is smaller than the devel image.

The world's gcc package is a real compiler (Debian's tcc, with the C library's headers), so
what the runtime stage copies is really compiled, and really runs without it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Dict, List

from mlcc.image.reference import parse_reference
from tests.e2e.conftest import World, mlcc


def _build(world: World, flavour: str) -> str:
    built = mlcc(
        world,
        "build",
        "e2e-compiled",
        "--flavour",
        flavour,
        "--base",
        "ubi8",
        "--base-image",
        world.stage.base_image,
        "--mirror",
        world.stage.mirror,
        "--backend",
        "podman",
        "--push",
        "--registry",
        f"{world.registry.host}/flavours",
        "--no-tls-verify",
    )
    assert built.code == 0, built.err[-4000:] + built.out
    return next(line.split()[-1] for line in built.out.splitlines() if "content tag" in line)


def _podman(world: World, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["podman", *args], capture_output=True, text=True, env={**os.environ, **world.env}, timeout=600
    )


def _inspected(world: World, reference: str) -> Dict[str, object]:
    shown = mlcc(world, "inspect", reference, "--no-tls-verify", "--json")
    assert shown.code == 0, shown.err
    document = json.loads(shown.out)
    assert isinstance(document, dict)
    return document


def test_devel_and_runtime_images_both_run_and_only_runtime_is_compiler_free(
    world: World, tmp_path: Path
) -> None:
    references: Dict[str, str] = {flavour: _build(world, flavour) for flavour in ("devel", "runtime")}
    documents = {flavour: _inspected(world, ref) for flavour, ref in references.items()}
    sizes: Dict[str, List[int]] = {}
    for flavour, reference in references.items():
        pulled = _podman(world, "pull", "--tls-verify=false", reference)
        assert pulled.returncode == 0, pulled.stderr
        ran = _podman(world, "run", "--rm", reference)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert "e2e-compiled smoke: extension answers 42" in ran.stdout
        verified = mlcc(world, "verify", reference, "--no-tls-verify")
        assert verified.code == 0, verified.out + verified.err
        document = documents[flavour]
        measured = document["sizes"]
        assert isinstance(measured, dict)
        sizes[flavour] = [int(measured["compressed"]), int(measured["layers"])]

    runtime, devel = documents["runtime"], documents["devel"]
    assert isinstance(runtime["labels"], dict) and runtime["labels"]["io.mlcc.flavour"] == "runtime"
    assert isinstance(devel["labels"], dict) and devel["labels"]["io.mlcc.flavour"] == "devel"
    assert devel["labels"]["io.mlcc.variant"] == runtime["labels"]["io.mlcc.variant"] + "-devel"
    assert isinstance(runtime["stack"], dict) and runtime["stack"]["flavour"] == "runtime"
    assert parse_reference(references["runtime"]).repository.endswith("e2e-compiled")
    runtime_record, devel_record = runtime["installed"], devel["installed"]
    assert isinstance(runtime_record, dict) and isinstance(devel_record, dict)
    assert runtime_record["compilers"] == [] and runtime_record["nvcc"] is None
    assert "/usr/bin/gcc" in devel_record["compilers"] and devel_record["nvcc"]
    # the runtime stage installs CUDA's runtime packages only: no cuda-minimal-build (nvcc)
    assert not any(name.startswith("cuda-minimal-build") for name in runtime_record["packages"])
    assert any(name.startswith("cuda-minimal-build") for name in devel_record["packages"])
    assert sizes["runtime"][0] < sizes["devel"][0], sizes
    print(f"e2e-compiled sizes (compressed bytes, layers): {sizes}")

    # a devel image that claimed to be runtime fails verify: its compilers are listed
    tampered = f"{world.registry.host}/flavours/e2e-compiled:claims-runtime"
    container = _podman(world, "create", references["devel"]).stdout.strip()
    claimed = tmp_path / "stack.json"
    claimed.write_text(json.dumps({**devel["stack"], "flavour": "runtime"}))  # type: ignore[dict-item]
    for step in (
        ["cp", str(claimed), f"{container}:/etc/mlcc/stack.json"],
        ["commit", "-q", container, tampered],
        ["push", "-q", "--tls-verify=false", tampered],
        ["rm", container],
    ):
        done = _podman(world, *step)
        assert done.returncode == 0, done.stderr
    refused = mlcc(world, "verify", tampered, "--no-tls-verify")
    assert refused.code == 6, refused.out + refused.err
    assert "compilers: expected none (a runtime image)" in refused.out and "/usr/bin/gcc" in refused.out
