"""llama31_8b-pypi, llama31_405b-pypi and llama2_70b_lora-pypi, the nearest stacks to NVIDIA's v5.1
llama31_8b, llama31_405b and llama2_70b_lora that public packages give: `--base ubi9|ubi10` on the
v5.1 benchmark offers its recipe for B200 (x86_64) and GB200 (aarch64), `kb lock` and `kb check`
cover it whether or not the matrix publishes it (it does, on UBI 9), and its committed locks are
sets pip can install in hash-checking mode (each install's files satisfy one another's
requirements). NVIDIA's llama31_8b and llama31_405b folders install the same files, and so do
their two recipes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Set

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from mlcc.errors import EXIT_CONFLICT
from mlcc.kb.pip_locks import LOCK_DIR
from mlcc.kbtools.lock import (
    marker_environment,
    matrix_stacks,
    stale_installs,
    target_of,
    ubi_alternative_stacks,
)
from mlcc.render.plan import build_plan
from mlcc.resolve import Resolver, Stack, build_request

REPO = Path(__file__).resolve().parents[2]
GPUS = {"b200": "x86_64", "gb200": "aarch64"}
# each v5.1 benchmark with a nearest public-package recipe: that recipe
NEAREST = {
    "llama31_8b": "llama31_8b-pypi",
    "llama31_405b": "llama31_405b-pypi",
    "llama2_70b_lora": "llama2_70b_lora-pypi",
}
# what each recipe's image holds across its installs: the one requirement a later install
# breaks, as NVIDIA's image does (llama31_8b's requirements.txt installs transformers 4.46.1
# after nemo-toolkit's transformers~=4.53.0; llama2_70b_lora's requirements.txt pins no
# transformers), and the NeMo-Run release standing for NVIDIA's revision
BROKEN = {
    "llama31_8b-pypi": [("nemo-toolkit", "~=4.53.0", "4.46.1")],
    "llama31_405b-pypi": [("nemo-toolkit", "~=4.53.0", "4.46.1")],
    "llama2_70b_lora-pypi": [],
}
NEMO_RUN = {"llama31_8b-pypi": "0.5.0", "llama31_405b-pypi": "0.5.0", "llama2_70b_lora-pypi": "0.4.0"}


def _stack(kb: Any, recipe: str, arch: str) -> Stack:
    return Resolver(kb).resolve(build_request(kb, recipe, arch=arch))


@pytest.mark.parametrize("benchmark", sorted(NEAREST))
@pytest.mark.parametrize("base", ["ubi9", "ubi10"])
@pytest.mark.parametrize("gpu", sorted(GPUS))
def test_base_ubi_on_the_v51_benchmark_offers_its_pypi_recipe_for_the_gpus_arch(  # type: ignore[no-untyped-def]
    cli, gpu: str, base: str, benchmark: str
) -> None:
    recipe = NEAREST[benchmark]
    refusal = cli("resolve", benchmark, "--round", "v5.1", "--gpu", gpu, "--base", base, "--json")
    assert refusal.code == EXIT_CONFLICT
    document = json.loads(refusal.out)
    [rule] = [r for r in document["rules"] if r["rule"] == "base-pin"]
    assert f"the nearest stack on {base} is the recipe {recipe}" in rule["message"]
    [offered] = [a for a in document["alternatives"] if a["change"] == f"recipe {recipe}"]
    result = cli("resolve", recipe, "--gpu", gpu, "--base", base, "--json")
    assert result.code == 0, result
    stack = json.loads(result.out)
    assert stack["variant"] == offered["variant"]
    assert f"-{base}-{GPUS[gpu]}-" in stack["variant"]
    assert stack["cuda"].startswith("13.0")


@pytest.mark.parametrize("recipe", sorted(NEAREST.values()))
def test_kb_lock_covers_the_nearest_recipe_whether_or_not_the_matrix_publishes_it(
    kb: Any, recipe: str
) -> None:
    matrix = matrix_stacks(kb)
    published = sorted((s.benchmark.name, s.arch.name) for s in matrix if s.benchmark.name == recipe)
    assert published == [(recipe, "aarch64"), (recipe, "x86_64")]
    # a nearest recipe the matrix builds is left to its cells: no second label on its installs
    assert recipe not in {s.benchmark.name for s in ubi_alternative_stacks(kb, matrix)}
    # without the cells, kb lock still resolves it on both arches, as --base ubi9 offers it
    stacks = [s for s in ubi_alternative_stacks(kb) if s.benchmark.name == recipe]
    assert sorted(s.arch.name for s in stacks) == ["aarch64", "x86_64"]
    assert stale_installs(stacks) == []


@pytest.mark.parametrize("arch", sorted(GPUS.values()))
def test_llama31_405b_pypi_locks_as_the_same_installs_as_llama31_8b_pypi(kb: Any, arch: str) -> None:
    """NVIDIA's v5.1 llama31_405b and llama31_8b folders hold the same Dockerfile and
    requirements.txt: the two recipes' pip installs are one set of lock records, in one order."""
    installs = {
        recipe: [
            (ident, install.requirements)
            for ident, _, install in build_plan(_stack(kb, recipe, arch)).pip_installs
        ]
        for recipe in NEAREST.values()
    }
    assert installs["llama31_405b-pypi"] == installs["llama31_8b-pypi"]
    assert len(installs["llama31_405b-pypi"]) >= 8


def _requested_extras(requirements: List[str]) -> Dict[str, Set[str]]:
    extras: Dict[str, Set[str]] = {}
    for text in requirements:
        if not text.startswith(("git+", "./")):
            requirement = Requirement(text)
            extras[canonicalize_name(requirement.name)] = set(requirement.extras)
    return extras


@pytest.mark.parametrize("recipe", sorted(NEAREST.values()))
@pytest.mark.parametrize("arch", sorted(GPUS.values()))
def test_each_locked_install_is_a_set_pip_installs_with_require_hashes(
    kb: Any, arch: str, recipe: str
) -> None:
    """Every requirement a locked package declares (markers evaluated for the target, with the
    extras asked for) is met by the same install's files or what earlier installs left: pip in
    hash-checking mode installs the set as it is. Only the checkouts are unlocked. Across
    installs, only the requirements BROKEN names break, as in NVIDIA's image."""
    stack = _stack(kb, recipe, arch)
    target = target_of(stack)
    assert target is not None
    document = json.loads((REPO / "recipes" / LOCK_DIR / target.file_name).read_text())
    environment = marker_environment(target)
    held: Dict[str, str] = {}
    declared: Dict[str, List[str]] = {}
    extras: Dict[str, Set[str]] = {}
    unlocked = []
    for ident, _, install in build_plan(stack).pip_installs:
        record = document["installs"][ident]
        if "unlocked" in record:
            unlocked.append(install.requirements[0])
            continue
        extras.update(_requested_extras(record["requirements"]))
        mine = {canonicalize_name(p["name"]): p["version"] for p in record["packages"]}
        held.update(mine)
        for package in record["packages"]:
            name = canonicalize_name(package["name"])
            declared[name] = package["dependencies"]
            wanted = {""} | extras.get(name, set())
            for text in package["dependencies"]:
                dependency = Requirement(text)
                if dependency.marker is not None and not any(
                    dependency.marker.evaluate({**environment, "extra": e}) for e in wanted
                ):
                    continue
                version = held.get(canonicalize_name(dependency.name))
                assert version is not None, (install.requirements[0], package["name"], text)
                assert dependency.specifier.contains(version, prereleases=True), (
                    install.requirements[0],
                    package["name"],
                    text,
                    version,
                )
    assert sorted(unlocked) == [
        "git+https://github.com/NVIDIA/mlperf-common.git@b86d175a05849d650a8ff69c1e2c37b9f4e61d51",
        "git+https://github.com/mlcommons/logging.git@d91f2e2a71679478af852404a8f0c0f46d65d3e6",
    ]
    broken = []
    for name, texts in declared.items():
        for text in texts:
            dependency = Requirement(text)
            wanted = {""} | extras.get(name, set())
            if dependency.marker is not None and not any(
                dependency.marker.evaluate({**environment, "extra": e}) for e in wanted
            ):
                continue
            version = held.get(canonicalize_name(dependency.name))
            if version is not None and not dependency.specifier.contains(version, prereleases=True):
                broken.append((name, str(dependency.specifier), version))
    assert broken == BROKEN[recipe]
    assert held["nemo-run"] == NEMO_RUN[recipe]
    assert held["nemo-toolkit"] == "2.5.0" and held["megatron-core"] == "0.15.0rc5"
    assert held["torch"] == "2.11.0" and held["transformer-engine-cu13"] == "2.9.0"
    assert held["numpy"].startswith("1.")  # nemo-toolkit's llm extra and megatron-core: numpy<2
