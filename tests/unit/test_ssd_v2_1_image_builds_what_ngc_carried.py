"""ssd's (RetinaNet's) v2.1 image builds what NGC 22.09's container and NVIDIA's Dockerfile gave it:
apex with the modules ssd imports, DALI with NVIDIA's two DALI operators in /usr/local/lib (carried
into the runtime image), NVIDIA's cocoapi v0.7.0 and requirements.txt's pins, so it joins the
published set."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from mlcc.kb.model import KnowledgeBase
from mlcc.render import render
from mlcc.resolve.request import build_request
from tests.conftest import REPO, benchmark_scripts

RECIPE = REPO / "recipes" / "benchmarks" / "v2.1" / "ssd.yaml"
SCRIPTS = REPO / "recipes" / "benchmarks" / "v2.1" / "ssd.d"
ROUND_SCRIPTS = REPO / "recipes" / "benchmarks" / "v2.1" / "scripts"
APEX = "1d7711100bb58dc761a2fad89f30d41239450f58"
HPE_COCOAPI = "/tmp/mlcc-source/HPE/benchmarks/maskrcnn/implementations/pytorch/cocoapi/."
PLUGINS = ("/usr/local/lib/lib_box_iou.so", "/usr/local/lib/lib_proposal_matcher.so")


def _dockerfile(kb: KnowledgeBase, resolver, gpu: str) -> str:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(build_request(kb, "ssd", round_="v2.1", gpu=gpu))
    return dict(render(stack).files)["Dockerfile"]


def _run_lines(dockerfile: str) -> List[str]:
    """Each RUN instruction as one line (continuations joined), in order."""
    joined = dockerfile.replace("\\\n", " ")
    return [line for line in joined.splitlines() if line.startswith("RUN ")]


def _index(lines: List[str], needle: str) -> int:
    found = [i for i, line in enumerate(lines) if needle in line]
    assert len(found) == 1, (needle, found)
    return found[0]


def _stages(dockerfile: str) -> List[str]:
    """The build stage and the final (runtime) stage, split at the second FROM."""
    build, _, final = dockerfile.partition("\nFROM ${BASE_IMAGE}\n")
    assert final, "not a two-stage (runtime) Dockerfile"
    return [build, final]


@pytest.fixture(scope="module")
def a100(kb, resolver) -> str:  # type: ignore[no-untyped-def]
    return _dockerfile(kb, resolver, "a100")


def test_apex_builds_the_modules_ssd_imports_and_the_build_checks_them(a100: str) -> None:
    runs = _run_lines(a100)
    apex = _index(runs, f"git checkout -q --detach {APEX}")
    assert "python setup.py install --cpp_ext --cuda_ext --focal_loss --fused_conv_bias_relu" in runs[apex]
    check = _index(runs, "bash /opt/mlcc/scripts/apex-extensions.sh")
    assert apex < check


def _fake_modules(tmp_path: Path, modules: List[str]) -> subprocess.CompletedProcess[str]:
    for name in modules:
        (tmp_path / f"{name}.py").write_text("")
    return subprocess.run(
        ["bash", str(_script(tmp_path, "apex-extensions.sh"))],
        cwd=tmp_path,
        env={**_python_on_path(tmp_path), "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
    )


def test_a_build_whose_apex_skipped_fused_conv_bias_relu_fails(tmp_path: Path) -> None:
    # apex skips it with a warning when cuDNN looks older than 8.4; ssd's import is in a try
    result = _fake_modules(tmp_path, ["apex_C", "amp_C", "focal_loss_cuda"])
    assert result.returncode != 0
    assert "apex was built without fused_conv_bias_relu" in result.stderr


def test_a_build_with_every_module_ssd_imports_passes_the_check(tmp_path: Path) -> None:
    result = _fake_modules(tmp_path, ["apex_C", "amp_C", "focal_loss_cuda", "fused_conv_bias_relu"])
    assert result.returncode == 0, result.stderr


def test_dali_operators_build_after_dali_and_cmake_and_reach_the_runtime_image(a100: str) -> None:
    build, final = _stages(a100)
    runs = _run_lines(build)
    dali = _index(runs, "nvidia-dali-cuda110==1.26.0")
    # the framework's source build pins the same cmake; ssd's own step is the later one
    cmake = [i for i, line in enumerate(runs) if "cmake==3.24.1 --hash=sha256:" in line][-1]
    operators = _index(runs, "bash /opt/mlcc/scripts/dali-extensions.sh")
    assert dali < operators and cmake < operators
    # run from the work directory, where csrc/ is
    assert "WORKDIR /workspace/ssd\nRUN bash /opt/mlcc/scripts/dali-extensions.sh" in build
    for path in PLUGINS:
        assert f"COPY --from=build {path} {path}" in final
    # the runtime stage copies what the build made; it builds nothing itself
    assert "dali-extensions.sh" not in final and "cmake" not in final


def test_dali_is_the_nearest_public_build(a100: str) -> None:
    assert "nvidia-dali-cuda110==1.26.0 --hash=sha256:" in a100
    text = RECIPE.read_text()
    assert "1.17.0" in text and "an inference" in text


# The lines of NVIDIA's csrc/dali_box_iou (training_results_v2.1 @158189d) that name DALI 1.17's
# workspace types: box_iou.h's SetupImpl and RunImpl, box_iou.cu's RunImpl definition
BOX_IOU_H = (
    "  bool SetupImpl(std::vector<::dali::OutputDesc> &output_desc,\n"
    "                 const ::dali::workspace_t<Backend> &ws) override {\n"
    "  void RunImpl(::dali::workspace_t<Backend> &ws) override;\n"
)
BOX_IOU_CU = "void box_iou<::dali::GPUBackend>::RunImpl(::dali::DeviceWorkspace &ws) {\n"


def _operator_sources(root: Path, header: str = BOX_IOU_H) -> Path:
    for name in ("box_iou", "proposal_matcher"):
        src = root / "csrc" / f"dali_{name}"
        src.mkdir(parents=True)
        (src / f"{name}.h").write_text(header)
        (src / f"{name}.cc").write_text(f'#include "{name}.h"\n')
        (src / f"{name}.cu").write_text(BOX_IOU_CU.replace("box_iou", name))
    return root / "csrc"


def _stop_at_cmake(tmp_path: Path) -> Dict[str, str]:
    """A PATH whose cmake records that it ran and stops the script: what the script did to the
    sources before building is then on disk (nothing is built or installed)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    cmake = bin_dir / "cmake"
    cmake.write_text(f'#!/bin/sh\ntouch "{tmp_path}/cmake-ran"\nexit 3\n')
    cmake.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def test_the_operators_sources_are_moved_to_dali_1_26s_workspace_type(tmp_path: Path) -> None:
    work = tmp_path / "work"
    csrc = _operator_sources(work)
    result = subprocess.run(
        ["bash", str(SCRIPTS / "dali-extensions.sh")],
        cwd=work,
        env=_stop_at_cmake(tmp_path),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 3  # the stand-in cmake's: the rename went through
    header = (csrc / "dali_box_iou" / "box_iou.h").read_text()
    assert "const ::dali::Workspace &ws) override {" in header
    assert "void RunImpl(::dali::Workspace &ws) override;" in header
    cu = (csrc / "dali_box_iou" / "box_iou.cu").read_text()
    assert cu == "void box_iou<::dali::GPUBackend>::RunImpl(::dali::Workspace &ws) {\n"


def test_an_old_workspace_name_the_rename_misses_fails_before_cmake(tmp_path: Path) -> None:
    work = tmp_path / "work"
    _operator_sources(work, header="  void RunImpl(::dali::workspace_t<::dali::GPUBackend> &ws) override;\n")
    result = subprocess.run(
        ["bash", str(SCRIPTS / "dali-extensions.sh")],
        cwd=work,
        env=_stop_at_cmake(tmp_path),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "still names DALI 1.17's workspace types" in result.stderr
    assert not (tmp_path / "cmake-ran").exists()


def test_nvidias_cocoapi_comes_from_the_pinned_checkout_and_is_built_here(a100: str) -> None:
    runs = _run_lines(_stages(a100)[0])
    source = _index(runs, "cp -a /tmp/mlcc-source/NVIDIA/benchmarks/ssd/implementations/pytorch-22.09/.")
    line = runs[source]
    assert f"cp -a {HPE_COCOAPI} /workspace/ssd/cocoapi/" in line
    assert line.index(HPE_COCOAPI) < line.index("rm -rf /tmp/mlcc-source")
    pins = _index(runs, "cython==0.29.32 --hash=sha256:")
    assert "matplotlib==3.5.3 --hash=sha256:" in runs[pins]  # pycocotools.coco imports it
    patch = _index(runs, "bash /opt/mlcc/scripts/nvidia-cocoapi.sh")
    cocoapi = _index(runs, "pip install --no-cache-dir --no-deps -e cocoapi/PythonAPI")
    assert pins < patch < cocoapi


def test_requirements_pins_are_installed_with_hashes(a100: str) -> None:
    for pin in ("scikit-image==0.19.3", "ujson==5.5.0", "pybind11==2.10.0", "pyparsing==3.0.9"):
        assert f"{pin} --hash=sha256:" in a100
    assert "logging.git@62cb0761014922532ff1a4d35d8c2c4021f2e123" in a100
    assert "mlperf-common.git@7112e7b73951dcde8e89934e8b5392348bcad198" in a100


@pytest.mark.parametrize(("gpu", "arch"), [("a100", "8.0"), ("h100", "9.0")])
def test_apex_is_compiled_for_the_gpu_asked(kb, resolver, gpu: str, arch: str) -> None:  # type: ignore[no-untyped-def]
    assert f'TORCH_CUDA_ARCH_LIST="{arch}"' in _dockerfile(kb, resolver, gpu)


def test_the_complete_recipe_is_published(kb: KnowledgeBase) -> None:
    from mlcc.app.published_set import generate_all

    folders = {g.folder for g in generate_all(kb)}
    assert "ssd-v2.1/cuda11.8-cudnn8-ubi8-x86_64" in folders
    assert "INCOMPLETE" not in RECIPE.read_text()


def _python_on_path(tmp_path: Path) -> Dict[str, str]:
    """A PATH whose `python` is this interpreter."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "python"
    # a wrapper, not a link: a link to a virtualenv's interpreter leaves the virtualenv
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def test_the_helper_scripts_are_shell_that_parses(tmp_path: Path) -> None:
    bash = shutil.which("bash")
    assert bash is not None
    scripts = benchmark_scripts("ssd-v2.1", tmp_path)
    assert [s.name for s in scripts] == ["apex-extensions.sh", "dali-extensions.sh", "nvidia-cocoapi.sh"]
    for script in scripts:
        subprocess.run([bash, "-n", str(script)], check=True)


def _script(folder: Path, name: str) -> Path:
    """The helper script ``name`` as the ssd-v2.1 image runs it."""
    return next(p for p in benchmark_scripts("ssd-v2.1", folder) if p.name == name)
