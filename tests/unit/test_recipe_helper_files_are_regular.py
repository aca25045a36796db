"""A recipe's ``<name>.d/`` folder is read as regular files only: a link, a FIFO or a device
there would put a file from outside the recipes (the host's passwd) into the generated folder
and, by its COPY, into the image; each is a recipe error naming the file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def _gen(cli, recipes: Path, out: Path):  # type: ignore[no-untyped-def]
    return cli("--recipes", str(recipes), "gen", "maskrcnn", "--cuda", "10.1", "-o", str(out))


def test_a_symlinked_helper_script_is_refused(cli, recipes_copy: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    secret = tmp_path / "secret"
    secret.write_text("root:x:0:0:SECRET-LINE\n")
    helper = recipes_copy / "benchmarks" / "maskrcnn.d" / "link-coco.sh"
    helper.unlink()
    helper.symlink_to(secret)
    result = _gen(cli, recipes_copy, tmp_path / "out")
    assert result.code == 2, result
    assert "link-coco.sh" in result.err and "link" in result.err
    assert "Traceback" not in result.err
    written = "".join(p.read_text() for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert "SECRET-LINE" not in written


def test_a_symlinked_helper_folder_is_refused(cli, recipes_copy: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = recipes_copy / "benchmarks" / "maskrcnn.d"
    elsewhere = tmp_path / "elsewhere"
    folder.rename(elsewhere)
    folder.symlink_to(elsewhere)
    result = _gen(cli, recipes_copy, tmp_path / "out")
    assert result.code == 2 and "maskrcnn.d" in result.err, result


def test_a_fifo_helper_script_is_refused_without_blocking(cli, recipes_copy: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    helper = recipes_copy / "benchmarks" / "maskrcnn.d" / "link-coco.sh"
    helper.unlink()
    os.mkfifo(helper)
    result = _gen(cli, recipes_copy, tmp_path / "out")
    assert result.code == 2 and "link-coco.sh" in result.err and "regular file" in result.err, result


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
def test_a_device_helper_script_is_refused(cli, recipes_copy: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    helper = recipes_copy / "benchmarks" / "maskrcnn.d" / "link-coco.sh"
    helper.unlink()
    helper.symlink_to("/dev/null")
    result = _gen(cli, recipes_copy, tmp_path / "out")
    assert result.code == 2 and "link-coco.sh" in result.err, result
