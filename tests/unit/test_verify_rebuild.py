"""``mlcc verify --rebuild``: what an image must record to be rebuilt (refused, naming the
missing fact, before anything is built), the stamped stack of every published variant
rendering again to its own build files, and the report of a comparison (text and JSON).

The rebuild itself, with buildah, is tests/e2e/test_verify_rebuild.py."""

from __future__ import annotations

import io
import json
import re
import tarfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from mlcc.app.rebuild import (
    Rebuilt,
    check_saved,
    gpu_of,
    pins_of,
    rebuild_error,
    render_again,
    stamped_manifest,
)
from mlcc.errors import EXIT_DRIFT, EXIT_USAGE, UsageError
from mlcc.image.compare import compare_images
from mlcc.image.content import STACK_FILE, ImageContent
from mlcc.stackfile.document import StackManifest
from tests.conftest import REPO
from tests.oci_layout import layer, oci_layout

PUBLISHED = sorted((REPO / "dockerfiles").glob("*/*/stack.json"))
BASE_DIGEST = "sha256:" + "1" * 64


def _published(stack_json: Path) -> Tuple[Dict[str, Any], str]:
    """A published variant's stack.json, as a build stamps it (its base digest set), and
    the io.mlcc.digest label its Dockerfile carries."""
    document = json.loads(stack_json.read_text(encoding="utf-8"))
    document["base"]["digest"] = BASE_DIGEST
    dockerfile = (stack_json.parent / "Dockerfile").read_text(encoding="utf-8")
    found = re.search(r"io\.mlcc\.digest=\"?(sha256:[0-9a-f]{64})", dockerfile)
    assert found is not None, f"{stack_json.parent}/Dockerfile has no io.mlcc.digest label"
    return document, found.group(1)


def _content(document: Optional[Dict[str, Any]], labels: Dict[str, str]) -> ImageContent:
    files = {STACK_FILE: json.dumps(document).encode()} if document is not None else {}
    return ImageContent("oci:image", None, None, None, labels, files)


def _image(tmp_path: Path, document: Optional[Dict[str, Any]], labels: Dict[str, str]) -> str:
    files = {STACK_FILE: json.dumps(document).encode()} if document is not None else {"etc/hostname": b"x"}
    return f"oci:{oci_layout(tmp_path / 'image', [layer(files)], labels=labels)}"


@pytest.mark.parametrize("stack_json", PUBLISHED, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_every_published_variant_renders_again_to_its_own_build_files_from_its_stack_json(
    kb: Any, stack_json: Path
) -> None:
    document, label = _published(stack_json)
    content = _content(document, {"io.mlcc.digest": label})
    rendered = render_again(kb, stamped_manifest(content, "image"), content, "image")
    assert rendered.digest == label


@pytest.mark.parametrize(
    "variant, gpu",
    [
        ("retinanet-reference/cuda13.0-cudnn9-ubi9-x86_64-sm100", "b200"),
        ("retinanet-reference/cuda13.0-cudnn9-ubi9-aarch64-sm100", "gb200"),  # Grace's own GPU
        ("resnet50/cuda10.1-cudnn7-ubi7-x86_64", None),
    ],
)
def test_a_stack_resolved_for_a_gpu_is_resolved_for_one_of_its_capability_again(
    kb: Any, variant: str, gpu: Optional[str]
) -> None:
    """The variant's -sm100 is all the stack records of the GPU asked: rebuilding asks for a
    GPU of that compute capability, on the image's arch."""
    document, _ = _published(REPO / "dockerfiles" / variant / "stack.json")
    assert gpu_of(kb, StackManifest.from_json(document)) == gpu


def test_the_pins_of_a_stamped_stack_name_every_component_at_its_stamped_version() -> None:
    document, _ = _published(REPO / "dockerfiles/resnet50/cuda10.1-cudnn7-ubi7-x86_64/stack.json")
    pins = pins_of(StackManifest.from_json(document))
    assert (pins.base, pins.arch, pins.cuda, pins.python, pins.flavour) == (
        "ubi7",
        "x86_64",
        "10.1.243",
        "3.6",
        "runtime",
    )
    assert pins.cudnn is None  # mxnet bundles its cuDNN: nothing the build installs to pin
    assert pins.nccl == "2.8.4" and pins.with_ == ("mxnet=1.5.1",) and not pins.cpu


def test_an_image_without_the_base_digest_is_refused_naming_it(cli: Any, tmp_path: Path) -> None:
    document, label = _published(PUBLISHED[0])
    del document["base"]["digest"]  # built before builds recorded it, or by another tool
    result = cli("verify", "--rebuild", _image(tmp_path, document, {"io.mlcc.digest": label}))
    assert result.code == EXIT_USAGE
    assert "records no base image digest (base.digest)" in result.err


def test_an_image_without_the_content_digest_label_is_refused_naming_it(cli: Any, tmp_path: Path) -> None:
    document, _ = _published(PUBLISHED[0])
    result = cli("verify", "--rebuild", _image(tmp_path, document, {}))
    assert result.code == EXIT_USAGE
    assert "no io.mlcc.digest label" in result.err


def test_an_image_without_a_stack_json_is_refused_as_not_mlccs(cli: Any, tmp_path: Path) -> None:
    result = cli("verify", "--rebuild", _image(tmp_path, None, {}))
    assert result.code == EXIT_USAGE
    assert "no /etc/mlcc/stack.json, it is not an mlcc image" in result.err


def test_a_stack_these_recipes_resolve_otherwise_is_refused_naming_the_fields(
    cli: Any, tmp_path: Path
) -> None:
    document, label = _published(PUBLISHED[0])
    document["generator"]["version"] = "0.0.1"
    document["reference"] = not document["reference"]
    result = cli("verify", "--rebuild", _image(tmp_path, document, {"io.mlcc.digest": label}))
    assert result.code == EXIT_USAGE
    assert "resolve another stack" in result.err
    assert "differs in generator.version, reference" in result.err


def test_build_files_that_render_otherwise_are_refused_naming_both_digests(cli: Any, tmp_path: Path) -> None:
    document, _ = _published(PUBLISHED[0])
    other = "sha256:" + "2" * 64
    result = cli("verify", "--rebuild", _image(tmp_path, document, {"io.mlcc.digest": other}))
    assert result.code == EXIT_USAGE
    assert f"than the image was built from (io.mlcc.digest {other})" in result.err


@pytest.mark.parametrize("image", ["quay.io/me/maskrcnn:v1", "docker-archive:image.tar"])
def test_an_image_the_comparison_cannot_read_is_refused_before_anything_is_asked(image: str) -> None:
    with pytest.raises(UsageError, match="compares saved images") as refused:
        check_saved(image)
    assert "skopeo copy" in (refused.value.hint or "")


def test_keep_without_rebuild_is_a_usage_error(cli: Any, tmp_path: Path) -> None:
    result = cli("verify", "--keep", _image(tmp_path, None, {}))
    assert result.code == EXIT_USAGE and "--keep and --quiet go with --rebuild" in result.err


def _plain_layer(files: Dict[str, bytes]) -> bytes:
    """A plain tar layer, the same bytes every time (a gzip header carries the clock)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 315532800
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _layers(tmp_path: Path, name: str, extra: Dict[str, bytes]) -> Path:
    files = {"opt/app/run.py": b"print(1)\n", **extra}
    layers = [_plain_layer({"usr/bin/python3": b"ELF"}), _plain_layer(files)]
    return oci_layout(tmp_path / name, layers, labels={})


def test_an_identical_rebuild_reports_identical_and_fails_nothing(tmp_path: Path) -> None:
    comparison = compare_images(_layers(tmp_path, "a", {}), _layers(tmp_path, "b", {}))
    rebuilt = Rebuilt("local:img", "localhost/mlcc-rebuild-1/app:v", False, comparison)
    assert rebuilt.describe() == [
        f"identical: {comparison.first}",
        "rebuilt as localhost/mlcc-rebuild-1/app:v (removed)",
    ]
    report = rebuilt.to_dict()
    assert report["identical"] and report["layer"] is None and report["paths"] == []
    assert rebuild_error(rebuilt) is None


def test_a_differing_rebuild_names_the_layer_and_path_and_fails_as_drift(tmp_path: Path) -> None:
    tampered = _layers(tmp_path, "a", {"opt/app/extra.txt": b"not built\n"})
    comparison = compare_images(tampered, _layers(tmp_path, "b", {}))
    rebuilt = Rebuilt("local:img", "localhost/mlcc-rebuild-1/app:v", True, comparison)
    text = rebuilt.describe()
    assert "first differing layer: 2" in text[1]
    assert "  /opt/app/extra.txt (only in first)" in text
    assert text[-1] == "rebuilt as localhost/mlcc-rebuild-1/app:v"
    report: Dict[str, Any] = rebuilt.to_dict()
    assert report["schema"] == "mlcc-rebuild/1" and report["layer"] == 2 and report["kept"]
    paths: List[Dict[str, Any]] = report["paths"]
    assert paths == [{"path": "/opt/app/extra.txt", "what": ["only in first"]}]
    error = rebuild_error(rebuilt)
    assert error is not None and error.exit_code == EXIT_DRIFT
