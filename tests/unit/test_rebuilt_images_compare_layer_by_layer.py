"""Two saved images of one stack compare as identical, or name the first layer and the
paths in it that differ and how: what a reproducibility check and a rebuild print."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Dict, Tuple

from mlcc.image.compare import compare_images
from tests.oci_layout import oci_layout


def _layer(files: Dict[str, Tuple[bytes, int]]) -> bytes:
    """A plain tar layer of ``files`` (path -> (bytes, mtime)), the same bytes every time."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, (data, mtime) in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), mtime
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


EPOCH = 315532800
BASE = _layer({"usr/bin/python3": (b"ELF", EPOCH)})
STEP = {"opt/venv/lib/site.py": (b"print(1)\n", EPOCH), "etc/mlcc/stack.json": (b"{}", EPOCH)}


def test_the_same_layers_are_one_image(tmp_path: Path) -> None:
    first = oci_layout(tmp_path / "a", [BASE, _layer(STEP)], labels={})
    second = oci_layout(tmp_path / "b", [BASE, _layer(STEP)], labels={})
    comparison = compare_images(first, second)
    assert comparison.identical
    assert comparison.describe() == [f"identical: {comparison.first}"]


def test_a_rebuild_names_the_first_differing_layer_and_its_paths(tmp_path: Path) -> None:
    logged = {
        **STEP,
        "opt/venv/lib/site.py": (b"print(1)\n", EPOCH + 7),  # a time the engine did not rewrite
        "var/log/dnf.log": (b"built at 12:00\n", EPOCH),  # a log the clean step left
    }
    later = _layer({"usr/local/bin/run": (b"#!/bin/sh\n", EPOCH)})
    first = oci_layout(tmp_path / "a", [BASE, _layer(STEP), later], labels={}, created="1980-01-01T00:00:00Z")
    second = oci_layout(
        tmp_path / "b", [BASE, _layer(logged), later], labels={}, created="2026-12-07T05:00:00Z"
    )
    comparison = compare_images(first, second)
    assert not comparison.identical
    assert comparison.layer == 1  # the bottom layer is the same base
    assert comparison.config_fields == ("created",)
    assert [str(p) for p in comparison.paths] == [
        "/opt/venv/lib/site.py (time)",
        "/var/log/dnf.log (only in second)",
    ]
    text = "\n".join(comparison.describe())
    assert "first differing layer: 2" in text and "/var/log/dnf.log (only in second)" in text


def test_an_oci_archive_compares_like_its_layout(tmp_path: Path) -> None:
    folder = oci_layout(tmp_path / "a", [BASE], labels={})
    archive = tmp_path / "a.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(folder, arcname=".")
    other = oci_layout(tmp_path / "b", [BASE, _layer(STEP)], labels={})
    comparison = compare_images(archive, other)
    assert comparison.layer == 1 and comparison.layer_digests[0] is None
    assert {str(p) for p in comparison.paths} == {
        "/etc/mlcc/stack.json (only in second)",
        "/opt/venv/lib/site.py (only in second)",
    }


def test_a_differing_config_names_the_history_entry_and_field(tmp_path: Path) -> None:
    steps = [{"created": "1980-01-01T00:00:00Z", "created_by": "RUN dnf install ..."}]
    later = [{"created": "1980-01-01T00:00:00Z", "created_by": "RUN dnf install ... && ldconfig"}]
    first = oci_layout(tmp_path / "a", [BASE], labels={}, history=steps)
    second = oci_layout(tmp_path / "b", [BASE], labels={}, history=later)
    comparison = compare_images(first, second)
    assert comparison.config_fields == ("history[0].created_by",) and comparison.layer is None
