"""NCCL profiles are facts in recipes/nccl-profiles.yaml; mlcc's code names none of them.

The knowledge base refuses a file without exactly one default profile for a pod with an RDMA
device and one for a pod without, or with a name twice; --help lists the profiles from the
recipes; an MPIJob takes its NCCL settings from the Stack's profiles; a profile the recipes
lack is a usage error that writes nothing and names the ones they have.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

import pytest
import yaml

from mlcc.errors import RecipeError, UsageError
from mlcc.kb import load
from mlcc.render.openshift import ClusterOptions
from mlcc.render.openshift.options import nccl_settings
from tests.conftest import REPO

PROFILES = REPO / "recipes" / "nccl-profiles.yaml"
EXTRA = (
    "- name: roce-debug\n  description: RoCE with NCCL's network log\n"
    "  env: {NCCL_DEBUG: INFO, NCCL_IB_DISABLE: '0', NCCL_DEBUG_SUBSYS: NET}\n"
    "  source: [nccl-env]\n  verified: true\n"
)


def _load_error(recipes: Path) -> RecipeError:
    with pytest.raises(RecipeError) as caught:
        load(str(recipes), use_cache=False)
    return caught.value


def test_the_knowledge_base_holds_the_profiles_of_the_file(kb) -> None:  # type: ignore[no-untyped-def]
    listed = yaml.safe_load(PROFILES.read_text(encoding="utf-8"))["profiles"]
    assert [(p.name, dict(p.env), p.default_for) for p in kb.nccl_profiles] == [
        (entry["name"], entry["env"], entry.get("default_for")) for entry in listed
    ]
    assert all(p.prov.origin.startswith("recipes/nccl-profiles.yaml:") for p in kb.nccl_profiles)


def test_without_a_default_for_pods_without_rdma_the_recipes_are_refused(recipes_copy: Path) -> None:
    path = recipes_copy / "nccl-profiles.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("  default_for: sockets\n", ""), "utf-8")
    error = _load_error(recipes_copy)
    assert str(error).startswith("recipes/nccl-profiles.yaml:")
    assert "0 NCCL profiles are the default_for sockets" in str(error)
    assert error.hint == "give exactly one profile default_for: sockets" and error.exit_code == 2


def test_a_profile_named_twice_or_spelled_wrong_is_refused(recipes_copy: Path) -> None:
    path = recipes_copy / "nccl-profiles.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text + EXTRA.replace("roce-debug", "debug"), "utf-8")
    assert "NCCL profile 'debug' is listed twice" in str(_load_error(recipes_copy))
    path.write_text(text + EXTRA.replace("NCCL_DEBUG_SUBSYS: NET", "NCCL_DEBUG_SUBSYS: $(id)"), "utf-8")
    assert str(_load_error(recipes_copy)).startswith("recipes/nccl-profiles.yaml:")


def _mpijob_env(kb: Any, resolver: Any, **options: Any) -> Dict[str, str]:
    from mlcc.api import Pins, request_for
    from mlcc.render import render
    from mlcc.render.openshift.run import mpijob

    stack = resolver.resolve(request_for(kb, "nccl-tests", Pins()))
    job = mpijob(render(stack), ClusterOptions(nodes=2, **options))
    assert job is not None
    [worker] = job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"]
    return {e["name"]: e["value"] for e in worker["env"] if e["name"].startswith("NCCL_")}


def test_a_profile_added_to_the_recipes_reaches_the_mpijob_and_the_help(recipes_copy: Path, cli) -> None:  # type: ignore[no-untyped-def]
    from mlcc.resolve import Resolver

    path = recipes_copy / "nccl-profiles.yaml"
    path.write_text(path.read_text(encoding="utf-8") + EXTRA, "utf-8")
    kb = load(str(recipes_copy), use_cache=False)
    env = _mpijob_env(kb, Resolver(kb), nccl_profile="roce-debug", rdma_resource="rdma/hca")
    assert env == {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "NET", "NCCL_IB_DISABLE": "0"}
    shown = cli("--recipes", str(recipes_copy), "gen", "--help")
    assert shown.code == 0 and "roce-debug (RoCE with NCCL's network log)" in " ".join(shown.out.split())


def test_the_defaults_follow_the_rdma_device(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    default_for = {p.default_for: dict(p.env) for p in kb.nccl_profiles if p.default_for}
    assert _mpijob_env(kb, resolver) == default_for["sockets"]
    assert _mpijob_env(kb, resolver, rdma_resource="rdma/hca") == default_for["rdma"]
    with_env = _mpijob_env(kb, resolver, nccl_env=(("NCCL_DEBUG", "WARN"),))
    assert with_env == {**default_for["sockets"], "NCCL_DEBUG": "WARN"}  # --nccl-env on top


def test_a_stack_without_profiles_or_an_unknown_profile_is_a_usage_error(kb) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError, match="no default NCCL profile"):
        nccl_settings((), ClusterOptions(nodes=2))
    with pytest.raises(UsageError, match="no profile 'nope'") as raised:
        nccl_settings(kb.nccl_profiles, ClusterOptions(nodes=2, nccl_profile="nope"))
    assert raised.value.hint == "the profiles: " + ", ".join(p.name for p in kb.nccl_profiles)


@pytest.mark.parametrize(
    ("profile", "message"),
    [("nope", "no profile 'nope' in recipes/nccl-profiles.yaml"), ("a;b", "'a;b' is not a profile name")],
)
def test_gen_with_a_profile_the_recipes_lack_writes_nothing(  # type: ignore[no-untyped-def]
    cli, tmp_path: Path, profile: str, message: str
) -> None:
    out: List[Path] = [tmp_path / "d", tmp_path / "b"]
    result = cli(
        "gen", "nccl-tests", "--nodes", "2", "--nccl-profile", profile,
        "-o", str(out[0]), "--openshift-output", str(out[1]),
    )  # fmt: skip
    assert result.code == 2 and message in result.err and "hint:" in result.err
    assert not any(p.exists() for p in out)


def test_completion_offers_the_profiles_of_the_recipes() -> None:
    from tests.conftest import run_mlcc

    words = "mlcc gen nccl-tests --nodes 2 --nccl-profile "
    result = run_mlcc([], _MLCC_COMPLETE="bash_complete", COMP_WORDS=words, COMP_CWORD="6")
    offered = [line.split(",", 1)[1] for line in result.out.splitlines() if "," in line]
    listed = yaml.safe_load(PROFILES.read_text(encoding="utf-8"))["profiles"]
    assert offered == [entry["name"] for entry in listed]
