"""Reading a wheel's contents with range requests, and checking a framework recipe's
``bundles:`` claim against it: against a local server and against the real PyPI."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Iterator

import pytest

from mlcc.kb.index import IndexClient
from mlcc.kb.wheel import WheelReader
from mlcc.kbtools.bundles import ERROR, NOTE, WARNING, Evidence, bundle_findings, judge, wheel_evidence

from .simple_index import IndexServer, serve

METADATA = """Metadata-Version: 2.1
Name: torch
Version: 9.9.0
Requires-Dist: filelock
Requires-Dist: nvidia-cudnn-cu12 (==8.9.2.26) ; platform_system == "Linux"
Requires-Dist: nvidia-nccl-cu12==2.18.1; platform_system == "Linux"
"""


def _wheel() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("torch/version.py", "__version__ = '9.9.0'\ndebug = False\ncuda = '12.1'\n")
        archive.writestr("torch/lib/libcudart-9335f6a2.so.12", b"\0" * 200_000)  # larger than one read
        archive.writestr("torch/lib/libtorch_cuda.so", b"\1" * 1000)
        archive.writestr("torch-9.9.0.dist-info/METADATA", METADATA)
    return buffer.getvalue()


@pytest.fixture
def index() -> Iterator[IndexServer]:
    yield from serve()


def test_reads_names_members_and_metadata_without_the_whole_file(index: IndexServer, tmp_path: Path) -> None:
    body = _wheel()
    url = index.add("/files/torch-9.9.0-cp310-cp310-manylinux1_x86_64.whl", body, "application/octet-stream")
    index.add("/files/torch-9.9.0-cp310-cp310-manylinux1_x86_64.whl.metadata", METADATA.encode())
    reader = WheelReader(cache=str(tmp_path))
    assert "torch/lib/libcudart-9335f6a2.so.12" in reader.names(url)
    assert "cuda = '12.1'" in (reader.member(url, "torch/version.py") or "")
    assert reader.member(url, "torch/absent.py") is None
    requires = reader.requires_dist(url) or ()
    assert any(r.startswith("nvidia-nccl-cu12") for r in requires)
    evidence = wheel_evidence(reader, url, "torch")
    assert evidence.version("cudnn") == ("8.9.2.26", "Requires-Dist nvidia-cudnn-cu12 (==8.9.2.26)")
    assert evidence.version("nccl")[0] == "2.18.1"  # type: ignore[index]
    assert evidence.version("cuda_runtime")[0] == "12.1"  # type: ignore[index]  # version.py wins
    # cached: a second reader asks the server nothing
    hits = len(index.hits)
    again = WheelReader(cache=str(tmp_path))
    assert wheel_evidence(again, url, "torch") == evidence and len(index.hits) == hits and again.requests == 0


def test_a_wheel_uploaded_before_pep658_is_read_from_its_own_metadata(
    index: IndexServer, tmp_path: Path
) -> None:
    url = index.add(
        "/files/torch-9.9.0-cp310-cp310-manylinux1_x86_64.whl", _wheel(), "application/octet-stream"
    )
    reader = WheelReader(cache=str(tmp_path))
    requires = reader.requires_dist(url) or ()
    assert 'nvidia-cudnn-cu12 (==8.9.2.26) ; platform_system == "Linux"' in requires
    assert wheel_evidence(reader, url, "torch").version("nccl")[0] == "2.18.1"  # type: ignore[index]


def _build(kb, framework: str, version: str, variant: str):  # type: ignore[no-untyped-def]
    [build] = [b for b in kb.frameworks[framework].builds if b.version == version and b.variant == variant]
    return build


def test_judge_contradiction_missing_claim_and_unshown_claim(kb) -> None:  # type: ignore[no-untyped-def]
    build = _build(kb, "pytorch", "1.1.0", "wmlce1.6.1")._replace(
        bundles=(("cuda_runtime", "10.1.168"), ("cudnn", "7.6"))
    )
    evidence = Evidence(
        "w.whl", (("cuda_runtime", "9.0.176", "torch/version.py"), ("nccl", "2.4", "bundled file"))
    )
    found = {(f.severity, f.message.split(" ")[0]) for f in judge(build, "r.yaml:1", evidence)}
    assert (ERROR, "cuda_runtime") in found  # claims 10.1, the wheel says 9.0
    assert (WARNING, "w.whl") in found  # brings NCCL the recipe does not claim
    assert (NOTE, "cudnn") in found  # claimed, not visible in the wheel
    agreeing = Evidence("w.whl", (("cuda_runtime", "10.1.168", "v"), ("cudnn", "7.6.3", "f")))
    assert judge(build, "r.yaml:1", agreeing) == []


def test_real_pypi_torch_wheels_show_what_they_bring(tmp_path: Path) -> None:
    """PyPI's torch 1.1.0 wheel is a CUDA 9.0 build carrying its own libcudart 9.0 (its
    torch/version.py says 9.0.176); torch 2.1.0 depends on NVIDIA's cuDNN 8.9.2.26 and NCCL
    2.18.1 wheels."""
    client = IndexClient("https://pypi.org/simple/", cache=str(tmp_path))
    reader = WheelReader(cache=str(tmp_path / "wheels"))

    def wheel(filename: str) -> str:
        [url] = [f.url for f in client.project("torch").files if f.filename == filename]
        return url

    old = wheel_evidence(reader, wheel("torch-1.1.0-cp36-cp36m-manylinux1_x86_64.whl"), "torch")
    assert old.version("cuda_runtime")[0] == "9.0.176"  # type: ignore[index]
    assert old.version("cudnn") is None  # linked statically: no file of its own
    new = wheel_evidence(reader, wheel("torch-2.1.0-cp310-cp310-manylinux1_x86_64.whl"), "torch")
    assert new.version("cudnn")[0] == "8.9.2.26" and new.version("nccl")[0] == "2.18.1"  # type: ignore[index]


def test_real_pypi_check_of_the_recipes_bundles_claims(kb, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    client = IndexClient("https://pypi.org/simple/", cache=str(tmp_path))
    reader = WheelReader(cache=str(tmp_path / "wheels"))
    claimed = [b for f in kb.frameworks.values() for b in f.builds if b.bundles and b.install.method == "pip"]
    assert claimed, "the recipes claim bundled libraries for pip builds"
    findings = bundle_findings(kb, client, reader, claimed)
    assert [f for f in findings if f.severity == ERROR] == []


def test_kb_check_reports_a_contradicted_claim_at_its_recipe_line(index: IndexServer, capsys) -> None:  # type: ignore[no-untyped-def]
    """End to end: the index's torch 1.2.0 wheel says CUDA 9.2 while the recipe claims the
    10.0.130 runtime PyPI's wheel really carries."""
    import json

    from mlcc.cli import run as cli_run

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("torch/version.py", "__version__ = '1.2.0'\ncuda = '9.2.148'\n")
    name = "torch-1.2.0-cp36-cp36m-manylinux1_x86_64.whl"
    index.add(f"/files/{name}", buffer.getvalue(), "application/octet-stream")
    page = {
        "meta": {"api-version": "1.0"},
        "name": "torch",
        "files": [{"filename": name, "url": f"/files/{name}", "hashes": {}}],
    }
    index.add("/simple/torch/", json.dumps(page).encode(), "application/vnd.pypi.simple.v1+json")
    code = cli_run(
        ["kb", "check", "--index-url", index.url + "/simple/", "--sample", "0", "--refresh", "--json"]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 10
    [finding] = [f for f in report["findings"] if f["subject"] == "pytorch 1.2.0 (cu100) bundles"]
    assert (
        finding["severity"] == ERROR
        and "cuda_runtime 10.0.130 but" in finding["message"]
        and "9.2.148" in finding["message"]
    )
    path, _, line = finding["origin"].rpartition(":")
    assert path == "recipes/frameworks/pytorch.yaml" and line.isdigit()
    from tests.conftest import RECIPES

    text = (RECIPES / "frameworks" / "pytorch.yaml").read_text(encoding="utf-8").splitlines()
    assert text[int(line) - 1].strip() == "cuda_runtime: '10.0.130'"  # the bundles entry itself


def test_conda_claims_are_reported_as_unchecked_not_silently_passed(kb, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from mlcc.kbtools.bundles import bundle_findings

    wmlce = [b for b in kb.frameworks["pytorch"].builds if b.variant.startswith("wmlce")]
    # no request is made: the channel is named, and the unverified builds make it a note
    client = IndexClient("http://127.0.0.1:9/simple/", cache=str(tmp_path))
    findings = bundle_findings(kb, client, WheelReader(cache=str(tmp_path)), wmlce)
    assert len(findings) == len(wmlce) and {f.severity for f in findings} == {NOTE}
    assert all(
        "ibm-ai/conda" in f.message and f.origin.startswith("recipes/frameworks/pytorch.yaml:")
        for f in findings
    )


def test_a_contradicted_claim_names_its_own_recipe_line(kb) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import RECIPES

    build = _build(kb, "pytorch", "2.0.1", "cu117")
    seen = Evidence(
        "w.whl", (("cuda_runtime", "11.7", "v"), ("cudnn", "8.5.0.96", "r"), ("nccl", "2.18.1", "r"))
    )
    [finding] = judge(build, build.bundles_origin, seen)
    path, _, line = finding.origin.rpartition(":")
    text = (RECIPES.parent / path).read_text(encoding="utf-8").splitlines()
    assert finding.severity == ERROR and text[int(line) - 1].strip() == "nccl: '2.14.3'"


def _torch2_wheel(cuda: str) -> bytes:
    """A torch 2.x wheel's version file: the CUDA line carries a type annotation."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            "torch/version.py",
            f"from typing import Optional\n__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '{cuda}'\n",
        )
        archive.writestr("torch/lib/libtorch_cuda.so", b"\1" * 1000)
    return buffer.getvalue()


def _torch2_metadata(nccl: str) -> bytes:
    return (
        "Metadata-Version: 2.4\nName: torch\nVersion: 2.11.0\n"
        'Requires-Dist: cuda-toolkit[cublas,cudart,nvrtc]==13.0.2; platform_system == "Linux"\n'
        'Requires-Dist: nvidia-cudnn-cu13==9.19.0.56; platform_system == "Linux"\n'
        f'Requires-Dist: nvidia-nccl-cu13=={nccl}; platform_system == "Linux"\n'
    ).encode()


def test_a_torch2_wheel_shows_its_cuda_through_the_annotated_version_file_and_cuda_toolkit(
    index: IndexServer, tmp_path: Path
) -> None:
    """torch 2.x writes ``cuda: Optional[str] = '13.0'``; from CUDA 13 its runtime comes
    with the cuda-toolkit metapackage's cudart extra, not an nvidia-cuda-runtime wheel."""
    name = "/files/torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl"
    url = index.add(name, _torch2_wheel("13.0"), "application/octet-stream")
    index.add(name + ".metadata", _torch2_metadata("2.28.9"))
    evidence = wheel_evidence(WheelReader(cache=str(tmp_path)), url, "torch")
    assert evidence.version("cuda_runtime") == ("13.0", "torch/version.py cuda = '13.0'")
    assert evidence.version("cudnn")[0] == "9.19.0.56" and evidence.version("nccl")[0] == "2.28.9"  # type: ignore[index]
    # a version file without a CUDA line: the toolkit's release is the runtime's
    other = "/files/torch-2.11.0-cp312-cp312-manylinux_2_28_aarch64.whl"
    url = index.add(other, _torch2_wheel("none"), "application/octet-stream")
    index.add(other + ".metadata", _torch2_metadata("2.28.9"))
    seen = wheel_evidence(WheelReader(cache=str(tmp_path)), url, "torch", arch="aarch64")
    toolkit = "Requires-Dist cuda-toolkit[cublas,cudart,nvrtc]==13.0.2"
    assert seen.version("cuda_runtime") == ("13.0.2", toolkit)


def test_a_build_for_two_arches_is_checked_against_each_arches_wheel(
    kb, index: IndexServer, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """torch 2.11.0 cu130 claims its x86_64 and aarch64 wheels bring NCCL 2.28.9: an aarch64
    wheel that brings another NCCL is an error naming that wheel, while x86_64 agrees."""
    import json

    build = _build(kb, "pytorch", "2.11.0", "cu130")
    assert build.arches == ("x86_64", "aarch64")
    files = []
    for arch, nccl in (("x86_64", "2.28.9"), ("aarch64", "2.27.3")):
        name = f"torch-2.11.0-cp310-cp310-manylinux_2_28_{arch}.whl"
        index.add(f"/files/{name}", _torch2_wheel("13.0"), "application/octet-stream")
        index.add(f"/files/{name}.metadata", _torch2_metadata(nccl))
        files.append({"filename": name, "url": f"/files/{name}", "hashes": {}})
    page = {"meta": {"api-version": "1.0"}, "name": "torch", "files": files}
    index.add("/simple/torch/", json.dumps(page).encode(), "application/vnd.pypi.simple.v1+json")
    client = IndexClient(index.url + "/simple/", cache=str(tmp_path / "index"))
    findings = bundle_findings(kb, client, WheelReader(cache=str(tmp_path / "wheels")), [build])
    [error] = [f for f in findings if f.severity == ERROR]
    assert "nccl 2.28.9 but torch-2.11.0-cp310-cp310-manylinux_2_28_aarch64.whl shows 2.27.3" in error.message
    assert error.origin == build.bundle_origin("nccl")
    assert not any("x86_64" in f.message for f in findings if f.severity != NOTE)
