"""Issue 12 item 4: every public host a build fetches from is a mirror option and a build arg.

The published set fetches nothing from GitHub, conda channels or PyTorch's host except through
a build argument whose default is the public host; `mlcc gen` options set those defaults, the
script and Apptainer formats honour the same variables, OpenShift's BuildConfig lists them as
buildArgs, `mlcc build` passes them. A URL with credentials is refused, hostile URLs too.
"""

from __future__ import annotations

import io
import re
import subprocess
from pathlib import Path
from typing import Dict, List

import pytest
import yaml

from mlcc.kb.model import HOST_MIRRORS
from mlcc.render.mirror import PIP_SETTINGS, routes
from mlcc.render.plan import SOURCE_DATE_EPOCH
from tests.conftest import REPO

ALL = {
    "--pip-index-url": "https://pypi.example.com/simple",
    "--pip-extra-index-url": "http://extra.example.com:8080/simple",
    "--git-mirror": "https://git.example.com/github",
    "--conda-mirror": "https://conda.example.com/channels",
    "--wmlce-mirror": "https://conda.example.com/wmlce",
    "--pytorch-mirror": "https://files.example.com/pytorch",
    "--mirror": "https://files.example.com/nvidia",
}


def _flags(values: Dict[str, str]) -> List[str]:
    return [word for item in values.items() for word in item]


def _gen(cli, tmp_path: Path, *args: str) -> Path:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    result = cli("gen", *args, "-o", str(out), "--openshift-output", str(tmp_path / "oc"))
    assert result.code == 0, result.err
    return out


def _declared(dockerfile: str) -> Dict[str, str]:
    return {
        m.group(1): m.group(3) or ""
        for m in re.finditer(r"^ARG ([A-Z_]+)(=(\S*))?$", dockerfile, flags=re.MULTILINE)
    }


def _run_lines(dockerfile: str) -> str:
    """The RUN instructions' commands, read with a real Dockerfile parser."""
    from dockerfile_parse import DockerfileParser

    parser = DockerfileParser(fileobj=io.BytesIO(dockerfile.encode()))
    return "\n".join(i["value"] for i in parser.structure if i["instruction"] == "RUN")


@pytest.mark.parametrize("path", sorted((REPO / "dockerfiles").glob("*/*/Dockerfile")), ids=str)
def test_the_published_set_fetches_public_hosts_only_through_build_args(kb, path: Path) -> None:  # type: ignore[no-untyped-def]
    text = path.read_text()
    # a submodule rewrite names the public host as the prefix it replaces, never fetches it
    commands = re.sub(r"\.insteadOf=\S+?/\"", '.insteadOf=PUBLIC/"', _run_lines(text))
    declared = _declared(text)
    for mirror in routes(tuple(kb.hosts.values())):
        assert mirror.public not in commands, f"{path}: {mirror.public} not through ${mirror.var}"
        if "${" + mirror.var + "}" in commands:
            assert declared[mirror.var] == mirror.public  # the default keeps the published behaviour
    assert " -c conda-forge" not in commands
    # nothing is fetched from a literal host: every URL starts with a mirror build arg
    assert re.findall(r"https?://\S+", commands) == [], path
    if " pip install " in commands:
        for setting in PIP_SETTINGS:
            assert declared[setting.var] == "", f"{path}: {setting.var} declared without a default"
    for used in set(re.findall(r"\$\{([A-Z_]+)\}", commands)):
        if used.endswith("_MIRROR") or used.startswith("PIP_"):
            assert used in declared, f"{path}: ${used} used but not declared"


def test_all_mirrors_reach_every_format_and_the_build_args(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    args = ["ssd", "--arch", "ppc64le", *_flags(ALL)]
    out = _gen(cli, tmp_path, *args)
    (dockerfile,) = out.glob("ssd/*/Dockerfile")
    text = dockerfile.read_text()
    declared = _declared(text)
    assert declared["PIP_INDEX_URL"] == ALL["--pip-index-url"]
    assert declared["PIP_EXTRA_INDEX_URL"] == ALL["--pip-extra-index-url"]
    assert declared["GIT_MIRROR"] == ALL["--git-mirror"]
    assert declared["CONDA_MIRROR"] == ALL["--conda-mirror"]
    assert declared["WMLCE_MIRROR"] == ALL["--wmlce-mirror"]
    assert declared["NVIDIA_MIRROR"] == ALL["--mirror"]
    commands = _run_lines(text)
    assert '-c "${WMLCE_MIRROR}/" -c "${CONDA_MIRROR}/conda-forge"' in commands
    assert 'git fetch -q --depth 1 "${GIT_MIRROR}/mlcommons/training_results_v0.6.git"' in commands
    # the header's regeneration command repeats every option
    for flag, value in ALL.items():
        assert f"{flag} {value}" in text.splitlines()[1]

    # the OpenShift BuildConfig carries them as buildArgs, NVIDIA_MIRROR first
    (build,) = (tmp_path / "oc").glob("ssd/*/build.yaml")
    objects = yaml.safe_load(build.read_text())["items"]
    configs = [o for o in objects if o.get("kind") == "BuildConfig"]
    assert configs
    build_args = {
        a["name"]: a["value"] for a in configs[0]["spec"]["strategy"]["dockerStrategy"]["buildArgs"]
    }
    assert build_args == {
        "NVIDIA_MIRROR": ALL["--mirror"],
        "GIT_MIRROR": ALL["--git-mirror"],
        "PIP_INDEX_URL": ALL["--pip-index-url"],
        "PIP_EXTRA_INDEX_URL": ALL["--pip-extra-index-url"],
        "WMLCE_MIRROR": ALL["--wmlce-mirror"],
        "CONDA_MIRROR": ALL["--conda-mirror"],
        # not a mirror: the source date every stage declares (docs/reproducing.md)
        "SOURCE_DATE_EPOCH": str(SOURCE_DATE_EPOCH),
    }
    script = _gen(cli, tmp_path / "s", *args, "--format", "script")
    (install,) = script.glob("ssd/*/install.sh")
    assert f'export GIT_MIRROR="${{GIT_MIRROR:-{ALL["--git-mirror"]}}}"' in install.read_text()
    assert f'export PIP_INDEX_URL="${{PIP_INDEX_URL:-{ALL["--pip-index-url"]}}}"' in install.read_text()
    apptainer = _gen(cli, tmp_path / "a", *args, "--format", "singularity")
    (definition,) = apptainer.glob("ssd/*/Singularity.def")
    assert f'    export CONDA_MIRROR="${{CONDA_MIRROR:-{ALL["--conda-mirror"]}}}"' in definition.read_text()


def test_the_build_passes_the_mirrors_as_build_args(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    from mlcc.api import Pins, SourceFlags, request_for
    from mlcc.render import render

    options = SourceFlags(git_mirror="http://git.example.com", pip_index_url="http://pypi.example.com/simple")
    stack = resolver.resolve(request_for(kb, "ssd", Pins()))
    rendered = render(stack, options=options.options())
    args = dict(rendered.build_args)
    assert args["GIT_MIRROR"] == "http://git.example.com"
    assert args["PIP_INDEX_URL"] == "http://pypi.example.com/simple"
    assert "PIP_EXTRA_INDEX_URL" not in args  # declared without a default: pip's own default stands
    plain = render(stack)
    assert plain.digest != rendered.digest  # another mirror is another build input
    assert dict(plain.build_args)["GIT_MIRROR"] == kb.hosts["git"].url  # the public host: recipes/hosts.yaml


def test_a_mirrored_git_checkout_still_proves_its_full_sha(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = _gen(cli, tmp_path, "ssd", "--git-mirror", "https://git.example.com")
    text = next(out.glob("ssd/*/Dockerfile")).read_text()
    sha = re.search(r'"\$\{GIT_MIRROR\}/mlcommons/training_results_v0.6.git" ([0-9a-f]{40})', text)
    assert sha is not None
    assert f'test "$(git rev-parse HEAD)" = {sha.group(1)}' in text


def test_the_shell_expands_a_mirrored_url_to_the_mirror(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = _gen(cli, tmp_path, "ssd", "--format", "script", "--git-mirror", "http://127.0.0.1:9/git")
    script = next(out.glob("ssd/*/install.sh")).read_text()
    line = next(x for x in script.splitlines() if x.startswith("(git fetch"))
    word = re.search(r'("\$\{GIT_MIRROR\}[^"]*")', line)
    assert word is not None
    exports = "\n".join(x for x in script.splitlines() if x.startswith("export GIT_MIRROR="))
    done = subprocess.run(
        ["bash", "-c", f"{exports}\nprintf %s {word.group(1)}"], capture_output=True, text=True, check=True
    )
    assert done.stdout == "http://127.0.0.1:9/git/mlcommons/training_results_v0.6.git"
    # the environment wins over the generated default, as for NVIDIA_MIRROR
    env = subprocess.run(
        ["bash", "-c", f"{exports}\nprintf %s {word.group(1)}"],
        capture_output=True,
        text=True,
        check=True,
        env={"GIT_MIRROR": "http://other", "PATH": "/usr/bin:/bin"},
    )
    assert env.stdout == "http://other/mlcommons/training_results_v0.6.git"


@pytest.mark.parametrize(
    "flag", [m.flag for m in HOST_MIRRORS] + [p.flag for p in PIP_SETTINGS] + ["--mirror"]
)
def test_a_mirror_url_with_credentials_is_refused_without_echoing_them(
    cli, tmp_path: Path, flag: str
) -> None:  # type: ignore[no-untyped-def]
    result = cli("gen", "ssd", flag, "https://deploy:s3cr3t@mirror.example.com/x", "-o", str(tmp_path / "o"))
    assert result.code == 2, result.err
    assert f"{flag}: the URL carries credentials" in result.err
    assert "--secret" in result.err and "netrc" in result.err
    assert "s3cr3t" not in result.err + result.out
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "url",
    [
        "https://mirror.example.com/x y",
        'https://mirror.example.com/"; rm -rf /',
        "https://mirror.example.com/$(id)",
        "https://mirror.example.com/`id`",
        "https://mirror.example.com/a\nRUN id",
        "https://mirror.example.com/${HOME}",
        "ftp://mirror.example.com/x",
        "https://mirror.example.com/x?token=1",
        "https://mirror.example.com:99999/x",
        "https://token@mirror.example.com/x",
        "file:///etc",
    ],
)
def test_hostile_mirror_urls_are_refused(cli, tmp_path: Path, url: str) -> None:  # type: ignore[no-untyped-def]
    result = cli("gen", "ssd", "--git-mirror", url, "-o", str(tmp_path / "o"))
    assert result.code == 2, result.err
    assert "--git-mirror:" in result.err and "Traceback" not in result.err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("rest", ["/o/r.git", '/a"b', "/a$(id)b", "/a`id`", "/a\\b", "/a'b", "/$HOME"])
def test_a_mirrored_word_expands_only_its_variable(rest: str) -> None:
    from mlcc.render.plan import _url_word

    word = _url_word("${GIT_MIRROR}" + rest)
    done = subprocess.run(
        ["bash", "-c", f"printf %s {word}"],
        capture_output=True,
        text=True,
        check=True,
        env={"GIT_MIRROR": "http://m", "HOME": "/root", "PATH": "/usr/bin:/bin"},
    )
    assert done.stdout == "http://m" + rest


@pytest.fixture(scope="module")
def store():  # type: ignore[no-untyped-def]
    from tests.kube_schemas import schema_store

    return schema_store()


@pytest.mark.parametrize(
    "cluster", [{}, {"chain": True, "namespace": "mlperf"}, {"openshift": "3.11"}], ids=["4", "chain", "3.11"]
)
def test_buildconfigs_with_every_mirror_validate_against_the_real_schemas(
    kb, resolver, store, cluster: Dict[str, object]
) -> None:  # type: ignore[no-untyped-def]
    from mlcc.api import Pins, SourceFlags, request_for
    from mlcc.render import render
    from mlcc.render.openshift import ClusterOptions, check_cluster_options, render_openshift
    from tests.kube_schemas import object_errors

    flags = {name.lstrip("-").replace("-", "_"): value for name, value in ALL.items()}
    options = SourceFlags(**flags).options()  # type: ignore[arg-type]
    rendered = render(resolver.resolve(request_for(kb, "ssd", Pins(arch="ppc64le"))), options=options)
    files = render_openshift(rendered, check_cluster_options(ClusterOptions(**cluster)))  # type: ignore[arg-type]
    openshift = str(cluster.get("openshift", "4"))
    configs = []
    for _, content in files.files:
        document = yaml.safe_load(content)
        for obj in document.get("items", [document]) if isinstance(document, dict) else []:
            assert object_errors(obj, store, openshift) == [], obj["kind"]
            if obj["kind"] == "BuildConfig":
                configs.append(obj)
    declared = set()
    for config in configs:
        strategy = config["spec"]["strategy"]["dockerStrategy"]
        names = {a["name"] for a in strategy["buildArgs"]}
        assert names <= set(_declared(config["spec"]["source"]["dockerfile"]))  # each one consumed
        declared |= names
    # every mirror the build fetches through reaches some stage's buildArgs
    assert {"GIT_MIRROR", "CONDA_MIRROR", "WMLCE_MIRROR", "PIP_INDEX_URL", "NVIDIA_MIRROR"} <= declared
