"""An NGC base at build time: its tag is resolved to a digest like any base's, it is checked
against the OS its record names (Ubuntu 24.04, not its 25.09-py3 tag), and an air-gapped site
serves it from its own registry (--base-image) like any other base."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
import yaml

from mlcc.image.base import mismatch, resolve_base
from mlcc.image.sbom import ImageName, cyclonedx
from mlcc.kb import load
from mlcc.kb.model import KnowledgeBase
from mlcc.render import render, with_base_digest
from mlcc.resolve import Resolver
from mlcc.resolve.request import build_request
from tests.hostile_registry import Scripted, digest, serve
from tests.ngc_reports import TORCH, ngc_report
from tests.oci_layout import layer

from .test_ngc_bases import write_probe

NOBLE = b'PRETTY_NAME="Ubuntu 24.04.3 LTS"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID="24.04"\n'
JAMMY = b'PRETTY_NAME="Ubuntu 22.04.5 LTS"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID="22.04"\n'
VARIANT = "cuda13.0-cudnn9-ngc-pytorch-25.09-x86_64"
MIRROR = "registry.internal:5000/nvidia/pytorch:25.09-py3"


@pytest.fixture
def registry() -> Iterator[Scripted]:
    yield from serve(Scripted())


def test_an_ngc_base_is_checked_against_the_os_its_record_names(
    kb: KnowledgeBase, registry: Scripted
) -> None:
    base = kb.base("ngc-pytorch-25.09")
    assert (base.tag, base.os_release) == ("25.09-py3", "24.04.3")
    assert kb.base("ubi9").os_release == kb.base("ubi9").tag  # an OS base: its tag is its release
    body = registry.image("nvidia/pytorch", "25.09-py3", [layer({"etc/os-release": NOBLE})])
    found = resolve_base(f"{registry.host}/nvidia/pytorch:25.09-py3", "x86_64", tls_verify=False)
    assert found.digest == digest(body)  # the tag, resolved to the manifest the build pulls
    check = {"arch": "x86_64", "family": base.family, "release": base.os_release, "name": base.name}
    assert mismatch(found, **check) is None
    registry.image("nvidia/pytorch", "24.09-py3", [layer({"etc/os-release": JAMMY})])
    older = resolve_base(f"{registry.host}/nvidia/pytorch:24.09-py3", "x86_64", tls_verify=False)
    assert "VERSION_ID 22.04, the stack is for ngc-pytorch-25.09 (release 24)" in str(
        mismatch(older, **check)
    )


def test_an_air_gapped_site_builds_from_its_own_mirror_of_nvcr_io(
    recipes_copy: Path, cli: Callable[..., Any]
) -> None:
    write_probe(recipes_copy)
    args = ("--recipes", str(recipes_copy), "gen", "ngc-probe", "--arch", "x86_64")
    assert cli(*args, "-o", "public").code == 0
    result = cli(*args, "-o", "mirrored", "--base-image", MIRROR)
    assert result.code == 0, result.err
    folder = Path("mirrored") / "ngc-probe" / VARIANT
    assert f"ARG BASE_IMAGE={MIRROR}\nFROM ${{BASE_IMAGE}}\n" in (folder / "Dockerfile").read_text()
    base = json.loads((folder / "stack.json").read_text())["base"]
    assert (base["image"], base["default_image"]) == (MIRROR, "nvcr.io/nvidia/pytorch:25.09-py3")
    build = (Path("mirrored") / "openshift" / "ngc-probe" / VARIANT / "build.yaml").read_text()
    items = [item for doc in yaml.safe_load_all(build) if doc for item in doc.get("items", [doc])]
    pulled = [
        tag["from"] for item in items if item["kind"] == "ImageStream" for tag in item["spec"].get("tags", [])
    ]
    assert {"kind": "DockerImage", "name": MIRROR} in pulled
    assert "nvcr.io" not in "".join(str(p) for p in pulled)


def test_the_sbom_names_the_ngc_base_by_digest_and_what_it_held(recipes_copy: Path) -> None:
    write_probe(recipes_copy)
    kb = load(str(recipes_copy), use_cache=False)
    stack = Resolver(kb, host_arch="x86_64").resolve(build_request(kb, "ngc-probe"))
    base_digest = "sha256:" + "cd" * 32
    stamped = json.loads(with_base_digest(render(stack).content("stack.json"), base_digest))
    installed = ngc_report(
        "x86_64", {"cuda": "13.0", "cudnn": "91300"}, pip=[{"name": "torch", "version": TORCH}]
    )
    document = cyclonedx(
        stamped, installed, ImageName("127.0.0.1:5000/probe/ngc-probe:" + VARIANT, base_digest)
    )
    found = {c["bom-ref"]: c for c in document["components"]}
    base = found["base-image"]
    assert base["hashes"] == [{"alg": "SHA-256", "content": "cd" * 32}]
    assert base["purl"].startswith("pkg:oci/pytorch@sha256:" + "cd" * 32)
    properties = {p["name"]: p["value"] for p in base["properties"]}
    assert properties["mlcc:provides"] == "cuda,cudnn,nccl,python,framework"
    assert properties["mlcc:base-contents:cuda"] == "13.0.1.012"
    assert properties["mlcc:base-contents:pytorch"] == TORCH
    torch = found["pypi:torch"]
    assert "purl" not in torch  # NVIDIA's own build, not a PyPI release
    assert {"name": "mlcc:install", "value": "base"} in torch["properties"]
