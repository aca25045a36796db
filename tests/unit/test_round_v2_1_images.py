"""The v2.1 images build what NVIDIA's Dockerfiles and NGC 22.09's container gave bert, maskrcnn
and ssd (RetinaNet): apex with every module each imports, checked by the round's one
apex-extensions.sh; NVIDIA's cocoapi patched by the round's one nvidia-cocoapi.sh; DALI and its
operators; mhalib in bert's work directory. So the three join the published set, and the v2.1
recipes that still say INCOMPLETE (resnet50, unet3d, rnnt) stay out of it. What the DGX H100
files need and mlcc cannot source is said in the recipe, not faked.

One table per behaviour, one row per benchmark; what only one benchmark does is a test of its own."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from mlcc.errors import RecipeError
from mlcc.kb import load
from mlcc.kb.model import KnowledgeBase
from mlcc.render import render
from mlcc.resolve.request import build_request
from tests.conftest import REPO, benchmark_scripts

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
