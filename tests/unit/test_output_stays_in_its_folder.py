"""Output: symlinks, overlapping roots, unwritable roots, concurrent writers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

SEED = "maskrcnn/cuda10.1-cudnn7-ubi8-x86_64"


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim"
    (victim / "keep").mkdir(parents=True)
    (victim / "precious.txt").write_text("mine")
    (victim / "keep" / "data").write_text("mine too")
    return victim


def _snapshot(folder: Path) -> dict:  # type: ignore[type-arg]
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_symlinked_variant_folder_is_refused_and_its_target_kept(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    victim = _victim(tmp_path)
    before = _snapshot(victim)
    out = tmp_path / "out"
    (out / "maskrcnn").mkdir(parents=True)
    (out / SEED).symlink_to(victim)
    result = cli("gen", "maskrcnn", "--cuda", "10.1", "-o", str(out), "--only", "dockerfile")
    assert result.code == 2, result.err
    assert "symbolic link" in result.err and "internal error" not in result.err
    assert _snapshot(victim) == before


def test_symlinked_benchmark_folder_is_refused_by_gen_all(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    victim = _victim(tmp_path)
    before = _snapshot(victim)
    out = tmp_path / "out"
    out.mkdir()
    (out / "maskrcnn").symlink_to(victim)
    result = cli("gen", "--all", "-o", str(out), "--only", "dockerfile")
    assert result.code == 2, result.err
    assert "symbolic link" in result.err
    assert _snapshot(victim) == before


def test_same_folder_for_both_outputs_is_refused(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    both = tmp_path / "both"
    result = cli("gen", "maskrcnn", "--cuda", "10.1", "-o", str(both), "--openshift-output", str(both))
    assert result.code == 2, result.err
    assert "--openshift-output" in result.err and "-o" in result.err
    assert not both.exists()


def test_a_root_that_is_a_loop_of_links_is_a_clear_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    for flag in ("-o", "--openshift-output"):
        other = str(tmp_path / "elsewhere")
        roots = (
            ["-o", str(loop), "--openshift-output", other] if flag == "-o" else ["-o", other, flag, str(loop)]
        )
        result = cli("gen", "maskrcnn", "--cuda", "10.1", *roots)
        assert result.code == 2, result.err
        assert "loop" in result.err and flag in result.err and "internal error" not in result.err
        assert not (tmp_path / "elsewhere").exists()


def test_unwritable_openshift_root_writes_nothing_and_names_its_flag(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    build = tmp_path / "build"
    result = cli(
        "gen", "maskrcnn", "--cuda", "10.1", "-o", str(build), "--openshift-output", str(blocker / "x")
    )
    assert result.code == 2, result.err
    assert "--openshift-output" in result.err
    assert not build.exists()


def test_six_concurrent_gen_all_into_one_folder_all_succeed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    args = [
        sys.executable,
        "-m",
        "mlcc",
        "gen",
        "--all",
        "-o",
        str(out / "d"),
        "--openshift-output",
        str(out / "b"),
    ]
    for _ in range(3):  # the old clean-up failed a writer in most rounds
        procs = [
            subprocess.Popen(
                args, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
            )
            for _ in range(6)
        ]
        results = [(p.wait(timeout=300), p.stderr.read() if p.stderr else "") for p in procs]
        assert all(code == 0 for code, _ in results), results
    check = subprocess.run([*args, "--check"], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    assert not [p for p in out.rglob("*.mlcc-tmp")]


def test_clean_up_leaves_another_writers_temp_file_alone(tmp_path: Path) -> None:
    """The race of six writers, made deterministic: a temp file in flight survives a prune."""
    from mlcc.output import write_tree

    (tmp_path / "b" / "v").mkdir(parents=True)
    in_flight = tmp_path / "b" / "v" / ".Dockerfile.abc123.mlcc-tmp"
    in_flight.write_text("half")
    stale = tmp_path / "b" / "v" / "old.txt"
    stale.write_text("stale")
    write_tree(tmp_path, [("b/v/Dockerfile", "FROM x\n")], prune=["b/v"])
    assert in_flight.exists() and not stale.exists()


def test_temporary_files_are_new_private_and_named_for_clean_up(tmp_path: Path) -> None:
    """The atomic writer's own mkstemp: exclusive, mode 0600, a name clean-up recognises."""
    from mlcc import output

    target = tmp_path / "Dockerfile"
    made = []
    for _ in range(3):
        fd, name = output._new_temporary(target)
        os.close(fd)
        made.append(Path(name))
    assert len(set(made)) == 3
    for path in made:
        assert path.parent == tmp_path and (path.stat().st_mode & 0o777) == 0o600
        assert output._in_flight(path) and path.name.startswith(".Dockerfile.")
    output.write_tree(tmp_path, [("Dockerfile", "FROM x\n")])
    assert (tmp_path / "Dockerfile").read_text() == "FROM x\n"
    assert (tmp_path / "Dockerfile").stat().st_mode & 0o777 == 0o644


def test_an_output_that_is_a_device_fifo_or_folder_is_refused_and_left_as_it_was(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The new file is renamed into place: over /dev/null or a FIFO that would replace the
    node with a regular file (as root, a device node of the machine)."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    history = tmp_path / "history.sqlite"
    for target in (Path(os.devnull), fifo, folder):
        before = target.lstat()
        for args, flag in (
            (["report", "--html", str(target), "--history", str(history)], "--html FILE"),
            (["results", "compare", "--history", str(history), "--html", str(target)], "--html FILE"),
        ):
            result = cli(*args)
            assert result.code == 2, (args, result)
            assert str(target) in result.err and flag in result.err and "Traceback" not in result.err
        after = target.lstat()
        assert (after.st_mode, after.st_ino, after.st_rdev) == (before.st_mode, before.st_ino, before.st_rdev)
