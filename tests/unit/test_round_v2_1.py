"""MLPerf Training v2.1's benchmarks, one table per behaviour and one row per benchmark (what only
one benchmark does is a test of its own):

- the images: bert, maskrcnn and ssd (RetinaNet) build what NVIDIA's Dockerfiles and NGC 22.09's
  container gave them: apex with every module each imports, checked by the round's one
  apex-extensions.sh; NVIDIA's cocoapi patched by the round's one nvidia-cocoapi.sh; DALI and its
  operators; mhalib in bert's work directory. So the three join the published set, and the v2.1
  recipes that still say INCOMPLETE (resnet50, unet3d, rnnt) stay out of it. What the DGX H100
  files need and mlcc cannot source is said in the recipe, not faked;
- resolving: each benchmark's NGC release for A100 and H100, or H100's refusal, beside v0.6's
  stacks, which keep their meaning;
- the references: the minutes mlcc scores on NVIDIA's logs;
- launching: at every size NVIDIA ran, mlcc's config_MLCC.sh holds NVIDIA's values.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

import pytest
import yaml

from mlcc.app.results import score_logs
from mlcc.errors import ConflictError, RecipeError, UsageError
from mlcc.kb import load
from mlcc.kb.model import KnowledgeBase, Launch
from mlcc.render import render
from mlcc.render.openshift.launch import Size, bind_file, config_file
from mlcc.resolve.request import build_request
from tests.conftest import REPO, benchmark_scripts
from tests.nvidia_configs import Variable, sourced
from tests.recipe_edits import edit as _edit
from tests.unit.test_results_mllog import _summarizer_score

V21 = REPO / "recipes" / "benchmarks" / "v2.1"
ROUND_SCRIPTS = V21 / "scripts"
APEX = "1d7711100bb58dc761a2fad89f30d41239450f58"
HPE_COCOAPI = "/tmp/mlcc-source/HPE/benchmarks/maskrcnn/implementations/pytorch/cocoapi/."
PLUGINS = ("/usr/local/lib/lib_box_iou.so", "/usr/local/lib/lib_proposal_matcher.so")
PUBLISHED = ("bert", "maskrcnn", "ssd")
# The modules each benchmark imports from apex, as NVIDIA's code at training_results_v2.1
# @158189d imports them
APEX_MODULES = {
    "bert": [
        "apex_C",
        "amp_C",
        "mlp_cuda",
        "fused_dense_cuda",
        "fused_layer_norm_cuda",
        "fmhalib",
        "fast_multihead_attn",
        "fast_layer_norm",
        "fused_adam_cuda",
        "distributed_lamb_cuda",
    ],
    "maskrcnn": [
        "apex_C",
        "amp_C",
        "fast_bottleneck",
        "peer_memory_cuda",
        "nccl_p2p_cuda",
        "fused_conv_bias_relu",
    ],
    "ssd": ["apex_C", "amp_C", "focal_loss_cuda", "fused_conv_bias_relu"],
}


def _recipe(benchmark: str) -> Path:
    return V21 / f"{benchmark}.yaml"


def _own_scripts(benchmark: str) -> Path:
    return V21 / f"{benchmark}.d"


def _dockerfile(kb: KnowledgeBase, resolver, benchmark: str, gpu: str) -> str:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(build_request(kb, benchmark, round_="v2.1", gpu=gpu))
    return dict(render(stack).files)["Dockerfile"]


_A100: Dict[str, str] = {}


def _a100(kb: KnowledgeBase, resolver, benchmark: str) -> str:  # type: ignore[no-untyped-def]
    """The benchmark's A100 Dockerfile, rendered once per test session."""
    if benchmark not in _A100:
        _A100[benchmark] = _dockerfile(kb, resolver, benchmark, "a100")
    return _A100[benchmark]


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


def _python_on_path(tmp_path: Path) -> Dict[str, str]:
    """A PATH whose `python` is this interpreter (a script asks it where numpy is)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "python"
    # a wrapper, not a link: a link to a virtualenv's interpreter leaves the virtualenv
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def _extensions_check(tmp_path: Path, benchmark: str, modules: List[str]) -> subprocess.CompletedProcess[str]:
    """The benchmark's apex-extensions.sh (the round's script, filled with its modules) run
    where ``modules`` are importable."""
    for name in modules:
        (tmp_path / f"{name}.py").write_text("")
    script = next(
        p for p in benchmark_scripts(f"{benchmark}-v2.1", tmp_path) if p.name == "apex-extensions.sh"
    )
    return subprocess.run(
        ["bash", str(script)],
        cwd=tmp_path,
        env={**_python_on_path(tmp_path), "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
    )


# ----------------------------------------------------------------------------- apex


@pytest.mark.parametrize(
    ("benchmark", "options", "before", "after"),
    [
        (
            "bert",
            "--cpp_ext --cuda_ext --fmha --fast_multihead_attn --fast_layer_norm --distributed_lamb"
            " --deprecated_fused_adam",
            "mlperf-common.git@7112e7b73951dcde8e89934e8b5392348bcad198",
            None,
        ),
        (
            "maskrcnn",
            "--cpp_ext --cuda_ext --fast_bottleneck --peer_memory --nccl_p2p --fused_conv_bias_relu",
            None,
            "pip install --no-cache-dir --no-deps -e maskrcnn",  # it compiles against apex
        ),
        ("ssd", "--cpp_ext --cuda_ext --focal_loss --fused_conv_bias_relu", None, None),
    ],
)
def test_apex_builds_every_module_the_benchmark_imports_then_is_checked(
    kb,
    resolver,
    benchmark: str,
    options: str,
    before: Optional[str],
    after: Optional[str],  # type: ignore[no-untyped-def]
) -> None:
    runs = _run_lines(_a100(kb, resolver, benchmark))
    apex = _index(runs, f"git checkout -q --detach {APEX}")
    assert f"python setup.py install {options}" in runs[apex]
    check = _index(runs, "bash /opt/mlcc/scripts/apex-extensions.sh")
    assert apex < check
    if before is not None:
        assert _index(runs, before) < apex
    if after is not None:
        assert check < _index(runs, after)


def test_berts_apex_checks_out_the_submodules_fast_multihead_attn_needs(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    runs = _run_lines(_a100(kb, resolver, "bert"))
    assert "submodule update --init --recursive" in runs[_index(runs, f"git checkout -q --detach {APEX}")]


def test_maskrcnns_apex_builds_where_maskrcnn_compiles_against_it(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    assert "WORKDIR /opt/pytorch/apex" in _a100(
        kb, resolver, "maskrcnn"
    )  # setup.py: -I/opt/pytorch/apex/csrc


@pytest.mark.parametrize(
    ("benchmark", "missing", "message"),
    [
        # fmhalib and distributed_lamb_cuda each need their own setup.py option
        (
            "bert",
            ["fmhalib", "distributed_lamb_cuda"],
            "apex was built without fmhalib, distributed_lamb_cuda",
        ),
        # apex skips fast_bottleneck and fused_conv_bias_relu with a warning when cuDNN looks too old
        ("maskrcnn", ["fast_bottleneck", "fused_conv_bias_relu"], "fast_bottleneck, fused_conv_bias_relu"),
        # apex skips it with a warning when cuDNN looks older than 8.4; ssd's import is in a try
        ("ssd", ["fused_conv_bias_relu"], "apex was built without fused_conv_bias_relu"),
    ],
)
def test_a_build_whose_apex_lacks_a_module_the_benchmark_imports_fails(
    tmp_path: Path, benchmark: str, missing: List[str], message: str
) -> None:
    present = [m for m in APEX_MODULES[benchmark] if m not in missing]
    result = _extensions_check(tmp_path, benchmark, present)
    assert result.returncode != 0
    assert message in result.stderr


@pytest.mark.parametrize("benchmark", PUBLISHED)
def test_a_build_with_every_module_passes_the_check(tmp_path: Path, benchmark: str) -> None:
    result = _extensions_check(tmp_path, benchmark, APEX_MODULES[benchmark])
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("benchmark", PUBLISHED)
@pytest.mark.parametrize(("gpu", "arch"), [("a100", "8.0"), ("h100", "9.0")])
def test_the_extensions_are_compiled_for_the_gpu_asked(
    kb, resolver, benchmark: str, gpu: str, arch: str
) -> None:  # type: ignore[no-untyped-def]
    assert f'TORCH_CUDA_ARCH_LIST="{arch}"' in _dockerfile(kb, resolver, benchmark, gpu)


def test_without_a_gpu_the_image_holds_a100_and_h100_code(kb: KnowledgeBase, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(build_request(kb, "maskrcnn", round_="v2.1"))
    env: Dict[str, str] = dict(stack.benchmark.build.env) if stack.benchmark.build else {}
    assert env["TORCH_CUDA_ARCH_LIST"] == "7.0 8.0 8.6 9.0+PTX"


# ----------------------------------------------------------------------------- cocoapi


@pytest.mark.parametrize(
    ("benchmark", "source", "dest", "order"),
    [
        (
            "maskrcnn",
            "cp -a /tmp/mlcc-source/NVIDIA/benchmarks/maskrcnn/implementations/pytorch-22.09/.",
            "/workspace/object_detection/cocoapi/",
            ["SOURCE", "bash /opt/mlcc/scripts/nvidia-cocoapi.sh", "-e cocoapi/PythonAPI", "-e maskrcnn"],
        ),
        (
            "ssd",
            "cp -a /tmp/mlcc-source/NVIDIA/benchmarks/ssd/implementations/pytorch-22.09/.",
            "/workspace/ssd/cocoapi/",
            [
                "cython==0.29.32 --hash=sha256:",
                "bash /opt/mlcc/scripts/nvidia-cocoapi.sh",
                "pip install --no-cache-dir --no-deps -e cocoapi/PythonAPI",
            ],
        ),
    ],
)
def test_nvidias_cocoapi_comes_from_the_pinned_checkout_and_is_built_here(
    kb,
    resolver,
    benchmark: str,
    source: str,
    dest: str,
    order: List[str],  # type: ignore[no-untyped-def]
) -> None:
    runs = _run_lines(_a100(kb, resolver, benchmark))
    at = _index(runs, source)
    # copied in the same RUN as the benchmark's checkout, before that checkout is removed
    line = runs[at]
    assert f"cp -a {HPE_COCOAPI} {dest}" in line
    assert line.index(HPE_COCOAPI) < line.index("rm -rf /tmp/mlcc-source")
    steps = [at if needle == "SOURCE" else _index(runs, needle) for needle in order]
    assert steps == sorted(steps)


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


# ----------------------------------------------------------------------------- DALI


@pytest.mark.parametrize(
    ("benchmark", "pin"),
    [("maskrcnn", "nvidia-dali-cuda110==1.26.0"), ("ssd", "nvidia-dali-cuda110==1.26.0 --hash=sha256:")],
)
def test_dali_is_the_nearest_public_build(kb, resolver, benchmark: str, pin: str) -> None:  # type: ignore[no-untyped-def]
    assert pin in _a100(kb, resolver, benchmark)
    text = _recipe(benchmark).read_text()
    assert "1.17.0" in text and "an inference" in text


def test_ssds_dali_operators_build_after_dali_and_cmake_and_reach_the_runtime_image(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    build, final = _stages(_a100(kb, resolver, "ssd"))
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


def test_ssds_operators_sources_are_moved_to_dali_1_26s_workspace_type(tmp_path: Path) -> None:
    work = tmp_path / "work"
    csrc = _operator_sources(work)
    result = subprocess.run(
        ["bash", str(_own_scripts("ssd") / "dali-extensions.sh")],
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
        ["bash", str(_own_scripts("ssd") / "dali-extensions.sh")],
        cwd=work,
        env=_stop_at_cmake(tmp_path),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "still names DALI 1.17's workspace types" in result.stderr
    assert not (tmp_path / "cmake-ran").exists()


def test_ssds_requirements_pins_are_installed_with_hashes(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    a100 = _a100(kb, resolver, "ssd")
    for pin in ("scikit-image==0.19.3", "ujson==5.5.0", "pybind11==2.10.0", "pyparsing==3.0.9"):
        assert f"{pin} --hash=sha256:" in a100
    runs = _run_lines(_stages(a100)[0])
    assert (
        "matplotlib==3.5.3 --hash=sha256:" in runs[_index(runs, "cython==0.29.32 --hash=sha256:")]
    )  # pycocotools.coco
    assert "logging.git@62cb0761014922532ff1a4d35d8c2c4021f2e123" in a100
    assert "mlperf-common.git@7112e7b73951dcde8e89934e8b5392348bcad198" in a100


# ----------------------------------------------------------------------------- bert's own


def _final_stage(dockerfile: str) -> str:
    return dockerfile[dockerfile.rindex("\nFROM ") :]


def test_berts_mhalib_is_built_into_the_work_directory_after_the_source_is_there(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    a100 = _a100(kb, resolver, "bert")
    runs = _run_lines(_stages(a100)[0])
    source = _index(runs, "cp -a /tmp/mlcc-source/NVIDIA/benchmarks/bert/implementations/pytorch-22.09/.")
    mhalib = _index(runs, "bash /opt/mlcc/scripts/mhalib.sh")
    assert source < mhalib
    assert "WORKDIR /workspace/bert\nRUN bash /opt/mlcc/scripts/mhalib.sh" in a100


def test_berts_runtime_image_carries_the_venv_the_work_directory_and_the_data_links(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    final = _final_stage(_a100(kb, resolver, "bert"))
    assert "COPY --from=build /opt/mlcc/venv /opt/mlcc/venv" in final  # apex and its modules
    assert "COPY --from=build /workspace/bert /workspace/bert" in final  # the code and mhalib
    assert "RUN bash /opt/mlcc/scripts/link-data.sh" in final  # the links are under /workspace
    # nothing bert runs stays behind in the build stage: the apex checkout is only its source
    assert "/opt/pytorch/apex" not in final


def test_wikiextractor_is_not_in_berts_image_and_the_recipe_says_why(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    assert "wikiextractor" not in _a100(kb, resolver, "bert").lower()
    text = " ".join(_recipe("bert").read_text().split())
    assert "wikiextractor is not in the image" in text
    assert "e4abb4cbd019b0257824ee47c23dd163919b731b" in text


def _mhalib_source(root: Path, built: List[str]) -> None:
    """A mhalib folder whose setup.py `build` writes ``built`` under build/lib.linux-x86_64-3.8."""
    folder = root / "mhalib"
    folder.mkdir()
    (folder / "setup.py").write_text(
        "import pathlib, sys\n"
        "assert sys.argv[1:] == ['build'], sys.argv\n"
        "lib = pathlib.Path('build/lib.linux-x86_64-3.8')\n"
        "lib.mkdir(parents=True)\n"
        f"for name in {built!r}:\n"
        "    (lib / name).write_bytes(b'\\x7fELF')\n"
    )


def test_mhalib_lands_in_the_work_directory_and_its_build_tree_goes(tmp_path: Path) -> None:
    module = "mhalib.cpython-38-x86_64-linux-gnu.so"
    _mhalib_source(tmp_path, [module])
    subprocess.run(
        ["bash", str(_own_scripts("bert") / "mhalib.sh")],
        cwd=tmp_path,
        env=_python_on_path(tmp_path),
        check=True,
    )
    assert (tmp_path / module).read_bytes() == b"\x7fELF"
    assert not (tmp_path / "mhalib" / "build").exists()


def test_a_mhalib_build_that_made_no_module_fails(tmp_path: Path) -> None:
    _mhalib_source(tmp_path, [])
    result = subprocess.run(
        ["bash", str(_own_scripts("bert") / "mhalib.sh")],
        cwd=tmp_path,
        env=_python_on_path(tmp_path),
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "expected one mhalib*.so" in result.stderr
    assert not list(tmp_path.glob("mhalib*.so"))


def test_berts_data_links_are_the_folders_run_and_time_reads() -> None:
    script = (_own_scripts("bert") / "link-data.sh").read_text()
    # run_and_time.sh's --input_dir, --init_checkpoint/--bert_config_path and --eval_dir
    for mount in ("/workspace/data_phase2", "/workspace/phase1", "/workspace/evaldata"):
        assert f" {mount}\n" in script
    assert "ln -sfn /data/hdf5/training-4320/hdf5_4320_shards_varlength /workspace/data_phase2" in script


def test_berts_recipe_says_which_kernels_have_no_h100_code() -> None:
    text = " ".join(_recipe("bert").read_text().split())
    assert "mhalib's setup.py names sm_70, sm_80 and compute_80 PTX" in text
    assert "apex's fmhalib is built for sm_80 only" in text


def test_berts_h100_files_are_kept_and_the_recipe_says_they_need_what_mlcc_cannot_source(
    kb: KnowledgeBase,
) -> None:
    bench = kb.benchmarks["bert-v2.1"]
    assert bench.build is not None and bench.build.launch is not None
    h100 = [c for c in bench.build.launch.configs if c.node_shape == "DGXH100"]
    assert [c.file for c in h100] == ["config_DGXH100_1x8x48x1_pack.sh", "config_DGXH100_4x8x48x1_pack.sh"]
    assert all("--use_transformer_engine2" in dict(c.exports)["EXTRA_PARAMS"] for c in h100)
    text = " ".join(_recipe("bert").read_text().split())
    assert "unrecognized arguments: --use_transformer_engine2" in text
    assert "so mlcc pins none" in text
    # no TransformerEngine is installed by any step
    assert "transformer" not in str(bench.build.steps).lower()


# ----------------------------------------------------------------------------- maskrcnn's own


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


# ----------------------------------------------------------------------------- published


@pytest.mark.parametrize("benchmark", PUBLISHED)
def test_the_complete_recipes_are_published(kb: KnowledgeBase, benchmark: str) -> None:
    from mlcc.app.published_set import generate_all

    folders = {g.folder for g in generate_all(kb)}
    assert f"{benchmark}-v2.1/cuda11.8-cudnn8-ubi8-x86_64" in folders
    assert "INCOMPLETE" not in _recipe(benchmark).read_text()


def test_the_incomplete_recipes_are_not_published(kb: KnowledgeBase) -> None:
    from mlcc.app.published_set import generate_all

    folders = {g.folder for g in generate_all(kb)}
    for incomplete in ("resnet50", "unet3d", "rnnt"):
        assert not any(f.startswith(f"{incomplete}-v2.1/") for f in folders)


@pytest.mark.parametrize(
    ("benchmark", "scripts"),
    [
        ("bert", ["apex-extensions.sh", "link-data.sh", "mhalib.sh"]),
        ("maskrcnn", ["apex-extensions.sh", "link-coco.sh", "nvidia-cocoapi.sh"]),
        ("ssd", ["apex-extensions.sh", "dali-extensions.sh", "nvidia-cocoapi.sh"]),
    ],
)
def test_the_helper_scripts_are_shell_that_parses(tmp_path: Path, benchmark: str, scripts: List[str]) -> None:
    bash = shutil.which("bash")
    assert bash is not None
    written = benchmark_scripts(f"{benchmark}-v2.1", tmp_path)
    assert [s.name for s in written] == scripts
    for script in written:
        subprocess.run([bash, "-n", str(script)], check=True)


# ============================================================================= resolving
#
# NGC 22.09's stack for maskrcnn, bert and ssd (issue 27), resolved for A100 and H100; NGC
# 22.04's for resnet50 and unet3d (NVIDIA's MXNet: the nearest public one is PyPI's mxnet-cu112
# 1.9.1, whose device code stops at sm_86) and rnnt (PyTorch 1.12.0a0+bd13bc6): CUDA 11.6 cannot
# compile for sm_90, so H100 is refused with the CUDA it needs named. v0.6's stacks keep their
# meaning.

NGC_22_09_TORCH = "1.13.0a0+d0d6b1f"
NGC_22_04_TORCH = "1.12.0a0+bd13bc6"
APEX_22_04_DEV = "9263bc8c6c16555bd55dd759f1a1b8c0cd187d10"
NGC_22_04 = {"cuda": "11.6.2", "cudnn": "8.4.0.27", "nccl": "2.12.10", "python": "3.8", "base": "ubi8"}


@pytest.mark.parametrize(
    ("benchmark", "round_", "gpu", "expected"),
    [
        # bert, unet3d and rnnt exist in v2.1 only, so they need no --round; maskrcnn, ssd and
        # resnet50 have a v0.6 recipe too and are asked with --round v2.1
        *[
            (benchmark, round_, gpu, {"cuda": "11.8.0", "framework": NGC_22_09_TORCH, "python": "3.8"})
            for benchmark, round_ in [("maskrcnn", "v2.1"), ("bert", None), ("bert", "v2.1"), ("ssd", "v2.1")]
            for gpu in ("a100", "h100")
        ],
        ("resnet50", "v2.1", "a100", {**NGC_22_04, "framework": "1.9.1"}),
        ("unet3d", None, "a100", {**NGC_22_04, "framework": "1.9.1"}),
        ("rnnt", None, "a100", {**NGC_22_04, "framework": NGC_22_04_TORCH}),
    ],
)
def test_v2_1_resolves_to_its_ngc_release_with_cuda_for_the_gpu(
    kb: KnowledgeBase,
    resolver,
    benchmark: str,
    round_: Optional[str],
    gpu: str,
    expected: Dict[str, str],  # type: ignore[no-untyped-def]
) -> None:
    stack = resolver.resolve(build_request(kb, benchmark, round_=round_, gpu=gpu))
    assert stack.benchmark.name == f"{benchmark}-v2.1" and stack.benchmark.round == "v2.1"
    found = {
        "cuda": stack.cuda.version if stack.cuda else None,
        "cudnn": stack.cudnn.version if stack.cudnn else None,
        "nccl": stack.nccl.version if stack.nccl else None,
        "framework": stack.framework.version if stack.framework else None,
        "python": stack.python.version if stack.python else None,
        "base": stack.base.name,
    }
    assert {key: found[key] for key in expected} == expected
    assert stack.gpu_capability == kb.gpus[gpu].compute_capability


def test_unet3d_gets_resnet50s_mxnet_stack(kb: KnowledgeBase, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(build_request(kb, "unet3d", gpu="a100"))
    resnet = resolver.resolve(build_request(kb, "resnet50", round_="v2.1", gpu="a100"))
    assert stack.framework == resnet.framework and stack.cuda == resnet.cuda


@pytest.mark.parametrize(
    ("benchmark", "round_", "also"),
    [("resnet50", "v2.1", ""), ("unet3d", None, ""), ("rnnt", None, "11.6.2")],
)
def test_on_h100_the_refusal_names_the_cuda_sm_90_needs(
    kb: KnowledgeBase,
    resolver,
    benchmark: str,
    round_: Optional[str],
    also: str,  # type: ignore[no-untyped-def]
) -> None:
    with pytest.raises(ConflictError) as caught:
        resolver.resolve(build_request(kb, benchmark, round_=round_, gpu="h100"))
    message = str(caught.value)
    assert "sm_90" in message and "CUDA >= 11.8" in message and also in message


def test_the_ngc_22_09_build_targets_a100_and_h100(kb: KnowledgeBase) -> None:
    """Its TORCH_CUDA_ARCH_LIST names both GPUs' own compute capabilities (+PTX only adds JIT
    code for newer GPUs, so 9.0+PTX counts as 9.0)."""
    build = next(b for b in kb.frameworks["pytorch"].builds if b.version == NGC_22_09_TORCH)
    arch_list = dict(build.install.build_env)["TORCH_CUDA_ARCH_LIST"].split()
    native = {entry.split("+")[0] for entry in arch_list}
    assert {kb.gpus["a100"].compute_capability, kb.gpus["h100"].compute_capability} <= native
    assert arch_list[-1].endswith("+PTX")


def test_the_ngc_22_04_build_targets_a100_and_cannot_target_h100(kb: KnowledgeBase) -> None:
    """CUDA 11.6's nvcc stops at compute capability 8.6: the arch list names A100's 8.0 and no
    9.0, and the build claims CUDA 11.6 only."""
    build = next(b for b in kb.frameworks["pytorch"].builds if b.version == NGC_22_04_TORCH)
    assert build.cuda == ("11.6",) and build.variant == "ngc22.04-src"
    arch_list = dict(build.install.build_env)["TORCH_CUDA_ARCH_LIST"].split()
    native = {entry.split("+")[0] for entry in arch_list}
    assert kb.gpus["a100"].compute_capability in native
    assert kb.gpus["h100"].compute_capability not in native
    assert max(float(arch) for arch in native) < 9.0


def test_the_mxnet_build_on_cuda_11_6_is_an_inference_that_says_which_gpus_it_runs_on(
    kb: KnowledgeBase,
) -> None:
    build = next(
        b for b in kb.frameworks["mxnet"].builds if b.version == "1.9.1" and b.variant == "cu112-cuda11.6"
    )
    assert build.cuda == ("11.6",)
    assert build.install.packages == ("mxnet-cu112==1.9.1",)
    assert build.prov.verified is False
    note = str(build.prov.note)
    assert "An inference" in note and "sm_80" in note and "H100 (9.0) cannot" in note


def test_the_recorded_wheel_links_what_the_cuda_11_6_build_claims(kb: KnowledgeBase) -> None:
    """mlcc kb check's own rule on the wheel kb check read (recipes/wheel-files.json): CUDA 11
    keeps one runtime soname, libcudart.so.11.0, so a claim of CUDA 11.6 agrees with the cu112
    wheel; and the cuDNN range admits only the cuDNN 8 it links."""
    from mlcc.kbtools.bundles import ERROR
    from mlcc.kbtools.offline import load_wheel_record
    from mlcc.kbtools.wheels import linked_findings

    record = load_wheel_record(str(REPO / "recipes"))
    assert record is not None
    facts = record["mxnet_cu112-1.9.1-py3-none-manylinux2014_x86_64.whl"]
    assert "libcudart.so.11.0" in facts["needed"]["mxnet/libmxnet.so"]
    build = next(
        b for b in kb.frameworks["mxnet"].builds if b.version == "1.9.1" and b.variant == "cu112-cuda11.6"
    )
    assert [f for f in linked_findings(build, kb, facts, set()) if f.severity == ERROR] == []
    wrong = build._replace(cuda=("10.2",))
    assert [f for f in linked_findings(wrong, kb, facts, set()) if f.severity == ERROR]


@pytest.mark.parametrize(
    ("benchmark", "cuda", "framework"),
    [("maskrcnn", "10.1", None), ("ssd", None, None), ("resnet50", None, "1.5.1")],
)
def test_without_a_round_the_v0_6_benchmarks_stay_v0_6(
    kb: KnowledgeBase,
    resolver,
    benchmark: str,
    cuda: Optional[str],
    framework: Optional[str],  # type: ignore[no-untyped-def]
) -> None:
    """The seed command (maskrcnn --cuda 10.1) keeps its meaning."""
    stack = resolver.resolve(build_request(kb, benchmark, cuda=cuda))
    assert stack.benchmark.name == benchmark and stack.benchmark.round == "v0.6"
    if framework is not None:
        assert stack.framework is not None and stack.framework.version == framework


def test_v0_6_on_h100_points_at_round_v2_1(kb: KnowledgeBase, resolver) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConflictError) as caught:
        resolver.resolve(build_request(kb, "maskrcnn", gpu="h100"))
    assert "--round v2.1 resolves maskrcnn for it (CUDA 11.8.0)" in str(caught.value)


def test_an_appended_release_cites_its_own_sources(kb: KnowledgeBase) -> None:
    """Its sources sit in the release, so no line above older releases moved (their origins
    are in published stack.json files)."""
    build = next(b for b in kb.frameworks["pytorch"].builds if b.version == NGC_22_09_TORCH)
    assert any("rel-22-09" in source for source in build.prov.source)
    older = next(b for b in kb.frameworks["pytorch"].builds if b.version == "1.1.0a0+828a6a3")
    assert older.prov.origin == "recipes/frameworks/pytorch.yaml:74"


# ----------------------------------------------------------------------------- what the recipes say


@pytest.mark.parametrize(
    ("benchmark", "where", "words"),
    [
        ("bert-v2.1", "benchmark", ["by inference"]),  # the H100 stack
        ("resnet50-v2.1", "benchmark", ["no public MXNet", "CUDA >= 11.8", "an inference"]),
        ("rnnt-v2.1", "benchmark", ["REDACTED", "sm_90", "CUDA >= 11.8"]),
        # unet3d's image does not run NVIDIA's model: the operators only NGC's MXNet has
        ("unet3d-v2.1", "benchmark", ["InstanceNormV2", "SpatialParallelConv3D"]),
        ("unet3d-v2.1", "build", ["INCOMPLETE", "InstanceNormV2", "SpatialParallelConv3D"]),
    ],
)
def test_the_recipe_says_what_is_inferred_and_why_h100_is_refused(
    kb: KnowledgeBase, benchmark: str, where: str, words: List[str]
) -> None:
    bench = kb.benchmarks[benchmark]
    assert bench.build is not None
    note = str(bench.prov.note if where == "benchmark" else bench.build.prov.note)
    for word in words:
        assert word in note, word


def test_rnnt_is_marked_incomplete_and_not_published(kb: KnowledgeBase) -> None:
    bench = kb.benchmarks["rnnt-v2.1"]
    assert bench.build is not None and str(bench.build.prov.note).startswith("INCOMPLETE:")
    matrix = yaml.safe_load((REPO / "recipes" / "matrix.yaml").read_text())
    assert "rnnt" not in str(matrix)


@pytest.mark.parametrize(
    ("benchmark", "pins"),
    [
        (
            "bert-v2.1",
            [
                "logging.git@62cb0761014922532ff1a4d35d8c2c4021f2e123",
                "mlperf-common.git@7112e7b73951dcde8e89934e8b5392348bcad198",
            ],
        ),
        ("resnet50-v2.1", ["logging.git@4272f73c952d9b22c735aef88640699700d5a0b8"]),
        (
            "rnnt-v2.1",
            [
                "logging.git@4272f73c952d9b22c735aef88640699700d5a0b8",
                "dllogger.git@26a0f8f1958de2c0c460925ff6102a4d2486d6cc",
                "librosa==0.8.0",
                "sentencepiece==0.1.94",
                "soundfile==0.10.3.post1",
                "sox==1.4.1",
            ],
        ),
    ],
)
def test_nvidias_requirements_are_installed_at_full_commits(
    kb: KnowledgeBase, benchmark: str, pins: List[str]
) -> None:
    text = str(kb.benchmarks[benchmark].build)
    for pin in pins:
        assert pin in text, pin


def test_unet3ds_pip_steps_pin_every_package_and_git_ref(kb: KnowledgeBase) -> None:
    build = kb.benchmarks["unet3d-v2.1"].build
    assert build is not None
    for step in build.steps:
        for requirement in step.packages:
            assert "==" in requirement or "@" in requirement, requirement
            if "@" in requirement:
                assert len(requirement.rsplit("@", 1)[1]) == 40, requirement


def test_rnnts_apex_is_the_22_04_dev_tip_built_with_every_module_rnnt_imports(kb: KnowledgeBase) -> None:
    """The apex step's setup options, and the check script that fails the build if apex skipped
    one: --cpp_ext gives apex_C; --cuda_ext amp_C, mlp_cuda and fused_dense_cuda; --distributed_lamb
    and --deprecated_fused_adam the two modules DistributedFusedLAMB loads; --transducer the joint
    and loss rnnt/model.py and rnnt/loss.py import."""
    bench = kb.benchmarks["rnnt-v2.1"]
    assert bench.build is not None
    text = str(bench.build)
    assert APEX_22_04_DEV in text
    for option in (
        "--cpp_ext",
        "--cuda_ext",
        "--distributed_lamb",
        "--deprecated_fused_adam",
        "--transducer",
    ):
        assert option in text
    script = dict(bench.build.scripts)["apex-extensions.sh"]
    wanted = set(re.findall(r'^\s+"(\w+)",$', script, flags=re.M))
    assert wanted == {
        "apex_C",
        "amp_C",
        "mlp_cuda",
        "fused_dense_cuda",
        "distributed_lamb_cuda",
        "fused_adam_cuda",
        "transducer_joint_cuda",
        "transducer_loss_cuda",
    }


# ----------------------------------------------------------------------------- references and scores

RESULTS = REPO / "tests" / "data" / "mlperf-v2.1" / "NVIDIA" / "results"


@pytest.mark.parametrize(
    ("benchmark", "minutes", "runs", "gpu"),
    [
        ("maskrcnn-v2.1", 40.13, 5, None),
        ("bert-v2.1", 16.88, 10, None),
        ("unet3d-v2.1", 23.82, 40, None),  # NVIDIA's one-node A100 score over 40 runs
        ("rnnt-v2.1", 30.81, 10, "a100"),
    ],
)
def test_the_reference_minutes_are_what_mlcc_scores_on_nvidias_a100_runs(
    kb: KnowledgeBase, benchmark: str, minutes: float, runs: int, gpu: Optional[str]
) -> None:
    build = kb.benchmarks[benchmark].build
    assert build is not None and build.reference is not None
    assert (build.reference.minutes, build.reference.runs) == (minutes, runs)
    if gpu is not None:
        assert build.reference.gpu == gpu


def test_rnnts_h100_reference_is_its_preview_score(kb: KnowledgeBase) -> None:
    build = kb.benchmarks["rnnt-v2.1"].build
    assert build is not None
    [h100] = build.gpu_references
    assert (h100.minutes, h100.runs, h100.gpu) == (18.20, 10, "h100")


def test_resnet50s_reference_minutes_are_mlccs_score_of_nvidias_a100_logs(kb: KnowledgeBase) -> None:
    bench = kb.benchmarks["resnet50-v2.1"]
    assert bench.build is not None and bench.build.reference is not None
    reference = bench.build.reference
    scored = score_logs(kb, [str(RESULTS / "dgxa100_ngc22.04_mxnet" / "resnet")])
    assert len(scored.scores) == 1
    score = scored.scores[0].as_json()
    assert score["benchmark"] == reference.log_name == "resnet"
    assert round(float(score["score_minutes"]), 2) == reference.minutes == 28.81
    assert reference.runs == score["required_runs"] == 5


@pytest.mark.parametrize(
    ("folder", "minutes"), [("dgxa100_ngc22.04_pytorch", 30.81), ("dgxh100_preview", 18.20)]
)
def test_mlcc_scores_nvidias_rnnt_folders_as_mlcommons_summarizer_does(
    kb: KnowledgeBase, folder: str, minutes: float
) -> None:
    """mlperf-logging's result_summarizer (the test extra; its 2.1.0 compliance check passes on
    these logs) and mlcc give the same score, to 0.01 minute: 10 runs, olympic mean."""
    where = RESULTS / folder / "rnnt"
    scored = score_logs(kb, [str(where)])
    assert len(scored.scores) == 1
    mine = scored.scores[0].as_json()
    assert mine["benchmark"] == "rnnt" and mine["round"] == "v2.1" and mine["state"] == "complete"
    assert mine["required_runs"] == 10
    assert round(float(mine["score_minutes"]), 2) == minutes
    assert abs(float(mine["score_minutes"]) - _summarizer_score(where, "rnnt")) < 0.01


# ============================================================================= launching
#
# At every size NVIDIA ran a v2.1 benchmark, mlcc's config_MLCC.sh holds NVIDIA's values, and the
# stack's GPU picks NVIDIA's file for that GPU. NVIDIA's v2.1 files
# (tests/data/mlperf-v2.1/NVIDIA/benchmarks, byte for byte; tests/data/README.md lists them) and
# the file mlcc writes for the same size and GPU are both sourced by a real bash; every variable
# NVIDIA's file sets must come out with the same value.

COMMIT = "158189d4cbfbee366c10da1f0f086c85d8f15b5f"
NVIDIA = REPO / "tests" / "data" / "mlperf-v2.1"
# recipe id -> NVIDIA's folder of its implementations
FOLDERS = {
    "maskrcnn-v2.1": Path("NVIDIA/benchmarks/maskrcnn/implementations"),
    "bert-v2.1": Path("NVIDIA/benchmarks/bert/implementations"),
    "ssd-v2.1": Path("NVIDIA/benchmarks/ssd/implementations"),
    "resnet50-v2.1": Path("NVIDIA/benchmarks/resnet/implementations"),
    "unet3d-v2.1": Path("NVIDIA/benchmarks/unet3d/implementations"),
    "rnnt-v2.1": Path("NVIDIA/benchmarks/rnnt/implementations"),
}
# (recipe id, implementation folder, file): every file the v2.1 recipes carry. Mask R-CNN: DGX
# A100 at 1 and 48 nodes, DGX H100 at 1 and 4. BERT: DGX A100 at 1 and 8, DGX H100 at 1 and 4.
# SSD (RetinaNet): DGX A100 at 1, 8, 160 and 256, DGX H100 at 1 and 4. ResNet-50: DGX A100 at 1,
# 8, 128 and 527, DGX H100 at 1 and 4 (with the config_DGXA100_common.sh each sources). 3D U-Net:
# DGX A100 at 1, 9 and 96, DGX H100 at 1 and 3. RNN-T: the sizes it has result folders of.
FILES: List[Tuple[str, str, str]] = [
    ("maskrcnn-v2.1", "pytorch-22.09", "config_DGXA100.sh"),
    ("maskrcnn-v2.1", "pytorch-22.09", "config_DGXA100_multi.sh"),
    ("maskrcnn-v2.1", "pytorch-preview", "config_DGXH100.sh"),
    ("maskrcnn-v2.1", "pytorch-preview", "config_DGXH100_multi_4x8x4.sh"),
    ("bert-v2.1", "pytorch-22.09", "config_DGXA100_1x8x56x1.sh"),
    ("bert-v2.1", "pytorch-22.09", "config_DGXA100_8x8x48x1.sh"),
    ("bert-v2.1", "pytorch-preview", "config_DGXH100_1x8x48x1_pack.sh"),
    ("bert-v2.1", "pytorch-preview", "config_DGXH100_4x8x48x1_pack.sh"),
    ("ssd-v2.1", "pytorch-22.09", "config_DGXA100_001x08x032.sh"),
    ("ssd-v2.1", "pytorch-22.09", "config_DGXA100_008x08x004.sh"),
    ("ssd-v2.1", "pytorch-22.09", "config_DGXA100_160x08x001.sh"),
    ("ssd-v2.1", "pytorch-22.09", "config_DGXA100_256x08x001.sh"),
    ("ssd-v2.1", "pytorch-preview", "config_DGXH100_001x08x032.sh"),
    ("ssd-v2.1", "pytorch-preview", "config_DGXH100_004x08x008.sh"),
    ("resnet50-v2.1", "mxnet-22.04", "config_DGXA100.sh"),
    ("resnet50-v2.1", "mxnet-22.04", "config_DGXA100_multi_8x8x51.sh"),
    ("resnet50-v2.1", "mxnet-22.04", "config_DGXA100_multi_128x8x35.sh"),
    ("resnet50-v2.1", "mxnet-22.04", "config_DGXA100_multi_527x8x16xgbn2_larsv2.sh"),
    ("resnet50-v2.1", "mxnet-preview", "config_DGXH100.sh"),
    ("resnet50-v2.1", "mxnet-preview", "config_DGXH100_multi_4x8x100.sh"),
    ("unet3d-v2.1", "mxnet-22.04", "config_DGXA100_1x8x7.sh"),
    ("unet3d-v2.1", "mxnet-22.04", "config_DGXA100_9x8x1.sh"),
    ("unet3d-v2.1", "mxnet-22.04", "config_DGXA100_96x8x1.sh"),
    ("unet3d-v2.1", "mxnet-preview", "config_DGXH100_1x8x7.sh"),
    ("unet3d-v2.1", "mxnet-preview", "config_DGXH100_3x8x1.sh"),
    ("rnnt-v2.1", "pytorch-22.04", "config_DGXA100_1x8x192x1.sh"),
    ("rnnt-v2.1", "pytorch-22.04", "config_DGXA100_8x8x32x1.sh"),
    ("rnnt-v2.1", "pytorch-22.04", "config_DGXA100_192x8x4x1.sh"),
    ("rnnt-v2.1", "pytorch-preview", "config_DGXH100_1x8x192x1.sh"),
    ("rnnt-v2.1", "pytorch-preview", "config_DGXH100_4x8x64x1.sh"),
]
# What is not compared, per benchmark. Everywhere: Slurm's walltime (and the minutes it is made
# of) and the file's own name (DGXSYSTEM): an OpenShift run has no wall-time limit from the file,
# and mlcc's file is config_MLCC.sh. BERT's DATADIR_PHASE2 is the host directory docker mounts
# (the OpenShift run mounts the dataset volume), SSD's MLPERF_LOGIN_HOST and MLPERF_HOST_CONFIG
# look up a data-path file by the login host's name; RNN-T's host paths run.sub mounts (the
# OpenShift run mounts the dataset volume at /datasets instead), and hyperparameters_auto.sh's
# arithmetic, whose outcome (the hyperparameters file it sources) counts.
SLURM = {"DGXSYSTEM", "WALLTIME", "WALLTIME_MINUTES"}
PYTORCH_22_09_HOSTS = {"DATADIR_PHASE2", "MLPERF_LOGIN_HOST", "MLPERF_HOST_CONFIG"}
NOT_COMPARED = {
    "maskrcnn-v2.1": SLURM | PYTORCH_22_09_HOSTS,
    "bert-v2.1": SLURM | PYTORCH_22_09_HOSTS,
    "ssd-v2.1": SLURM | PYTORCH_22_09_HOSTS,
    "resnet50-v2.1": SLURM,
    "unet3d-v2.1": SLURM,
    "rnnt-v2.1": SLURM
    | {"SINGLE_EXP_WALLTIME", "DATADIR", "METADATA_DIR", "SENTENCEPIECES_DIR", "_GBS", "_PROXY_GBS"},
}
# NVIDIA's files export the system shape, mlcc's file sets it for run_and_time.sh, which sources
# it in the same shell: the value counts, not the export.
VALUE_ONLY = {"DGXNNODES", "DGXNGPU", "DGXSOCKETCORES", "DGXNSOCKET", "DGXHT"}
MLCC_ONLY = {"DGXIBDEVICES", "BIND_LAUNCH"}
GPU_OF_SHAPE = {"DGXA100": "a100", "DGXH100": "h100"}
MXNET = ("resnet50-v2.1", "unet3d-v2.1")


def _launch(kb: KnowledgeBase, benchmark: str) -> Launch:
    build = kb.benchmarks[benchmark].build
    assert build is not None and build.launch is not None
    return build.launch


def _nvidia(benchmark: str, implementation: str, file: str) -> Dict[str, Variable]:
    return sourced(NVIDIA / FOLDERS[benchmark] / implementation / file)


def _capability(kb: KnowledgeBase, file: str) -> str:
    return kb.gpus["h100" if "H100" in file else "a100"].compute_capability


def _started_from(text: str) -> str:
    line = next(x for x in text.splitlines() if x.startswith("# Started from NVIDIA's "))
    return line.split()[4]


@pytest.mark.parametrize("benchmark", sorted(FOLDERS))
def test_each_v2_1_recipe_carries_nvidias_files_with_their_sources(kb: KnowledgeBase, benchmark: str) -> None:
    launch = _launch(kb, benchmark)
    by_file = {config.file: config for config in launch.configs}
    ours = [(implementation, file) for b, implementation, file in FILES if b == benchmark]
    assert sorted(by_file) == sorted(file for _, file in ours)
    for implementation, name in ours:
        config = by_file[name]
        upstream = FOLDERS[benchmark] / implementation / name
        assert config.source == f"github:mlcommons/training_results_v2.1 @{COMMIT} {upstream}"
        nvidia = _nvidia(benchmark, implementation, name)
        assert (config.nodes, config.gpus_per_node) == (
            int(str(nvidia["DGXNNODES"].value)),
            int(str(nvidia["DGXNGPU"].value)),
        )
        shape = launch.shape(config.node_shape)
        assert shape.name == ("DGXH100" if "H100" in name else "DGXA100")
        assert shape.socket_cores == int(str(nvidia["DGXSOCKETCORES"].value))
        if benchmark != "rnnt-v2.1":
            assert shape.sockets == int(str(nvidia["DGXNSOCKET"].value))
        if benchmark not in MXNET and benchmark != "rnnt-v2.1":
            assert shape.gpu == GPU_OF_SHAPE[shape.name]
            assert shape.gpu_capability == kb.gpus[GPU_OF_SHAPE[shape.name]].compute_capability


@pytest.mark.parametrize(("benchmark", "gpus"), [("resnet50-v2.1", 4216), ("unet3d-v2.1", 768)])
def test_the_mxnet_recipes_reach_nvidias_largest_run(kb: KnowledgeBase, benchmark: str, gpus: int) -> None:
    assert max(c.nodes * c.gpus_per_node for c in _launch(kb, benchmark).configs) == gpus


@pytest.mark.parametrize(("benchmark", "implementation", "file"), [f for f in FILES if f[0] in MXNET])
def test_each_mxnet_config_in_the_recipe_exports_what_nvidias_file_exports(
    kb: KnowledgeBase, benchmark: str, implementation: str, file: str
) -> None:
    nvidia = _nvidia(benchmark, implementation, file)
    config = next(c for c in _launch(kb, benchmark).configs if c.file == file)
    assert dict(config.settings) == {}
    expected = {
        name: variable.value
        for name, variable in nvidia.items()
        if variable.exported and name not in NOT_COMPARED[benchmark] | VALUE_ONLY
    }
    assert dict(config.exports) == expected


# One DGX H100 and one DGX A100 of the MXNet benchmarks are the same size (1 x 8): they are asked
# without a GPU (a launch picks by GPU only for a stack resolved with --gpu), so 1 x 8 starts from
# the DGX A100 file, and the DGX H100 files' values are checked in the recipe (the test above).
MXNET_SAME_SIZE = {("resnet50-v2.1", "config_DGXH100.sh"), ("unet3d-v2.1", "config_DGXH100_1x8x7.sh")}
# Variables each benchmark's file must set: any or all of them (the MXNet ones: no check)
SETS: Dict[str, Tuple[str, Set[str]]] = {
    "maskrcnn-v2.1": ("any", {"BATCHSIZE", "EXTRA_PARAMS"}),
    "bert-v2.1": ("any", {"BATCHSIZE", "EXTRA_PARAMS"}),
    "ssd-v2.1": ("any", {"BATCHSIZE", "EXTRA_PARAMS"}),
    "rnnt-v2.1": ("all", {"BATCHSIZE", "LR", "EPOCH", "APEX_JOINT"}),
}


@pytest.mark.parametrize(
    ("benchmark", "implementation", "file"), [f for f in FILES if (f[0], f[2]) not in MXNET_SAME_SIZE]
)
def test_at_every_v2_1_size_nvidia_ran_mlcc_writes_nvidias_values(
    kb: KnowledgeBase, tmp_path: Path, benchmark: str, implementation: str, file: str
) -> None:
    """NVIDIA's file (with the hyperparameters_*.sh, config_common_*.sh or
    config_DGXA100_common.sh it sources) and the config_MLCC.sh mlcc writes for the same size
    (and GPU, but for the MXNet benchmarks), both sourced by a real bash."""
    nvidia = _nvidia(benchmark, implementation, file)
    size = Size(nodes=int(str(nvidia["DGXNNODES"].value)), gpus=int(str(nvidia["DGXNGPU"].value)))
    launch = _launch(kb, benchmark)
    capability = None if benchmark in MXNET else _capability(kb, file)
    # the name the run is for: the MXNet ones' tests ask by id, the others' by name
    name = benchmark if benchmark in MXNET else benchmark.removesuffix("-v2.1")
    text = config_file(launch, size, name, capability)
    config = next(c for c in launch.configs if c.file == file)
    if config.image_lacks is not None:
        # kept with NVIDIA's values, but the image cannot run it: the run starts elsewhere and
        # says so
        assert _started_from(text) != file
        assert f"#   {file}: " in text and "# Passed over: " in text
        for name, value in config.exports:
            assert nvidia[name].value == value, name
        return
    assert re.search(rf"^# Started from NVIDIA's {re.escape(file)} ", text, re.M), text
    written = tmp_path / "config_MLCC.sh"
    written.write_text(text)
    ours = sourced(written)
    compared = set(nvidia) - NOT_COMPARED[benchmark]
    assert compared <= set(ours), sorted(compared - set(ours))
    for name in sorted(compared):
        if name in VALUE_ONLY:
            assert ours[name].value == nvidia[name].value, name
        else:
            assert ours[name] == nvidia[name], name
    assert set(ours) - set(nvidia) <= MLCC_ONLY, sorted(set(ours) - set(nvidia))
    if benchmark in SETS:
        how, names = SETS[benchmark]
        assert names <= set(ours) if how == "all" else names & set(ours)


# (benchmark, --gpu, --nodes): the file the run manifests start from.
BY_GPU: List[Tuple[str, str, int, str]] = [
    ("bert", "a100", 1, "config_DGXA100_1x8x56x1.sh"),
    # NVIDIA's DGX H100 file for that size needs what the image lacks (image_lacks): the same
    # size's DGX A100 file, on DGX H100 nodes
    ("bert", "h100", 1, "config_DGXA100_1x8x56x1.sh"),
    ("maskrcnn", "a100", 1, "config_DGXA100.sh"),
    ("maskrcnn", "h100", 1, "config_DGXH100.sh"),
    ("ssd", "a100", 1, "config_DGXA100_001x08x032.sh"),
    ("ssd", "h100", 1, "config_DGXA100_001x08x032.sh"),
    # 4 nodes: H100 has NVIDIA's file for 32 GPUs; A100's nearest is its 8-node file (64 GPUs).
    ("ssd", "h100", 4, "config_DGXH100_004x08x008.sh"),
    ("ssd", "a100", 4, "config_DGXA100_008x08x004.sh"),
    ("rnnt", "a100", 1, "config_DGXA100_1x8x192x1.sh"),
    ("rnnt", "a100", 8, "config_DGXA100_8x8x32x1.sh"),
    ("rnnt", "a100", 192, "config_DGXA100_192x8x4x1.sh"),
]


@pytest.mark.parametrize(("benchmark", "gpu", "nodes", "file"), BY_GPU)
def test_the_gpu_of_the_stack_picks_nvidias_file_for_that_gpu(
    kb: KnowledgeBase, benchmark: str, gpu: str, nodes: int, file: str
) -> None:
    capability = kb.gpus[gpu].compute_capability
    text = config_file(_launch(kb, f"{benchmark}-v2.1"), Size(nodes=nodes, gpus=8), benchmark, capability)
    assert _started_from(text) == file
    if benchmark != "rnnt":
        machine = "DGXH100" if gpu == "h100" else "DGXA100"
        assert f" on {machine} nodes:" in text.splitlines()[1]


def test_without_a_gpu_the_recipes_first_file_for_the_size_is_kept(kb: KnowledgeBase) -> None:
    """No --gpu: the choice is by size alone, as for v0.6 (the recipe's first file of that size)."""
    text = config_file(_launch(kb, "bert-v2.1"), Size(nodes=1, gpus=8), "bert", None)
    assert _started_from(text) == "config_DGXA100_1x8x56x1.sh"


@pytest.mark.parametrize(
    ("benchmark", "gpu", "file", "values"),
    [
        ("bert", "a100", "config_DGXA100_1x8x56x1.sh", {"BATCHSIZE": "56"}),
        ("bert", "h100", "config_DGXA100_1x8x56x1.sh", {"BATCHSIZE": "56"}),
        ("rnnt", "a100", "config_DGXA100_1x8x192x1.sh", {"BATCHSIZE": "192", "LR": "0.0072"}),
    ],
)
def test_mlcc_gen_run_manifests_for_a_gpu_start_from_that_gpus_file(
    cli,
    tmp_path: Path,
    benchmark: str,
    gpu: str,
    file: str,
    values: Dict[str, str],  # type: ignore[no-untyped-def]
) -> None:
    out = tmp_path / "oc"
    result = cli(
        "gen", benchmark, "--gpu", gpu, "--gpus", "8", "--nodes", "1",
        "--only", "openshift", "--openshift-output", str(out),
    )  # fmt: skip
    assert result.code == 0, result.err
    [launch] = out.rglob("launch-1x8.yaml")
    text = yaml.safe_load(launch.read_text())["data"]["config_MLCC.sh"]
    assert _started_from(text) == file
    written = tmp_path / "config_MLCC.sh"
    written.write_text(text)
    sourced_values = sourced(written)
    assert {name: sourced_values[name].value for name in values} == values


def test_a_launch_whose_every_file_needs_what_the_image_lacks_is_refused(kb: KnowledgeBase) -> None:
    launch = _launch(kb, "bert-v2.1")
    lacking = launch._replace(configs=tuple(c._replace(image_lacks="a flag") for c in launch.configs))
    refusal = re.escape("need what its image lacks: config_DGXA100_1x8x56x1.sh: a flag")
    with pytest.raises(UsageError, match=refusal):
        config_file(lacking, Size(nodes=1, gpus=8), "bert", None)


def test_one_rank_per_gpu_binds_to_its_socket_of_a_dgx_a100(kb: KnowledgeBase) -> None:
    """run.sub starts DGXNGPU tasks per node: mlcc binds each to a quarter of its socket's cores
    (64 per socket, SMT on), GPUs 0-3 on socket 0 and 4-7 on socket 1."""
    text = bind_file(_launch(kb, "resnet50-v2.1"), Size(nodes=1, gpus=8), "resnet50-v2.1")
    assert "0) exec numactl --physcpubind=0-15,128-143 --membind=0" in text
    assert "4) exec numactl --physcpubind=64-79,192-207 --membind=1" in text


# NVIDIA's multi-node files the image runs: `mlcc gen --nodes N` writes an MPIJob for each size,
# and the configuration it mounts holds NVIDIA's values.
MULTI_NODE = [
    (b, implementation, file)
    for b, implementation, file in FILES
    if b.removesuffix("-v2.1") in PUBLISHED
    and int(str(_nvidia(b, implementation, file)["DGXNNODES"].value)) > 1
]


def _gen_openshift(cli, out: Path, *args: str) -> Dict[str, object]:  # type: ignore[no-untyped-def]
    result = cli("gen", *args, "--only", "openshift", "--openshift-output", str(out))
    assert result.code == 0, result.err
    return {path.name: yaml.safe_load(path.read_text()) for path in out.rglob("*.yaml")}


def test_the_multi_node_files_are_the_ones_nvidia_ran_on_several_nodes() -> None:
    assert {(b, f) for b, _, f in MULTI_NODE} >= {
        ("ssd-v2.1", "config_DGXA100_008x08x004.sh"),
        ("maskrcnn-v2.1", "config_DGXA100_multi.sh"),
        ("bert-v2.1", "config_DGXA100_8x8x48x1.sh"),
        ("bert-v2.1", "config_DGXH100_4x8x48x1_pack.sh"),
    }


@pytest.mark.parametrize(("benchmark", "implementation", "file"), MULTI_NODE)
def test_at_every_multi_node_size_nvidia_ran_the_mpijob_mounts_nvidias_values(
    kb: KnowledgeBase, cli, tmp_path: Path, benchmark: str, implementation: str, file: str
) -> None:  # type: ignore[no-untyped-def]
    nvidia = _nvidia(benchmark, implementation, file)
    nodes, gpus = int(str(nvidia["DGXNNODES"].value)), int(str(nvidia["DGXNGPU"].value))
    gpu = "h100" if "H100" in file else "a100"
    found = _gen_openshift(
        cli, tmp_path / "bc", benchmark.removesuffix("-v2.1"), "--round", "v2.1", "--gpu", gpu,
        "--gpus", str(gpus), "--nodes", str(nodes),
    )  # fmt: skip
    mpijob = found["mpijob.yaml"]
    assert isinstance(mpijob, dict) and mpijob["kind"] == "MPIJob"
    assert mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == nodes
    assert mpijob["spec"]["slotsPerWorker"] == gpus
    launch = found[f"launch-{nodes}x{gpus}.yaml"]
    assert isinstance(launch, dict)
    text = launch["data"]["config_MLCC.sh"]
    config = next(c for c in _launch(kb, benchmark).configs if c.file == file)
    if config.image_lacks is not None:
        assert _started_from(text) != file and f"#   {file}: " in text
        return
    assert _started_from(text) == file
    written = tmp_path / "config_MLCC.sh"
    written.write_text(text)
    ours = sourced(written)
    for name in sorted(set(nvidia) - NOT_COMPARED[benchmark]):
        if name in VALUE_ONLY:
            assert ours[name].value == nvidia[name].value, name
        else:
            assert ours[name] == nvidia[name], name


def test_ssd_on_four_a100_nodes_is_an_mpijob_from_nvidias_8_node_file(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 38's case: `mlcc gen ssd --round v2.1 --gpu a100 --gpus 8 --nodes 4` exited 2."""
    found = _gen_openshift(
        cli, tmp_path / "bc", "ssd", "--round", "v2.1", "--gpu", "a100", "--gpus", "8", "--nodes", "4"
    )
    text = found["launch-4x8.yaml"]["data"]["config_MLCC.sh"]  # type: ignore[index]
    assert _started_from(text) == "config_DGXA100_008x08x004.sh"
    assert "NVIDIA ran no 32-GPU configuration (8, 64, 1280, 2048 GPUs on DGXA100)" in text
    mpijob = found["mpijob.yaml"]
    specs = mpijob["spec"]["mpiReplicaSpecs"]  # type: ignore[index]
    assert specs["Worker"]["replicas"] == 4 and mpijob["spec"]["slotsPerWorker"] == 8  # type: ignore[index]
    script = specs["Launcher"]["template"]["spec"]["containers"][0]["command"][2]
    assert " -np 32 --map-by slot " in script and " -x DGXNNODES=4 " in script
    worker = specs["Worker"]["template"]["spec"]["containers"][0]
    assert {"name": "launch", "mountPath": "/workspace/ssd/config_MLCC.sh", "subPath": "config_MLCC.sh",
            "readOnly": True} in worker["volumeMounts"]  # fmt: skip


def test_each_rank_gets_torch_distributeds_variables_from_open_mpis(tmp_path: Path) -> None:
    """The rank script, run by a real bash as Open MPI's orted would start rank 13 of 32 (local
    rank 5 of 8): the entrypoint sees what torchrun would give it."""
    from mlcc.render.openshift.launch import MASTER_PORT, torch_rank_script

    script = torch_rank_script("env")
    ompi = {
        "OMPI_COMM_WORLD_RANK": "13",
        "OMPI_COMM_WORLD_SIZE": "32",
        "OMPI_COMM_WORLD_LOCAL_RANK": "5",
        "OMPI_COMM_WORLD_LOCAL_SIZE": "8",
        "MLCC_MASTER_ADDR": "worker-0",
        "PATH": "/usr/bin:/bin",
    }
    out = subprocess.run(["bash", "-c", script], env=ompi, capture_output=True, text=True, check=True).stdout
    seen = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    assert {k: seen[k] for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR")} == {
        "RANK": "13",
        "WORLD_SIZE": "32",
        "LOCAL_RANK": "5",
        "LOCAL_WORLD_SIZE": "8",
        "MASTER_ADDR": "worker-0",
    }
    assert seen["MASTER_PORT"] == str(MASTER_PORT)


@pytest.mark.parametrize("benchmark", ["maskrcnn", "bert", "ssd"])
def test_each_v2_1_pytorch_recipe_launches_one_rank_per_gpu_with_torchs_variables(
    kb: KnowledgeBase, benchmark: str
) -> None:
    build = kb.benchmarks[f"{benchmark}-v2.1"].build
    assert build is not None and build.mpi is not None
    assert (build.mpi.ranks, build.mpi.rank_env) == ("gpu", "torch")


@pytest.mark.parametrize("benchmark", ["maskrcnn", "bert", "ssd"])
def test_on_one_node_the_pod_starts_a_process_per_gpu_as_nvidias_run_with_docker_does(
    cli, tmp_path: Path, benchmark: str
) -> None:  # type: ignore[no-untyped-def]
    """run_with_docker.sh: ${TORCH_RUN} --nproc_per_node=${DGXNGPU} ./run_and_time.sh, TORCH_RUN
    being "python -m torch.distributed.run --standalone --no_python"; run_and_time.sh alone
    would train in one process on one GPU."""
    found = _gen_openshift(cli, tmp_path / "bc", benchmark, "--round", "v2.1", "--gpus", "4", "--nodes", "1")
    for kind in ("pod.yaml", "job.yaml"):
        document = found[kind]
        spec = document["spec"] if kind == "pod.yaml" else document["spec"]["template"]["spec"]  # type: ignore[index]
        assert spec["containers"][0]["command"] == [
            "python", "-m", "torch.distributed.run", "--standalone", "--no_python",
            "--nproc_per_node=4", "./run_and_time.sh",
        ]  # fmt: skip
