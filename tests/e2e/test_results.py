"""Results end to end: two real images built and pushed in the e2e world, MLPerf logs of runs
on each stored with the stack read from the image in the registry, compared, and plotted
in the results view, checked in headless Chromium."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import List

from tests import pngpixels
from tests.conftest import mlperf_v06
from tests.e2e.conftest import World, mlcc
from tests.e2e.test_matrix import CHROMIUM_FLAGS, _chromium

SSD = mlperf_v06("NVIDIA", "dgx1_ngc19.05_pytorch", "ssd")
RUN_GREEN = (0x2E, 0x7D, 0x32)


def _build(world: World, *extra: str) -> str:
    result = mlcc(
        world, "build", "e2e-probe", "--base", "ubi8", "--base-image", world.stage.base_image,
        "--mirror", world.stage.mirror, "--push", "--registry", f"{world.registry.host}/results",
        "--no-tls-verify", "--backend", "buildah", "--no-history", *extra,
    )  # fmt: skip
    assert result.code == 0, result.err[-4000:] + result.out
    return next(line.split()[-1] for line in result.out.splitlines() if "content tag" in line)


def _probe_logs(folder: Path, slower_by: float) -> List[Path]:
    """The real DGX-1 SSD logs, as the probe benchmark's runs (and slower by some minutes)."""
    folder.mkdir(parents=True)
    written = []
    for source in sorted(SSD.glob("result_*.txt")):
        data = source.read_bytes().replace(b'"value": "ssd"', b'"value": "e2e-probe"')

        def later(match: re.Match) -> bytes:  # type: ignore[type-arg]
            return b":::MLL %.3f run_stop" % (float(match.group(1)) + slower_by * 60)

        target = folder / source.name
        target.write_bytes(re.sub(rb":::MLL ([0-9.]+) run_stop", later, data))
        written.append(target)
    return written


def test_runs_of_built_images_show_in_compare_and_in_the_plot(world: World, tmp_path: Path) -> None:
    default = _build(world)
    older = _build(world, "--cuda", "12.4")
    history = tmp_path / "history.sqlite"
    fast = _probe_logs(tmp_path / "fast", 0.0)
    slow = _probe_logs(tmp_path / "slow", 3.0)
    for logs, image in ((fast, default), (slow, older)):
        added = mlcc(
            world, "results", "add", *map(str, logs), "--image", image, "--no-tls-verify",
            "--history", str(history), "--system", "e2e-world",
        )  # fmt: skip
        assert added.code == 0, added.err
        assert "stored 5 run(s) of e2e-probe" in added.out
    again = mlcc(
        world, "results", "add", str(fast[0]), "--image", older, "--no-tls-verify", "--history", str(history)
    )
    assert again.code == 0 and "already stored, not added again" in again.out
    # A Mask R-CNN log is refused for the probe's image: the stack is the image's benchmark.
    maskrcnn = SSD.parent / "maskrcnn" / "result_0.txt"
    wrong = mlcc(
        world,
        "results",
        "add",
        str(maskrcnn),
        "--image",
        default,
        "--no-tls-verify",
        "--history",
        str(history),
    )
    assert wrong.code == 2 and "built for e2e-probe" in wrong.err

    compared = mlcc(world, "results", "compare", "--history", str(history), "--json")
    assert compared.code == 0, compared.err
    (probe,) = json.loads(compared.out)
    assert probe["benchmark"] == "e2e-probe" and probe["reference"] is None
    first, second = probe["stacks"]
    assert first["variant"].startswith("cuda12.6-") and second["variant"].startswith("cuda12.4-")
    assert first["images"] == [default] and second["images"] == [older]
    assert first["runs"] == second["runs"] == 5 and first["systems"] == ["e2e-world"]
    assert round(first["score_minutes"], 2) == 22.36
    assert round(second["score_minutes"] - first["score_minutes"], 2) == 3.0

    page = tmp_path / "report" / "results.html"
    written = mlcc(world, "results", "compare", "--history", str(history), "--html", str(page))
    assert written.code == 0, written.err
    chromium = _chromium()
    profile = tmp_path / "chromium-profile"
    dom = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'data-benchmark="e2e-probe"' in dom.stdout
    assert dom.stdout.count('class="stack"') == 2 and dom.stdout.count('class="run"') == 10
    assert first["stack"] in dom.stdout and second["stack"] in dom.stdout
    shot = tmp_path / "results.png"
    taken = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--window-size=900,500",
         f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert taken.returncode == 0, taken.stderr[-2000:]
    assert pngpixels.colours(shot)[RUN_GREEN] > 100  # the runs' dots were drawn
