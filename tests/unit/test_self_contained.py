"""The project stands on its own: a clone in any folder passes its tests.

Nothing in the repository names the folder of reading material that once sat beside the
checkout, and the tests that read data (schemas, MLPerf logs, fact tables) pass from a copy
of the repository in a fresh folder with nothing beside it, while an audit hook records any
file they open outside the copy's own tree: beside it, or in the checkout it was copied from.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Iterator, List

from tests.conftest import REPO

# Spelled in two parts so that this file does not match itself.
FORBIDDEN = (b"../" + b"shared", b"MLCC_" + b"SHARED")
# What a checkout holds that is not part of the repository.
NOT_TRACKED = {".git", ".venv", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", "build", "dist"}
# The tests that read the data the repository now carries: the OpenShift and MPIJob schemas
# (mlcc/lint/schemas) and Kubernetes' (kubernetes-validate), the MLPerf v0.6 logs
# and NVIDIA's configuration files (tests/data/mlperf-v0.6) and the upstream fact tables
# (tests/data/facts).
DATA_TESTS = [
    "tests/unit/test_openshift.py::test_every_committed_object_validates",
    "tests/unit/test_openshift.py::test_the_schemas_really_reject_a_broken_object",
    "tests/unit/test_openshift.py::test_lint_cli_validates_yaml_with_a_schema_dir",
    "tests/unit/test_results_score.py::test_real_logs_reproduce_the_published_v06_results",
    "tests/unit/test_results_score.py::test_minigo_time_comes_from_eval_result",
    "tests/unit/test_launch_at_nvidia_sizes.py::test_the_recipes_carry_every_file_nvidia_has_with_its_source",
    "tests/unit/test_kb.py::test_every_cuda_release_and_driver_minimum_matches_the_driver_table",
    "tests/unit/test_kb.py::test_host_gcc_bounds_match_the_compiler_facts",
    "tests/unit/test_kb.py::test_tensorflow_builds_follow_the_tested_configurations",
    "tests/unit/test_kb.py::test_pytorch_wheels_follow_the_wheel_matrix",
    "tests/unit/test_resolver_truth.py::test_reference_stack_facts_match_the_result_logs",
    "tests/unit/test_self_contained.py::test_no_file_names_the_folder_beside_the_checkout",
]
# Loaded into the copy's pytest: records every file opened beside the copy or in the
# checkout it came from (paths the copy must never need), and writes them out at exit.
AUDIT_PLUGIN = textwrap.dedent(
    """
    import atexit, os, sys

    COPY = os.path.realpath(os.environ["AUDIT_COPY"])
    WATCHED = [os.path.realpath(p) for p in os.environ["AUDIT_WATCHED"].split(os.pathsep)]
    # the interpreter and its packages (a checkout's own .venv among them) are not the repository
    IGNORED = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    REPORT = os.environ["AUDIT_REPORT"]
    seen = set()

    def _inside(path, folder):
        return path == folder or path.startswith(folder + os.sep)

    def _hook(event, args):
        if event != "open" or not isinstance(args[0], (str, bytes, os.PathLike)):
            return
        path = os.path.realpath(os.fsdecode(args[0]))
        if _inside(path, COPY) or any(_inside(path, i) for i in IGNORED):
            return
        if any(_inside(path, w) for w in WATCHED):
            seen.add(path)

    sys.addaudithook(_hook)

    @atexit.register
    def _write():
        with open(REPORT, "w") as out:
            out.write("\\n".join(sorted(seen)))
    """
)


def _repository_files(root: Path) -> Iterator[Path]:
    """The files of the repository (tracked, and new ones not ignored), else every file but
    the caches when there is no git checkout."""
    if (root / ".git").exists() and shutil.which("git"):
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            check=True,
        )
        for name in listed.stdout.decode().split("\0"):
            if name and (root / name).is_file():
                yield root / name
        return
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [d for d in subfolders if d not in NOT_TRACKED and not d.endswith(".egg-info")]
        for name in files:
            yield Path(folder) / name


def test_no_file_names_the_folder_beside_the_checkout() -> None:
    found: List[str] = []
    for path in _repository_files(REPO):
        data = path.read_bytes()
        found += [f"{path.relative_to(REPO)}: {word.decode()}" for word in FORBIDDEN if word in data]
    assert found == [], found


def _copy_repository(target: Path) -> None:
    for path in _repository_files(REPO):
        destination = target / path.relative_to(REPO)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, destination)


def test_the_data_tests_pass_from_a_copy_with_nothing_beside_it(tmp_path: Path) -> None:
    copy = tmp_path / "anywhere" / "repo"
    _copy_repository(copy)
    assert sorted(p.name for p in copy.parent.iterdir()) == ["repo"]  # no sibling folder at all
    plugin_dir = tmp_path / "plugin"
    plugin_dir.mkdir()
    (plugin_dir / "audit_outside_reads.py").write_text(AUDIT_PLUGIN)
    report = tmp_path / "outside-reads.txt"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(copy), str(plugin_dir)]),
        "AUDIT_COPY": str(copy),
        "AUDIT_WATCHED": os.pathsep.join([str(copy.parent), str(REPO)]),
        "AUDIT_REPORT": str(report),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "audit_outside_reads",
            *DATA_TESTS,
        ],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert " passed" in summary and "skipped" not in summary and "deselected" not in summary, summary
    outside = report.read_text().split()
    assert outside == [], outside


def test_the_audit_records_a_read_beside_the_copy(tmp_path: Path) -> None:
    """The audit above is not blind: a file opened beside the copy is reported, one inside it
    is not."""
    copy = tmp_path / "anywhere" / "repo"
    copy.mkdir(parents=True)
    (copy / "inside.txt").write_text("ok")
    beside = tmp_path / "anywhere" / "shared" / "facts.yaml"
    beside.parent.mkdir()
    beside.write_text("a fact")
    (tmp_path / "audit_outside_reads.py").write_text(AUDIT_PLUGIN)
    report = tmp_path / "outside-reads.txt"
    script = (
        f"import audit_outside_reads; open({str(copy / 'inside.txt')!r}).read(); open({str(beside)!r}).read()"
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(tmp_path),
        "AUDIT_COPY": str(copy),
        "AUDIT_WATCHED": str(copy.parent),
        "AUDIT_REPORT": str(report),
    }
    subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=60)
    assert report.read_text().split() == [str(beside.resolve())]
