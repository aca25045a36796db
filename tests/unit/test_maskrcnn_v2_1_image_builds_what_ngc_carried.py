"""maskrcnn's v2.1 image builds what NGC 22.09's container carried (apex, DALI, NVIDIA's cocoapi)
and the benchmark's own compiled package, so it joins the published set, as bert's and ssd's do;
the v2.1 recipes that still say INCOMPLETE (resnet50, unet3d, rnnt) stay out of it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from mlcc.errors import RecipeError
from mlcc.kb import load
from mlcc.kb.model import KnowledgeBase
from mlcc.render import render
from mlcc.resolve.request import build_request
from tests.conftest import REPO, benchmark_scripts

RECIPE = REPO / "recipes" / "benchmarks" / "v2.1" / "maskrcnn.yaml"
SCRIPTS = REPO / "recipes" / "benchmarks" / "v2.1" / "maskrcnn.d"
ROUND_SCRIPTS = REPO / "recipes" / "benchmarks" / "v2.1" / "scripts"
APEX = "1d7711100bb58dc761a2fad89f30d41239450f58"
HPE_COCOAPI = "/tmp/mlcc-source/HPE/benchmarks/maskrcnn/implementations/pytorch/cocoapi/."


def _dockerfile(kb: KnowledgeBase, resolver, gpu: str) -> str:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(build_request(kb, "maskrcnn", round_="v2.1", gpu=gpu))
    return dict(render(stack).files)["Dockerfile"]


def _run_lines(dockerfile: str) -> List[str]:
    """Each RUN instruction as one line (continuations joined), in order."""
    joined = dockerfile.replace("\\\n", " ")
    return [line for line in joined.splitlines() if line.startswith("RUN ")]


def _index(lines: List[str], needle: str) -> int:
    found = [i for i, line in enumerate(lines) if needle in line]
    assert len(found) == 1, (needle, found)
    return found[0]


@pytest.fixture(scope="module")
def a100(kb, resolver) -> str:  # type: ignore[no-untyped-def]
    return _dockerfile(kb, resolver, "a100")


def test_apex_builds_where_maskrcnn_compiles_against_it_before_maskrcnn(a100: str) -> None:
    runs = _run_lines(a100)
    apex = _index(runs, f"git checkout -q --detach {APEX}")
    assert "WORKDIR /opt/pytorch/apex" in a100  # maskrcnn's setup.py: -I/opt/pytorch/apex/csrc
    for option in (
        "--cpp_ext",
        "--cuda_ext",
        "--fast_bottleneck",
        "--peer_memory",
        "--nccl_p2p",
        "--fused_conv_bias_relu",
    ):
        assert option in runs[apex]
    check = _index(runs, "bash /opt/mlcc/scripts/apex-extensions.sh")
    maskrcnn = _index(runs, "pip install --no-cache-dir --no-deps -e maskrcnn")
    assert apex < check < maskrcnn


def _extensions_check(tmp_path: Path, modules: List[str]) -> subprocess.CompletedProcess[str]:
    for name in modules:
        (tmp_path / f"{name}.py").write_text("")
    return subprocess.run(
        ["bash", str(_script(tmp_path, "apex-extensions.sh"))],
        cwd=tmp_path,
        env={**_python_on_path(tmp_path), "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
    )


def test_a_build_whose_apex_skipped_a_module_maskrcnn_imports_fails(tmp_path: Path) -> None:
    # apex skips fast_bottleneck and fused_conv_bias_relu with a warning when cuDNN looks too old
    result = _extensions_check(tmp_path, ["apex_C", "amp_C", "peer_memory_cuda", "nccl_p2p_cuda"])
    assert result.returncode != 0
    assert "fast_bottleneck, fused_conv_bias_relu" in result.stderr


def test_a_build_with_every_module_passes_the_check(tmp_path: Path) -> None:
    modules = [
        "apex_C",
        "amp_C",
        "fast_bottleneck",
        "peer_memory_cuda",
        "nccl_p2p_cuda",
        "fused_conv_bias_relu",
    ]
    assert _extensions_check(tmp_path, modules).returncode == 0


def test_nvidias_cocoapi_comes_from_the_pinned_checkout_and_is_built_here(a100: str) -> None:
    runs = _run_lines(a100)
    source = _index(runs, "cp -a /tmp/mlcc-source/NVIDIA/benchmarks/maskrcnn/implementations/pytorch-22.09/.")
    # copied in the same RUN as the benchmark's checkout, before that checkout is removed
    assert f"cp -a {HPE_COCOAPI} /workspace/object_detection/cocoapi/" in runs[source]
    line = runs[source]
    assert line.index(HPE_COCOAPI) < line.index("rm -rf /tmp/mlcc-source")
    patch = _index(runs, "bash /opt/mlcc/scripts/nvidia-cocoapi.sh")
    cocoapi = _index(runs, "-e cocoapi/PythonAPI")
    maskrcnn = _index(runs, "-e maskrcnn")
    assert source < patch < cocoapi < maskrcnn


def test_dali_is_the_nearest_public_build(a100: str) -> None:
    assert "nvidia-dali-cuda110==1.26.0" in a100
    text = RECIPE.read_text()
    assert "1.17.0" in text and "an inference" in text


@pytest.mark.parametrize(("gpu", "arch"), [("a100", "8.0"), ("h100", "9.0")])
def test_the_extensions_are_compiled_for_the_gpu_asked(kb, resolver, gpu: str, arch: str) -> None:  # type: ignore[no-untyped-def]
    assert f'TORCH_CUDA_ARCH_LIST="{arch}"' in _dockerfile(kb, resolver, gpu)


def test_without_a_gpu_the_image_holds_a100_and_h100_code(kb: KnowledgeBase, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(build_request(kb, "maskrcnn", round_="v2.1"))
    env: Dict[str, str] = dict(stack.benchmark.build.env) if stack.benchmark.build else {}
    assert env["TORCH_CUDA_ARCH_LIST"] == "7.0 8.0 8.6 9.0+PTX"


def test_the_complete_recipe_is_published_and_the_incomplete_ones_are_not(kb: KnowledgeBase) -> None:
    from mlcc.app.published_set import generate_all

    folders = {g.folder for g in generate_all(kb)}
    assert "maskrcnn-v2.1/cuda11.8-cudnn8-ubi8-x86_64" in folders
    for complete in ("bert", "ssd"):
        assert f"{complete}-v2.1/cuda11.8-cudnn8-ubi8-x86_64" in folders
    for incomplete in ("resnet50", "unet3d", "rnnt"):
        assert not any(f.startswith(f"{incomplete}-v2.1/") for f in folders)
    assert "INCOMPLETE" not in RECIPE.read_text()


def _cocoapi_tree(root: Path) -> Path:
    api = root / "cocoapi" / "PythonAPI"
    (api / "pycocotools").mkdir(parents=True)
    (api / "build" / "common").mkdir(parents=True)
    (api / "build" / "common" / "maskApi.o").write_bytes(b"\x7fELF")
    (api / "pycocotools" / "_mask.c").write_text("/* generated in NGC's container */\n")
    (api / "pycocotools" / "_mask.cpython-38-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")
    # the two lines of NVIDIA's cocoapi 2.0+nv0.7.0 setup.py that name NGC's conda numpy
    conda_numpy = "/opt/conda/lib/python3.8/site-packages/numpy/core"
    (api / "setup.py").write_text(
        f"extra_compile_args=['-O3', '-I{conda_numpy}/include'],\n"
        f"extra_link_args=['-lgomp', '-L{conda_numpy}/lib', '-lnpymath'],\n"
    )
    return api


def _python_on_path(tmp_path: Path) -> Dict[str, str]:
    """A PATH whose `python` is this interpreter (the script asks it where numpy is)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "python"
    # a wrapper, not a link: a link to a virtualenv's interpreter leaves the virtualenv
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def test_the_cocoapi_patch_points_setup_py_at_this_images_numpy(tmp_path: Path) -> None:
    numpy = pytest.importorskip("numpy")
    api = _cocoapi_tree(tmp_path)
    subprocess.run(
        ["bash", str(ROUND_SCRIPTS / "nvidia-cocoapi.sh")],
        cwd=tmp_path,
        env=_python_on_path(tmp_path),
        check=True,
    )
    core = os.path.dirname(numpy.get_include())
    setup = (api / "setup.py").read_text()
    assert "/opt/conda" not in setup
    assert f"-I{core}/include" in setup and f"-L{core}/lib" in setup
    # nothing built in NGC's container is left to be linked in
    assert not (api / "build").exists()
    assert not (api / "pycocotools" / "_mask.c").exists()
    assert not list(api.rglob("*.so"))


def test_the_cocoapi_patch_fails_when_setup_py_is_not_the_expected_one(tmp_path: Path) -> None:
    pytest.importorskip("numpy")
    api = _cocoapi_tree(tmp_path)
    (api / "setup.py").write_text("extra_compile_args=['-I/usr/include']\n")
    result = subprocess.run(
        ["bash", str(ROUND_SCRIPTS / "nvidia-cocoapi.sh")],
        cwd=tmp_path,
        env=_python_on_path(tmp_path),
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"fixture drift: {old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("dest: cocoapi}", "dest: ../cocoapi}", "also[0].dest"),
        ("dir: cocoapi/PythonAPI", "dir: ../PythonAPI", "steps[8].dir"),
        ("--nccl_p2p,", "--nccl-p2p,", "steps[1].setup[4]"),
    ],
)
def test_folders_outside_the_work_directory_are_refused(
    recipes_copy: Path, old: str, new: str, field: str
) -> None:
    recipe = recipes_copy / "benchmarks" / "v2.1" / "maskrcnn.yaml"
    _edit(recipe, old, new)
    with pytest.raises(RecipeError) as caught:
        load(str(recipes_copy), use_cache=False)
    assert "recipes/benchmarks/v2.1/maskrcnn.yaml:" in str(caught.value)
    assert field in str(caught.value)


def test_the_helper_scripts_are_shell_that_parses(tmp_path: Path) -> None:
    bash = shutil.which("bash")
    assert bash is not None
    for script in benchmark_scripts("maskrcnn-v2.1", tmp_path):
        subprocess.run([bash, "-n", str(script)], check=True)


def _script(folder: Path, name: str) -> Path:
    """The helper script ``name`` as the maskrcnn-v2.1 image runs it."""
    return next(p for p in benchmark_scripts("maskrcnn-v2.1", folder) if p.name == name)
