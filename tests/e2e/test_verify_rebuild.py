"""``mlcc verify --rebuild`` rebuilds an image from its own stamped stack on the base digest
it records and compares the two: identical for an image mlcc built, and for a copy with one
file more it names that file, in the layer that carries it, and exits 6."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Dict

from tests.e2e import fixtures as fx
from tests.e2e.conftest import World, mlcc
from tests.e2e.test_build import _tag

TAMPERED = "localhost/e2e-rebuild/tampered:1"


def _buildah(machine: Dict[str, str], *args: str) -> str:
    done = subprocess.run(
        ["buildah", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **machine},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _tampered_copy(machine: Dict[str, str], image: str, scratch: Path) -> str:
    """The image with one more layer holding one more file: what a rebuild must not match."""
    extra = scratch / "tampered.txt"
    extra.write_text("not built from the stack\n")
    container = _buildah(machine, "from", "--pull-never", image)
    try:
        _buildah(machine, "copy", container, str(extra), "/opt/tampered.txt")
        _buildah(machine, "commit", container, TAMPERED)
    finally:
        _buildah(machine, "rm", container)
    return TAMPERED


def test_verify_rebuild_says_identical_and_names_a_tampered_copys_extra_file(
    world: World, tmp_path: Path
) -> None:
    machine = fx.containers_environment(tmp_path / "machine", [world.registry.host])
    # no --push: the machine's storage is empty, so every step runs (nothing is skipped)
    built = mlcc(
        world,
        "build",
        "e2e-probe",
        "--base",
        "ubi8",
        "--base-image",
        world.stage.base_image,
        "--mirror",
        world.stage.mirror,
        "--registry",
        "localhost/e2e-rebuild",
        "--backend",
        "buildah",
        "--no-tls-verify",
        "--no-history",
        env=machine,
    )
    assert built.code == 0, built.err[-4000:]
    image = _tag(built.out)

    same = mlcc(
        world,
        "verify",
        "--rebuild",
        f"local:{image}",
        "--backend",
        "buildah",
        "--no-tls-verify",
        "-q",
        env=machine,
    )
    assert same.code == 0, same.out + same.err[-4000:]
    assert same.out.startswith("identical: sha256:"), same.out

    tampered = _tampered_copy(machine, image, tmp_path)
    differs = mlcc(
        world,
        "verify",
        "--rebuild",
        f"local:{tampered}",
        "--backend",
        "buildah",
        "--no-tls-verify",
        "-q",
        "--json",
        env=machine,
    )
    assert differs.code == 6, differs.out + differs.err[-4000:]
    report = json.loads(differs.out)
    assert not report["identical"]
    assert {"path": "/opt/tampered.txt", "what": ["only in first"]} in report["paths"], report
    # the rebuilt images were removed: only the original and the tampered copy are left
    listed = _buildah(machine, "images", "--format", "{{.Name}}")
    assert "mlcc-rebuild" not in listed, listed
