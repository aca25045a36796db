"""bert's v2.1 image builds what NVIDIA's Dockerfile and NGC 22.09's container gave it: apex with
every module bert imports, and NVIDIA's mhalib in the work directory; so it joins the published
set. What the DGX H100 files need and mlcc cannot source is said in the recipe, not faked."""

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

RECIPE = REPO / "recipes" / "benchmarks" / "v2.1" / "bert.yaml"
SCRIPTS = REPO / "recipes" / "benchmarks" / "v2.1" / "bert.d"
ROUND_SCRIPTS = REPO / "recipes" / "benchmarks" / "v2.1" / "scripts"
APEX = "1d7711100bb58dc761a2fad89f30d41239450f58"
# setup.py options of apex at APEX and the modules they build that bert imports
APEX_OPTIONS = (
    "--cpp_ext",
    "--cuda_ext",
    "--fmha",
    "--fast_multihead_attn",
    "--fast_layer_norm",
    "--distributed_lamb",
    "--deprecated_fused_adam",
)
BERT_MODULES = [
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
]


def _dockerfile(kb: KnowledgeBase, resolver, gpu: str) -> str:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(build_request(kb, "bert", round_="v2.1", gpu=gpu))
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


def _build_stage(dockerfile: str) -> str:
    return dockerfile[: dockerfile.rindex("\nFROM ")]


def _final_stage(dockerfile: str) -> str:
    return dockerfile[dockerfile.rindex("\nFROM ") :]


def test_apex_builds_every_module_bert_imports_then_is_checked(a100: str) -> None:
    runs = _run_lines(_build_stage(a100))
    apex = _index(runs, f"git checkout -q --detach {APEX}")
    assert f"python setup.py install {' '.join(APEX_OPTIONS)}" in runs[apex]
    assert "submodule update --init --recursive" in runs[apex]  # --fast_multihead_attn's cutlass
    check = _index(runs, "bash /opt/mlcc/scripts/apex-extensions.sh")
    requirements = _index(runs, "mlperf-common.git@7112e7b73951dcde8e89934e8b5392348bcad198")
    assert requirements < apex < check


def test_mhalib_is_built_into_the_work_directory_after_the_source_is_there(a100: str) -> None:
    runs = _run_lines(_build_stage(a100))
    source = _index(runs, "cp -a /tmp/mlcc-source/NVIDIA/benchmarks/bert/implementations/pytorch-22.09/.")
    mhalib = _index(runs, "bash /opt/mlcc/scripts/mhalib.sh")
    assert source < mhalib
    assert "WORKDIR /workspace/bert\nRUN bash /opt/mlcc/scripts/mhalib.sh" in a100


def test_the_runtime_image_carries_the_venv_the_work_directory_and_the_data_links(a100: str) -> None:
    final = _final_stage(a100)
    assert "COPY --from=build /opt/mlcc/venv /opt/mlcc/venv" in final  # apex and its modules
    assert "COPY --from=build /workspace/bert /workspace/bert" in final  # the code and mhalib
    assert "RUN bash /opt/mlcc/scripts/link-data.sh" in final  # the links are under /workspace
    # nothing bert runs stays behind in the build stage: the apex checkout is only its source
    assert "/opt/pytorch/apex" not in final


def test_wikiextractor_is_not_in_the_image_and_the_recipe_says_why(a100: str) -> None:
    assert "wikiextractor" not in a100.lower()
    text = " ".join(RECIPE.read_text().split())
    assert "wikiextractor is not in the image" in text
    assert "e4abb4cbd019b0257824ee47c23dd163919b731b" in text


def _python_on_path(tmp_path: Path) -> Dict[str, str]:
    """A PATH whose `python` is this interpreter."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "python"
    # a wrapper, not a link: a link to a virtualenv's interpreter leaves the virtualenv
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


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


def test_a_build_whose_apex_lacks_a_module_bert_imports_fails(tmp_path: Path) -> None:
    present = [m for m in BERT_MODULES if m not in ("fmhalib", "distributed_lamb_cuda")]
    result = _extensions_check(tmp_path, present)
    assert result.returncode != 0
    assert "apex was built without fmhalib, distributed_lamb_cuda" in result.stderr


def test_a_build_with_every_module_passes_the_check(tmp_path: Path) -> None:
    assert _extensions_check(tmp_path, BERT_MODULES).returncode == 0


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
        ["bash", str(SCRIPTS / "mhalib.sh")], cwd=tmp_path, env=_python_on_path(tmp_path), check=True
    )
    assert (tmp_path / module).read_bytes() == b"\x7fELF"
    assert not (tmp_path / "mhalib" / "build").exists()


def test_a_mhalib_build_that_made_no_module_fails(tmp_path: Path) -> None:
    _mhalib_source(tmp_path, [])
    result = subprocess.run(
        ["bash", str(SCRIPTS / "mhalib.sh")],
        cwd=tmp_path,
        env=_python_on_path(tmp_path),
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "expected one mhalib*.so" in result.stderr
    assert not list(tmp_path.glob("mhalib*.so"))


def test_the_data_links_are_the_folders_run_and_time_reads() -> None:
    script = (SCRIPTS / "link-data.sh").read_text()
    # run_and_time.sh's --input_dir, --init_checkpoint/--bert_config_path and --eval_dir
    for mount in ("/workspace/data_phase2", "/workspace/phase1", "/workspace/evaldata"):
        assert f" {mount}\n" in script
    assert "ln -sfn /data/hdf5/training-4320/hdf5_4320_shards_varlength /workspace/data_phase2" in script


@pytest.mark.parametrize(("gpu", "arch"), [("a100", "8.0"), ("h100", "9.0")])
def test_apex_is_compiled_for_the_gpu_asked(kb, resolver, gpu: str, arch: str) -> None:  # type: ignore[no-untyped-def]
    assert f'TORCH_CUDA_ARCH_LIST="{arch}"' in _dockerfile(kb, resolver, gpu)


def test_the_recipe_says_which_kernels_have_no_h100_code() -> None:
    text = " ".join(RECIPE.read_text().split())
    assert "mhalib's setup.py names sm_70, sm_80 and compute_80 PTX" in text
    assert "apex's fmhalib is built for sm_80 only" in text


def test_the_h100_files_are_kept_and_the_recipe_says_they_need_what_mlcc_cannot_source(
    kb: KnowledgeBase,
) -> None:
    bench = kb.benchmarks["bert-v2.1"]
    assert bench.build is not None and bench.build.launch is not None
    h100 = [c for c in bench.build.launch.configs if c.node_shape == "DGXH100"]
    assert [c.file for c in h100] == ["config_DGXH100_1x8x48x1_pack.sh", "config_DGXH100_4x8x48x1_pack.sh"]
    assert all("--use_transformer_engine2" in dict(c.exports)["EXTRA_PARAMS"] for c in h100)
    text = " ".join(RECIPE.read_text().split())
    assert "unrecognized arguments: --use_transformer_engine2" in text
    assert "so mlcc pins none" in text
    # no TransformerEngine is installed by any step
    assert "transformer" not in str(bench.build.steps).lower()


def test_bert_is_published_and_complete(kb: KnowledgeBase) -> None:
    from mlcc.app.published_set import generate_all

    folders = {g.folder for g in generate_all(kb)}
    assert "bert-v2.1/cuda11.8-cudnn8-ubi8-x86_64" in folders
    assert "INCOMPLETE" not in RECIPE.read_text()


def test_the_helper_scripts_are_shell_that_parses(tmp_path: Path) -> None:
    bash = shutil.which("bash")
    assert bash is not None
    for script in benchmark_scripts("bert-v2.1", tmp_path):
        subprocess.run([bash, "-n", str(script)], check=True)


def _script(folder: Path, name: str) -> Path:
    """The helper script ``name`` as the bert-v2.1 image runs it."""
    return next(p for p in benchmark_scripts("bert-v2.1", folder) if p.name == name)
