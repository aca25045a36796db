"""Base families are data (recipes/families.yaml): pin syntax, library dirs, recorder
flags and package-list keys come from there, and no code compares family names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mlcc.api import Pins, request_for
from mlcc.errors import RecipeError
from mlcc.kb import load
from mlcc.kb.model import fill
from mlcc.lint.dockerfile import GENERATED_MARK, lint_dockerfile
from mlcc.render import render
from mlcc.resolve import Resolver

MLCC = Path(__file__).resolve().parents[2] / "mlcc"


def test_no_code_compares_family_names(kb) -> None:  # type: ignore[no-untyped-def]
    names = "|".join(re.escape(n) for n in kb.families)
    compared = re.compile(rf"""(==|!=|\bin\b)\s*\(?["']({names})["']|["']({names})["']\s*(==|!=)""")
    found = [
        f"{path.relative_to(MLCC.parent)}:{number}: {line.strip()}"
        for path in sorted(MLCC.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if compared.search(line)
    ]
    assert found == []


@pytest.mark.parametrize(("base", "family"), [("ubi8", "rhel"), ("ubuntu2204", "ubuntu")])
def test_renderers_spell_what_the_family_data_says(kb, resolver, base: str, family: str) -> None:  # type: ignore[no-untyped-def]
    facts = kb.families[family]
    stack = resolver.resolve(request_for(kb, "nccl-tests", Pins(base=base)))
    assert stack.base.packaging == facts
    rendered = render(stack)
    dockerfile = rendered.content("Dockerfile")
    assert stack.cuda is not None
    cuda_packages = stack.cuda.packages_for(facts, stack.arch.name)
    assert cuda_packages
    for package in cuda_packages:
        spelled = facts.pin_format.format(name=package.name, version=package.version)
        assert f" {spelled}" in dockerfile
        assert re.search(facts.pinned, spelled)
    assert f"{facts.recorder_flag} {cuda_packages[0].name}" in dockerfile
    # the image is a runtime one: its final stage installs, records and describes the runtime list
    runtime = stack.cuda.runtime_packages_for(facts, stack.arch.name)
    assert stack.runtime and runtime
    final = dockerfile.split("\nFROM ${BASE_IMAGE}\n", 1)[1]
    for package in runtime:
        assert f" {facts.pin(package)}" in final and f"{facts.recorder_flag} {package.name}" in final
    document = json.loads(rendered.content("stack.json"))
    assert document["components"]["cuda"]["packages"] == [facts.pin(p) for p in runtime]


def test_library_dir_comes_from_the_data(recipes_copy: Path) -> None:
    path = recipes_copy / "families.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("library_dir: /usr/lib64", "library_dir: /usr/lib64/elsewhere"), encoding="utf-8"
    )
    kb = load(str(recipes_copy), use_cache=False)
    stack = Resolver(kb).resolve(request_for(kb, "gnmt", Pins(base="ubi7")))
    assert stack.cudnn is not None and stack.cudnn.method != "tarball"
    packaged = [stack]
    assert 'CUDNN_LIB_DIR="/usr/lib64/elsewhere"' in render(packaged[0]).content("Dockerfile")


def test_a_base_of_an_unknown_family_is_a_recipe_error(recipes_copy: Path) -> None:
    path = recipes_copy / "bases.yaml"
    path.write_text(
        path.read_text(encoding="utf-8").replace("family: ubuntu", "family: debian", 1), encoding="utf-8"
    )
    with pytest.raises(RecipeError) as raised:
        load(str(recipes_copy), use_cache=False)
    assert "recipes/bases.yaml:" in str(raised.value) and "unknown family 'debian'" in str(raised.value)


def test_a_package_manager_outside_its_family_is_a_recipe_error(recipes_copy: Path) -> None:
    path = recipes_copy / "bases.yaml"
    path.write_text(
        path.read_text(encoding="utf-8").replace("package_manager: apt", "package_manager: dnf", 1),
        encoding="utf-8",
    )
    with pytest.raises(RecipeError) as raised:
        load(str(recipes_copy), use_cache=False)
    assert "dnf is not a package manager of the ubuntu family" in str(raised.value)


@pytest.mark.parametrize(
    ("line", "flagged"),
    [
        ("apt-get install -y cuda-cudart-10-1=10.1.243-1", False),
        ("apt-get install -y cuda-cudart-10-1", True),
        ("dnf install -y cuda-cudart-10-1-10.1.243-1", False),
        ("dnf install -y cuda-cudart-10-1", True),
        ("microdnf install -y libcudnn8-8.0.5.39-1.cuda11.1", False),
    ],
)
def test_lint_reads_pin_syntax_from_the_families(line: str, flagged: bool) -> None:
    text = f"{GENERATED_MARK} (test)\nFROM registry.access.redhat.com/ubi8/ubi:8.10\nRUN {line}\n"
    rules = [f.rule for f in lint_dockerfile(Path("Dockerfile"), content=text)]
    assert ("DF004" in rules) == flagged


def test_package_manager_commands_come_from_the_data(recipes_copy: Path) -> None:
    path = recipes_copy / "families.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace(
            "install: dnf install -y --setopt=install_weak_deps=False --nodocs {packages}",
            "install: dnf install -y --setopt=install_weak_deps=False --nodocs --best {packages}",
        ).replace(
            "clean: dnf clean all && rm -rf /var/cache/dnf /var/cache/yum /var/log/dnf*.log"
            " /var/log/hawkey.log /var/lib/dnf/history* /var/cache/ldconfig/aux-cache",
            "clean: dnf clean all",
        ),
        encoding="utf-8",
    )
    kb = load(str(recipes_copy), use_cache=False)
    stack = Resolver(kb).resolve(request_for(kb, "nccl-tests", Pins(base="ubi8")))
    assert stack.base.package_manager == "dnf"
    dockerfile = render(stack).content("Dockerfile")
    assert "RUN dnf install -y --setopt=install_weak_deps=False --nodocs --best " in dockerfile
    assert " && dnf clean all\n" in dockerfile
    assert "/var/cache/dnf" not in dockerfile


@pytest.mark.parametrize(
    ("manager", "base"),
    [("dnf", "ubi8"), ("yum", "ubi7"), ("microdnf", "ubi9-minimal"), ("apt", "ubuntu2204")],
)
def test_every_package_manager_installs_and_adds_nvidia_repositories(
    kb, resolver, manager: str, base: str
) -> None:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(request_for(kb, "nccl-tests", Pins(base=base)))
    assert stack.base.package_manager == manager
    commands = stack.base.packaging.manager(manager)
    script = render(stack, fmt="script").content("install.sh")
    install, clean = commands.install_commands(["a-1", "b-2"])
    assert install.endswith(" a-1 b-2") and "{" not in install
    assert f"\n{install.rsplit(' a-1', 1)[0]} " in script  # the install line, as the data spells it
    assert f"\n{clean}\n" in script
    for repo in stack.repositories:
        assert f"nvidia-{repo.name}" in script or f"[{repo.name}]" in script


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("--nodocs {packages}", "--nodocs {package}", "unknown placeholder {package}"),
        ("--nodocs {packages}", "--nodocs", "lacks the placeholder {packages}"),
        ("--nodocs {packages}", "--nodocs {packages} }", "a brace outside a {placeholder}"),
        (
            "install: dnf install",
            "install: rpm -i",
            "starts with 'rpm', which is not among the family's install_commands",
        ),
        ("clean: dnf clean all", "clean: dnf clean all $(curl evil)", "does not match"),
        ("'gpgcheck=1' \"gpgkey={gpgkey}\"", "'gpgcheck=0'", "lacks the placeholder {gpgkey}"),
    ],
)
def test_a_bad_command_pattern_is_a_recipe_error_at_its_line(
    recipes_copy: Path, old: str, new: str, message: str
) -> None:
    path = recipes_copy / "families.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(RecipeError) as raised:
        load(str(recipes_copy), use_cache=False)
    assert "recipes/families.yaml:" in str(raised.value)
    assert message in str(raised.value), str(raised.value)


def test_a_package_manager_in_two_families_is_a_recipe_error(recipes_copy: Path) -> None:
    path = recipes_copy / "families.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("      - name: apt\n", "      - name: dnf\n", 1), encoding="utf-8")
    with pytest.raises(RecipeError) as raised:
        load(str(recipes_copy), use_cache=False)
    assert "package manager dnf is already the rhel family's" in str(raised.value)


def test_fill_replaces_each_placeholder_once_and_leaves_values_alone() -> None:
    pattern = "echo {name} > /etc/{name}.repo && fetch {baseurl}"
    assert fill(pattern, {"name": "cuda", "baseurl": "https://x/{name}"}) == (
        "echo cuda > /etc/cuda.repo && fetch https://x/{name}"
    )
    assert fill("no placeholders", {}) == "no placeholders"
