"""A v2.1 benchmark whose stack cannot be built on RHEL/UBI says why (issue 27: "say why not
where not"): resolving it refuses with the recipe's cause, and `mlcc list benchmarks` shows it.

dlrm (NVIDIA's HugeCTR, cloned at branches, never at a commit) and minigo (its C++ engine links
NVIDIA's TensorFlow 1.15 for CUDA 11, which no public build provides) are the two such recipes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mlcc.errors import ConflictError, RecipeError
from mlcc.kb import load
from mlcc.kb.model import KnowledgeBase
from mlcc.resolve.request import build_request


@pytest.mark.parametrize(
    ("name", "round_", "gpu", "cause"),
    [
        ("dlrm", None, None, "branch v3.7_preview"),
        ("dlrm", "v2.1", "h100", "REDACTED repository"),
        ("minigo", "v2.1", None, "libtensorflow_cc.so.1"),
        ("minigo", "v2.1", "a100", "No public TensorFlow 1 build targets CUDA 11"),
    ],
)
def test_resolving_refuses_with_the_recipes_cause_and_where_it_is_written(  # type: ignore[no-untyped-def]
    kb: KnowledgeBase, resolver, name: str, round_: str, gpu: str, cause: str
) -> None:
    with pytest.raises(ConflictError) as caught:
        resolver.resolve(build_request(kb, name, round_=round_, gpu=gpu))
    message = str(caught.value)
    assert f"mlcc can build no stack for {name}-v2.1" in message and cause in message
    assert f"recipes/benchmarks/v2.1/{name}.yaml:" in message


def test_v0_6_minigo_still_resolves_without_a_round(kb: KnowledgeBase, resolver) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(build_request(kb, "minigo"))
    assert stack.benchmark.name == "minigo" and stack.benchmark.round == "v0.6"


def test_the_causes_carry_nvidias_scores(kb: KnowledgeBase) -> None:
    assert "1.70 min on 1x DGX A100" in str(kb.benchmarks["dlrm-v2.1"].unavailable)
    assert "188.14 min on 1x DGX A100" in str(kb.benchmarks["minigo-v2.1"].unavailable)
    assert all(b.build is None for b in kb.benchmarks.values() if b.unavailable)


def test_list_benchmarks_shows_which_cannot_be_built_and_why(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("list", "benchmarks")
    assert result.code == 0
    footer = result.out.split("No stack can be built for:", 1)[1].split("\n\nINCOMPLETE", 1)[0]
    assert re.search(r"^  dlrm \(v2\.1\): NVIDIA's DLRM is HugeCTR", footer, re.M)
    assert re.search(r"^  minigo \(v2\.1\): NVIDIA's MiniGo links", footer, re.M)
    assert "resnet50" not in footer


def test_list_benchmarks_json_carries_the_cause(cli) -> None:  # type: ignore[no-untyped-def]
    import json

    rows = json.loads(cli("list", "benchmarks", "--json").out)
    by_id = {row["id"]: row for row in rows}
    assert "HugeCTR" in by_id["dlrm-v2.1"]["unavailable"]
    assert by_id["resnet50-v2.1"]["unavailable"] is None


def test_a_recipe_cannot_be_unavailable_and_have_a_build(recipes_copy: Path) -> None:
    recipe = recipes_copy / "benchmarks" / "v2.1" / "resnet50.yaml"
    text = recipe.read_text()
    recipe.write_text(text.replace("\nreference_stack:", "\nunavailable: a cause\nreference_stack:", 1))
    with pytest.raises(RecipeError, match=re.escape("a benchmark that is unavailable has no build")):
        load(str(recipes_copy))
