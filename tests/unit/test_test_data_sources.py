"""The third-party files under tests/ are what their source notes say: every file is listed
with its upstream blob, a file said to be copied byte for byte has that blob (git's object id,
so `git hash-object` upstream and here agree), an MLPerf log kept as its `:::MLL` lines
holds nothing else, and a v2.1 log kept without some keys' lines holds only `:::MLLOG` lines
and none of those keys."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from tests.conftest import MLPERF_V06, REPO

SCHEMAS = REPO / "mlcc" / "lint" / "schemas"
DATA_README = REPO / "tests" / "data" / "README.md"
_ROW = re.compile(r"^\| `(?P<file>[^`]+)` \|(?P<cells>.*)\|\s*$")
_BLOB = re.compile(r"^`([0-9a-f]{40})`$")


def _git_blob(path: Path) -> str:
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _table(note: Path, section: str = "") -> Dict[str, Tuple[List[str], str]]:
    """file -> (the row's other cells, the blob id among them); with ``section``, only the
    rows under the ``## <section>...`` heading."""
    rows = {}
    inside = not section
    for line in note.read_text().splitlines():
        if section and line.startswith("## "):
            inside = line.startswith(f"## {section}")
        row = _ROW.match(line) if inside else None
        if row is None:
            continue
        cells = [c.strip() for c in row["cells"].split("|")]
        blobs = [m.group(1) for m in map(_BLOB.match, cells) if m]
        if blobs:  # the blob is the last id in a row (a commit may come before it)
            rows[row["file"]] = (cells, blobs[-1])
    return rows


def test_every_schema_is_listed_and_copied_byte_for_byte() -> None:
    rows = _table(SCHEMAS / "SOURCES.md")
    files = {str(p.relative_to(SCHEMAS)) for p in SCHEMAS.rglob("*.json")}
    assert files and set(rows) == files
    for name, (_, blob) in rows.items():
        assert _git_blob(SCHEMAS / name) == blob, name


def test_every_mlperf_v06_file_is_listed_and_is_the_upstream_file_or_its_mll_lines() -> None:
    rows = _table(DATA_README, "mlperf-v0.6/")
    files = {str(p.relative_to(MLPERF_V06)) for p in MLPERF_V06.rglob("*") if p.is_file()}
    configs = {f for f in files if f.startswith("NVIDIA/benchmarks/")}  # NVIDIA's config files
    assert len(files - configs) == 60 and len(configs) == 27 and set(rows) == files
    kept = {"full": 0, "MLL lines": 0}
    for name, (cells, blob) in rows.items():
        path = MLPERF_V06 / name
        kind = cells[0]
        kept[kind] += 1
        if kind == "full":
            assert _git_blob(path) == blob, name
        else:
            lines = path.read_text(encoding="utf-8").splitlines()
            assert lines and all(":::MLL" in line for line in lines), name
    assert kept == {"full": 30 + 27, "MLL lines": 30}


def test_every_v21_log_is_listed_and_is_the_upstream_file_less_the_named_keys() -> None:
    """v2.1's logs are all :::MLLOG lines; a copy without some keys' lines holds none of them."""
    folder = REPO / "tests" / "data" / "mlperf-v2.1"
    rows = _table(DATA_README, "mlperf-v2.1/")
    files = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}
    configs = {f for f in files if f.startswith("NVIDIA/benchmarks/")}  # NVIDIA's config files
    # NVIDIA's config files: Mask R-CNN's 4, BERT's and SSD's 12, ResNet-50's 6
    # and the common file each of its two folders sources, 3D U-Net's 5, RNN-T's 5 with the 10
    # hyperparameter and common files they source; RNN-T's logs are 2 folders of 10; and the
    # system descriptions of the DGX A100 (NGC 22.09) and the DGX H100
    assert len(files - configs) == 26 + 20 + 2 and len(configs) == 4 + 12 + 8 + 5 + 15 and set(rows) == files
    dropped = {
        "no iteration stats": ("tracked_stats", "throughput"),
        "no tensor inits": ("weights_initialization",),
    }
    kept = {"full": 0, "no iteration stats": 0, "no tensor inits": 0}
    for name, (cells, blob) in rows.items():
        path = folder / name
        kind = cells[0]
        kept[kind] += 1
        if kind == "full":
            assert _git_blob(path) == blob, name
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        assert lines and all(line.startswith(":::MLLOG {") for line in lines), name
        assert not any(f'"key": "{key}"' in line for line in lines for key in dropped[kind]), name
    assert kept == {"full": 1 + 2 + len(configs), "no iteration stats": 15 + 20, "no tensor inits": 10}


@pytest.mark.parametrize("name", ["nvidia_cuda.yaml", "framework_tables.yaml"])
def test_every_fact_table_names_its_upstream_sources(name: str) -> None:
    import yaml

    document = yaml.safe_load((REPO / "tests" / "data" / "facts" / name).read_text())
    for section, body in document.items():
        sources = body.get("sources")
        assert sources and all(isinstance(s, str) and s for s in sources), section


def test_every_v51_file_is_listed_and_is_the_upstream_file_less_its_iteration_stats() -> None:
    """v5.1's logs are all :::MLLOG lines, kept without their tracked_stats lines; the
    scaling.json files and system descriptions are byte for byte."""
    folder = REPO / "tests" / "data" / "mlperf-v5.1"
    rows = _table(DATA_README, "mlperf-v5.1/")
    files = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}
    assert set(rows) == files
    kept = {"full": 0, "no iteration stats": 0}
    for name, (cells, blob) in rows.items():
        path = folder / name
        kept[cells[0]] += 1
        if cells[0] == "full":
            assert _git_blob(path) == blob, name
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        assert lines and all(line.startswith(":::MLLOG {") for line in lines), name
        assert not any('"key": "tracked_stats"' in line for line in lines), name
    # 5 system descriptions and 4 scaling.json; 5 + 10 + 3 + 10 + 10 result logs
    assert kept == {"full": 5 + 4, "no iteration stats": 38}
