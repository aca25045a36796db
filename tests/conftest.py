"""Shared fixtures: the real knowledge base, a private cache, CLI runners."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator, List, NamedTuple

import pytest

from mlcc.kb import load

REPO = Path(__file__).resolve().parents[1]
RECIPES = REPO / "recipes"
# Real MLPerf Training v0.6 result logs, at their paths in mlcommons/training_results_v0.6
# (tests/data/README.md: the commit, each file's blob and the licence).
MLPERF_V06 = REPO / "tests" / "data" / "mlperf-v0.6"


def benchmark_scripts(benchmark: str, folder: Path) -> List[Path]:
    """The helper scripts ``benchmark``'s script steps run, as the image gets them (a round's
    shared script filled with the step's values), written to ``folder``."""
    build = load().benchmarks[benchmark].build
    assert build is not None
    written = []
    for name, text in build.scripts:
        (folder / name).write_text(text)
        written.append(folder / name)
    return sorted(written)


def mlperf_v06(submitter: str, system: str, benchmark: str) -> Path:
    """The folder of one system's v0.6 result logs for one benchmark."""
    return MLPERF_V06 / submitter / "results" / system / benchmark


def _default_data_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def _default_cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


# The user's own build history and cache, as mlcc would find them before the tests
# redirect anything: the e2e suite checks at its end that it left them untouched.
USER_STATE = (
    Path(os.environ.get("MLCC_HISTORY") or _default_data_home() / "mlcc" / "history.sqlite"),
    Path(os.environ.get("MLCC_CACHE_DIR") or _default_cache_home() / "mlcc"),
)
# Where mlcc keeps state between runs: the tests get their own, never the user's.
PRIVATE_DIRS = ("MLCC_CACHE_DIR", "XDG_CACHE_HOME", "XDG_DATA_HOME")


@pytest.fixture(scope="session", autouse=True)
def _private_state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keep the caches and the build history of the tests out of the user's ~/.cache and
    ~/.local/share: every test (and every mlcc process a test starts) sees private dirs."""
    saved = {name: os.environ.get(name) for name in (*PRIVATE_DIRS, "MLCC_HISTORY", "MLCC_RECIPES", "CI")}
    for name in PRIVATE_DIRS:
        os.environ[name] = str(tmp_path_factory.mktemp(name.lower()))
    os.environ.pop("MLCC_HISTORY", None)
    os.environ.pop("MLCC_RECIPES", None)
    # CI=true makes an INCOMPLETE recipe an error (mlcc --strict): the tests that resolve one
    # expect the warning, and the test of that rule sets CI itself
    os.environ.pop("CI", None)
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def kb():  # type: ignore[no-untyped-def]
    from mlcc.kb import load

    return load(str(RECIPES))


@pytest.fixture(scope="session")
def resolver(kb):  # type: ignore[no-untyped-def]
    from mlcc.resolve import Resolver

    return Resolver(kb, host_arch="x86_64")  # the same answers on any machine


@pytest.fixture
def recipes_copy(tmp_path: Path) -> Path:
    """A writable copy of recipes/ for tests that break it on purpose."""
    target = tmp_path / "recipes"
    shutil.copytree(RECIPES, target)
    return target


class Result(NamedTuple):
    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Run the CLI in-process: cli("resolve", "maskrcnn") -> Result(code, out, err).

    The working directory is a fresh temporary folder, so default outputs (dockerfiles/,
    buildconfigs/) never land in the checkout.
    """
    from mlcc.cli import run

    workdir = tmp_path / "cwd"
    workdir.mkdir()
    monkeypatch.chdir(workdir)

    def invoke(*args: str) -> Result:
        capsys.readouterr()
        code = run(list(args))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return invoke


def run_mlcc(args: List[str], cwd: Path = REPO, **env: str) -> Result:
    """Run ``python -m mlcc`` as a real process (exit codes, stderr, start-up)."""
    full_env = {**os.environ, **env, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "mlcc", *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd,
        timeout=120,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)
