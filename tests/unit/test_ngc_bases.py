"""NVIDIA's NGC framework images as bases: their contents are data, a benchmark names them
with ``constraints.bases``, and no other benchmark ever builds on them."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlcc.errors import RecipeError
from mlcc.kb import load
from mlcc.kb.model import UNCONFIRMED, KnowledgeBase

NGC_BASES = (
    "ngc-pytorch-25.01",
    "ngc-pytorch-25.03",
    "ngc-pytorch-25.04",
    "ngc-pytorch-25.09",
    "ngc-dgl-25.03",
)

# A benchmark on NGC's PyTorch 25.09 (the reference) and 25.04: the framework comes with the base.
NGC_PROBE = """\
kind: benchmark
schema_version: 1
name: ngc-probe
title: a probe on NGC bases (test only)
suite: mlcc tests
sources:
  mlcc-tests: "tests/unit in the mlcc repository"
constraints:
  accelerators: [cuda]
  arches: [x86_64, aarch64]
  requires: [nccl]
  bases: [ngc-pytorch-25.09, ngc-pytorch-25.04]
  gpus: {min: 1, reference: 4}
source: [mlcc-tests]
verified: true
build:
  workdir: /workspace/probe
  packages:
    rhel: [openmpi-devel]
    ubuntu: [libopenmpi-dev]
  steps:
    - pip: [numpy==2.1.3]
  env:
    LOGDIR: /results
  entrypoint: [python3, probe.py]
  writable: [/results]
  datasets: []
  quality_target: none (a test fixture)
  source_ids: [mlcc-tests]
  verified: true
"""


def write_probe(recipes: Path, text: str = NGC_PROBE) -> Path:
    """Add the NGC probe benchmark to a recipes folder; returns the recipe's path."""
    path = recipes / "benchmarks" / "ngc-probe.yaml"
    path.write_text(text)
    return path


def _load_error(recipes: Path) -> RecipeError:
    with pytest.raises(RecipeError) as caught:
        load(str(recipes), use_cache=False)
    return caught.value


def test_ngc_bases_carry_their_contents_as_data(kb: KnowledgeBase) -> None:
    for name in NGC_BASES:
        base = kb.base(name)
        assert base.contents is not None and base.provides_framework
        assert base.arches == ("x86_64", "aarch64")
        assert base.family == "ubuntu" and base.contents.os.startswith("Ubuntu 24.04")
        assert base.contents.python == base.python_default == "3.12"
        assert base.prov.origin.startswith("recipes/bases-ngc.yaml:")
        # the PyTorch build strings are corroborated only: they stay unverified
        assert "contents.frameworks" in base.prov.unverified_fields
    pytorch = kb.base("ngc-pytorch-25.09")
    assert pytorch.ref == "nvcr.io/nvidia/pytorch:25.09-py3"
    assert pytorch.contents is not None
    assert (pytorch.contents.cuda, pytorch.contents.cuda_release) == ("13.0.1.012", "13.0.1")
    assert pytorch.contents.framework.name == "pytorch"
    assert pytorch.contents.framework.version == "2.9.0a0+50eac811a6"
    assert dict(pytorch.contents.driver_ran) == {"kernel": "580.82.07", "user_mode": "580.82.07"}
    dgl = kb.base("ngc-dgl-25.03")
    assert dgl.ref == "nvcr.io/nvidia/dgl:25.03-py3"
    assert dgl.contents is not None
    assert [(f.name, f.version) for f in dgl.contents.frameworks] == [
        ("dgl", UNCONFIRMED),
        ("pytorch", "2.7.0a0+7c8ec84dab"),
    ]


def test_a_library_the_benchmark_image_replaced_is_unverified_for_the_base(kb: KnowledgeBase) -> None:
    # NVIDIA's 25.09 NeMo Dockerfile installs cuDNN 9.13.1.26 and builds NCCL 2.28.3 over the
    # base's: the system JSON's values are not the base's own
    assert {"contents.cudnn", "contents.nccl"} <= set(kb.base("ngc-pytorch-25.09").prov.unverified_fields)
    assert "contents.nccl" not in kb.base("ngc-pytorch-25.04").prov.unverified_fields


def test_ubi_bases_carry_no_contents(kb: KnowledgeBase) -> None:
    assert all(base.contents is None for base in kb.bases if base.name not in NGC_BASES)


def test_benchmark_names_the_bases_it_builds_on(recipes_copy: Path) -> None:
    write_probe(recipes_copy)
    kb = load(str(recipes_copy), use_cache=False)
    bench = kb.benchmarks["ngc-probe"]
    assert bench.bases == ("ngc-pytorch-25.09", "ngc-pytorch-25.04")
    assert bench.framework is None
    assert bench.origin_of("bases").startswith("recipes/benchmarks/ngc-probe.yaml:")


def test_an_unknown_base_in_a_benchmark_is_refused_with_its_line(recipes_copy: Path) -> None:
    path = write_probe(recipes_copy, NGC_PROBE.replace("ngc-pytorch-25.04]", "ngc-pytorch-24.12]"))
    error = _load_error(recipes_copy)
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "bases:" in text)
    assert str(error).startswith(f"recipes/benchmarks/ngc-probe.yaml:{line}")
    assert "unknown base 'ngc-pytorch-24.12'" in str(error)
    assert "ngc-pytorch-25.09" in str(error)  # the hint names the known bases


def test_a_framework_the_ngc_base_does_not_carry_is_refused(recipes_copy: Path) -> None:
    framework = "  framework: {name: tensorflow, versions: '>=1'}\n"
    text = NGC_PROBE.replace("  bases: [ngc-pytorch-25.09", framework + "  bases: [ngc-pytorch-25.09")
    write_probe(recipes_copy, text)
    error = _load_error(recipes_copy)
    assert "carries pytorch, not the framework tensorflow" in str(error)


def test_an_image_base_whose_python_is_not_its_default_is_refused(recipes_copy: Path) -> None:
    path = recipes_copy / "bases-ngc.yaml"
    text = path.read_text()
    path.write_text(text.replace('      python: "3.12"\n', '      python: "3.11"\n', 1))
    error = _load_error(recipes_copy)
    assert "recipes/bases-ngc.yaml:" in str(error)
    assert "the image's Python 3.11 is not the base's default Python 3.12" in str(error)
