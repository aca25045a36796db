"""The base image under its tag, against a real registry and real builds.

A tag moved to another image (the world's ``drifted`` base) is a new build input: the
next build does not skip, and says the tag moved. A ``--base-image`` whose
/etc/os-release is another release than the stack's is refused before anything builds.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.e2e.conftest import World, mlcc
from tests.e2e.test_build import _args, _tag
from tests.e2e.world import BASE_TAG


def _run(world: World, *command: str) -> str:
    done = subprocess.run(
        list(command), capture_output=True, text=True, check=True, env={**os.environ, **world.env}
    )
    return done.stdout.strip()


def _point(world: World, tag: str, source: str) -> None:
    _run(
        world,
        "skopeo",
        "copy",
        "--all",
        "--src-tls-verify=false",
        "--dest-tls-verify=false",
        f"docker://{source}",
        f"docker://{tag}",
    )


def test_a_moved_base_tag_triggers_a_rebuild_with_the_reason(world: World, tmp_path: Path) -> None:
    moving = f"{world.registry.host}/e2e/rpmbase:moving"
    _point(world, moving, world.stage.base_image)
    history = str(tmp_path / "history.sqlite")
    args = [*_args(world, "--backend", "buildah", registry=f"{world.registry.host}/moved", base_image=moving)]
    args += ["--history", history]

    first = mlcc(world, *args)
    assert first.code == 0, first.err[-3000:]
    assert "built in" in first.out
    again = mlcc(world, *args)
    assert again.code == 0 and "skipped" in again.out, again.err[-2000:]
    assert _tag(again.out) == _tag(first.out)

    _point(world, moving, world.drifted_base)  # the publisher rebuilt the tag
    moved = mlcc(world, *args)
    assert moved.code == 0, moved.err[-3000:]
    assert "built in" in moved.out and "skipped" not in moved.out
    assert f"base image {moving} moved from sha256:" in moved.err
    assert _tag(moved.out) != _tag(first.out)

    shown = json.loads(mlcc(world, "inspect", _tag(moved.out), "--no-tls-verify", "--json").out)
    digest = shown["labels"]["org.opencontainers.image.base.digest"]
    assert digest.startswith("sha256:") and f"to {digest}" in moved.err
    assert shown["stack"]["base"]["digest"] == digest
    rows = json.loads(mlcc(world, "history", "--history", history, "--json").out)
    assert rows[0]["base_digest"] == digest and "moved from" in rows[0]["reason"]
    assert len({r["base_digest"] for r in rows}) == 2


def test_a_base_image_of_another_release_is_refused(world: World) -> None:
    source = f"{world.registry.host}/e2e/rpmbase:{BASE_TAG}-x86_64"
    container = _run(world, "buildah", "from", "--tls-verify=false", f"docker://{source}")
    release = world.root / "os-release-9"
    release.write_text('NAME="mlcc test base"\nID="rhel"\nID_LIKE="fedora"\nVERSION_ID="9.5"\n')
    nine = f"{world.registry.host}/e2e/rpmbase:nine"
    try:
        _run(world, "buildah", "copy", container, str(release), "/etc/os-release")
        _run(world, "buildah", "commit", "--quiet", container, nine)
        _run(world, "buildah", "push", "--quiet", "--tls-verify=false", nine)
    finally:
        _run(world, "buildah", "rm", container)
    refused = mlcc(world, *_args(world, "--backend", "buildah", base_image=nine))
    assert refused.code == 2, refused.out + refused.err[-2000:]
    assert "VERSION_ID 9.5, the stack is for ubi8 (release 8)" in refused.err
    assert "built in" not in refused.out
