"""Golden tests: rendered files of representative cells, byte for byte.

A change to a template, a recipe or the planner shows up here as a readable diff. When
the change is intended, regenerate with ``MLCC_UPDATE_GOLDEN=1 pytest tests/unit/test_render_golden.py``
and review the diff of tests/golden/ in the commit (HPCCM's golden-test style).
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Dict, List

import pytest

from mlcc.api import Pins, request_for
from mlcc.app.generate import check_options
from mlcc.render import render

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
UPDATE = os.environ.get("MLCC_UPDATE_GOLDEN") == "1"

# Cells the published set (dockerfiles/) does not cover: those are golden files already,
# held current by `mlcc gen --all --check` (test_gen_cli). name -> (benchmark, pins,
# format, base_image, mirror)
CASES: Dict[str, tuple] = {  # type: ignore[type-arg]
    "maskrcnn-ppc64le": ("maskrcnn", {"arch": "ppc64le"}, "dockerfile", None, None),
    "maskrcnn-cuda10.1-script": ("maskrcnn", {"cuda": "10.1"}, "script", None, None),
    "resnet50-singularity": ("resnet50", {}, "singularity", None, None),
    "nccl-tests-ubuntu2204": ("nccl-tests", {"base": "ubuntu2204"}, "dockerfile", None, None),
    "nccl-tests-ubi9-minimal": ("nccl-tests", {"base": "ubi9-minimal"}, "dockerfile", None, None),
    "minigo": ("minigo", {}, "dockerfile", None, None),
    "ssd-airgapped": (
        "ssd",
        {},
        "dockerfile",
        "registry.example.com/mirror/ubi8:8.10",
        "https://mirror.example.com/nvidia",
    ),
}


# OpenShift objects of cells the published set (buildconfigs/) does not cover:
# name -> (benchmark, pins, ClusterOptions fields)
OPENSHIFT_CASES: Dict[str, tuple] = {  # type: ignore[type-arg]
    "openshift-maskrcnn-chain": ("maskrcnn", {"cuda": "10.1"}, {"chain": True}),
    "openshift-nccl-tests-3.11-push": (
        "nccl-tests",
        {"arch": "ppc64le"},
        {"openshift": "3.11", "namespace": "bench", "push_to": "quay.io/acme/nccl", "push_secret": "quay"},
    ),
}


def _rendered_files(kb, resolver, case: str) -> Dict[str, str]:  # type: ignore[no-untyped-def]
    if case in OPENSHIFT_CASES:
        from mlcc.render.openshift import ClusterOptions, render_openshift

        benchmark, pins, cluster = OPENSHIFT_CASES[case]
        stack = resolver.resolve(request_for(kb, benchmark, Pins(**pins)))
        files = render_openshift(render(stack, kb), ClusterOptions(**cluster))
        return {name.split("/", 2)[2]: content for name, content in files.files}
    benchmark, pins, fmt, base_image, mirror = CASES[case]
    stack = resolver.resolve(request_for(kb, benchmark, Pins(**pins)))
    rendered = render(stack, kb, fmt=fmt, options=check_options(base_image, mirror))
    # mlcc-record is one file shared by every variant; it has its own tests.
    return {name: content for name, content in rendered.files if name != "mlcc-record"}


@pytest.mark.parametrize("case", sorted(CASES) + sorted(OPENSHIFT_CASES))
def test_rendered_files_match_golden(kb, resolver, case: str) -> None:  # type: ignore[no-untyped-def]
    files = _rendered_files(kb, resolver, case)
    folder = GOLDEN / case
    if UPDATE:
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.rglob("*"):
            if old.is_file():
                old.unlink()
        for name, content in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(content, encoding="utf-8")
    expected = {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
        for p in folder.rglob("*")
        if p.is_file()
    }
    assert sorted(files) == sorted(expected), f"{case}: file set changed"
    problems: List[str] = []
    for name in sorted(files):
        if files[name] != expected[name]:
            diff = difflib.unified_diff(
                expected[name].splitlines(),
                files[name].splitlines(),
                f"golden/{case}/{name}",
                "rendered",
                lineterm="",
            )
            problems.append("\n".join(list(diff)[:60]))
    assert not problems, (
        "rendered output differs from golden (MLCC_UPDATE_GOLDEN=1 to accept):\n" + "\n".join(problems)
    )
