"""A recipe marked INCOMPLETE (its build note starts so: the image does not yet run the
benchmark) is said to be wherever a user meets it: resolve, gen, build --dry-run, matrix
--explain, list benchmarks and the stack manifest, as a warning on stderr with the recipe's
reason; ``mlcc --strict`` or CI=true makes it an error (exit 11). ``gen -i`` offers only the
benchmarks that resolve (issue 38)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from mlcc.app.kb import resolve
from mlcc.app.select import walk
from mlcc.errors import EXIT_INCOMPLETE, IncompleteRecipe
from mlcc.kb.model import KnowledgeBase
from mlcc.resolve.pins import Pins
from mlcc.stackfile import document

INCOMPLETE = (
    "flux1-v5.1",
    "llama2_70b_lora-v5.1",
    "llama31_405b-v5.1",
    "llama31_8b-v5.1",
    "resnet50-v2.1",
    "retinanet-v5.1",
    "rnnt-v2.1",
    "unet3d-v2.1",
)


def test_the_recipes_marked_incomplete_are_the_ones_the_model_reports(kb: KnowledgeBase) -> None:
    marked = sorted(name for name, b in kb.benchmarks.items() if b.incomplete is not None)
    assert marked == list(INCOMPLETE)
    assert "does not yet run the benchmark" in str(kb.benchmarks["resnet50-v2.1"].incomplete)


def test_resolve_warns_on_stderr_with_the_recipes_reason_and_where_it_is(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("resolve", "resnet50", "--round", "v2.1", "--gpu", "a100")
    assert result.code == 0
    where = "(recipes/benchmarks/v2.1/resnet50.yaml:"
    assert f"mlcc: warning: resnet50-v2.1's recipe is INCOMPLETE {where}" in result.err
    assert "does not yet run the benchmark" in result.err
    assert "INCOMPLETE" not in result.out


def test_a_complete_recipe_gets_no_warning(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("resolve", "ssd", "--round", "v2.1", "--gpu", "a100")
    assert result.code == 0 and "warning" not in result.err


def test_gen_warns_and_the_stack_manifest_carries_the_reason(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("gen", "rnnt", "--gpu", "a100")
    assert result.code == 0
    assert "mlcc: warning: rnnt-v2.1's recipe is INCOMPLETE" in result.err
    (stack_json,) = Path("dockerfiles/rnnt-v2.1").glob("*/stack.json")
    data = json.loads(stack_json.read_text())
    assert document.problem_of(data) is None  # the schema knows the field
    manifest = document.StackManifest.of(data)
    assert manifest.benchmark.incomplete is not None
    assert manifest.benchmark.incomplete.startswith("the build steps follow NVIDIA's Dockerfile")


def test_a_complete_stacks_manifest_has_no_incomplete_field(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("gen", "ssd", "--round", "v2.1", "--only", "dockerfile").code == 0
    (stack_json,) = Path("dockerfiles/ssd-v2.1").glob("*/stack.json")
    assert "incomplete" not in json.loads(stack_json.read_text())["benchmark"]


@pytest.mark.parametrize("how", [("--strict",), ("CI",)])
def test_strict_or_ci_makes_it_an_error_with_its_own_exit_code(  # type: ignore[no-untyped-def]
    cli, monkeypatch: pytest.MonkeyPatch, how: tuple
) -> None:
    if how == ("CI",):
        monkeypatch.setenv("CI", "true")
        how = ()
    result = cli(*how, "gen", "rnnt", "--gpu", "a100")
    assert result.code == EXIT_INCOMPLETE == 11
    assert "mlcc: error: rnnt-v2.1's recipe is INCOMPLETE" in result.err
    assert not Path("dockerfiles").exists()  # nothing written


def test_strict_leaves_a_complete_recipe_alone(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("--strict", "resolve", "maskrcnn", "--cuda", "10.1").code == 0


def test_build_dry_run_warns(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("build", "unet3d", "--round", "v2.1", "--dry-run", "--backend", "docker")
    assert "mlcc: warning: unet3d-v2.1's recipe is INCOMPLETE" in result.err


def test_matrix_explain_names_the_incomplete_benchmarks_it_leaves_out(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("matrix", "--explain")
    assert result.code == 0
    for name in INCOMPLETE:
        assert f"not in the matrix: {name}'s recipe is INCOMPLETE" in result.out
    one = cli("matrix", "--explain", "--benchmark", "rnnt-v2.1")
    assert one.code == 0 and "not in the matrix: rnnt-v2.1's recipe is INCOMPLETE" in one.out
    assert "resnet50" not in one.out


def test_list_benchmarks_marks_them(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("list", "benchmarks")
    heading = "INCOMPLETE (a stack resolves, but its image does not yet run the benchmark):"
    footer = result.out.split(heading, 1)[1]
    for name in ("resnet50", "rnnt", "unet3d"):
        assert f"  {name} (v2.1): the build steps" in footer
    rows = {row["id"]: row for row in json.loads(cli("list", "benchmarks", "--json").out)}
    assert rows["rnnt-v2.1"]["incomplete"] and rows["ssd-v2.1"]["incomplete"] is None


def test_the_python_api_warns_with_pythons_warnings(kb: KnowledgeBase) -> None:
    with pytest.warns(IncompleteRecipe, match="unet3d-v2.1's recipe is INCOMPLETE"):
        resolve(kb, "unet3d", Pins(round="v2.1"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", IncompleteRecipe)
        resolve(kb, "ssd", Pins(round="v2.1"))  # a complete one: no warning, so no error


def test_gen_i_offers_only_benchmarks_that_resolve(kb: KnowledgeBase) -> None:
    offered: list = []

    def ask(question: str, choices, default: str) -> str:  # type: ignore[no-untyped-def]
        if question == "benchmark":
            offered.extend(choices)
            return "ssd"
        return default

    walk(kb, ask)
    assert "dlrm-v2.1" not in offered and "minigo-v2.1" not in offered
    assert "minigo" in offered and "ssd-v2.1" in offered
