"""A benchmark belongs to an MLPerf round: lookup by (name, round), --round, the folder rule."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from mlcc.errors import RecipeError, UsageError
from mlcc.kb import load
from mlcc.kb.model import KnowledgeBase, benchmark_id
from mlcc.resolve.request import build_request, find_benchmark


def _add_round(recipes: Path, name: str, round_: str) -> None:
    """A copy of the v0.6 recipe ``name`` filed under ``round_`` (a stand-in later round)."""
    folder = recipes / "benchmarks" / round_
    folder.mkdir(exist_ok=True)
    text = (recipes / "benchmarks" / f"{name}.yaml").read_text()
    (folder / f"{name}.yaml").write_text(text.replace("round: v0.6", f"round: {round_}", 1))
    record = recipes / "rounds" / f"{round_}.yaml"
    if not record.is_file():  # a round is a record first: its rules, systems and shared sources
        lines = (recipes / "rounds" / "v2.1.yaml").read_text().replace("name: v2.1", f"name: {round_}", 1)
        record.write_text(lines.replace("year: 2022", "year: 2099", 1))
    helpers = recipes / "benchmarks" / f"{name}.d"
    if helpers.is_dir():
        shutil.copytree(helpers, folder / f"{name}.d")


@pytest.fixture
def two_rounds(recipes_copy: Path) -> KnowledgeBase:
    _add_round(recipes_copy, "maskrcnn", "v9.9")
    _add_round(recipes_copy, "ssd", "v9.9")
    (recipes_copy / "benchmarks" / "ssd.yaml").unlink()  # ssd now exists in v9.9 alone
    (recipes_copy / "benchmarks" / "v2.1" / "ssd.yaml").unlink(missing_ok=True)  # and not in v2.1
    return load(str(recipes_copy), use_cache=False)


def test_every_mlperf_recipe_names_its_round_and_tools_none(kb: KnowledgeBase) -> None:
    rounds = {b.name: b.round for b in kb.benchmarks.values()}
    assert rounds["maskrcnn"] == "v0.6"
    assert rounds["ssd"] == "v0.6"
    assert rounds["nccl-tests"] is None
    assert rounds["tf_cnn_benchmarks"] is None


def test_the_default_round_keeps_plain_names(kb: KnowledgeBase) -> None:
    assert kb.default_round == "v0.6"
    assert kb.benchmark_id("maskrcnn", "v0.6") == "maskrcnn"
    assert kb.benchmark_id("nccl-tests", None) == "nccl-tests"
    assert kb.benchmark_id("maskrcnn", "v2.1") == "maskrcnn-v2.1"
    assert benchmark_id("maskrcnn", "v0.6", "v2.1") == "maskrcnn-v0.6"


def test_a_name_in_two_rounds_defaults_to_v0_6(two_rounds: KnowledgeBase) -> None:
    assert find_benchmark(two_rounds, "maskrcnn") == "maskrcnn"
    assert find_benchmark(two_rounds, "maskrcnn", "v0.6") == "maskrcnn"
    assert find_benchmark(two_rounds, "maskrcnn", "v9.9") == "maskrcnn-v9.9"
    assert two_rounds.rounds_of("maskrcnn") == ("v0.6", "v2.1", "v9.9")


def test_a_name_in_one_round_needs_no_flag(two_rounds: KnowledgeBase) -> None:
    assert find_benchmark(two_rounds, "ssd") == "ssd-v9.9"
    assert build_request(two_rounds, "ssd").benchmark == "ssd-v9.9"


def test_an_id_is_accepted_as_it_is(two_rounds: KnowledgeBase) -> None:
    assert find_benchmark(two_rounds, "maskrcnn-v9.9") == "maskrcnn-v9.9"


def test_a_name_not_in_the_round_asked_names_the_rounds_it_has(two_rounds: KnowledgeBase) -> None:
    with pytest.raises(UsageError) as caught:
        find_benchmark(two_rounds, "ssd", "v0.6")
    assert "not in round v0.6" in str(caught.value)
    assert "--round v9.9" in (caught.value.hint or "")


def test_an_unknown_round_lists_the_rounds(two_rounds: KnowledgeBase) -> None:
    with pytest.raises(UsageError) as caught:
        find_benchmark(two_rounds, "maskrcnn", "v1.0")
    assert "unknown round 'v1.0'" in str(caught.value)
    assert (caught.value.hint or "").endswith(", ".join(two_rounds.rounds()))
    assert "v9.9" in two_rounds.rounds()


def test_the_later_round_keeps_its_own_helper_scripts(two_rounds: KnowledgeBase) -> None:
    later = two_rounds.benchmarks["maskrcnn-v9.9"]
    assert later.recipe_name == "maskrcnn" and later.base_name == "maskrcnn"
    assert later.round == "v9.9"
    first = two_rounds.benchmarks["maskrcnn"].build
    assert later.build is not None and first is not None
    assert later.build.scripts == first.scripts and later.build.scripts
    assert later.prov.origin.startswith("recipes/benchmarks/v9.9/maskrcnn.yaml")


def test_a_round_folder_recipe_must_say_its_round(recipes_copy: Path) -> None:
    _add_round(recipes_copy, "maskrcnn", "v9.9")
    path = recipes_copy / "benchmarks" / "v9.9" / "maskrcnn.yaml"
    path.write_text(path.read_text().replace("round: v9.9", "round: v0.6"))
    with pytest.raises(RecipeError, match=re.escape("must say round: v9.9")):
        load(str(recipes_copy), use_cache=False)


def test_a_later_round_at_the_top_level_is_refused(recipes_copy: Path) -> None:
    path = recipes_copy / "benchmarks" / "ssd.yaml"
    path.write_text(path.read_text().replace("round: v0.6", "round: v2.1", 1))
    with pytest.raises(RecipeError, match=re.escape("live in recipes/benchmarks/v2.1/")):
        load(str(recipes_copy), use_cache=False)


def test_round_flag_reaches_resolve_and_list(cli) -> None:  # type: ignore[no-untyped-def]
    refused = cli("resolve", "maskrcnn", "--round", "v1.0")
    assert refused.code == 2 and "unknown round" in refused.err
    listed = cli("list", "benchmarks")
    assert listed.code == 0 and "round" in listed.out.splitlines()[0]


def _load_broken(recipes: Path, rel: str, old: str, new: str) -> RecipeError:
    path = recipes / rel
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(RecipeError) as caught:
        load(str(recipes), use_cache=False)
    return caught.value


def test_a_round_without_a_record_is_refused(recipes_copy: Path) -> None:
    (recipes_copy / "rounds" / "v2.1.yaml").unlink()
    with pytest.raises(RecipeError) as caught:
        load(str(recipes_copy), use_cache=False)
    assert "round 'v2.1' has no record in recipes/rounds/" in str(caught.value)
    assert "recipes/rounds/v2.1.yaml" in (caught.value.hint or "")


def test_exactly_one_round_is_the_default(recipes_copy: Path) -> None:
    error = _load_broken(recipes_copy, "rounds/v2.1.yaml", "default: false", "default: true")
    assert "2 rounds say default: true (v0.6, v2.1)" in str(error)


def test_the_default_round_is_the_records_and_names_follow_it(recipes_copy: Path) -> None:
    """Which round keeps bare names is data: with v2.1 the default, v0.6's recipes must move
    into their own folder (the top level holds the default round's)."""
    for rel, old, new in (
        ("rounds/v2.1.yaml", "default: false", "default: true"),
        ("rounds/v0.6.yaml", "default: true", "default: false"),
    ):
        path = recipes_copy / rel
        path.write_text(path.read_text().replace(old, new, 1))
    with pytest.raises(RecipeError) as caught:
        load(str(recipes_copy), use_cache=False)
    assert "round 'v0.6' recipes live in recipes/benchmarks/v0.6/" in str(caught.value)
    assert "the top level holds round v2.1" in (caught.value.hint or "")


def test_a_benchmark_may_not_redefine_a_source_id_of_its_round(recipes_copy: Path) -> None:
    error = _load_broken(
        recipes_copy,
        "benchmarks/v2.1/ssd.yaml",
        "sources:\n",
        'sources:\n  ngc-pytorch-22.09: "https://example.org/another-citation"\n',
    )
    assert "source id 'ngc-pytorch-22.09' is defined by round v2.1's record" in str(error)


def test_a_node_shape_must_agree_with_its_rounds_system(recipes_copy: Path) -> None:
    error = _load_broken(
        recipes_copy,
        "benchmarks/v2.1/ssd.yaml",
        "DGXA100: {gpus: 8, sockets: 2, socket_cores: 64",
        "DGXA100: {gpus: 8, sockets: 2, socket_cores: 56",
    )
    assert "node shape DGXA100: socket_cores 56, but round v2.1's system DGXA100 has 64" in str(error)


def test_a_shared_script_takes_exactly_the_values_it_names(recipes_copy: Path) -> None:
    error = _load_broken(recipes_copy, "benchmarks/v2.1/ssd.yaml", "        modules: [", "        module: [")
    assert "apex-extensions.sh takes modules, why (given: module, why)" in str(error)


def test_the_round_scripts_are_one_copy_each_and_filled_per_benchmark(kb: KnowledgeBase) -> None:
    """One nvidia-cocoapi.sh and one apex-extensions.sh serve v2.1's benchmarks: the first
    as it is, the second with each benchmark's module list (one line when it fits)."""
    scripts = {
        b.name: dict(b.build.scripts)
        for b in kb.benchmarks.values()
        if b.build is not None and b.round == "v2.1"
    }
    assert scripts["maskrcnn-v2.1"]["nvidia-cocoapi.sh"] == scripts["ssd-v2.1"]["nvidia-cocoapi.sh"]
    shared = Path(kb.root) / "benchmarks" / "v2.1" / "scripts"
    assert sorted(p.name for p in shared.iterdir()) == ["apex-extensions.sh", "nvidia-cocoapi.sh"]
    assert not list((Path(kb.root) / "benchmarks" / "v2.1").glob("*.d/apex-extensions.sh"))
    ssd = scripts["ssd-v2.1"]["apex-extensions.sh"]
    assert 'wanted = ("apex_C", "amp_C", "focal_loss_cuda", "fused_conv_bias_relu")\n' in ssd
    assert ssd.startswith("# apex's setup.py skips --fused_conv_bias_relu")
    bert = scripts["bert-v2.1"]["apex-extensions.sh"]
    assert 'wanted = (\n    "apex_C",\n    "amp_C",\n' in bert
    assert "${" not in ssd + bert


def test_the_top_level_scripts_are_one_copy_each_for_its_benchmarks(kb: KnowledgeBase) -> None:
    """recipes/benchmarks/scripts/ serves the top level's recipes as a round's scripts/ serves
    its own: llama31_8b-pypi and llama31_405b-pypi (NVIDIA's two folders install the same
    files) run one copy of each script, and neither has a folder of its own."""
    top = Path(kb.root) / "benchmarks"
    shared = {p.name: p.read_text() for p in (top / "scripts").iterdir()}
    assert sorted(shared) == ["embedding-lib-build.sh", "run-with-config.sh", "te-torch-build.sh"]
    for name in ("llama31_8b-pypi", "llama31_405b-pypi"):
        build = kb.benchmarks[name].build
        assert build is not None and dict(build.scripts) == shared, name
        assert not (top / f"{name}.d").exists()


def test_the_top_levels_benchmarks_share_recipes_benchmarks_scripts(kb: KnowledgeBase) -> None:
    """llama31_8b-pypi and llama2_70b_lora-pypi, at the top level, run one copy of
    TransformerEngine's extension build and of the configuration wrapper, from
    recipes/benchmarks/scripts/, as a round's benchmarks share its scripts/."""
    shared = Path(kb.root) / "benchmarks" / "scripts"
    eight, seventy = (
        dict(kb.benchmarks[n].build.scripts) for n in ("llama31_8b-pypi", "llama2_70b_lora-pypi")
    )
    for name in ("te-torch-build.sh", "run-with-config.sh"):
        assert eight[name] == seventy[name] == (shared / name).read_text()
        assert not list((Path(kb.root) / "benchmarks").glob(f"*.d/{name}"))


def test_a_benchmarks_own_script_wins_over_the_shared_one_and_a_missing_one_names_both_folders(
    recipes_copy: Path,
) -> None:
    own = recipes_copy / "benchmarks" / "llama2_70b_lora-pypi.d" / "te-torch-build.sh"
    own.write_text("# its own\nset -eu\n")
    kb = load(str(recipes_copy), use_cache=False)
    assert dict(kb.benchmarks["llama2_70b_lora-pypi"].build.scripts)["te-torch-build.sh"] == own.read_text()
    assert "# its own" not in dict(kb.benchmarks["llama31_8b-pypi"].build.scripts)["te-torch-build.sh"]
    own.unlink()
    (recipes_copy / "benchmarks" / "scripts" / "te-torch-build.sh").unlink()
    with pytest.raises(RecipeError) as caught:
        load(str(recipes_copy), use_cache=False)
    assert (
        "script 'te-torch-build.sh' is not in recipes/benchmarks/llama2_70b_lora-pypi.d/ or "
        "recipes/benchmarks/scripts/" in str(caught.value)
    )


def test_the_rounds_shared_pins_are_steps_of_its_record(kb: KnowledgeBase) -> None:
    """mlperf-logging, mlperf-common and apex are pinned once, in the v2.1 record; the
    benchmarks that install them name the record's step and add their own setup options."""
    shared = dict(kb.round("v2.1").steps)
    logging = "git+https://github.com/mlcommons/logging.git@62cb0761014922532ff1a4d35d8c2c4021f2e123"
    assert shared["mlperf-logging-2.1.0-rc1"].packages == (logging,)
    assert shared["mlperf-logging-2.1.0-rc1"].origins[0].startswith("recipes/rounds/v2.1.yaml:")
    for name in ("bert-v2.1", "maskrcnn-v2.1", "ssd-v2.1"):
        build = kb.benchmarks[name].build
        assert build is not None
        assert any(step.packages == (logging,) for step in build.steps), name
        (apex,) = [step for step in build.steps if step.git_url == "https://github.com/NVIDIA/apex.git"]
        assert apex.git_ref == "1d7711100bb58dc761a2fad89f30d41239450f58", name
        assert "--cuda_ext" in apex.setup_options and apex.note, name
    recipes = Path(kb.root) / "benchmarks" / "v2.1"
    for recipe in recipes.glob("*.yaml"):
        assert "logging.git@62cb0761" not in recipe.read_text(), recipe.name


def test_a_step_the_round_does_not_have_is_refused(recipes_copy: Path) -> None:
    error = _load_broken(
        recipes_copy, "benchmarks/v2.1/ssd.yaml", "round_step: apex-2022-09-21", "round_step: apex-1999"
    )
    assert "round_step 'apex-1999' is not a step of round v2.1's record" in str(error)
    assert "apex-2022-09-21" in (error.hint or "")


def test_no_module_writes_a_list_of_rounds_or_a_rules_table() -> None:
    """The rounds are the records': help, errors, completion and mlcc list read them, and the
    scoring rules live in recipes/rounds/, not in the package."""
    package = Path(__file__).resolve().parents[2] / "mlcc"
    listed = re.compile(r"v0\.6 or v2\.1|\"v0\.6, v2\.1\"|\(v0\.6, v2\.1\)|DEFAULT_ROUND")
    offenders = [
        f"{path.relative_to(package)}:{number}"
        for path in sorted(package.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if listed.search(line)
    ]
    assert offenders == []
    assert not list(package.rglob("scoring-rules.yaml"))
