"""`mlcc kb check`: the check's judgement against a real simple index served on 127.0.0.1,
the command end to end, and a few pins against real PyPI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator, List

import pytest
from packaging.tags import Tag

from mlcc.cli import run as cli_run
from mlcc.kb.index import IndexClient
from mlcc.kbtools.check import ERROR, NOTE, WARNING, Checker, Pin, Target, supported_tags

from .simple_index import IndexServer

JSON = "application/vnd.pypi.simple.v1+json"
PY36_X86 = Target("3.6", "x86_64", "2.17")
PY36_PPC = Target("3.6", "ppc64le", "2.17")


@pytest.fixture
def index() -> Iterator[IndexServer]:
    server = IndexServer()
    try:
        _publish(server)
        yield server
    finally:
        server.close()


def _project(server: IndexServer, name: str, files: List[dict]) -> None:  # type: ignore[type-arg]
    for entry in files:
        entry.setdefault("url", f"/files/{entry['filename']}")
        entry.setdefault("hashes", {})
    server.add(f"/simple/{name}/", json.dumps({"name": name, "files": files}).encode(), JSON)


def _publish(server: IndexServer) -> None:
    _project(
        server,
        "demo",
        [
            {"filename": "demo-1.0-cp36-cp36m-manylinux1_x86_64.whl"},
            {"filename": "demo-1.1-cp36-cp36m-manylinux_2_28_x86_64.whl"},
            {"filename": "demo-2.0.tar.gz"},
            {"filename": "demo-3.0-py3-none-any.whl", "yanked": "broken"},
        ],
    )
    _project(server, "py2only", [{"filename": "py2only-4.38.tar.gz", "requires-python": ">=2.7, <3"}])
    _project(server, "pillow", [{"filename": "Pillow-6.0.0.tar.gz"}])
    _project(server, "mpi4py", [{"filename": "mpi4py-3.0.0.tar.gz"}])
    # PyPI's nvidia-dali-cuda110 as it is (pypi.org/simple/nvidia-dali-cuda110/): a dev stub, x86_64
    # wheels of 1.16.0, aarch64 only from 1.18.0 to 1.25.0, x86_64 again from 1.26.0
    _project(
        server,
        "nvidia-dali-cuda110",
        [
            {"filename": "nvidia_dali_cuda110-0.0.1.dev5-py3-none-manylinux2014_x86_64.whl"},
            {"filename": "nvidia_dali_cuda110-1.16.0-5351335-py3-none-manylinux2014_x86_64.whl"},
            *(
                {"filename": f"nvidia_dali_cuda110-1.{minor}.0-1-py3-none-manylinux2014_aarch64.whl"}
                for minor in range(18, 26)
            ),
            {"filename": "nvidia_dali_cuda110-1.26.0-8269290-py3-none-manylinux2014_x86_64.whl"},
        ],
    )
    _project(server, "torch", [{"filename": "torch-1.1.0-cp36-cp36m-manylinux1_x86_64.whl"}])
    server.add(
        "/whl/cu100/torch_stable.html",
        b'<a href="cu100/torch-1.1.0-cp36-cp36m-linux_x86_64.whl">torch</a>',
    )


def _checker(index: IndexServer, kb, tmp_path: Path) -> Checker:  # type: ignore[no-untyped-def]
    return Checker(IndexClient(index.url + "/simple/", cache=str(tmp_path)), kb)


def test_tags_follow_the_targets_python_glibc_and_arch() -> None:
    tags = set(supported_tags(PY36_X86))
    assert Tag("cp36", "cp36m", "manylinux1_x86_64") in tags
    assert Tag("cp36", "cp36m", "manylinux2014_x86_64") in tags
    assert Tag("cp36", "cp36m", "manylinux_2_28_x86_64") not in tags  # needs glibc 2.28
    assert Tag("cp37", "cp37m", "manylinux1_x86_64") not in tags
    assert Tag("py3", "none", "any") in tags
    ppc = set(supported_tags(PY36_PPC))
    assert Tag("cp36", "cp36m", "manylinux2014_ppc64le") in ppc
    assert not any(t.platform.endswith("x86_64") for t in ppc)
    assert Tag("cp38", "cp38", "manylinux1_x86_64") in set(supported_tags(Target("3.8", "x86_64", "2.17")))
    order = supported_tags(PY36_X86)  # pip ranks manylinux above the plain linux tag
    assert order.index(Tag("cp36", "cp36m", "manylinux1_x86_64")) < order.index(
        Tag("cp36", "cp36m", "linux_x86_64")
    )


def test_a_wheel_for_the_target_passes(index: IndexServer, kb, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert _checker(index, kb, tmp_path).judge(Pin("demo==1.0", "recipes/x.yaml:3", PY36_X86)) is None


def test_no_distribution_for_the_arch_is_an_error_naming_what_exists(index, kb, tmp_path) -> None:  # type: ignore[no-untyped-def]
    verdict = _checker(index, kb, tmp_path).judge(Pin("demo==1.0", "recipes/x.yaml:3", PY36_PPC))
    assert verdict is not None and verdict[0] == ERROR
    assert "no distribution for Python 3.6 on ppc64le" in verdict[1] and "manylinux1_x86_64" in verdict[1]


def test_a_newer_glibc_wheel_does_not_fit_an_older_base(index, kb, tmp_path) -> None:  # type: ignore[no-untyped-def]
    checker = _checker(index, kb, tmp_path)
    assert checker.judge(Pin("demo==1.1", "recipes/x.yaml:3", PY36_X86))[0] == ERROR  # type: ignore[index]
    assert checker.judge(Pin("demo==1.1", "recipes/x.yaml:3", Target("3.6", "x86_64", "2.28"))) is None


def test_a_missing_release_names_the_nearest(index, kb, tmp_path) -> None:  # type: ignore[no-untyped-def]
    verdict = _checker(index, kb, tmp_path).judge(Pin("demo==1.2", "recipes/x.yaml:3", PY36_X86))
    assert verdict == (ERROR, "no release 1.2 on the index (nearest: 1.1, 2.0)")


def test_requires_python_that_excludes_the_target_is_an_error(index, kb, tmp_path) -> None:  # type: ignore[no-untyped-def]
    verdict = _checker(index, kb, tmp_path).judge(Pin("py2only==4.38", "recipes/x.yaml:3", PY36_X86))
    assert verdict is not None and verdict[0] == ERROR and "requires Python >=2.7, <3" in verdict[1]


def test_an_sdist_builds_from_source(index, kb, tmp_path) -> None:  # type: ignore[no-untyped-def]
    verdict = _checker(index, kb, tmp_path).judge(Pin("demo==2.0", "recipes/x.yaml:3", PY36_PPC))
    assert verdict is not None and verdict[0] == NOTE and "builds from source (demo-2.0.tar.gz)" in verdict[1]


def test_a_source_build_without_its_headers_is_an_error(index, kb, tmp_path) -> None:  # type: ignore[no-untyped-def]
    checker = _checker(index, kb, tmp_path)
    bare = Pin("Pillow==6.0.0", "recipes/x.yaml:3", PY36_PPC, installs=frozenset({"gcc"}))
    verdict = checker.judge(bare)
    assert verdict is not None and verdict[0] == ERROR
    assert "libjpeg-turbo-devel, zlib-devel" in verdict[1] and "recipes/tools.yaml:" in verdict[1]
    ready = bare._replace(installs=frozenset({"gcc", "libjpeg-turbo-devel", "zlib-devel"}))
    assert checker.judge(ready)[0] == NOTE  # type: ignore[index]
    ubuntu = bare._replace(family="ubuntu", installs=frozenset({"libjpeg-dev", "zlib1g-dev"}))
    assert checker.judge(ubuntu)[0] == NOTE  # type: ignore[index]


def test_a_source_build_the_image_base_carries_what_it_needs_for_is_a_note(index, kb, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """mpi4py's sdist builds against the mpicc an NGC base's HPC-X Open MPI brings
    (recipes/tools.yaml base_contents: openmpi), with no MPI package installed; a base that
    carries none still needs the packages."""
    checker = _checker(index, kb, tmp_path)
    bare = Pin("mpi4py==3.0.0", "recipes/x.yaml:3", PY36_PPC, family="ubuntu", installs=frozenset({"gcc"}))
    verdict = checker.judge(bare)
    assert verdict is not None and verdict[0] == ERROR and "libopenmpi-dev" in verdict[1]
    carried = checker.judge(bare._replace(base_carries=(("openmpi", "4.1.7"),)))
    assert carried == (
        NOTE,
        "builds from source (mpi4py-3.0.0.tar.gz): no wheel for Python 3.6 on "
        "ppc64le (glibc 2.17); the base image carries what it needs (openmpi 4.1.7)",
    )


def test_a_yanked_only_match_warns(index, kb, tmp_path) -> None:  # type: ignore[no-untyped-def]
    verdict = _checker(index, kb, tmp_path).judge(Pin("demo==3.0", "recipes/x.yaml:3", PY36_X86))
    assert verdict == (WARNING, "demo-3.0-py3-none-any.whl is yanked on the index")


def test_find_links_loses_to_the_index_manylinux_wheel(index, kb, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The PyTorch 1.1.0 cu100 trap: pip prefers the index's manylinux1 wheel."""
    pin = Pin(
        "torch==1.1.0", "recipes/x.yaml:3", PY36_X86, find_links=index.url + "/whl/cu100/torch_stable.html"
    )
    verdict = _checker(index, kb, tmp_path).judge(pin)
    assert verdict is not None and verdict[0] == ERROR
    assert "pip installs torch-1.1.0-cp36-cp36m-manylinux1_x86_64.whl" in verdict[1]
    assert "torch-1.1.0-cp36-cp36m-linux_x86_64.whl" in verdict[1]


def test_exact_wheel_urls_are_judged_by_their_tags(index, kb, tmp_path) -> None:  # type: ignore[no-untyped-def]
    checker = _checker(index, kb, tmp_path)
    url = "https://download.pytorch.org/whl/cu100/torch-1.1.0-cp36-cp36m-linux_x86_64.whl"
    assert checker.judge(Pin(url, "recipes/x.yaml:3", PY36_X86)) is None
    verdict = checker.judge(Pin(url, "recipes/x.yaml:3", Target("3.7", "x86_64", "2.17")))
    assert verdict is not None and verdict[0] == ERROR and "does not install on Python 3.7" in verdict[1]
    assert checker.judge(Pin("git+https://github.com/a/b.git@" + "0" * 40, "r:1", PY36_X86)) is None


def test_conda_pins_should_name_their_build(index, kb, tmp_path) -> None:  # type: ignore[no-untyped-def]
    checker = _checker(index, kb, tmp_path)
    assert checker.judge(Pin("pytorch=1.1.0", "r:1", PY36_PPC, kind="conda"))[0] == WARNING  # type: ignore[index]
    assert checker.judge(Pin("pytorch=1.1.0=py36_1234", "r:1", PY36_PPC, kind="conda")) is None


def test_unknown_project_is_an_error(index, kb, tmp_path) -> None:  # type: ignore[no-untyped-def]
    verdict = _checker(index, kb, tmp_path).judge(Pin("nothing-here==1.0", "r:1", PY36_X86))
    assert verdict is not None and verdict[0] == ERROR and "no project 'nothing-here'" in verdict[1]


def test_the_command_reports_recipe_lines_and_exits_10(index, capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """End to end over the real recipes, against an index that only knows a few projects:
    every other pin is an error that names the recipe line it comes from."""
    code = cli_run(["kb", "check", "--index-url", index.url + "/simple/", "--sample", "0", "--refresh"])
    out = capsys.readouterr()
    assert code == 10, out.err
    assert "kb check:" in out.err and "pin(s) the package index contradicts" in out.err
    lines = [line for line in out.out.splitlines() if ": error: " in line]
    assert lines and all(line.startswith("recipes/") for line in lines)
    assert any(line.startswith("recipes/tools.yaml:") and "pip==" in line for line in lines)
    assert "checked against " + index.url + "/simple/" in out.out


def test_the_command_honours_pip_index_url(index, capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PIP_INDEX_URL", index.url + "/simple/")
    code = cli_run(["kb", "check", "--sample", "0", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 10 and report["index"] == index.url + "/simple/"
    assert report["stacks"] > 10 and any(f["severity"] == "error" for f in report["findings"])


def test_real_pypi_known_good_and_known_bad_pins(kb, tmp_path) -> None:  # type: ignore[no-untyped-def]
    checker = Checker(IndexClient("https://pypi.org/simple/", cache=str(tmp_path)), kb)
    assert checker.judge(Pin("numpy==1.16.3", "r:1", PY36_X86)) is None
    assert checker.judge(Pin("mxnet-cu101==1.6.0.post0", "r:1", PY36_X86)) is None
    opencv = checker.judge(Pin("opencv-python==3.4.1.15", "r:1", PY36_PPC))
    assert opencv is not None and opencv[0] == ERROR and "ppc64le" in opencv[1]
    assert checker.judge(Pin("mxnet-cu101==1.6.0", "r:1", PY36_X86)) == (
        ERROR,
        "no release 1.6.0 on the index (nearest: 1.6.0.post0)",
    )
    gsutil = checker.judge(Pin("gsutil==4.38", "r:1", PY36_X86))
    assert gsutil is not None and gsutil[0] == ERROR and "<3" in gsutil[1]


PY38_X86 = Target("3.8", "x86_64", "2.28")


def test_a_stand_in_pins_claimed_nearest_release_is_checked_against_the_index(index, kb, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """corrections-4: PyPI's x86_64 DALI nearest NGC 22.09's 1.17.0 is 1.16.0 (1.18.0 to 1.25.0 are
    aarch64 only), not 1.26.0, and nearest NGC 22.04's 1.12.0 too (the dev stub is no release)."""
    checker = _checker(index, kb, tmp_path)
    pin = Pin("nvidia-dali-cuda110==1.26.0", "recipes/x.yaml:3", PY38_X86, stands_for=("1.17.0", "1.16.0"))
    assert checker.judge(pin) is None
    assert checker.judge(pin._replace(stands_for=("1.12.0", "1.16.0"))) is None
    verdict = checker.judge(pin._replace(stands_for=("1.17.0", "1.26.0")))
    assert verdict == (
        ERROR,
        "the recipe says 1.26.0 is the release nearest to 1.17.0 on the index for Python 3.8 on x86_64"
        " (glibc 2.28);"
        " the index's nearest is 1.16.0",
    )


def test_the_v2_1_dali_steps_claim_pypis_nearest_release(kb) -> None:  # type: ignore[no-untyped-def]
    claims = {
        name: step.stands_for
        for name in ("maskrcnn-v2.1", "ssd-v2.1", "rnnt-v2.1")
        for step in kb.benchmarks[name].build.steps
        if step.stands_for is not None
    }
    assert claims == {
        "maskrcnn-v2.1": ("1.17.0", "1.16.0"),
        "ssd-v2.1": ("1.17.0", "1.16.0"),
        "rnnt-v2.1": ("1.12.0", "1.16.0"),
    }
