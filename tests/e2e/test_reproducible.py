"""One stack, built twice from the same base digest and inputs on two empty container
storages, gives one image digest: anyone can check a pushed image by building it again.

When the digests differ, the failure names the first differing layer and the paths in it
(mlcc.image.compare): the build step, and what it left that carries the machine or the
clock."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import List

from mlcc.image.compare import compare_images
from tests.e2e import fixtures as fx
from tests.e2e.conftest import World, mlcc
from tests.e2e.test_build import _args, _tag


def test_one_stack_builds_to_one_digest_on_two_empty_storages(world: World, tmp_path: Path) -> None:
    archives: List[Path] = []
    for machine_name in ("first", "second"):
        machine = fx.containers_environment(tmp_path / machine_name, [world.registry.host])
        registry = f"{world.registry.host}/repro-{machine_name}"
        # an alias of the mirror no other test builds from, and no cache: every step runs
        args = _args(world, "--backend", "buildah", registry=registry, mirror=f"{world.stage.mirror}/a11")
        built = mlcc(world, *args, env=machine)
        assert built.code == 0, built.err[-4000:]
        archive = tmp_path / f"{machine_name}.tar"
        copied = subprocess.run(
            [
                "skopeo",
                "copy",
                "--src-tls-verify=false",
                f"docker://{_tag(built.out)}",
                f"oci-archive:{archive}",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert copied.returncode == 0, copied.stderr
        archives.append(archive)
    comparison = compare_images(*archives)
    assert comparison.identical, "\n".join(comparison.describe())
