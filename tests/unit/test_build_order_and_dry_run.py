"""Matrix builds run every shared build step once: an image starts after the image it shares
the most steps with, and ``mlcc build --dry-run`` prints that plan (and what is built
already) while building, tagging and recording nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator, List

import pytest

from mlcc import engines
from mlcc.api import request_for
from mlcc.app import build as building
from mlcc.app.matrix import MatrixFilters
from mlcc.engines.base import BuildJob, BuildPolicy, EngineSettings, Log, job_for
from mlcc.errors import MlccError
from mlcc.kb import load
from mlcc.kb.model import KnowledgeBase
from mlcc.render import ClusterOptions, Options, render
from mlcc.resolve import Resolver
from mlcc.resolve.pins import Pins
from tests.engine_plugin import installed_engine_plugin

PLUGIN = '''
import json
import time
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
        self._called("start:" + job.label.replace(" ", "_"))
        time.sleep(0.5)
        self._called("end:" + job.label.replace(" ", "_"))
        return BuildResult(job, "built", "listed", 0.0, image="listed")


class Silent(Ledger):
    """An engine that cannot look without acting (no is_built of its own)."""

    name = "silent"
    is_built = Engine.is_built
'''


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Path]:
    """A real installed distribution (a dist-info folder on sys.path) declaring two engines."""
    with installed_engine_plugin(tmp_path, "mlcc_ledger", PLUGIN, {"ledger": "Ledger", "silent": "Silent"}):
        yield tmp_path


def _plan_rows(out: str) -> List[List[str]]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("#")) + 2
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
    waits = [(int(row[0]), row[1]) for row in rows]
    assert all(after == "-" or int(after) < number for number, after in waits)  # a tree: all start
    assert any(after != "-" for _, after in waits)  # cells share build steps

    (ledger / "built.json").write_text(json.dumps([_matrix_jobs()[0].digest]))
    second = cli("build", "--matrix", "--backend", "ledger", "--dry-run")
    assert second.code == 0, second.err
    assert f"{len(rows) - 1} would build, 1 already built, 0 unknown" in second.out
    assert "listed in built.json" in second.out


def _matrix_jobs() -> List[BuildJob]:
    return building.matrix_jobs(load(), MatrixFilters.from_pins(None, Pins(), None), BuildPolicy(), Options())


def test_the_plan_names_the_job_each_waits_for(ledger: Path) -> None:
    jobs = _matrix_jobs()
    plan = building.plan_jobs(engines.create("ledger"), jobs, BuildPolicy())
    assert [entry.job.digest for entry in plan] == [job.digest for job in jobs]
    assert [entry.after for entry in plan] == building.build_after(jobs)


def test_an_engine_that_cannot_look_is_never_taken_as_not_built(cli, ledger: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("build", "nccl-tests", "--backend", "silent", "--dry-run")
    assert result.code == 0, result.err
    text = " ".join(result.out.split())
    assert "unknown cannot tell [1]" in text
    assert "[1] cannot tell: the silent engine cannot look without building" in text
    assert "0 would build, 0 already built, 1 unknown" in text
    assert not (ledger / "calls.txt").exists() or "build" not in (ledger / "calls.txt").read_text().split()


def test_a_reason_shared_by_every_row_is_said_once(cli, ledger: Path) -> None:  # type: ignore[no-untyped-def]
    # offline, every row's "cannot reach registry" filled the table once per cell
    result = cli("build", "--matrix", "--backend", "silent", "--dry-run")
    assert result.code == 0, result.err
    rows = [line for line in result.out.splitlines() if " unknown " in line]
    assert len(rows) > 5 and all("cannot tell [1]" in row for row in rows), rows
    assert result.out.count("cannot look without building") == 1, result.out


def _cell(kb: KnowledgeBase, benchmark: str, **pins: object) -> BuildJob:
    stack = Resolver(kb).resolve(request_for(kb, benchmark, Pins(**pins)))  # type: ignore[arg-type]
    return job_for(render(stack), BuildPolicy(), benchmark)


def test_an_image_waits_for_the_one_it_shares_the_most_steps_with() -> None:
    kb = load()
    cells = [
        _cell(kb, "maskrcnn", cuda="10.1"),
        _cell(kb, "nccl-tests"),
        _cell(kb, "gnmt"),  # maskrcnn --cuda 10.1's stack, and PyTorch built from the same source
        _cell(kb, "ssd", newest=True),
    ]
    after = building.build_after(cells)
    assert after[0] is None and after[2] == 0
    stack_runs = sum(1 for step in cells[2].rendered.plan.steps if step.stage == "stack")
    assert (
        building.shared_runs(building.layer_chain(cells[2]), building.layer_chain(cells[0])) >= stack_runs > 0
    )
    assert building.shared_runs(building.layer_chain(cells[1]), building.layer_chain(cells[0])) == 0


def test_run_jobs_starts_a_job_after_the_one_it_waits_for_and_others_beside_it(ledger: Path) -> None:
    kb = load()
    cells = [_cell(kb, "maskrcnn", cuda="10.1"), _cell(kb, "gnmt"), _cell(kb, "nccl-tests")]
    assert building.build_after(cells) == [None, 0, None]
    results = building.run_jobs(
        engines.create("ledger"),
        cells,
        BuildPolicy(),
        history=None,
        log_for=lambda job: Log(None),
        parallel=2,
    )
    assert [r.status for r in results] == ["built"] * 3
    calls = [c for c in (ledger / "calls.txt").read_text().split() if ":" in c]
    assert calls.index("start:gnmt") > calls.index("end:maskrcnn")  # its shared layers are cached
    assert calls.index("start:nccl-tests") < calls.index("end:maskrcnn")  # nothing shared: beside it


def test_the_ci_plan_of_a_one_benchmark_change_builds_that_benchmark_only(cli, ledger: Path) -> None:  # type: ignore[no-untyped-def]
    """The registry holds every published image but ssd's (as after a change to ssd's
    recipe): the workflow's levels hold ssd's cells only, each in level 0 since what they
    share steps with is built already."""
    jobs = _matrix_jobs()
    (ledger / "built.json").write_text(
        json.dumps([j.digest for j in jobs if j.rendered.stack.benchmark.name != "ssd"])
    )
    result = cli("build", "--matrix", "--backend", "ledger", "--dry-run", "--format", "github")
    assert result.code == 0, result.err
    plan = json.loads(result.out)
    assert len(plan["levels"]) == building.GITHUB_LEVELS
    todo = plan["levels"][0]["include"]
    ssd = [j for j in jobs if j.rendered.stack.benchmark.name == "ssd"]
    assert sorted(c["variant"] for c in todo) == sorted(j.variant for j in ssd)
    assert all(c["benchmark"] == "ssd" and c["pins"].startswith("--base") for c in todo)
    assert not any(level["include"] for level in plan["levels"][1:])
    assert len(plan["built"]) == len(jobs) - len(ssd)


def test_the_ci_plan_of_a_cold_registry_puts_each_cell_after_the_one_it_waits_for(ledger: Path) -> None:
    jobs = _matrix_jobs()
    plan = building.plan_jobs(engines.create("ledger"), jobs, BuildPolicy())
    levels = building.levels(plan)
    for entry, level in zip(plan, levels):
        assert level == (0 if entry.after is None else levels[entry.after] + 1)  # type: ignore[operator]
    assert max(level for level in levels if level is not None) < building.GITHUB_LEVELS
    assert sum(len(level["include"]) for level in building.github_levels(plan)["levels"]) == len(jobs)


def test_the_github_plan_goes_with_a_matrix_dry_run_only(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("build", "ssd", "--format", "github")
    assert result.code == 2 and "--format github goes with --dry-run --matrix" in result.err


def test_cache_repo_is_a_repository_and_needs_an_engine_that_shares_through_one(cli, ledger: Path) -> None:  # type: ignore[no-untyped-def]
    bare = cli("build", "ssd", "--backend", "ledger", "--cache-repo", "quay.io")
    assert bare.code == 2 and "name a repository" in bare.err
    ledger_engine = cli("build", "ssd", "--backend", "ledger", "--cache-repo", "quay.io/me/cache")
    assert ledger_engine.code == 2 and "cannot share build steps through a registry" in ledger_engine.err


def test_chain_goes_with_an_engine_that_builds_images(cli, ledger: Path) -> None:  # type: ignore[no-untyped-def]
    refused = cli("build", "ssd", "--chain", "--backend", "ledger")
    assert refused.code == 2 and "--chain: the ledger engine cannot build stage images" in refused.err
    cluster_only = cli("build", "ssd", "--chain", "--namespace", "mlperf", "--backend", "buildah")
    assert cluster_only.code == 2 and "go with --backend openshift" in cluster_only.err


REFUSED = [
    pytest.param(
        ("ssd", "--chain", "--backend", "ledger"),
        dict(benchmark="ssd", backend="ledger", cluster=ClusterOptions(chain=True)),
        id="chain-on-an-engine-without-stage-images",
    ),
    pytest.param(
        ("ssd", "--backend", "ledger", "--cache-repo", "quay.io/me/cache"),
        dict(benchmark="ssd", backend="ledger", policy=BuildPolicy(cache_repo="quay.io/me/cache")),
        id="cache-repo-on-an-engine-that-shares-no-steps",
    ),
    pytest.param(
        ("ssd", "--chain", "--namespace", "mlperf", "--backend", "buildah"),
        dict(benchmark="ssd", backend="buildah", cluster=ClusterOptions(chain=True, namespace="mlperf")),
        id="openshift-option-on-a-local-engine",
    ),
    pytest.param(
        ("ssd", "--kubeconfig", "kube.yaml", "--backend", "ledger"),
        dict(benchmark="ssd", backend="ledger", connection=EngineSettings(kubeconfig="kube.yaml")),
        id="kubeconfig-on-a-local-engine",
    ),
    pytest.param(("--backend", "ledger"), dict(benchmark=None, backend="ledger"), id="no-benchmark"),
    pytest.param(
        (
            *("nccl-tests", "--cuda", "12.4", "--arch", "x86_64,ppc64le"),
            *("--push", "--registry", "quay.io/me", "--backend", "ledger"),
        ),
        dict(
            benchmark="nccl-tests",
            pins=Pins(cuda="12.4", arch="x86_64,ppc64le"),
            backend="ledger",
            policy=BuildPolicy(registry="quay.io/me", push=True),
        ),
        id="several-arches-on-an-engine-that-builds-one",
    ),
]


@pytest.mark.parametrize(("flags", "call"), REFUSED)
def test_the_api_refuses_what_the_cli_refuses(cli, ledger: Path, flags, call) -> None:  # type: ignore[no-untyped-def]
    """A Python caller of mlcc.app.build.prepare gets the refusals of `mlcc build`: the same
    error, exit code and message (the CLI only parses and prints)."""
    refused = cli("build", *flags)
    with pytest.raises(MlccError) as raised:
        building.prepare(load(), call.pop("benchmark"), call.pop("pins", Pins()), **call)
    message = str(raised.value).splitlines()[0]
    assert refused.code == raised.value.exit_code == 2
    assert message and message in refused.err


def test_mlcc_api_build_gets_the_refusals_of_mlcc_build(cli, ledger: Path) -> None:  # type: ignore[no-untyped-def]
    """mlcc.api.build goes through the same checks as `mlcc build`: refused before the
    engine is asked anything."""
    from mlcc import api

    refused = cli("build", "ssd", "--backend", "ledger", "--cache-repo", "quay.io/me/cache")
    with pytest.raises(MlccError) as raised:
        api.build("ssd", kb=load(), backend="ledger", policy=BuildPolicy(cache_repo="quay.io/me/cache"))
    assert refused.code == raised.value.exit_code == 2
    assert str(raised.value).splitlines()[0] in refused.err
    assert not (ledger / "calls.txt").exists()
