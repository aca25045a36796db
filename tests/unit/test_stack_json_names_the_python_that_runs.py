"""Issue 25 item 4: the Python stack.json names is the one that runs the benchmark. On a conda
stack that is the conda environment's interpreter (its bin/ is first on PATH), not the base
image's; mlcc-record records the interpreter ``python`` resolves to and verify compares."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
from dockerfile_parse import DockerfileParser

from mlcc.image.content import INSTALLED_FILE, STACK_FILE, ImageContent
from mlcc.image.stack import verify
from mlcc.render import FILES, render
from mlcc.resolve import build_request


def _rendered(kb, resolver, benchmark: str, arch: str, with_: List[str]) -> Dict[str, str]:  # type: ignore[no-untyped-def]
    stack = resolver.resolve(build_request(kb, benchmark, arch=arch, with_=with_))
    return dict(render(stack).files)


def _final_path(dockerfile: str) -> List[str]:
    """The PATH the image runs with, as the Dockerfile's ENV lines leave it."""
    parser = DockerfileParser(fileobj=__import__("io").BytesIO(dockerfile.encode()))
    path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    for instruction in parser.structure:
        if instruction["instruction"] != "ENV":
            continue
        for name, value in _env_pairs(instruction["value"]):
            if name == "PATH":
                path = value.replace("${PATH}", path)
    return path.split(":")


def _env_pairs(value: str) -> List[tuple]:  # type: ignore[type-arg]
    import shlex

    return [tuple(word.split("=", 1)) for word in shlex.split(value) if "=" in word]


@pytest.mark.parametrize(
    ("benchmark", "with_"),
    [("tf_cnn_benchmarks", ["tensorflow=2.1"]), ("ssd", []), ("ncf", [])],
)
def test_a_conda_stack_names_the_conda_environments_python(
    kb, resolver, benchmark: str, with_: List[str]
) -> None:  # type: ignore[no-untyped-def]
    rendered = _rendered(kb, resolver, benchmark, "ppc64le", with_)
    document = json.loads(rendered["stack.json"])
    assert document["components"]["framework"]["install"] == "conda"
    python = document["components"]["python"]
    executable = python["executable"]
    assert executable == f"/opt/mlcc/conda/bin/python{python['version']}"
    dockerfile = rendered["Dockerfile"]
    # the environment is created with that Python, and its bin/ comes first on the final PATH
    assert "conda create -y -p /opt/mlcc/conda" in dockerfile
    assert f"python={python['version']}" in dockerfile
    assert _final_path(dockerfile)[0] == os.path.dirname(executable)


def test_a_pip_stack_names_the_interpreter_its_virtual_environment_links_to(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    rendered = _rendered(kb, resolver, "ssd", "x86_64", [])
    document = json.loads(rendered["stack.json"])
    assert document["components"]["framework"]["install"] != "conda"
    executable = document["components"]["python"]["executable"]
    assert executable.startswith("/usr/bin/python3.") or executable.startswith("/opt/rh/")
    dockerfile = rendered["Dockerfile"]
    assert f"{executable} -m venv /opt/mlcc/venv" in dockerfile
    assert _final_path(dockerfile)[0] == "/opt/mlcc/venv/bin"


def _conda_image(kb, resolver, recorded_python: str) -> ImageContent:  # type: ignore[no-untyped-def]
    rendered = render(resolver.resolve(build_request(kb, "ssd", arch="ppc64le")))
    stack: Dict[str, Any] = json.loads(rendered.content("stack.json"))
    labels = dict(
        DockerfileParser(fileobj=__import__("io").BytesIO(rendered.content("Dockerfile").encode())).labels
    )
    packages: Dict[str, str] = {}
    for pin in stack["components"]["cuda"]["packages"]:
        name, _, rest = pin.partition("-10.1.243") if "-10.1.243" in pin else pin.partition("-10.2.1.243")
        packages[name] = ("10.1.243" if "10.1.243" in pin else "10.2.1.243") + rest
    loads = stack["components"]["framework"]["loads"]
    installed = {
        "format": 1,
        "arch": "ppc64le",
        "os": {"id": "rhel", "version_id": "7.9"},
        "packages": packages,
        "headers": {},
        "nvcc": None,  # a runtime image: no compiler
        "compilers": [],
        "gcc": None,
        "python": "3.6.10",
        "python_executable": recorded_python,
        "modules": {
            "torch": {
                "version": "1.1.0",
                "cuda": loads["cuda_runtime"],
                "cudnn": "7.6.3",
                "nccl": loads["nccl"],
            }
        },
    }
    files = {STACK_FILE: json.dumps(stack).encode(), INSTALLED_FILE: json.dumps(installed).encode()}
    return ImageContent("test", None, "linux", "ppc64le", labels, files)


def test_verify_accepts_the_conda_python_and_names_another(kb, resolver) -> None:  # type: ignore[no-untyped-def]
    assert verify(_conda_image(kb, resolver, "/opt/mlcc/conda/bin/python3.6")) == []
    found = verify(_conda_image(kb, resolver, "/usr/bin/python3.6"))
    assert [(m.component, m.expected, m.found, m.severity) for m in found] == [
        ("Python executable", "/opt/mlcc/conda/bin/python3.6", "/usr/bin/python3.6", "drift")
    ]


def test_the_recorder_records_the_file_python_resolves_to(tmp_path: Path) -> None:
    """mlcc-record given a link to an interpreter (as a venv's or conda's ``python`` is)
    records the interpreter file itself."""
    link = tmp_path / "python"
    link.symlink_to(sys.executable)
    result = subprocess.run(
        ["sh", str(FILES / "mlcc-record"), "--python", str(link)], capture_output=True, text=True, check=True
    )
    record = json.loads(result.stdout)
    assert record["python_executable"] == os.path.realpath(sys.executable)
