"""Golden tests: cells beyond the published set, rendered by the real CLI, byte for byte.

Each folder under tests/golden/ describes itself: ``command`` holds the ``mlcc gen`` line
and ``expected/`` the files of the variant folder it writes (the build files, or with
``--only openshift`` the OpenShift objects; ``mlcc-record`` is one file shared by every
variant and has its own tests). A new case is a new folder. When a change is intended,
regenerate with ``MLCC_UPDATE_GOLDEN=1 pytest tests/unit/test_render_golden.py`` and
review the diff of tests/golden/ in the commit (HPCCM's golden-test style). The published
set (dockerfiles/, buildconfigs/) is golden too, held current by ``mlcc gen --all --check``.
"""

from __future__ import annotations

import difflib
import os
import shlex
from pathlib import Path
from typing import Dict, List

import pytest

from mlcc.cli import run

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
UPDATE = os.environ.get("MLCC_UPDATE_GOLDEN") == "1"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "command").is_file())


def _command(case: str) -> List[str]:
    words = shlex.split((GOLDEN / case / "command").read_text(encoding="utf-8"))
    assert words[:2] == ["mlcc", "gen"], f"golden/{case}/command: an `mlcc gen` line"
    assert not {"-o", "--output", "--openshift-output"} & set(words), "the test chooses the output"
    return words[1:]


def _writes_openshift(args: List[str]) -> bool:
    only = args[args.index("--only") + 1] if "--only" in args else None
    return only != "dockerfile" and "--format" not in args


def _generated(case: str, out: Path) -> Dict[str, str]:
    """Run the case's command; the files of the one variant folder it wrote."""
    args = _command(case)
    outputs = ["-o", str(out / "build")]
    if _writes_openshift(args):  # mlcc refuses an output option for objects it does not write
        outputs += ["--openshift-output", str(out / "openshift")]
    code = run([*args, *outputs])
    assert code == 0, f"golden/{case}/command exited {code}"
    root = out / ("openshift" if "openshift" in args else "build")
    [folder] = [p for p in root.glob("*/*") if p.is_dir()]  # <benchmark>/<variant>
    return {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "mlcc-record"
    }


def test_every_case_is_complete() -> None:
    assert len(CASES) >= 9
    for case in CASES:
        assert any((GOLDEN / case / "expected").rglob("*")), f"golden/{case}/expected is empty"


@pytest.mark.parametrize("case", CASES)
def test_generated_files_match_golden(case: str, tmp_path: Path) -> None:
    files = _generated(case, tmp_path)
    folder = GOLDEN / case / "expected"
    if UPDATE:
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
                f"golden/{case}/expected/{name}",
                "generated",
                lineterm="",
            )
            problems.append("\n".join(list(diff)[:60]))
    assert not problems, (
        "generated output differs from golden (MLCC_UPDATE_GOLDEN=1 to accept):\n" + "\n".join(problems)
    )
