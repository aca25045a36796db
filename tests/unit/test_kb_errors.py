"""Bad recipes: every defect gets a message naming file:line, and exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.recipe_edits import edit as _edit
from tests.recipe_edits import line_of as _line_of
from tests.recipe_edits import load_error as _load_error

from ..conftest import run_mlcc


def test_malformed_yaml_names_file_and_line(recipes_copy: Path) -> None:
    bases = recipes_copy / "bases.yaml"
    _edit(bases, "    family: rhel\n", "    family: [rhel\n")
    error = _load_error(recipes_copy)
    assert str(error).startswith("recipes/bases.yaml:")
    assert "malformed YAML" in str(error)
    assert error.exit_code == 2


def test_unknown_key_suggests_the_right_one(recipes_copy: Path) -> None:
    bases = recipes_copy / "bases.yaml"
    _edit(bases, "    package_manager: dnf\n", "    package_manger: dnf\n")
    error = _load_error(recipes_copy)
    line = _line_of(bases, "package_manger")
    assert f"recipes/bases.yaml:{line}" in str(error)
    assert "unknown key 'package_manger'" in str(error)
    assert "did you mean 'package_manager'" in str(error)


def test_missing_source_is_a_schema_violation(recipes_copy: Path) -> None:
    arches = recipes_copy / "arches.yaml"
    _edit(
        arches,
        "    source: [oci-image-spec, nvidia-container-images, kubernetes-labels, debian-multiarch]\n",
        "",
    )
    error = _load_error(recipes_copy)
    assert "recipes/arches.yaml:" in str(error) and "missing required key 'source'" in str(error)
    # the entry's `verified` is a known key: a failing provenance block leaves it unevaluated,
    # which is no second finding
    text = "\n".join([str(error), *error.details])
    assert "unknown key" not in text, text


def test_unknown_source_id(recipes_copy: Path) -> None:
    arches = recipes_copy / "arches.yaml"
    _edit(arches, "source: [oci-image-spec,", "source: [oci-spec,")
    error = _load_error(recipes_copy)
    assert "unknown source id 'oci-spec'" in str(error)
    assert f"recipes/arches.yaml:{_line_of(arches, 'oci-spec')}" in str(error)


def test_duplicate_key(recipes_copy: Path) -> None:
    bases = recipes_copy / "bases.yaml"
    _edit(bases, '    tag: "8.10"\n', '    tag: "8.10"\n    tag: "8.9"\n')
    error = _load_error(recipes_copy)
    assert "duplicate key 'tag'" in str(error)
    line = _line_of(bases, 'tag: "8.9"')
    assert f"recipes/bases.yaml:{line}" in str(error)


def test_duplicate_entry(recipes_copy: Path) -> None:
    cuda = recipes_copy / "cuda.yaml"
    _edit(cuda, "- version: 10.1.168\n", "- version: 10.1.243\n")
    error = _load_error(recipes_copy)
    assert "CUDA 10.1.243 is listed twice" in str(error)
    assert str(error).startswith("recipes/cuda.yaml:")


def test_bad_version_string(recipes_copy: Path) -> None:
    cudnn = recipes_copy / "cudnn.yaml"
    _edit(cudnn, "- version: 7.6.5.32\n", "- version: 7.6.five\n")
    error = _load_error(recipes_copy)
    assert "'7.6.five' is not allowed here" in str(error)


def test_unquoted_float_version_gets_a_quoting_hint(recipes_copy: Path) -> None:
    fw = recipes_copy / "frameworks" / "tensorflow.yaml"
    _edit(fw, "  python: [", "  python: [3.6, ")
    error = _load_error(recipes_copy)
    assert "quote it" in str(error)


def test_shell_syntax_cannot_reach_a_package_name(recipes_copy: Path) -> None:
    cuda = recipes_copy / "cuda.yaml"
    _edit(cuda, "[cuda-cudart-10-1, 10.1.243-1]", "[cuda-cudart-10-1, 10.1.243-1; rm -rf /]")
    error = _load_error(recipes_copy)
    assert "is not allowed here" in str(error)
    assert f"recipes/cuda.yaml:{_line_of(cuda, 'rm -rf')}" in str(error)


def test_shell_syntax_cannot_reach_a_url(recipes_copy: Path) -> None:
    nccl = recipes_copy / "nccl.yaml"
    _edit(
        nccl,
        "url: https://developer.download.nvidia.com/compute/redist/nccl/v2.8/",
        "url: https://x.invalid/$(id)/",
    )
    assert "is not allowed here" in str(_load_error(recipes_copy))


def test_unknown_arch_is_cross_checked(recipes_copy: Path) -> None:
    bases = recipes_copy / "bases.yaml"
    _edit(bases, "    arches: [x86_64, ppc64le, aarch64]\n", "    arches: [x86_64, s390x]\n")
    error = _load_error(recipes_copy)
    assert "unknown arch 's390x'" in str(error)
    assert "recipes/arches.yaml" in str(error)


def test_benchmark_naming_an_unknown_framework(recipes_copy: Path) -> None:
    bench = recipes_copy / "benchmarks" / "ncf.yaml"
    _edit(bench, "    name: pytorch\n", "    name: pytorch2\n")
    error = _load_error(recipes_copy)
    assert "unknown framework 'pytorch2'" in str(error)
    assert f"recipes/benchmarks/ncf.yaml:{_line_of(bench, 'pytorch2')}" in str(error)


def test_contradictory_facts_are_caught(recipes_copy: Path) -> None:
    bases = recipes_copy / "bases.yaml"
    _edit(bases, '      default: "3.6"\n', '      default: "3.7"\n')  # ubi8 offers no 3.7
    assert "default Python 3.7 is not among versions" in str(_load_error(recipes_copy))


def test_a_stray_yaml_file_is_rejected(recipes_copy: Path) -> None:
    (recipes_copy / "frameworks" / "notes").mkdir()
    (recipes_copy / "frameworks" / "notes" / "x.yaml").write_text("kind: framework\n")
    assert "is not a recipe mlcc knows where to put" in str(_load_error(recipes_copy))


def test_cli_reports_a_recipe_error_without_a_traceback(recipes_copy: Path) -> None:
    _edit(recipes_copy / "bases.yaml", "    package_manager: dnf\n", "    package_manager: zypper\n")
    result = run_mlcc(["--recipes", str(recipes_copy), "resolve", "maskrcnn"])
    assert result.code == 2
    assert "Traceback" not in result.err
    assert "recipes/bases.yaml:" in result.err and "'zypper' is not one of" in result.err


def test_a_line_break_cannot_reach_a_dockerfile_through_a_recipe(recipes_copy: Path) -> None:
    """Python's `$` matches before a final newline; the schemas mean ECMA-262's end of string."""
    ssd = recipes_copy / "benchmarks" / "ssd.yaml"
    _edit(ssd, "    rhel: [numactl,", '    rhel: ["numactl\\n",')
    error = _load_error(recipes_copy)
    assert "benchmarks/ssd.yaml" in str(error) and "U+000A is not allowed" in str(error)


SCIPY_FACT = (
    '  - {name: scipy, version: "1.2.1", requires: ["numpy>=1.8.2"], source: [scipy-1.2.1-setup-py], '
    "verified: true}\n"
)


def test_sdist_requires_without_a_source_names_its_line(recipes_copy: Path) -> None:
    tools = recipes_copy / "tools.yaml"
    _edit(tools, SCIPY_FACT, SCIPY_FACT.replace(" source: [scipy-1.2.1-setup-py],", ""))
    error = _load_error(recipes_copy)
    line = _line_of(tools, "{name: scipy, version:")
    assert str(error).startswith(f"recipes/tools.yaml:{line}")
    assert "missing required key 'source'" in str(error)
    assert error.exit_code == 2


def test_sdist_requires_with_an_unknown_source_id_names_it(recipes_copy: Path) -> None:
    tools = recipes_copy / "tools.yaml"
    _edit(tools, SCIPY_FACT, SCIPY_FACT.replace("[scipy-1.2.1-setup-py]", "[scipy-setup]"))
    error = _load_error(recipes_copy)
    assert "unknown source id 'scipy-setup'" in str(error)
    assert f"recipes/tools.yaml:{_line_of(tools, '[scipy-setup]')}" in str(error)


@pytest.mark.parametrize("bad", ["numpy>=>1.8.2", "numpy (>=1.8.2", "numpy>=1.8.2;"])
def test_sdist_requires_with_a_malformed_requirement_names_its_line(recipes_copy: Path, bad: str) -> None:
    tools = recipes_copy / "tools.yaml"
    _edit(tools, SCIPY_FACT, SCIPY_FACT.replace('"numpy>=1.8.2"', f'"{bad}"'))
    error = _load_error(recipes_copy)
    assert str(error).startswith(f"recipes/tools.yaml:{_line_of(tools, bad)}")
    assert f"{bad!r} is not a valid requirement" in str(error)
    assert error.exit_code == 2


def test_sdist_requires_listed_twice_is_refused(recipes_copy: Path) -> None:
    tools = recipes_copy / "tools.yaml"
    _edit(tools, SCIPY_FACT, SCIPY_FACT + SCIPY_FACT.replace("name: scipy", "name: SciPy"))
    error = _load_error(recipes_copy)
    assert "SciPy 1.2.1 is listed twice" in str(error)
    assert str(error).startswith(f"recipes/tools.yaml:{_line_of(tools, 'name: SciPy')}")


def test_a_launch_config_on_a_node_shape_the_recipe_lacks_names_the_line(recipes_copy: Path) -> None:
    gnmt = recipes_copy / "benchmarks" / "gnmt.yaml"
    _edit(
        gnmt, "        node_shape: DGX2\n        nodes: 1\n", "        node_shape: DGX3\n        nodes: 1\n"
    )
    error = _load_error(recipes_copy)
    line = _line_of(gnmt, "node_shape: DGX3")
    assert f"recipes/benchmarks/gnmt.yaml:{line}" in str(error)
    assert "config_DGX2.sh: node shape 'DGX3' is not one of launch.node_shapes" in str(error)
    assert "DGX1, DGX2" in str(error.hint)


def test_a_launch_config_with_more_gpus_than_its_node_is_refused(recipes_copy: Path) -> None:
    gnmt = recipes_copy / "benchmarks" / "gnmt.yaml"
    _edit(
        gnmt,
        "        node_shape: DGX1\n        nodes: 1\n        gpus_per_node: 8\n",
        "        node_shape: DGX1\n        nodes: 1\n        gpus_per_node: 16\n",
    )
    error = _load_error(recipes_copy)
    assert f"recipes/benchmarks/gnmt.yaml:{_line_of(gnmt, 'gpus_per_node: 16')}" in str(error)
    assert "16 GPUs per node, but a DGX1 node has 8" in str(error)


@pytest.mark.parametrize(
    ("arch", "message"),
    [("sparc", "unknown arch 'sparc'"), ("x86_64", "x86_64 is in arches and in arches_missing")],
)
def test_a_missing_arch_cause_names_an_arch_the_benchmark_lacks(
    recipes_copy: Path, arch: str, message: str
) -> None:
    recipe = recipes_copy / "benchmarks" / "maskrcnn.yaml"
    _edit(recipe, "  arches_missing:\n    ppc64le: >-", f"  arches_missing:\n    {arch}: >-")
    error = _load_error(recipes_copy)
    assert message in str(error)
    assert f"recipes/benchmarks/maskrcnn.yaml:{_line_of(recipe, f'    {arch}: >-')}" in str(error)
