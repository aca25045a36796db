"""mlcc verify on an image built on an NGC base: the base digest the build recorded, and the
Python, framework, CUDA and libraries the manifest says came with the base."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, List

from dockerfile_parse import DockerfileParser

from mlcc.image.content import INSTALLED_FILE, STACK_FILE, ImageContent
from mlcc.image.stack import Mismatch, verify
from mlcc.kb import load
from mlcc.render import render, with_base_digest
from mlcc.resolve import Resolver
from mlcc.resolve.request import build_request
from tests.ngc_reports import ngc_report

from .test_ngc_bases import write_probe

BASE_DIGEST = "sha256:" + "cd" * 32


def _image(recipes: Path, *, stamped: bool = True, **changes: Any) -> ImageContent:
    """An image as mlcc builds ngc-probe on NGC 25.09, with a record of a faithful base."""
    write_probe(recipes)
    kb = load(str(recipes), use_cache=False)
    rendered = render(Resolver(kb, host_arch="x86_64").resolve(build_request(kb, "ngc-probe")))
    stack = rendered.content("stack.json")
    labels = dict(DockerfileParser(fileobj=io.BytesIO(rendered.content("Dockerfile").encode())).labels)
    if stamped:  # as mlcc build stamps it: stack.json and the annotation name the base pulled
        stack = with_base_digest(stack, BASE_DIGEST)
        labels["org.opencontainers.image.base.digest"] = BASE_DIGEST
    installed = ngc_report("x86_64", {"cuda": "13.0"}, python_executable="/usr/bin/python3.12")
    for key, value in changes.items():
        if key == "labels":
            labels.update(value)
        else:
            installed[key] = value
    files = {STACK_FILE: stack.encode(), INSTALLED_FILE: json.dumps(installed).encode()}
    return ImageContent("test", None, "linux", "amd64", labels, files)


def _drift(found: List[Mismatch]) -> List[str]:
    return [m.component for m in found if m.severity == "drift"]


def test_verify_accepts_an_image_whose_ngc_base_holds_what_its_manifest_says(recipes_copy: Path) -> None:
    assert verify(_image(recipes_copy)) == []


def test_verify_checks_the_python_and_framework_the_ngc_base_brought(recipes_copy: Path) -> None:
    older = _image(recipes_copy, modules={"torch": {"version": "2.7.0a0+79aa17489c", "cuda": "12.9"}})
    assert _drift(verify(older)) == ["framework pytorch"]
    assert _drift(verify(_image(recipes_copy, python="3.10.12"))) == ["Python"]
    assert _drift(verify(_image(recipes_copy, nvcc="12.9.41"))) == ["CUDA nvcc"]


def test_verify_wants_the_base_digest_of_an_ngc_image_recorded(recipes_copy: Path) -> None:
    [unrecorded] = verify(_image(recipes_copy, stamped=False))
    assert unrecorded.component.startswith(
        "base image digest (cuda, cudnn, nccl, python, framework come with"
    )
    assert unrecorded.found == "not recorded"
    moved = verify(
        _image(recipes_copy, labels={"org.opencontainers.image.base.digest": "sha256:" + "ef" * 32})
    )
    assert _drift(moved) == ["base image digest"]


def test_a_library_the_record_leaves_unconfirmed_is_a_note_not_drift(recipes_copy: Path) -> None:
    # 25.09's own cuDNN is not confirmed (NVIDIA's benchmark image replaced it): what torch
    # reports is recorded as evidence, never drift
    reports = {
        "torch": {"version": "2.9.0a0+50eac811a6", "cuda": "13.0", "cudnn": "9.13.0", "nccl": "2.27.7"}
    }
    found = verify(_image(recipes_copy, modules=reports))
    assert _drift(found) == []
    assert {m.found for m in found if m.severity == "note"} == {"9.13.0", "2.27.7"}
