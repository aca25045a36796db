"""`mlcc kb check` holds a pip framework build's Pythons, arches and cuda/cudnn/bundles claims
against its wheel: the wheel's tags, and the sonames its shared libraries link (DT_NEEDED).

The corrections-3 errors (torch 2.2.2 and 2.4.1 claiming Python 3.6-3.9; MXNet 1.8.0 and 1.9.1
claiming cuDNN >= 7.6 for wheels that load libcudnn.so.7 or .so.8) are found in the recipe as
it was, from the real wheels' recorded facts (recipes/index-files.json and
recipes/wheel-files.json, which `mlcc kb check --record` read from PyPI): offline and fast.
"""

from __future__ import annotations

import _ctypes
import io
import re
import zipfile
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from elftools.elf.dynamic import DynamicSegment
from elftools.elf.elffile import ELFFile

from mlcc.kb import load
from mlcc.kb.model import FrameworkBuild, KnowledgeBase
from mlcc.kb.wheel import WheelReader
from mlcc.kbtools.bundles import ERROR, NOTE
from mlcc.kbtools.check import run
from mlcc.kbtools.offline import RecordedIndex, lint_pins, load_record, load_wheel_record
from mlcc.kbtools.wheels import linked_findings

from ..conftest import RECIPES
from .simple_index import IndexServer, serve

BEFORE = Path(__file__).resolve().parents[1] / "data" / "wheel-claims-before-corrections-3"


def _as_before(recipes: Path) -> None:
    """Put the releases of tests/data/wheel-claims-before-corrections-3 back over the current ones."""
    for name in ("mxnet.yaml", "pytorch.yaml"):
        old = (BEFORE / name).read_text()
        path = recipes / "frameworks" / name
        text = path.read_text()
        for block in re.split(r"(?m)^(?=- version: )", old)[1:]:
            version = block.split("\n", 1)[0].removeprefix("- version: ")
            start = text.index(f"- version: {version}\n")
            end = text.find("\n- version:", start + 1)
            text = text[:start] + block + text[end + 1 if end >= 0 else len(text) :]
        path.write_text(text)


def _line(recipes: Path, name: str, version: str, needle: str) -> List[str]:
    """The recipe lines in one release that start with ``needle`` (after indentation)."""
    lines = (recipes / "frameworks" / name).read_text().splitlines()
    start = lines.index(f"- version: {version}")
    found = []
    for number, line in enumerate(lines[start + 1 :], start + 2):
        if line.startswith("- version:"):
            break
        if line.strip().startswith(needle):
            found.append(f"frameworks/{name}:{number}")
    return found


def _offline_wheel_findings(kb: KnowledgeBase, recipes: Path) -> List[Any]:
    index = load_record(str(RECIPES))
    wheels = load_wheel_record(str(RECIPES))
    assert index is not None and wheels is not None
    report = run(kb, [], RecordedIndex(index), all_builds=False, recorded_wheels=wheels)
    return [f for f in report.findings if f.subject == "wheel"]


def test_the_corrections_3_framework_errors_are_findings_in_the_recipe_as_it_was(recipes_copy: Path) -> None:
    _as_before(recipes_copy)
    kb = load(str(recipes_copy))
    errors = [f for f in _offline_wheel_findings(kb, recipes_copy) if f.severity == ERROR]
    where = {f.origin.split("recipes/", 1)[-1] for f in errors}
    python_lines = _line(recipes_copy, "pytorch.yaml", "2.2.2", "python:") + _line(
        recipes_copy, "pytorch.yaml", "2.4.1", "python:"
    )
    cudnn_lines = _line(recipes_copy, "mxnet.yaml", "1.8.0", "cudnn:") + _line(
        recipes_copy, "mxnet.yaml", "1.9.1", "cudnn:"
    )
    assert len(python_lines) == 2 and len(cudnn_lines) == 8
    assert where == set(python_lines) | set(cudnn_lines)
    by_line = {f.origin.split("recipes/", 1)[-1]: f.message for f in errors}
    assert "Python 3.6, 3.7" in by_line[python_lines[0]] and "cp38" in by_line[python_lines[0]]
    # cu100 / cu101 load cuDNN 7, so '>=7.6' admits an 8.x they cannot load; cu102 and later
    # load cuDNN 8, so it admits the 7.x
    assert "libcudnn.so.7" in by_line[cudnn_lines[0]] and "admits cuDNN 8" in by_line[cudnn_lines[0]]
    assert "libcudnn.so.8" in by_line[cudnn_lines[3]] and "admits cuDNN 7" in by_line[cudnn_lines[3]]
    # the same judgement offline: mlcc lint recipes reports them at the same lines
    linted = {f"{Path(f.path).parent.name}/{Path(f.path).name}:{f.line}" for f in lint_pins(recipes_copy)}
    assert set(python_lines) | set(cudnn_lines) <= linted


def test_the_recipes_agree_with_the_wheels_they_install(kb: KnowledgeBase) -> None:
    found = _offline_wheel_findings(kb, RECIPES)
    assert [f for f in found if f.severity == ERROR] == []
    wheels = load_wheel_record(str(RECIPES)) or {}
    # not vacuous: the record holds the MXNet 1.8 / 1.9 wheels' libraries, and what they link
    linked = {
        name: sorted({s for sonames in facts["needed"].values() for s in sonames if "cudnn" in s})
        for name, facts in wheels.items()
    }
    assert linked["mxnet_cu101-1.9.1-py3-none-manylinux2014_x86_64.whl"] == ["libcudnn.so.7"]
    assert linked["mxnet_cu112-1.9.1-py3-none-manylinux2014_x86_64.whl"] == ["libcudnn.so.8"]


def _build(kb: KnowledgeBase, framework: str, version: str, variant: str) -> FrameworkBuild:
    [build] = [b for b in kb.frameworks[framework].builds if b.version == version and b.variant == variant]
    return build


def test_linked_libraries_against_cuda_cudnn_and_bundles(kb: KnowledgeBase) -> None:
    cu110 = _build(kb, "mxnet", "1.8.0", "cu110")  # cuda ['11.0'], cudnn '>=8.0,<9'
    facts: Dict[str, Any] = {
        "url": "https://files.example/mxnet_cu110-1.8.0.post0-py2.py3-none-manylinux2014_x86_64.whl",
        "needed": {"mxnet/libmxnet.so": ["libcudart.so.10.1", "libcudnn.so.7", "libc.so.6"]},
    }
    found = {f.origin: f for f in linked_findings(cu110, kb, facts, set())}
    assert found[cu110.fact_origin("cuda")].severity == ERROR
    assert "links libcudart.so.10.1" in found[cu110.fact_origin("cuda")].message
    assert "admits cuDNN 8" in found[cu110.fact_origin("cudnn")].message
    # CUDA 11 keeps one runtime soname for every 11.x; what the wheel brings itself is not the system's
    facts["needed"] = {"mxnet/libmxnet.so": ["libcudart.so.11.0", "libcudnn.so.8"]}
    assert linked_findings(cu110, kb, facts, set()) == []
    assert linked_findings(cu110, kb, {**facts, "needed": {"m.so": ["libcudnn.so.7"]}}, {"cudnn"}) == []
    # a build that claims a cuDNN and an NCCL linked into its wheel, whose library loads NCCL
    static = _build(kb, "mxnet", "1.5.1", "cu90")
    facts["needed"] = {
        "mxnet/libmxnet.so": ["libcudart.so.9.0", "libnccl.so.2"],
        "big.so (not read)": ["why"],
    }
    found = {f.origin: f for f in linked_findings(static, kb, facts, set())}
    assert found[static.bundle_origin("nccl")].severity == ERROR
    assert "loads libnccl.so.2 from the system" in found[static.bundle_origin("nccl")].message
    assert found[static.prov.origin].severity == NOTE and "big.so of" in found[static.prov.origin].message


@pytest.fixture
def index() -> Iterator[IndexServer]:
    yield from serve()


def test_dt_needed_read_by_range_requests_from_a_deflated_member(index: IndexServer, tmp_path: Path) -> None:
    library = Path(_ctypes.__file__)  # a real ELF shared object of this interpreter
    with library.open("rb") as handle:
        expected = [
            str(getattr(tag, "needed", ""))
            for segment in ELFFile(handle).iter_segments("PT_DYNAMIC")
            if isinstance(segment, DynamicSegment)
            for tag in segment.iter_tags("DT_NEEDED")
        ]
    assert expected  # it links libc at least
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("demo/_lib.so", library.read_bytes())
        archive.writestr("demo/script.so", b"#!/bin/sh\n")  # named like a library, not an ELF object
    url = index.add("/files/demo-1.0-cp311-cp311-manylinux1_x86_64.whl", buffer.getvalue(), "application/zip")
    reader = WheelReader(cache=str(tmp_path))
    needed = reader.needed(url, ("demo/_lib.so", "demo/script.so"))
    assert needed == {"demo/_lib.so": expected, "demo/script.so": []}
    requests = reader.requests
    assert WheelReader(cache=str(tmp_path)).needed(url, ("demo/_lib.so", "demo/script.so")) == needed
    assert reader.requests == requests  # a second reader answers from the cache


def test_a_library_over_the_size_limit_is_left_unread_and_said_so(
    index: IndexServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("mlcc.kb.wheel.MAX_LIBRARY_BYTES", 100)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("demo/big.so", b"\x7fELF" + b"\0" * 1000)
    url = index.add("/files/demo-1.0-cp311-cp311-manylinux1_x86_64.whl", buffer.getvalue(), "application/zip")
    needed = WheelReader(cache="").needed(url, ("demo/big.so",))
    assert list(needed) == ["demo/big.so (not read)"] and "over 100" in needed["demo/big.so (not read)"][0]


def test_a_record_unread_only_for_a_library_size_is_final_online() -> None:
    """A library over the size limit stays over it: its wheel's record is used online too,
    while a library whose read failed (a deadline, the network) is asked again."""
    from mlcc.kbtools.wheels import WheelSource, _recorded

    url = "https://files.example/torch-2.8.0-cp39-cp39-manylinux_2_28_x86_64.whl"
    over = {"torch/lib/libtorch_cuda.so (not read)": ["666263951 bytes deflated, over 536870912"]}
    failed = {"torch/lib/libtorch_cuda.so (not read)": ["torch/lib/libtorch_cuda.so: not read within 600 s"]}
    for needed, used in ((over, True), (failed, False)):
        facts = {"url": url, "libraries": [], "needed": needed}
        source = WheelSource(object(), {url.rsplit("/", 1)[-1]: facts})  # type: ignore[arg-type]
        assert (_recorded(source, url) is facts) is used, needed
