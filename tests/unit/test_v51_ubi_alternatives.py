"""--base ubi9|ubi10 on NVIDIA's v5.x benchmarks: each recipe that builds on NGC images only
says why no stack on UBI can be built from public packages (constraints.ubi_alternative), the
refusal prints that reason with the recipe's line and keeps the nearest valid alternatives, and
where the recipe names the nearest UBI stack (retinanet: retinanet-reference) it is offered and
resolves. The releases the reasons name are checked against PyPI itself (one test, bounded)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import Version

from mlcc.errors import EXIT_CONFLICT
from mlcc.kb.index import IndexClient, read_url
from tests.recipe_edits import edit as _edit
from tests.recipe_edits import line_of as _line_of
from tests.recipe_edits import load_error as _load_error

# (recipe name, round, recipe id, file): NVIDIA's seven v5.1 implementations, v5.0's H100
# llama31_405b and v5.0's DGX B200/GB200 llama2_70b_lora, every recipe of an NVIDIA v5.x image
RECIPES: List[Tuple[str, str, str, str]] = [
    *[
        (name, "v5.1", f"{name}-v5.1", f"recipes/benchmarks/v5.1/{name}.yaml")
        for name in (
            "llama31_405b",
            "llama31_8b",
            "llama2_70b_lora",
            "flux1",
            "retinanet",
            "rgat",
            "dlrm_dcnv2",
        )
    ],
    ("llama31_405b", "v5.0", "llama31_405b-v5.0", "recipes/benchmarks/v5.0/llama31_405b.yaml"),
    ("llama2_70b_lora", "v5.0", "llama2_70b_lora-v5.0", "recipes/benchmarks/v5.0/llama2_70b_lora.yaml"),
]
# the recipes that name the nearest UBI stack, and its recipe
NEAREST = {
    "retinanet-v5.1": "retinanet-reference",
    "llama31_8b-v5.1": "llama31_8b-pypi",
    "llama31_405b-v5.1": "llama31_405b-pypi",
    "llama2_70b_lora-v5.1": "llama2_70b_lora-pypi",
}
PLAIN_BASES = ("ubi9", "ubi10")


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize(("name", "round_", "bench_id", "recipe"), RECIPES)
def test_every_ngc_only_v5x_recipe_records_why_no_ubi_stack_is_built(  # type: ignore[no-untyped-def]
    kb, name: str, round_: str, bench_id: str, recipe: str
) -> None:
    bench = kb.benchmarks[bench_id]
    alternative = bench.ubi_alternative
    assert alternative is not None, f"{recipe} has no constraints.ubi_alternative"
    assert alternative.prov.origin.startswith(f"{recipe}:")
    assert alternative.prov.source, "the reason cites its sources"
    assert alternative.nearest == NEAREST.get(bench_id)
    assert all(kb.base(base).contents is not None for base in bench.bases)


@pytest.mark.parametrize("base", PLAIN_BASES)
@pytest.mark.parametrize(("name", "round_", "bench_id", "recipe"), RECIPES)
def test_plain_base_refusal_prints_the_recipes_reason_and_keeps_the_ngc_alternative(  # type: ignore[no-untyped-def]
    cli, kb, name: str, round_: str, bench_id: str, recipe: str, base: str
) -> None:
    bench = kb.benchmarks[bench_id]
    result = cli("resolve", name, "--round", round_, "--base", base)
    assert result.code == EXIT_CONFLICT, result
    said = _flat(result.err)
    assert f"[base-pin] --base {base}: {bench_id} builds on NVIDIA's NGC image {bench.bases[0]} only" in said
    assert _flat(bench.ubi_alternative.unavailable).rstrip(".") in said
    assert f"({bench.ubi_alternative.prov.origin})" in said  # the recipe's line, to check it
    assert "nearest valid alternatives:" in said
    assert f"--base {bench.bases[0]} -> {bench.bases[0]}/" in said
    nearest = NEAREST.get(bench_id)
    if nearest is not None:
        assert f"the nearest stack on {base} is the recipe {nearest}" in said
        assert f"recipe {nearest} -> {base}/" in said
    else:
        assert (
            "the nearest stack" not in said and "recipe " not in said.split("nearest valid alternatives:")[1]
        )


@pytest.mark.parametrize(("name", "round_", "bench_id", "recipe"), RECIPES)
def test_plain_base_refusal_as_json_carries_the_reason_and_its_origin(  # type: ignore[no-untyped-def]
    cli, kb, name: str, round_: str, bench_id: str, recipe: str
) -> None:
    bench = kb.benchmarks[bench_id]
    result = cli("resolve", name, "--round", round_, "--base", "ubi9", "--json")
    assert result.code == EXIT_CONFLICT
    document = json.loads(result.out)
    assert document["error"] == "conflict"
    [rule] = [r for r in document["rules"] if r["rule"] == "base-pin"]
    assert _flat(bench.ubi_alternative.unavailable).rstrip(".") in rule["message"]
    assert rule["origin"] == bench.ubi_alternative.prov.origin
    changes = [a["change"] for a in document["alternatives"]]
    assert f"--base {bench.bases[0]}" in changes
    nearest = NEAREST.get(bench_id)
    assert (f"recipe {nearest}" in changes) if nearest else not any(c.startswith("recipe ") for c in changes)


@pytest.mark.parametrize("base", PLAIN_BASES)
def test_the_named_nearest_ubi_recipe_resolves_to_the_stack_offered(cli, base: str) -> None:  # type: ignore[no-untyped-def]
    refusal = json.loads(cli("resolve", "retinanet", "--round", "v5.1", "--base", base, "--json").out)
    [offered] = [a for a in refusal["alternatives"] if a["change"] == "recipe retinanet-reference"]
    result = cli("resolve", "retinanet-reference", "--base", base, "--json")
    assert result.code == 0, result
    assert json.loads(result.out)["variant"] == offered["variant"]
    assert offered["variant"].endswith(f"-{base}-x86_64")


def test_any_plain_base_gets_the_reason_and_the_nearest_recipe_only_where_it_resolves(cli, kb) -> None:  # type: ignore[no-untyped-def]
    """Ubuntu 22.04 is a plain base too: the same reason; retinanet-reference has no stack there
    (NVIDIA's ubuntu2204 repositories end before CUDA 12.8), so it is named, not offered."""
    assert cli("resolve", "retinanet-reference", "--base", "ubuntu2204").code == EXIT_CONFLICT
    document = json.loads(
        cli("resolve", "retinanet", "--round", "v5.1", "--base", "ubuntu2204", "--json").out
    )
    [rule] = [r for r in document["rules"] if r["rule"] == "base-pin"]
    assert _flat(kb.benchmarks["retinanet-v5.1"].ubi_alternative.unavailable).rstrip(".") in rule["message"]
    assert "the recipe retinanet-reference, which has none on ubuntu2204" in rule["message"]
    assert [a["change"] for a in document["alternatives"]] == ["--base ngc-pytorch-25.04"]


def test_the_ngc_base_still_resolves_with_a_ubi_alternative_recorded(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("resolve", "retinanet", "--round", "v5.1", "--base", "ngc-pytorch-25.04")
    assert result.code == 0, result


def test_list_benchmarks_json_carries_the_reason_and_the_nearest_recipe(cli, kb) -> None:  # type: ignore[no-untyped-def]
    rows = {row["id"]: row for row in json.loads(cli("list", "benchmarks", "--json").out)}
    for _, _, bench_id, recipe in RECIPES:
        row = rows[bench_id]["ubi_alternative"]
        assert row["unavailable"] == kb.benchmarks[bench_id].ubi_alternative.unavailable
        assert row["nearest"] == NEAREST.get(bench_id)
        assert row["origin"].startswith(f"{recipe}:")
        assert rows[bench_id]["bases"] == list(kb.benchmarks[bench_id].bases)
    assert rows["retinanet-reference"]["ubi_alternative"] is None
    assert rows["retinanet-reference"]["bases"] == []


# ---------------------------------------------------------------------- the recipe's schema


def test_an_unknown_nearest_recipe_is_a_recipe_error_at_its_line(recipes_copy: Path) -> None:
    recipe = recipes_copy / "benchmarks" / "v5.1" / "retinanet.yaml"
    _edit(recipe, "    nearest: retinanet-reference\n", "    nearest: retinanet-referense\n")
    error = _load_error(recipes_copy)
    line = _line_of(recipe, "nearest: retinanet-referense")
    assert str(error).startswith(f"recipes/benchmarks/v5.1/retinanet.yaml:{line}:"), str(error)
    assert "unknown benchmark 'retinanet-referense'" in str(error)
    assert "retinanet-reference" in (error.hint or "")  # the hint lists the recipes it may name
    assert error.exit_code == 2


def test_a_nearest_recipe_on_an_ngc_image_is_a_recipe_error(recipes_copy: Path) -> None:
    recipe = recipes_copy / "benchmarks" / "v5.1" / "retinanet.yaml"
    _edit(recipe, "    nearest: retinanet-reference\n", "    nearest: rgat-v5.1\n")
    error = _load_error(recipes_copy)
    assert str(error).startswith(
        f"recipes/benchmarks/v5.1/retinanet.yaml:{_line_of(recipe, 'nearest: rgat')}:"
    )
    assert "rgat-v5.1 builds on ngc-dgl-25.03" in str(error)


def test_a_ubi_alternative_on_a_recipe_of_plain_bases_is_a_recipe_error(recipes_copy: Path) -> None:
    recipe = recipes_copy / "benchmarks" / "retinanet-reference.yaml"
    _edit(
        recipe,
        "  gpus: {min: 1, reference: 8}\n",
        "  gpus: {min: 1, reference: 8}\n"
        "  ubi_alternative: {unavailable: none, source: [mlcommons-training-ssd], verified: true}\n",
    )
    error = _load_error(recipes_copy)
    line = _line_of(recipe, "ubi_alternative:")
    assert str(error).startswith(f"recipes/benchmarks/retinanet-reference.yaml:{line}:"), str(error)
    assert "builds on one" in str(error)


def test_an_unknown_key_in_ubi_alternative_is_a_schema_error_at_its_line(recipes_copy: Path) -> None:
    recipe = recipes_copy / "benchmarks" / "v5.1" / "rgat.yaml"
    _edit(recipe, "  ubi_alternative:\n", "  ubi_alternative:\n    recipe: retinanet-reference\n")
    error = _load_error(recipes_copy)
    assert f"recipes/benchmarks/v5.1/rgat.yaml:{_line_of(recipe, 'recipe: retinanet-reference')}" in str(
        error
    )
    assert "unknown key 'recipe'" in str(error)


def test_an_undefined_source_of_the_reason_is_a_recipe_error(recipes_copy: Path) -> None:
    recipe = recipes_copy / "benchmarks" / "v5.1" / "dlrm_dcnv2.yaml"
    _edit(recipe, "source: [mlperf-v5.1-nvidia, hugectr, pypi-no-hugectr]", "source: [pypi-hugectr]")
    error = _load_error(recipes_copy)
    assert "unknown source id 'pypi-hugectr'" in str(error)
    assert f"recipes/benchmarks/v5.1/dlrm_dcnv2.yaml:{_line_of(recipe, 'source: [pypi-hugectr]')}" in str(
        error
    )


# ---------------------------------------------------------------------- against PyPI itself

# "nemo-toolkit 2.5.0 (2025-10-07)": a PyPI release and the day its first file was uploaded
_CLAIM = re.compile(
    r"\b([a-z][a-z0-9-]*[a-z0-9]) ([0-9]+(?:\.[0-9]+)+(?:rc[0-9]+)?) \(([0-9]{4}-[0-9]{2}-[0-9]{2})\)"
)
_JSON = "application/vnd.pypi.simple.v1+json"


def _claims(kb) -> Dict[str, Dict[str, str]]:  # type: ignore[no-untyped-def]
    """project -> {version: upload day} for every release the recipes' reasons name."""
    found: Dict[str, Dict[str, str]] = {}
    for _, _, bench_id, _ in RECIPES:
        for project, version, day in _CLAIM.findall(
            _flat(kb.benchmarks[bench_id].ubi_alternative.unavailable)
        ):
            found.setdefault(project, {})[version] = day
    return found


def _files_by_version(client: IndexClient, project: str) -> Dict[Version, List[Tuple[str, str]]]:
    """PyPI's files of ``project`` (PEP 691 JSON, with PEP 700 upload times) by version."""
    fetched = read_url(
        client.project_url(project), timeout=60, limit=16 * 1024 * 1024, headers={"Accept": _JSON}
    )
    assert fetched is not None, f"PyPI has no project {project}"
    files: Dict[Version, List[Tuple[str, str]]] = {}
    for entry in json.loads(fetched.body)["files"]:
        name = entry["filename"]
        try:
            version = (
                parse_wheel_filename(name)[1] if name.endswith(".whl") else parse_sdist_filename(name)[1]
            )
        except (InvalidWheelFilename, InvalidSdistFilename):
            continue  # an old egg or exe: no release the reasons name
        files.setdefault(version, []).append((name, entry["upload-time"][:10]))
    return files


def test_the_releases_the_reasons_name_are_on_pypi_as_they_say(kb, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Each "project version (day)" a reason names is a PyPI release first uploaded that day;
    and the absences they rest on still hold: no transformer-engine-cu13 2.8.0, no HugeCTR
    project, no wheel of nvidia-dali-cuda120 1.48.0, no Linux wheel of dgl 2.2.1."""
    client = IndexClient("https://pypi.org/simple/", cache=str(tmp_path))
    claims = _claims(kb)
    assert {"nemo-toolkit", "megatron-core", "transformer-engine-cu13", "torch", "dgl"} <= set(claims)
    pages = {project: _files_by_version(client, project) for project in [*claims, "nvidia-dali-cuda120"]}
    for project, versions in claims.items():
        for version, day in versions.items():
            files = pages[project].get(Version(version))
            assert files, f"PyPI has no {project} {version}"
            assert min(uploaded for _, uploaded in files) == day, (project, version, files)
    assert Version("2.8.0") not in pages["transformer-engine-cu13"]
    assert Version("2.9.0") == min(v for v in pages["transformer-engine-cu13"] if v > Version("1"))
    assert all(name.endswith(".tar.gz") for name, _ in pages["nvidia-dali-cuda120"][Version("1.48.0")])
    assert not [name for name, _ in pages["dgl"][Version("2.2.1")] if "linux" in name]
    for project in ("hugectr", "merlin-hugectr"):
        assert read_url(client.project_url(project), timeout=60, limit=1024 * 1024) is None, project
