"""Recipe values that were accepted though they mean nothing or something dangerous:
``runtime.copy`` paths that are the root, climb out with ``..`` or name /proc, /sys or /dev
(``COPY --from=build / /``, the build's environment), and a compute capability of
``99999999999999999999.0``. Each is a recipe error at its line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

SSD = Path("benchmarks") / "v2.1" / "ssd.yaml"
COPY = "copy: [/usr/local/lib/lib_box_iou.so, /usr/local/lib/lib_proposal_matcher.so]"


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/..",
        "/usr/../etc/shadow",
        "/proc/self/environ",
        "/sys/kernel",
        "/dev/sda",
        "/usr/lib/",
        "/usr//lib",
    ],
)
def test_a_runtime_copy_path_that_is_not_a_plain_absolute_path_is_refused(
    cli, recipes_copy: Path, path: str
) -> None:  # type: ignore[no-untyped-def]
    recipe = recipes_copy / SSD
    text = recipe.read_text()
    assert COPY in text
    recipe.write_text(
        text.replace(COPY, f"copy: [/usr/local/lib/lib_box_iou.so, {path!r}]".replace("'", '"'))
    )
    result = cli("--recipes", str(recipes_copy), "resolve", "ssd", "--round", "v2.1")
    assert result.code == 2, result
    assert "ssd.yaml:" in result.err and "copy" in result.err and "Traceback" not in result.err


def test_an_absurd_compute_capability_is_refused(cli, recipes_copy: Path) -> None:  # type: ignore[no-untyped-def]
    gpus = recipes_copy / "gpus.yaml"
    gpus.write_text(
        re.sub(
            r'compute_capability: "6.0"',
            'compute_capability: "99999999999999999999.0"',
            gpus.read_text(),
            count=1,
        )
    )
    result = cli("--recipes", str(recipes_copy), "resolve", "maskrcnn")
    assert result.code == 2 and "gpus.yaml:" in result.err and "compute_capability" in result.err, result
