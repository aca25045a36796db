"""The public hosts are facts in recipes/hosts.yaml; mlcc's code names only their mirror options.

The knowledge base holds one host for each mirror option (HOST_MIRRORS) and refuses a
hosts.yaml that lacks one or names one mlcc has no option for; the renderers take the hosts
from the Stack; --help names each host from the recipes; and no host's URL is written in
mlcc's code, not even in a docstring or comment.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from mlcc.errors import RecipeError
from mlcc.kb import load
from mlcc.kb.model import HOST_MIRRORS
from mlcc.render.mirror import host_mirrored, routes
from tests.conftest import REPO

HOSTS = REPO / "recipes" / "hosts.yaml"


def _public_urls() -> list[str]:
    """Every public host the recipes name as such: hosts.yaml's and NVIDIA's download host."""
    hosts = yaml.safe_load(HOSTS.read_text(encoding="utf-8"))["hosts"]
    cuda = yaml.safe_load((REPO / "recipes" / "cuda.yaml").read_text(encoding="utf-8"))
    return [host["url"] for host in hosts] + [cuda["download_host"]]


def _hostname(url: str) -> str:
    return url.split("://", 1)[1].split("/", 1)[0]


def _unwrapped(text: str) -> str:
    """Help text without its wrapping (click also breaks lines after a hyphen)."""
    return "".join(text.split())


def _load_error(recipes: Path) -> RecipeError:
    with pytest.raises(RecipeError) as caught:
        load(str(recipes), use_cache=False)
    return caught.value


def _line_of(path: Path, needle: str) -> int:
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if line.startswith(needle):
            return number
    raise AssertionError(needle)


def test_the_recipes_name_one_host_per_mirror_option(kb) -> None:  # type: ignore[no-untyped-def]
    assert list(kb.hosts) == [m.host for m in HOST_MIRRORS]
    for host in kb.hosts.values():
        assert host.url.startswith("https://") and not host.url.endswith("/")
        assert host.prov.source and host.prov.origin.startswith("recipes/hosts.yaml:")


def test_no_public_host_is_written_in_the_code() -> None:
    """Every occurrence of a public host name in mlcc/**/*.py, code, docstring or comment:
    the hosts are facts of the recipes, and the code reads them from the Stack."""
    names = sorted({_hostname(url) for url in _public_urls()})
    assert "github.com" in names and len(names) >= 5  # the probe reads the recipes
    found = []
    for path in sorted((REPO / "mlcc").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for name in names:
                if re.search(r"(?<![A-Za-z0-9.-])" + re.escape(name) + r"(?![A-Za-z0-9-])", line):
                    found.append(f"{path.relative_to(REPO)}:{number}: {name}")
    assert found == []


def test_a_hosts_file_without_a_host_names_the_file_the_line_and_the_hosts_allowed(
    recipes_copy: Path,
) -> None:
    hosts = recipes_copy / "hosts.yaml"
    text = hosts.read_text(encoding="utf-8")
    start = text.index("- name: pytorch\n")
    end = text.find("\n- name:", start + 1)
    hosts.write_text(text[:start] + (text[end + 1 :] if end != -1 else ""), encoding="utf-8")
    error = _load_error(recipes_copy)
    # the line of the list the host is missing from
    assert str(error).startswith(f"recipes/hosts.yaml:{_line_of(hosts, '- name: ')}: no host for mlcc's ")
    assert "--pytorch-mirror (name: pytorch)" in str(error)
    assert error.hint is not None
    for mirror in HOST_MIRRORS:
        assert f"{mirror.host} ({mirror.flag})" in error.hint
    assert error.exit_code == 2


def test_a_host_mlcc_has_no_mirror_option_for_is_refused(recipes_copy: Path) -> None:
    hosts = recipes_copy / "hosts.yaml"
    text = hosts.read_text(encoding="utf-8")
    hosts.write_text(
        text
        + "- name: gitlab\n  url: https://gitlab.example.com\n  serves: git sources elsewhere\n"
        + "  source: [recipe-urls]\n  verified: true\n",
        encoding="utf-8",
    )
    error = _load_error(recipes_copy)
    assert str(error).startswith(f"recipes/hosts.yaml:{_line_of(hosts, '- name: gitlab')}: host 'gitlab'")
    assert "no mirror option" in str(error)
    assert error.hint is not None and "git (--git-mirror)" in error.hint


def test_a_host_listed_twice_is_refused(recipes_copy: Path) -> None:
    hosts = recipes_copy / "hosts.yaml"
    text = hosts.read_text(encoding="utf-8")
    hosts.write_text(
        text + "- name: git\n  url: https://git.example.com\n  serves: git sources again\n"
        "  source: [recipe-urls]\n  verified: true\n",
        encoding="utf-8",
    )
    assert "host 'git' is listed twice" in str(_load_error(recipes_copy))


def test_a_host_url_with_a_trailing_slash_is_a_schema_violation(recipes_copy: Path) -> None:
    hosts = recipes_copy / "hosts.yaml"
    url = yaml.safe_load(HOSTS.read_text(encoding="utf-8"))["hosts"][0]["url"]
    hosts.write_text(
        hosts.read_text(encoding="utf-8").replace(f"url: {url}\n", f"url: {url}/\n"), encoding="utf-8"
    )
    error = _load_error(recipes_copy)
    assert str(error).startswith(f"recipes/hosts.yaml:{_line_of(hosts, f'  url: {url}/')}")


def test_the_renderers_take_the_hosts_from_the_stack(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    """A host moved in the Stack moves in the generated files: nothing else knows it."""
    from mlcc.api import Pins, request_for
    from mlcc.render import render

    stack = resolver.resolve(request_for(kb, "ssd", Pins(arch="ppc64le")))
    assert stack.hosts == tuple(kb.hosts.values())
    git = kb.hosts["git"].url
    narrower = tuple(h._replace(url=git + "/mlcommons") if h.name == "git" else h for h in stack.hosts)
    published, moved = render(stack), render(stack._replace(hosts=narrower))
    assert dict(published.build_args)["GIT_MIRROR"] == git
    assert dict(moved.build_args)["GIT_MIRROR"] == git + "/mlcommons"
    assert '"${GIT_MIRROR}/mlcommons/training_results_v0.6.git"' in published.content("Dockerfile")
    assert '"${GIT_MIRROR}/training_results_v0.6.git"' in moved.content("Dockerfile")
    # a host no URL is on is not declared at all; conda-forge is spelled on the conda host
    # itself, and the git host's submodules are rewritten to GIT_MIRROR by every source build
    elsewhere = tuple(h._replace(url="https://mirror.example.com/" + h.name) for h in stack.hosts)
    moved_away = render(stack._replace(hosts=elsewhere))
    declared = dict(moved_away.build_args)
    assert {m.var for m in HOST_MIRRORS} & declared.keys() == {"CONDA_MIRROR", "GIT_MIRROR"}
    assert ".insteadOf=https://mirror.example.com/git/" in moved_away.content("Dockerfile")
    assert declared["CONDA_MIRROR"] == "https://mirror.example.com/conda"


def test_a_url_is_routed_through_the_first_host_it_is_on() -> None:
    from mlcc.kb.model import Provenance, PublicHost

    prov = Provenance(source=("s",), verified=True, origin="recipes/hosts.yaml:1")
    hosts = tuple(
        PublicHost(m.host, f"https://{m.host}.example.org/base", "things", prov) for m in HOST_MIRRORS
    )
    routed = routes(hosts)
    assert (
        host_mirrored("git+https://git.example.org/base/o/r.git@x", routed) == "git+${GIT_MIRROR}/o/r.git@x"
    )
    assert host_mirrored("https://conda.example.org/base", routed) == "${CONDA_MIRROR}"
    assert host_mirrored("https://conda.example.org/basement", routed) == "https://conda.example.org/basement"


def test_help_names_each_host_from_the_recipes(kb, cli) -> None:  # type: ignore[no-untyped-def]
    for command in ("gen", "build"):
        result = cli(command, "--help")
        assert result.code == 0, result.err
        text = _unwrapped(result.out)
        for mirror in HOST_MIRRORS:
            host = kb.hosts[mirror.host]
            assert _unwrapped(f"{mirror.flag} URL Fetch {host.serves} from URL instead of {host.url}") in text
        assert _unwrapped(f"instead of {kb.download_host} (also a build arg: NVIDIA_MIRROR)") in text


def test_help_read_from_other_recipes_names_their_hosts(recipes_copy: Path, cli) -> None:  # type: ignore[no-untyped-def]
    hosts = recipes_copy / "hosts.yaml"
    hosts.write_text(
        hosts.read_text(encoding="utf-8").replace(
            "url: https://github.com\n", "url: https://git.example.com\n"
        ),
        encoding="utf-8",
    )
    text = _unwrapped(cli("--recipes", str(recipes_copy), "gen", "--help").out)
    assert _unwrapped("instead of https://git.example.com (also a build arg: GIT_MIRROR)") in text


def test_help_without_loadable_recipes_still_names_every_option(recipes_copy: Path, cli) -> None:  # type: ignore[no-untyped-def]
    (recipes_copy / "hosts.yaml").write_text("kind: hosts\n", encoding="utf-8")
    result = cli("--recipes", str(recipes_copy), "gen", "--help")
    assert result.code == 0, result.err
    text = " ".join(result.out.split())
    for mirror in HOST_MIRRORS:
        assert (
            f"{mirror.flag} URL Fetch from URL what the '{mirror.host}' host of recipes/hosts.yaml serves"
            in text
        )
