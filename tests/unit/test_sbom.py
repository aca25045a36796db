"""An image's SBOM: CycloneDX 1.5 from stack.json and installed.json, checked against the
real CycloneDX 1.5 JSON schema (shipped by cyclonedx-python-lib, the `test` extra) and its
purls against packageurl-python; deterministic; untrusted input refused with exit 6.
The e2e suite pushes one beside a real image (tests/e2e/test_build.py)."""

from __future__ import annotations

import hashlib
import http.server
import json
import re
import subprocess
import sys
import threading
import urllib.parse
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar, Dict, Iterator, List, Optional, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, FormatChecker
from packageurl import PackageURL
from referencing import Registry as SchemaRegistry
from referencing import Resource

from mlcc.app.images import Attached, repository_types, sbom_document, sbom_tag, sbom_time
from mlcc.cli import run
from mlcc.engines.base import (
    BuildJob,
    BuildPolicy,
    BuildResult,
    Engine,
    EngineSettings,
    ImageEngine,
    Log,
    job_for,
)
from mlcc.errors import EXIT_DRIFT, DriftError, RegistryError, UsageError
from mlcc.image.auth import Credentials
from mlcc.image.base import ResolvedBase
from mlcc.image.content import INSTALLED_FILE, STACK_FILE, ImageContent
from mlcc.image.reference import Reference
from mlcc.image.registry import OCI_MANIFEST, Manifest, Registry
from mlcc.image.sbom import ImageName, cyclonedx, for_image, sbom_bytes
from tests.oci_layout import layer, oci_layout

DIGEST = "sha256:" + "ab" * 32
IMAGE = ImageName("127.0.0.1:5000/probe/maskrcnn:cuda10.1-cudnn7-ubi8-x86_64", DIGEST)

# benchmark, pins: one stack per way a library gets into an image
STACKS = {
    "rpm-tarball-source": ("maskrcnn", {"cuda": "10.1"}),
    "rpm-nccl": ("ssd", {"newest": True}),
    "deb": ("nccl-tests", {"base": "ubuntu2204"}),
    "bundled-conda-ppc64le": ("tf_cnn_benchmarks", {"arch": "ppc64le"}),
}


@pytest.fixture(scope="module")
def validator() -> Any:
    """The CycloneDX 1.5 JSON schema with the SPDX and JSF schemas it references."""
    folder = resources.files("cyclonedx.schema") / "_res"

    def load(name: str) -> Any:
        return json.loads((folder / name).read_text(encoding="utf-8"))

    schema = load("bom-1.5.SNAPSHOT.schema.json")
    assert schema["$id"] == "http://cyclonedx.org/schema/bom-1.5.schema.json"
    registry: SchemaRegistry = SchemaRegistry().with_resources(
        (f"http://cyclonedx.org/schema/{name}", Resource.from_contents(load(name)))
        for name in ("spdx.SNAPSHOT.schema.json", "jsf-0.82.SNAPSHOT.schema.json")
    )
    return Draft7Validator(schema, registry=registry, format_checker=FormatChecker())


def _stack(kb: Any, resolver: Any, benchmark: str, pins: Dict[str, Any]) -> Dict[str, Any]:
    from mlcc.api import Pins, request_for
    from mlcc.render import render

    stack = resolver.resolve(request_for(kb, benchmark, Pins(**pins)))
    document: Dict[str, Any] = json.loads(render(stack).content("stack.json"))
    return document


def _installed(stack: Dict[str, Any]) -> Dict[str, Any]:
    """What mlcc-record would write for a build that installed exactly the stack."""
    components = stack["components"]
    pins = [
        *(components["cuda"] or {}).get("packages", []),
        *(p for key in ("cudnn", "nccl") for p in (components[key] or {}).get("packages", [])),
    ]
    packages = {}
    for pin in pins:
        name, version = pin.split("=", 1) if "=" in pin else re.split(r"-(?=\d+\.\d)", pin, maxsplit=1)
        packages[name] = version
    deb = any("=" in p for p in pins)
    framework = components["framework"]
    pip = [{"name": "pip", "version": "21.3.1"}, {"name": "PyYAML", "version": "5.1"}]
    modules = {}
    if framework:
        pip.append({"name": framework["module"], "version": framework["version"]})
        modules[framework["module"]] = {"version": framework["version"], "cuda": "10.1", "cudnn": "7.6.5"}
    return {
        "format": 1,
        "arch": stack["arch"],
        "os": {"id": "ubuntu", "version_id": "22.04"} if deb else {"id": "rhel", "version_id": "8.10"},
        "packages": packages,
        "headers": {"cudnn": "7.6.5", "nccl": "2.8.4"},
        "nvcc": "10.1.243",
        "gcc": components["gcc"]["version"],
        "python": "3.6.8",
        "pip": pip,
        "modules": modules,
    }


def _components(document: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    return {c["bom-ref"]: c for c in document["components"]}


def _check(document: Dict[str, Any], validator: Any) -> None:
    """Valid CycloneDX 1.5, canonical purls, unique references, an RFC 3339 time."""
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message[:200]}" for e in errors[:5]]
    everything = [document["metadata"]["component"], *document["components"]]
    refs = [c["bom-ref"] for c in everything]
    assert len(refs) == len(set(refs))
    for component in everything:
        if "purl" in component:
            assert PackageURL.from_string(component["purl"]).to_string() == component["purl"]
    made_of = {d["ref"]: d.get("dependsOn", []) for d in document["dependencies"]}
    assert set(made_of.pop("image")) == set(refs[1:])
    assert not any(made_of.values())  # the components' own dependencies are not recorded
    if "timestamp" in document["metadata"]:
        assert re.match(
            r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[-+]\d\d:\d\d)\Z", document["metadata"]["timestamp"]
        )


@pytest.mark.parametrize("case", sorted(STACKS))
def test_every_kind_of_stack_gives_a_valid_deterministic_sbom(
    kb: Any, resolver: Any, validator: Any, case: str
) -> None:
    stack = _stack(kb, resolver, *STACKS[case])
    installed = _installed(stack)
    document = cyclonedx(stack, installed, IMAGE, timestamp="2024-01-02T03:04:05Z", tool_version="0.1.0")
    _check(document, validator)
    again = cyclonedx(
        json.loads(json.dumps(stack)),
        dict(installed),
        IMAGE,
        timestamp="2024-01-02T03:04:05Z",
        tool_version="0.1.0",
    )
    assert sbom_bytes(again) == sbom_bytes(document)
    # the serial number follows the content: another record, another number
    installed["pip"] = [*installed["pip"], {"name": "six", "version": "1.16.0"}]
    other = cyclonedx(stack, installed, IMAGE, timestamp="2024-01-02T03:04:05Z", tool_version="0.1.0")
    assert other["serialNumber"] != document["serialNumber"]
    assert re.match(
        r"^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\Z",
        other["serialNumber"],
    )


def test_the_components_and_their_purls(kb: Any, resolver: Any, validator: Any) -> None:
    stack = _stack(kb, resolver, "maskrcnn", {"cuda": "10.1"})
    stack["base"]["digest"] = "sha256:" + "cd" * 32  # as mlcc build stamps it
    types = repository_types(kb.hosts.values())
    assert types, "recipes/hosts.yaml gives no host a purl type"
    document = cyclonedx(stack, _installed(stack), IMAGE, repository_types=types)
    _check(document, validator)
    assert "timestamp" not in document["metadata"]  # no time given: none, never the clock
    found = _components(document)
    image = document["metadata"]["component"]
    assert image["type"] == "container" and image["version"] == DIGEST
    assert image["purl"] == (
        "pkg:oci/maskrcnn@sha256:" + "ab" * 32 + "?arch=amd64&repository_url=127.0.0.1:5000/probe/maskrcnn"
        "&tag=cuda10.1-cudnn7-ubi8-x86_64"
    )
    assert image["hashes"] == [{"alg": "SHA-256", "content": "ab" * 32}]
    base = found["base-image"]
    assert base["purl"].startswith("pkg:oci/ubi@sha256:" + "cd" * 32 + "?arch=amd64&repository_url=")
    assert base["hashes"] == [{"alg": "SHA-256", "content": "cd" * 32}]
    assert found["rpm:cuda-cudart-10-1"]["purl"] == (
        "pkg:rpm/nvidia/cuda-cudart-10-1@10.1.243-1?arch=x86_64&distro=rhel-8.10"
    )
    assert found["tarball:cudnn"]["purl"] == (
        "pkg:generic/cudnn@7.6.5.32?download_url=https://developer.download.nvidia.com/compute/redist/"
        "cudnn/v7.6.5/cudnn-10.1-linux-x64-v7.6.5.32.tgz"
    )
    assert found["tarball:nccl"]["version"] == "2.8.4"
    assert found["source:maskrcnn"]["purl"] == (
        "pkg:github/mlcommons/training_results_v0.6@f312518c2d6107eec983750eed23950f1f0c8a0e"
        "#NVIDIA/benchmarks/maskrcnn/implementations/pytorch"
    )
    # without the recipes' purl types the source has no purl, only its repository
    plain = _components(cyclonedx(stack, _installed(stack), IMAGE))["source:maskrcnn"]
    assert "purl" not in plain
    assert plain["externalReferences"][0]["url"].endswith("/mlcommons/training_results_v0.6")
    assert found["pypi:pyyaml"]["purl"] == "pkg:pypi/pyyaml@5.1"
    # PyTorch built from source in the image is no PyPI release: no pkg:pypi for it
    assert "purl" not in found["pypi:torch"] and found["pypi:torch"]["version"] == "1.1.0a0+828a6a3"
    assert {"name": "mlcc:install", "value": "source"} in found["pypi:torch"]["properties"]
    assert found["os"] == {
        "type": "operating-system",
        "bom-ref": "os",
        "name": "rhel",
        "version": "8.10",
        "description": "from /etc/os-release",
    }
    assert found["gcc"]["version"] == "8.5.0" and found["python"]["version"] == "3.6.8"


def test_deb_and_bundled_libraries(kb: Any, resolver: Any) -> None:
    deb = _components(
        cyclonedx(*_with_installed(_stack(kb, resolver, "nccl-tests", {"base": "ubuntu2204"})), IMAGE)
    )
    assert (
        deb["deb:libnccl2"]["purl"]
        == "pkg:deb/nvidia/libnccl2@2.23.4-1%2Bcuda12.6?arch=amd64&distro=ubuntu-22.04"
    )
    conda = _stack(kb, resolver, "tf_cnn_benchmarks", {"arch": "ppc64le"})
    found = _components(cyclonedx(*_with_installed(conda), IMAGE))
    assert found["bundled:cudnn"]["description"] == "brought by the framework (bundled)"
    assert {"name": "mlcc:framework-loads", "value": "7.6.5"} in found["bundled:cudnn"]["properties"]
    # a conda build of the framework is named as such, not as a PyPI release
    assert found["pypi:tensorflow"]["purl"].startswith("pkg:conda/tensorflow@")
    assert found["rpm:cuda-cudart-10-2"]["purl"].endswith("?arch=ppc64le&distro=rhel-8.10")


def test_hashes_and_commits_from_the_fetches(kb: Any, resolver: Any, validator: Any) -> None:
    """A format 2 stack.json says how each fetched byte was pinned: the SBOM carries it."""
    stack = _stack(kb, resolver, "maskrcnn", {"cuda": "10.1"})
    document = cyclonedx(
        stack, _installed(stack), IMAGE, repository_types=repository_types(kb.hosts.values())
    )
    _check(document, validator)
    found = _components(document)
    downloads = {d["name"]: d for d in stack["fetches"]["downloads"]}
    for name in ("cudnn", "nccl"):
        assert re.match(r"^[0-9a-f]{64}\Z", downloads[name]["sha256"])
        assert found[f"tarball:{name}"]["hashes"] == [
            {"alg": "SHA-256", "content": downloads[name]["sha256"]}
        ]
    # pip's files: the sha256 of the file the hash lock made pip take
    pyyaml = next(p for i in stack["fetches"]["pip"] for p in i["packages"] if p["name"] == "pyyaml")
    assert pyyaml["version"] == "5.1"
    assert found["pypi:pyyaml"]["hashes"] == [{"alg": "SHA-256", "content": pyyaml["sha256"]}]
    assert {"name": "mlcc:file", "value": "PyYAML-5.1.tar.gz"} in found["pypi:pyyaml"]["properties"]
    assert "hashes" not in found["pypi:torch"]  # built from source: no file was fetched
    # git checkouts besides the benchmark's own source, each at its commit
    apex = found["git:apex"]
    assert apex["version"] == "9f64bf27802eb2d3325cf709f500e0e3275d7996"
    assert apex["purl"] == "pkg:github/nvidia/apex@9f64bf27802eb2d3325cf709f500e0e3275d7996"
    assert apex["externalReferences"] == [{"type": "vcs", "url": "https://github.com/NVIDIA/apex.git"}]
    assert found["git:pip:PythonAPI"]["purl"].startswith("pkg:github/nvidia/cocoapi@cdbf99a5")
    pytorch = found["git:framework:pytorch"]  # a short hash: named, with the recipe's reason, no purl
    assert pytorch["version"] == "828a6a3" and "purl" not in pytorch
    assert any(p["name"] == "mlcc:commit-unresolved" for p in pytorch["properties"])
    assert not any(ref.startswith("git:source") for ref in found)  # the benchmark is source:maskrcnn
    assert {"name": "mlcc:stack-format", "value": "2"} in document["metadata"]["component"]["properties"]


def test_a_download_without_a_sourced_sha256_says_why(kb: Any, resolver: Any, validator: Any) -> None:
    stack = _stack(kb, resolver, "tf_cnn_benchmarks", {"arch": "ppc64le"})  # a conda build: Miniforge
    document = cyclonedx(stack, _installed(stack), IMAGE)
    _check(document, validator)
    miniforge = _components(document)["download:miniforge"]
    assert "hashes" not in miniforge
    names = {p["name"] for p in miniforge["properties"]}
    assert names == {"mlcc:sha256-unavailable", "mlcc:checksum-url"}
    assert miniforge["purl"].startswith("pkg:generic/miniforge?download_url=https://github.com/conda-forge/")


def test_an_image_of_format_1_still_gives_its_sbom(kb: Any, resolver: Any, validator: Any) -> None:
    """Images built before stack.json format 2 carry no fetches: the same SBOM as then."""
    stack = _stack(kb, resolver, "maskrcnn", {"cuda": "10.1"})
    old = {k: v for k, v in stack.items() if k != "fetches"}
    old["format"] = 1
    document = cyclonedx(old, _installed(old), IMAGE)
    _check(document, validator)
    found = _components(document)
    assert not any("hashes" in c for ref, c in found.items() if ref != "base-image")
    assert not any(ref.startswith(("git:", "download:")) for ref in found)
    assert found["tarball:cudnn"]["purl"].startswith("pkg:generic/cudnn@7.6.5.32?download_url=")


def _with_installed(stack: Dict[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    return stack, _installed(stack)


def test_a_real_record_of_this_python(kb: Any, resolver: Any, validator: Any) -> None:
    """installed.json as mlcc-record really writes it (this interpreter's pip list)."""
    from mlcc.render import FILES

    result = subprocess.run(
        ["sh", str(FILES / "mlcc-record"), "--python", sys.executable, "--module", "jsonschema"],
        capture_output=True,
        text=True,
        check=True,
    )
    record = json.loads(result.stdout)
    stack = _stack(kb, resolver, "maskrcnn", {"cuda": "10.1"})
    document = cyclonedx(stack, record, IMAGE, timestamp="2024-01-02T03:04:05.123456789Z")
    _check(document, validator)
    # the image's nanoseconds, kept to the microsecond (cyclonedx-python-lib keeps a datetime)
    assert document["metadata"]["timestamp"] == "2024-01-02T03:04:05.123456+00:00"
    found = _components(document)
    assert found["pypi:jsonschema"]["purl"].startswith("pkg:pypi/jsonschema@")
    assert len([r for r in found if r.startswith("pypi:")]) == len(record["pip"])
    assert record["conda"] is None and not [r for r in found if r.startswith("conda:")]  # a venv


def _conda_environment(root: Path) -> Path:
    """A real Python environment with conda's records in it: conda-meta as conda writes
    it for three packages, one of which put a distribution into site-packages that pip
    lists (and a record that is not JSON, which conda does not write but an image may hold)."""
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, capture_output=True)
    python = root / "bin" / "python"
    purelib = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    site = purelib.relative_to(root)
    info = purelib / "mlcc_conda_probe-1.2.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mlcc-conda-probe\nVersion: 1.2.0\n")
    meta = root / "conda-meta"
    meta.mkdir()
    records = {
        "mlcc-conda-probe-1.2.0-py_0.json": {
            "name": "mlcc-conda-probe",
            "version": "1.2.0",
            "build": "py_0",
            "channel": "https://user:secret@conda.anaconda.org/t/tk-0123/conda-forge/noarch",
            "files": [f"{site}/mlcc_conda_probe-1.2.0.dist-info/METADATA", f"{site}/mlcc_conda_probe.py"],
        },
        "cudatoolkit-10.1.243-h6bb024c_0.json": {
            "name": "cudatoolkit",
            "version": "10.1.243",
            "build": "h6bb024c_0",
            "channel": "https://repo.anaconda.com/pkgs/main/linux-64",
            "files": ["lib/libcudart.so.10.1.243"],
        },
        "six-1.12.0-py36_0.json": {
            "name": "six",
            "version": "1.12.0",
            "build": "py36_0",
            "channel": "pkgs/main",
            "files": [f"{site}/six-1.12.0-py3.6.egg-info", f"{site}/six.py"],
        },
    }
    for name, record in records.items():
        (meta / name).write_text(json.dumps(record))
    (meta / "broken.json").write_text("{not json")
    return python


def test_a_real_record_of_a_conda_environment(kb: Any, resolver: Any, validator: Any, tmp_path: Path) -> None:
    """mlcc-record in an environment with conda-meta: what conda installed is pkg:conda,
    with its build and channel, never a credential; what pip installed stays pkg:pypi."""
    from mlcc.render import FILES

    python = _conda_environment(tmp_path / "env")
    result = subprocess.run(
        ["sh", str(Path(FILES) / "mlcc-record"), "--python", str(python)],
        capture_output=True,
        text=True,
        check=True,
    )
    record = json.loads(result.stdout)
    assert "secret" not in result.stdout and "tk-0123" not in result.stdout
    assert [(c["name"], c["distributions"]) for c in record["conda"]] == [
        ("cudatoolkit", []),
        ("mlcc-conda-probe", ["mlcc_conda_probe"]),
        ("six", ["six"]),
    ]
    assert {"name": "mlcc-conda-probe", "version": "1.2.0"} in record["pip"]
    stack = _stack(kb, resolver, "tf_cnn_benchmarks", {"arch": "ppc64le"})
    document = cyclonedx(stack, record, IMAGE)
    _check(document, validator)
    found = _components(document)
    probe = PackageURL.from_string(found["pypi:mlcc-conda-probe"]["purl"])
    assert (probe.type, probe.name, probe.version) == ("conda", "mlcc-conda-probe", "1.2.0")
    assert probe.qualifiers == {"build": "py_0", "channel": "https://conda.anaconda.org/conda-forge/noarch"}
    assert found["conda:cudatoolkit"]["purl"] == (
        "pkg:conda/cudatoolkit@10.1.243?build=h6bb024c_0&channel=https://repo.anaconda.com/pkgs/main/linux-64"
    )
    assert "conda:six" in found  # pip does not list an egg-info file of this environment's
    assert "conda:mlcc-conda-probe" not in found  # named once, by the distribution pip lists
    # pip's own distributions are PyPI's
    assert found["pypi:pip"]["purl"].startswith("pkg:pypi/pip@")
    assert "secret" not in json.dumps(document) and "tk-0123" not in json.dumps(document)


def test_an_image_with_credentials_in_a_channel_gets_an_sbom_without_them(kb: Any, resolver: Any) -> None:
    stack = _stack(kb, resolver, "maskrcnn", {"cuda": "10.1"})
    channel = "https://u:pw@conda.example/t/tok3n/main"
    installed = {**_installed(stack), "conda": [{"name": "numpy", "version": "1.16.4", "channel": channel}]}
    text = json.dumps(cyclonedx(stack, installed, IMAGE))
    assert "pw@" not in text and "tok3n" not in text and "https://conda.example/main" in text


# ----------------------------------------------------------------------------- untrusted input


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"pip": "numpy"}, "pip is not a list"),
        ({"pip": [{"name": "numpy"}]}, "pip/0 names no distribution"),
        ({"pip": [{"name": 3, "version": "1"}]}, "pip/0/name is not a string"),
        ({"packages": ["cuda"]}, "packages is not a JSON object"),
        ({"packages": {"cuda": 10}}, "packages/cuda is not a string"),
        ({"os": "rhel"}, "os is not a JSON object"),
        ({"python": ["3.6"]}, "python is not a string"),
        ({"gcc": "x" * 5000}, "gcc is not a string"),
        ({"modules": []}, "modules is not a JSON object"),
        ({"pip": [{"name": "a/b", "version": "1"}]}, "pip/0 is not a distribution name and version"),
        ({"pip": [{"name": "numpy", "version": "1 2"}]}, "pip/0 is not a distribution name and version"),
        ({"packages": {"libnccl": "2.8\n"}}, "packages/libnccl is not a package name and version"),
        ({"packages": {"../x": "1"}}, "packages/../x is not a package name and version"),
        ({"conda": {"numpy": "1"}}, "conda is not a list of JSON objects"),
        ({"conda": [{"name": "numpy"}]}, "conda/0 is not a conda package name and version"),
        (
            {"conda": [{"name": "numpy", "version": "1", "build": "a b"}]},
            "conda/0/build is not a conda build",
        ),
        (
            {"conda": [{"name": "numpy", "version": "1", "channel": "x y"}]},
            "conda/0/channel is not a channel",
        ),
        (
            {"conda": [{"name": "a", "version": "1", "distributions": "a"}]},
            "conda/0/distributions is not a list",
        ),
        (
            {"conda": [{"name": "a", "version": "1", "distributions": ["../a"]}]},
            "names something that is not",
        ),
    ],
)
def test_a_damaged_record_is_an_error_naming_the_field(
    kb: Any, resolver: Any, change: Dict[str, Any], message: str
) -> None:
    stack = _stack(kb, resolver, "maskrcnn", {"cuda": "10.1"})
    installed = {**_installed(stack), **change}
    with pytest.raises(DriftError, match=re.escape(message)) as raised:
        cyclonedx(stack, installed, IMAGE)
    assert raised.value.exit_code == EXIT_DRIFT == 6


def test_a_stack_json_mlcc_did_not_write_is_refused(kb: Any, resolver: Any) -> None:
    stack = _stack(kb, resolver, "maskrcnn", {"cuda": "10.1"})
    installed = _installed(stack)
    broken = {**stack, "variant": "cuda10.1\n"}
    with pytest.raises(DriftError, match="not a stack manifest mlcc wrote"):
        cyclonedx(broken, installed, IMAGE)
    with pytest.raises(DriftError):
        cyclonedx([], installed, IMAGE)
    with pytest.raises(DriftError, match="RFC 3339"):
        cyclonedx(stack, installed, IMAGE, timestamp="yesterday")


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)
_FIELDS = st.sampled_from(
    ["arch", "os", "packages", "headers", "nvcc", "gcc", "python", "pip", "conda", "modules"]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.dictionaries(_FIELDS, _JSON, max_size=4))
def test_any_record_gives_a_valid_sbom_or_a_clear_error(
    kb: Any, resolver: Any, validator: Any, changes: Dict[str, Any]
) -> None:
    stack = _STACK_CACHE.setdefault("s", _stack(kb, resolver, "maskrcnn", {"cuda": "10.1"}))
    try:
        document = cyclonedx(stack, {**_installed(stack), **changes}, IMAGE)
    except DriftError:
        return
    _check(document, validator)


_STACK_CACHE: Dict[str, Dict[str, Any]] = {}


# ----------------------------------------------------------------------------- the time


def _content(kb: Any, resolver: Any, **kwargs: Any) -> ImageContent:
    stack = _stack(kb, resolver, "maskrcnn", {"cuda": "10.1"})
    files = {STACK_FILE: json.dumps(stack).encode(), INSTALLED_FILE: json.dumps(_installed(stack)).encode()}
    return ImageContent(IMAGE.reference, DIGEST, "linux", "amd64", {}, files)._replace(**kwargs)


def test_the_time_comes_from_source_date_epoch_or_the_image(kb: Any, resolver: Any, monkeypatch: Any) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    content = _content(kb, resolver)
    assert sbom_time(content) is None
    created = content._replace(created="2026-11-26T07:12:08.123456789Z")
    assert sbom_time(created) == "2026-11-26T07:12:08.123456789Z"
    labelled = created._replace(labels={"org.opencontainers.image.created": "2020-01-01T00:00:00Z"})
    assert sbom_time(labelled) == "2020-01-01T00:00:00Z"
    assert sbom_time(content._replace(created="next tuesday")) is None  # untrusted: ignored
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert sbom_time(labelled) == "2023-11-14T22:13:20Z"
    # the same instant, as cyclonedx-python-lib spells UTC
    assert sbom_document([labelled], "x")["metadata"]["timestamp"] == "2023-11-14T22:13:20+00:00"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "soon")
    with pytest.raises(UsageError):
        sbom_time(labelled)


def test_images_without_mlcc_files_or_with_damaged_ones(kb: Any, resolver: Any) -> None:
    content = _content(kb, resolver)
    with pytest.raises(DriftError, match=f"has no /{INSTALLED_FILE}"):
        for_image(content._replace(files={STACK_FILE: content.files[STACK_FILE]}))
    with pytest.raises(DriftError, match=f"/{STACK_FILE} is not JSON"):
        for_image(content._replace(files={**content.files, STACK_FILE: b"{"}))
    with pytest.raises(UsageError, match="multi-arch"):
        sbom_document([content, content], "x")


def test_cosigns_tag_for_an_sbom() -> None:
    assert sbom_tag(DIGEST) == "sha256-" + "ab" * 32 + ".sbom"


# ----------------------------------------------------------------------------- the command


def _oci_layout(folder: Path, files: Dict[str, bytes]) -> Path:
    return oci_layout(folder, [layer(files)], created="2025-05-05T05:05:05Z")


def test_mlcc_sbom_prints_or_writes_it(
    kb: Any, resolver: Any, validator: Any, tmp_path: Path, monkeypatch: Any, capsys: Any
) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    stack = _stack(kb, resolver, "maskrcnn", {"cuda": "10.1"})
    files = {STACK_FILE: json.dumps(stack).encode(), INSTALLED_FILE: json.dumps(_installed(stack)).encode()}
    layout = _oci_layout(tmp_path / "img", files)
    assert run(["sbom", f"oci:{layout}"]) == 0
    printed = capsys.readouterr().out
    document = json.loads(printed)
    _check(document, validator)
    assert document["metadata"]["timestamp"] == "2025-05-05T05:05:05+00:00"  # the image's own time
    target = tmp_path / "out" / "sbom.cdx.json"
    assert run(["sbom", f"oci:{layout}", "-o", str(target)]) == 0
    assert target.read_text(encoding="utf-8") == printed  # the same bytes, run after run
    assert run(["sbom", f"oci:{layout}", "-o", ""]) == 2


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"etc/hostname": b"x"}, "has no /etc/mlcc/stack.json: not an image mlcc built"),
        ({STACK_FILE: b"[1]", INSTALLED_FILE: b"{}"}, "/etc/mlcc/stack.json is not a JSON object"),
        ({STACK_FILE: b'{"format": 1}', INSTALLED_FILE: b"{}"}, "is not a stack manifest mlcc wrote"),
    ],
)
def test_mlcc_sbom_refuses_bad_images_with_exit_6(
    tmp_path: Path, capsys: Any, files: Dict[str, bytes], message: str
) -> None:
    layout = _oci_layout(tmp_path / "img", files)
    assert run(["sbom", f"oci:{layout}"]) == 6
    captured = capsys.readouterr()
    assert captured.out == "" and message in captured.err and "Traceback" not in captured.err


# ----------------------------------------------------------------------------- the push


class _FakeRegistry(http.server.BaseHTTPRequestHandler):
    """Just enough of the distribution API for a blob upload and a manifest put; it records
    each request and sends uploads wherever ``upload_host`` says."""

    requests: ClassVar[List[Tuple[str, str, Dict[str, str], bytes]]] = []
    blobs: ClassVar[Dict[str, bytes]] = {}
    upload_host: ClassVar[str] = ""

    def _answer(self, code: int, headers: Dict[str, str]) -> None:
        self.send_response(code)
        for name, value in {"Content-Length": "0", **headers}.items():
            self.send_header(name, value)
        self.end_headers()

    def _record(self) -> bytes:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.requests.append((self.command, self.path, dict(self.headers), body))
        return body

    def do_HEAD(self) -> None:
        self._record()
        digest = self.path.rsplit("/", 1)[-1]
        self._answer(200 if self.path == "/v2/" or digest in self.blobs else 404, {})

    def do_GET(self) -> None:
        self.do_HEAD()

    def do_POST(self) -> None:
        self._record()
        host = self.upload_host or self.headers["Host"]
        self._answer(202, {"Location": f"http://{host}/v2/r/blobs/uploads/u1?_state=x"})

    def do_PUT(self) -> None:
        body = self._record()
        if "/manifests/" in self.path:
            digest = "sha256:" + hashlib.sha256(body).hexdigest()
            self._answer(201, {"Docker-Content-Digest": digest})
            return
        digest = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))["digest"]
        assert digest == "sha256:" + hashlib.sha256(body).hexdigest()
        self.blobs[digest] = body
        self._answer(201, {})

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def fake_registry() -> Iterator[str]:
    _FakeRegistry.requests, _FakeRegistry.blobs, _FakeRegistry.upload_host = [], {}, ""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _FakeRegistry)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_an_artifact_names_its_subject(fake_registry: str) -> None:
    registry = Registry(fake_registry, tls_verify=False)
    subject = Manifest(OCI_MANIFEST, DIGEST, b"x" * 123)
    data = b'{"bomFormat": "CycloneDX"}\n'
    digest = registry.put_artifact(
        "r",
        "sha256-x.sbom",
        artifact_type="application/vnd.cyclonedx+json",
        data=data,
        title="s.json",
        subject=subject,
        annotations={"org.opencontainers.image.created": "2024-01-02T03:04:05Z"},
    )
    [put] = [r for r in _FakeRegistry.requests if r[0] == "PUT" and "/manifests/" in r[1]]
    assert put[1] == "/v2/r/manifests/sha256-x.sbom"
    assert put[2]["Content-Type"] == OCI_MANIFEST and digest == "sha256:" + hashlib.sha256(put[3]).hexdigest()
    manifest = json.loads(put[3])
    assert manifest["artifactType"] == "application/vnd.cyclonedx+json"
    assert manifest["subject"] == {"mediaType": OCI_MANIFEST, "digest": DIGEST, "size": 123}
    assert manifest["config"] == {
        "mediaType": "application/vnd.oci.empty.v1+json",
        "digest": "sha256:" + hashlib.sha256(b"{}").hexdigest(),
        "size": 2,
    }
    assert manifest["layers"][0]["digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
    assert _FakeRegistry.blobs[manifest["layers"][0]["digest"]] == data
    # a blob the repository has is not uploaded again
    uploads = len([r for r in _FakeRegistry.requests if r[0] == "POST"])
    registry.put_blob("r", data)
    assert len([r for r in _FakeRegistry.requests if r[0] == "POST"]) == uploads


def test_an_upload_sent_to_another_host_is_refused(fake_registry: str) -> None:
    _FakeRegistry.upload_host = "203.0.113.9:5000"  # TEST-NET-3: nothing answers there
    registry = Registry(fake_registry, tls_verify=False, credentials=Credentials("me", "s3cret", "test"))
    with pytest.raises(
        RegistryError, match=r"directed PUT r/blobs/uploads/ to another host \(203.0.113.9:5000\)"
    ) as raised:
        registry.put_blob("r", b"data")
    assert "s3cret" not in str(raised.value)


class _Stored(ImageEngine):
    """An engine whose registry already holds every image: run_job skips, then attaches."""

    name = "stored"

    def check(self) -> None: ...
    def build_image(self, spec: Any, log: Any) -> str:
        raise AssertionError("nothing is built")

    def tag(self, image: str, ref: str) -> None: ...
    def push(self, ref: Any, *, tls_verify: bool, credentials: Any, log: Any) -> None: ...
    def exists(self, ref: str) -> bool:
        return True

    def save(self, ref: str, destination: Path) -> Path:
        raise AssertionError("nothing is saved")

    def find_built(self, job: BuildJob, policy: BuildPolicy) -> BuildResult:
        return BuildResult(job, "skipped", "in the registry", 0.0, DIGEST)


@pytest.mark.parametrize(("flags", "attached"), [({}, 1), ({"sbom": False}, 0), ({"push": False}, 0)])
def test_a_pushed_build_attaches_its_sbom_unless_told_not_to(
    kb: Any, resolver: Any, monkeypatch: Any, flags: Dict[str, Any], attached: int
) -> None:
    from mlcc.api import Pins, request_for
    from mlcc.app import build
    from mlcc.render import render

    calls: List[Tuple[str, str]] = []
    types_given: List[Any] = []

    def attach(registry: Registry, image: Any, digest: str, types: Any) -> Any:
        calls.append((str(image), digest))
        types_given.append(types)
        return Attached(image.with_tag(sbom_tag(digest)), "sha256:" + "0" * 64, True)

    monkeypatch.setattr(build, "attach_sbom", attach)
    policy = BuildPolicy(**{"registry": "127.0.0.1:5000/t", "push": True, **flags})
    rendered = render(resolver.resolve(request_for(kb, "maskrcnn", Pins(cuda="10.1"))))
    base = ResolvedBase(
        "registry.access.redhat.com/ubi8/ubi:8.10", "sha256:" + "1" * 64, "x86_64", ("rhel",), "8.10"
    )
    job = job_for(rendered, policy, "maskrcnn")._replace(base=base)
    lines: List[str] = []
    result = build.run_job(_Stored(EngineSettings()), job, policy, Log(lines.append))
    assert result.status == "skipped" and len(calls) == attached
    if attached:
        assert calls == [(str(job.readable), DIGEST)]
        assert types_given == [repository_types(kb.hosts.values())]  # the stack's hosts name the purl type
        assert any(
            line.startswith(f"SBOM {job.readable.with_tag(sbom_tag(DIGEST))} pushed") for line in lines
        )


class _ClusterPushes(Engine):
    """An engine that is no local one, whose builds land in a registry of its own choosing
    (as OpenShift's --push-to does): the SBOM goes where the image went."""

    name = "cluster"
    pushes_to: Optional[Reference] = None

    def check(self) -> None: ...
    def find_built(self, job: BuildJob, policy: BuildPolicy) -> Optional[BuildResult]:
        return None

    def build(self, job: BuildJob, policy: BuildPolicy, log: Any) -> BuildResult:
        return BuildResult(job, "built", "on the cluster", 0.0, DIGEST)

    def pushed_image(self, job: BuildJob, policy: BuildPolicy) -> Optional[Reference]:
        return self.pushes_to


@pytest.mark.parametrize(
    ("pushes_to", "flags", "attached"), [(True, {}, 1), (True, {"sbom": False}, 0), (False, {}, 0)]
)
def test_an_image_a_cluster_pushed_gets_its_sbom_where_it_was_pushed(
    kb: Any, resolver: Any, monkeypatch: Any, pushes_to: bool, flags: Dict[str, Any], attached: int
) -> None:
    from mlcc.api import Pins, request_for
    from mlcc.app import build
    from mlcc.image.reference import parse_reference
    from mlcc.render import render

    calls: List[Tuple[str, str]] = []

    def attach(registry: Registry, image: Any, digest: str, types: Any) -> Any:
        calls.append((str(image), digest))
        return Attached(image.with_tag(sbom_tag(digest)), "sha256:" + "0" * 64, True)

    monkeypatch.setattr(build, "attach_sbom", attach)
    target = parse_reference("127.0.0.1:5000/elsewhere/nccl-tests:cuda12.6-nccl2.23-ubi9-x86_64")
    engine = _ClusterPushes(EngineSettings())
    engine.pushes_to = target if pushes_to else None
    policy = BuildPolicy(**flags)  # no --push: the cluster pushes, not mlcc
    job = job_for(render(resolver.resolve(request_for(kb, "nccl-tests", Pins()))), policy, "nccl-tests")
    result = build.run_job(engine, job, policy, Log(lambda line: None))
    assert result.status == "built"
    assert calls == ([(str(target), DIGEST)] if attached else [])
