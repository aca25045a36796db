"""``mlcc build --dry-run`` prints the plan a build would follow (order, groups that share
layers, what is built already) and builds, tags and records nothing."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Iterator, List

import pytest

from mlcc import engines
from mlcc.app import build as building
from mlcc.app.matrix import MatrixFilters
from mlcc.engines.base import BuildJob, BuildPolicy
from mlcc.kb import load
from mlcc.render import Options
from mlcc.resolve.pins import Pins

PLUGIN = '''
import json
from pathlib import Path

from mlcc.engines.base import BuildResult, Engine


class Ledger(Engine):
    """Builds nothing: a digest listed in built.json is built; every call is logged."""

    name = "ledger"
    folder = Path(__file__).parent

    def check(self):
        pass

    def _built(self):
        path = self.folder / "built.json"
        return json.loads(path.read_text()) if path.exists() else []

    def _called(self, what):
        with (self.folder / "calls.txt").open("a") as calls:
            calls.write(what + "\\n")

    def is_built(self, job, policy):
        self._called("is_built")
        return "listed in built.json" if job.digest in self._built() else None

    def find_built(self, job, policy):
        self._called("find_built")
        return None

    def build(self, job, policy, log):
        self._called("build")
        return BuildResult(job, "built", "listed", 0.0, image="listed")


class Silent(Ledger):
    """An engine that cannot look without acting (no is_built of its own)."""

    name = "silent"
    is_built = Engine.is_built
'''


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Path]:
    """A real installed distribution (a dist-info folder on sys.path) declaring two engines."""
    (tmp_path / "mlcc_ledger.py").write_text(textwrap.dedent(PLUGIN))
    info = tmp_path / "mlcc_ledger-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mlcc-ledger\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[mlcc.engines]\nledger = mlcc_ledger:Ledger\nsilent = mlcc_ledger:Silent\n"
    )
    sys.path.insert(0, str(tmp_path))
    yield tmp_path
    sys.path.remove(str(tmp_path))
    sys.modules.pop("mlcc_ledger", None)


def _plan_rows(out: str) -> List[List[str]]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("group")) + 2
    end = next(i for i, line in enumerate(lines) if "nothing was built" in line)
    return [line.split() for line in lines[start:end] if line.strip()]


def test_the_dry_run_of_the_matrix_shows_order_groups_and_what_is_built(cli, ledger: Path) -> None:  # type: ignore[no-untyped-def]
    first = cli("build", "--matrix", "--backend", "ledger", "--dry-run", "-j", "2")
    assert first.code == 0, first.err
    rows = _plan_rows(first.out)
    assert rows and all(row[-2:] == ["build", "-"] for row in rows)
    assert "nothing was built (--dry-run)" in first.out
    calls = (ledger / "calls.txt").read_text().split()
    assert set(calls) == {"is_built"} and len(calls) == len(rows)  # asked, never built nor tagged
    groups = [int(row[0]) for row in rows]
    assert groups == sorted(groups) and len(set(groups)) < len(groups)  # some cells share a prefix

    (ledger / "built.json").write_text(json.dumps([_matrix_jobs()[0].digest]))
    second = cli("build", "--matrix", "--backend", "ledger", "--dry-run")
    assert second.code == 0, second.err
    assert f"{len(rows) - 1} would build, 1 already built, 0 unknown" in second.out
    assert "listed in built.json" in second.out


def _matrix_jobs() -> List[BuildJob]:
    return building.matrix_jobs(load(), MatrixFilters.from_pins(None, Pins(), None), BuildPolicy(), Options())


def test_the_plan_follows_the_order_run_jobs_builds_in(ledger: Path) -> None:
    jobs = _matrix_jobs()
    plan = building.plan_jobs(engines.create("ledger"), jobs, BuildPolicy())
    order = [index for group in building.prefix_groups(jobs) for index in group]
    assert [entry.job.digest for entry in plan] == [jobs[i].digest for i in order]


def test_an_engine_that_cannot_look_is_never_taken_as_not_built(cli, ledger: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("build", "nccl-tests", "--backend", "silent", "--dry-run")
    assert result.code == 0, result.err
    text = " ".join(result.out.split())
    assert "unknown cannot tell: the silent engine cannot look without building" in text
    assert "0 would build, 0 already built, 1 unknown" in text
    assert not (ledger / "calls.txt").exists() or "build" not in (ledger / "calls.txt").read_text().split()
