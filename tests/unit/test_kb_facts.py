"""Facts the recipes once got wrong, pinned as the recipes now state them and as their
sources say: NVIDIA's CUDA container history (gitlab.com/nvidia/container-images/cuda),
PyPI's file lists, PyTorch's previous-versions page, the RHEL 9.5 release notes and the
branches of tensorflow/benchmarks (offline: the knowledge base API only). `mlcc kb check`
keeps the PyPI side honest."""

from __future__ import annotations

import pytest

from mlcc.api import Pins, request_for
from mlcc.errors import ConflictError
from mlcc.kb.model import KnowledgeBase


def _build(kb: KnowledgeBase, framework: str, version: str, variant: str):  # type: ignore[no-untyped-def]
    return next(b for b in kb.frameworks[framework].builds if b.version == version and b.variant == variant)


@pytest.mark.parametrize(
    ("cuda", "package"), [("12.0.0", "cuda-nvprof-12-0"), ("12.4.1", "cuda-nvprof-12-4")]
)
def test_cuda_12_devel_packages_include_nvprof_on_ppc64le_not_on_aarch64(kb, cuda: str, package: str) -> None:  # type: ignore[no-untyped-def]
    release = kb.cuda_release(cuda)
    assert package in {p.name for p in release.packages_for(kb.families["rhel"], "ppc64le")}
    assert package not in {p.name for p in release.packages_for(kb.families["rhel"], "aarch64")}
    assert dict(release.packages)[package] == {"12.0.0": "12.0.90-1", "12.4.1": "12.4.127-1"}[cuda]


@pytest.mark.parametrize("distro", ["rhel7", "rhel8"])
def test_cudnn_8_6_and_nccl_2_15_5_for_cuda_10_2_come_from_the_cuda_repo(kb, distro: str) -> None:  # type: ignore[no-untyped-def]
    cudnn = [b for b in kb.cudnn if b.version == "8.6.0.163" and b.cuda == "10.2" and b.repo_distro == distro]
    nccl = [b for b in kb.nccl if b.version == "2.15.5" and b.cuda == "10.2" and b.repo_distro == distro]
    assert cudnn and nccl
    assert {b.repo for b in cudnn + nccl} == {"cuda"}
    assert all("00eaba2b" in (b.evidence or "") for b in cudnn)
    assert all("9fb7447a" in (b.evidence or "") for b in nccl)


@pytest.mark.parametrize(("version", "vision"), [("1.0.0", None), ("1.0.1", None), ("1.1.0", "0.3.0")])
def test_pytorch_cu100_builds_are_installed_from_exact_wheel_urls(kb, version: str, vision) -> None:  # type: ignore[no-untyped-def]
    install = _build(kb, "pytorch", version, "cu100").install
    assert install.find_links is None  # pip would prefer PyPI's CUDA 9.0 manylinux1 wheel
    assert not any(p.startswith("torch==") for p in install.packages)
    for python, tag in (("3.6", "cp36-cp36m"), ("3.7", "cp37-cp37m")):
        wheels = install.wheels_for(python)
        assert f"https://download.pytorch.org/whl/cu100/torch-{version}-{tag}-linux_x86_64.whl" in wheels
        if vision:
            assert (
                f"https://download.pytorch.org/whl/cu100/torchvision-{vision}-{tag}-linux_x86_64.whl"
                in wheels
            )


def test_the_ncf_cuda_10_0_image_installs_the_cu100_wheel(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    from mlcc.render import render

    stack = resolver.resolve(request_for(kb, "ncf", Pins(cuda="10.0")))
    dockerfile = dict(render(stack).files)["Dockerfile"]
    # fetched through PYTORCH_MIRROR, whose default is PyTorch's own host
    assert '"${PYTORCH_MIRROR}/whl/cu100/torch-' in dockerfile
    assert "ARG PYTORCH_MIRROR=https://download.pytorch.org\n" in dockerfile
    assert "cu100/torch_stable.html" not in dockerfile


def test_mxnet_pins_name_releases_pypi_has(kb) -> None:  # type: ignore[no-untyped-def]
    for variant in ("cu90", "cu92", "cu101"):
        assert _build(kb, "mxnet", "1.6.0", variant).install.packages == (f"mxnet-{variant}==1.6.0.post0",)
    variants_16 = {b.variant for b in kb.frameworks["mxnet"].builds if b.version == "1.6.0"}
    variants_18 = {b.variant for b in kb.frameworks["mxnet"].builds if b.version == "1.8.0"}
    assert "cu100" not in variants_16 and "cu92" not in variants_18


def test_maskrcnn_has_no_ppc64le_since_opencv_python_cannot_install_there(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    bench = kb.benchmarks["maskrcnn"]
    assert bench.arches == ("x86_64",)
    assert "opencv-python" in (bench.prov.note or "")
    with pytest.raises(ConflictError) as caught:
        resolver.resolve(request_for(kb, "maskrcnn", Pins(arch="ppc64le")))
    # the refusal names its cause, the package and the wheel PyPI lacks, at the line saying so
    [why] = [line for line in str(caught.value).splitlines() if "[benchmark-arch]" in line]
    assert "opencv-python==3.4.1.15" in why and "no ppc64le wheel" in why
    line = bench.origin_of("arches_missing")
    assert why.endswith(f"({line})") and line.startswith("recipes/benchmarks/maskrcnn.yaml:")


def test_maskrcnn_records_what_the_conda_channels_give_for_opencv(kb) -> None:  # type: ignore[no-untyped-def]
    # corrections-3's open question, settled from the sources that could be read: WML CE 1.6.1's
    # channel shows a py-opencv 3.4.2 py36 build (IBM/powerai#268); Open-CE's feedstock builds
    # OpenCV for its own environments only. The inference is marked as one.
    bench = kb.benchmarks["maskrcnn"]
    [source] = [s for s in bench.prov.source if s.startswith("github:IBM/powerai issue 268")]
    assert "py-opencv 3.4.2" in source and "inference" in source and "open-ce/opencv-feedstock" in source
    assert "py-opencv 3.4.2" in (bench.why_not_on("ppc64le") or "")
    assert bench.why_not_on("x86_64") is None


def test_ubi_9_5_system_gcc_is_11_5(kb) -> None:  # type: ignore[no-untyped-def]
    assert kb.base("ubi9").gcc_system == "11.5.0"
    assert kb.base("ubi9-minimal").gcc_system == "11.5.0"


def test_unconfirmed_facts_are_settled_conservatively_and_say_so(kb) -> None:  # type: ignore[no-untyped-def]
    for version in ("10.1.105", "10.1.168"):
        release = kb.cuda_release(version)
        assert "rhel8" not in dict(release.repos) and "ece0c5b3" in (release.prov.note or "")
    assert "rhel8" in dict(kb.cuda_release("10.1.243").repos)
    # no driver-table row for 12.3.2: settled by NVIDIA's runfile name, and said so
    assert "cuda_12.3.2_545.23.08_linux.run" in (kb.cuda_release("12.3.2").prov.note or "")
    for release in kb.cuda:
        if release.minor == "12.6":
            assert "host_gcc.x86_64" in release.prov.unverified_fields
    ngc = _build(kb, "pytorch", "1.1.0a0+828a6a3", "ngc19.05-src")
    assert ngc.prov.weak  # the upstream commit 828a6a3 is not confirmed to be NGC's tree


def test_audit_findings_from_pypi(kb) -> None:  # type: ignore[no-untyped-def]
    """Found by `mlcc kb check`: gsutil 4.38 requires Python 2; torch 1.7.0 has no cp39 wheel;
    pip builds Pillow, cffi and scipy from source on ppc64le and needs their headers."""
    minigo_pins = [p for s in kb.benchmarks["minigo"].build.steps for p in s.packages]
    assert "gsutil==4.40" in minigo_pins
    assert "3.9" not in _build(kb, "pytorch", "1.7.0", "cu102").python
    rules = {r.name: set(r.packages_for("rhel")) for r in kb.source_builds}
    for bench, package in (("ssd", "Pillow"), ("transformer", "cffi"), ("ncf", "scipy")):
        assert rules[package] <= set(kb.benchmarks[bench].build.packages_for("rhel")), bench
