"""The knowledge base: it loads, every fact is sourced, and it agrees with the upstream tables
kept in tests/data/facts (NVIDIA's driver and compiler tables, TensorFlow's and PyTorch's)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from packaging.version import Version

from mlcc.kb import load
from mlcc.kb.build import iter_sources

from ..conftest import RECIPES, REPO

FACTS = REPO / "tests" / "data" / "facts"


def test_every_fact_names_a_source_and_says_whether_it_is_verified(kb) -> None:  # type: ignore[no-untyped-def]
    records = list(iter_sources(kb))
    assert len(records) > 500
    for prov in records:
        assert prov.source, prov.origin
        assert all(len(s) >= 8 for s in prov.source), prov.origin
        assert isinstance(prov.verified, bool)
        assert re.match(r"^recipes/[a-z0-9_/.-]+\.yaml:\d+$", prov.origin), prov.origin


def test_covers_what_the_issue_lists(kb) -> None:  # type: ignore[no-untyped-def]
    assert {b.name for b in kb.bases} >= {
        "rhel7",
        "ubi7",
        "ubi8",
        "ubi9",
        "centos7",
        "ubuntu1804",
        "ubuntu2004",
        "ubuntu2204",
    }
    assert set(kb.benchmarks) == {
        "maskrcnn",
        "ssd",
        "gnmt",
        "transformer",
        "resnet50",
        "minigo",
        "ncf",
        "tf_cnn_benchmarks",
        "nccl-tests",
        "retinanet-reference",  # MLCommons' reference on PyPI's PyTorch 2.x wheels (issue 36)
        "llama31_8b-pypi",  # NVIDIA's v5.1 llama31_8b code on PyPI's releases, its UBI alternative (issue 37)
        "llama31_405b-pypi",  # the same for llama31_405b v5.1 (NVIDIA's two folders install the same files)
        "llama2_70b_lora-pypi",  # and llama2_70b_lora's, on the same releases (issue 37)
    } | {name for name in kb.benchmarks if name.endswith(("-v2.1", "-v5.0", "-v5.1"))}  # and the rounds'
    assert "maskrcnn-v2.1" in kb.benchmarks
    assert set(kb.frameworks) == {"pytorch", "tensorflow", "mxnet"}
    versions = [r.version for r in kb.cuda]
    assert versions[-1] == "9.0.176" and versions[0] == "13.1.0"
    assert {b.package_manager for b in kb.bases} >= {"yum", "dnf", "apt"}
    torch = {b.version for b in kb.frameworks["pytorch"].builds}
    assert {"1.0.0", "2.5.1", "1.1.0a0+828a6a3", "2.8.0", "2.11.0"} <= torch
    assert any(b.install.method == "conda" and "ppc64le" in b.arches for b in kb.frameworks["pytorch"].builds)


def test_releases_are_unique_and_sorted_newest_first(kb) -> None:  # type: ignore[no-untyped-def]
    versions = [Version(r.version) for r in kb.cuda]
    assert versions == sorted(versions, reverse=True)
    assert len(set(versions)) == len(versions)


def test_warm_cache_returns_the_same_knowledge_base(kb, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MLCC_CACHE_DIR", str(tmp_path))
    cold = load(str(RECIPES))
    assert list(tmp_path.glob("kb-*.pickle")), "the cold load writes a cache"
    warm = load(str(RECIPES))
    assert warm == cold == load(str(RECIPES), use_cache=False)


def test_a_recipe_edit_invalidates_the_cache(recipes_copy: Path, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MLCC_CACHE_DIR", str(tmp_path / "cache"))
    before = load(str(recipes_copy))
    bases = recipes_copy / "bases.yaml"
    bases.write_text(bases.read_text().replace('tag: "8.10"', 'tag: "8.9"'))
    after = load(str(recipes_copy))
    assert before.base("ubi8").tag == "8.10" and after.base("ubi8").tag == "8.9"


def test_a_foreign_cache_file_is_not_trusted(recipes_copy: Path, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    cache = tmp_path / "cache"
    monkeypatch.setenv("MLCC_CACHE_DIR", str(cache))
    load(str(recipes_copy))
    (path,) = cache.glob("kb-*.pickle")
    path.write_bytes(b"garbage, not a pickle")
    assert load(str(recipes_copy)).base("ubi8").name == "ubi8"  # rebuilt, not fatal
    path.chmod(0o666)
    assert load(str(recipes_copy)).base("ubi8").name == "ubi8"


# --------------------------------------------------------------- agreement with the facts


@pytest.fixture(scope="module")
def cuda_facts():  # type: ignore[no-untyped-def]
    return yaml.safe_load((FACTS / "nvidia_cuda.yaml").read_text())


@pytest.fixture(scope="module")
def fw_facts():  # type: ignore[no-untyped-def]
    return yaml.safe_load((FACTS / "framework_tables.yaml").read_text())


def test_every_cuda_release_and_driver_minimum_matches_the_driver_table(kb, cuda_facts) -> None:  # type: ignore[no-untyped-def]
    table = cuda_facts["driver_minimum_per_cuda_release"]["per_release"]
    assert {r.version for r in kb.cuda} == set(table)
    for release in kb.cuda:
        fact = table[release.version]
        if fact.startswith(">="):
            assert release.min_driver == fact[2:].strip(), release.version
        else:  # 12.3.2 has no row: NVIDIA's installer for it is named after the driver it needs
            assert f"cuda_{release.version}_{release.min_driver}_linux.run" in (release.prov.note or "")


def test_ppc64le_ends_with_cuda_12_4(kb) -> None:  # type: ignore[no-untyped-def]
    with_ppc = [r for r in kb.cuda if any("ppc64le" in arches for _, arches in r.repos)]
    assert max(Version(r.version) for r in with_ppc) == Version("12.4.1")
    for release in kb.cuda:
        assert "ppc64le" not in release.arches_on("rhel9"), "UBI 9 has no ppc64le CUDA"
    assert "ppc64le" not in kb.cuda_release("10.2.89").arches_on("rhel8"), "no rhel8 ppc64le 10.2"


def test_rhel7_family_images_end_at_12_4_0(kb) -> None:  # type: ignore[no-untyped-def]
    on_rhel7 = [r.version for r in kb.cuda if r.arches_on("rhel7")]
    assert max(on_rhel7, key=Version) == "12.4.0"


def test_host_gcc_bounds_match_the_compiler_facts(kb, cuda_facts) -> None:  # type: ignore[no-untyped-def]
    for row in cuda_facts["host_gcc_per_cuda"]["per_cuda"]:
        line = row["cuda"].split("-")[0]
        releases = [r for r in kb.cuda if r.version.startswith(line + ".") or r.version == line]
        assert releases, line
        for release in releases:
            spec = release.host_gcc_spec("x86_64")
            assert spec is not None
            top = row["max_gcc_major_x86_64"]
            assert Version(f"{top}.0") in _spec(spec) or "max_gcc_exact" in row
            assert Version(f"{top + 1}.0") not in _spec(spec)


def _spec(text: str):  # type: ignore[no-untyped-def]
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(text)


def test_tensorflow_builds_follow_the_tested_configurations(kb, fw_facts) -> None:  # type: ignore[no-untyped-def]
    builds = {(b.version, b.variant): b for b in kb.frameworks["tensorflow"].builds}
    for name, python, _compiler, _bazel, cudnn, cuda in fw_facts["tensorflow_tested_build_configurations"][
        "linux_gpu"
    ]:
        version = name.split("-")[1]
        line = cuda if "." in cuda else f"{cuda}.0"
        build = builds[(version, f"cuda{line}")]
        assert build.cuda == (line,)
        assert Version(cudnn + ".0" if "." not in cudnn else cudnn) in _spec(build.cudnn)
        assert Version(f"{int(cudnn.split('.')[0]) + 1}.0") not in _spec(build.cudnn)
        low = python.split(",")[-1].strip().split("-")[0]
        assert low in build.python or Version(build.python[0]) > Version(low)


def test_pytorch_wheels_follow_the_wheel_matrix(kb, fw_facts) -> None:  # type: ignore[no-untyped-def]
    builds = {(b.version, b.variant): b for b in kb.frameworks["pytorch"].builds}
    for row in fw_facts["pytorch_wheels"]["releases"]:
        version = row["torch"].split()[0]
        for wheel in row["cuda_wheels"]:
            if wheel == "cu80":
                continue  # CUDA 8 is outside mlcc's 9.0 .. 12.6 range
            build = builds[(version, wheel)]
            digits = wheel[2:]
            assert build.cuda == (f"{digits[:-1]}.{digits[-1]}",)
        assert (version, "cpu") in builds


def test_the_ngc_19_05_build_matches_the_mlperf_stack(kb) -> None:  # type: ignore[no-untyped-def]
    (ngc,) = [b for b in kb.frameworks["pytorch"].builds if b.version == "1.1.0a0+828a6a3"]
    assert "10.1" in ngc.cuda, "NGC 19.05 ran CUDA 10.1.163"
    assert "10.2" in ngc.cuda, "the Red Hat port rebuilt it with CUDA 10.2"
    assert ngc.python == ("3.6",)
    assert Version("7.6.0") in _spec(ngc.cudnn) and Version("7.6.5") in _spec(ngc.cudnn)
