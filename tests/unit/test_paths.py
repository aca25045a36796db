"""mlcc.paths against pathlib: the same spelling, order, listings and answers to probes."""

from __future__ import annotations

import os
import sys
from pathlib import Path, PurePosixPath
from typing import Callable, List

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlcc import paths

# Python 3.13 rewrote pathlib's probes (any OSError is "no"), resolve (no RuntimeError for a
# loop) and globbing; mlcc.paths keeps the answers mlcc gave on 3.9-3.12.
_SAME_PATHLIB = pytest.mark.skipif(sys.version_info >= (3, 13), reason="pathlib changed in 3.13")

# names made of the characters that matter to a path's spelling
_TEXT = st.text(alphabet="/.a-", max_size=12)


@given(_TEXT)
def test_spelling_is_pathlibs(text: str) -> None:
    pure = PurePosixPath(text)
    assert paths.pure(text) == str(pure)
    assert paths.parts(text) == list(pure.parts)
    assert paths.parent(text) == str(pure.parent)
    assert paths.name(text) == pure.name
    assert paths.suffix(text) == pure.suffix


@given(_TEXT, st.lists(_TEXT.filter(bool), max_size=3))
def test_joining_is_pathlibs(text: str, more: List[str]) -> None:
    assert paths.join(text, *more) == str(PurePosixPath(text).joinpath(*more))


@given(st.lists(st.text(alphabet="/ab-.", min_size=1, max_size=8), max_size=8))
def test_sorting_is_pathlibs(texts: List[str]) -> None:
    spelled = [paths.pure("r/" + text) for text in texts]
    assert sorted(spelled, key=paths.sort_key) == [str(p) for p in sorted(Path(t) for t in spelled)]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """Folders, hidden and dashed names, a link to a folder, a dangling link and a loop."""
    for rel in ("b/v/a", "b/v/.hidden", "b/v-x/build.yaml", "b/w/build.yaml", "b/v/d/e/f", "t/inside"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(rel)
    (tmp_path / "b" / "linked").symlink_to(tmp_path / "t")
    (tmp_path / "t" / "build.yaml").write_text("x")
    (tmp_path / "b" / "v" / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "b" / "v" / "loop").symlink_to("loop")
    return tmp_path


@_SAME_PATHLIB
def test_listings_are_pathlibs(tree: Path) -> None:
    for folder in (
        tree,
        tree / "b",
        tree / "b" / "v",
        tree / "b" / "linked",
        tree / "missing",
        tree / "b/v/a",
    ):
        assert sorted(paths.tree(str(folder))) == sorted(str(p) for p in folder.rglob("*"))
        expected = sorted(str(p) for p in folder.glob("*/build.yaml"))
        assert sorted(paths.glob_folders(str(folder), "build.yaml")) == expected


@_SAME_PATHLIB
@pytest.mark.parametrize(
    "probe, pathlib_probe",
    [
        (paths.exists, Path.exists),
        (paths.is_file, Path.is_file),
        (paths.is_dir, Path.is_dir),
        (paths.is_symlink, Path.is_symlink),
    ],
)
def test_probes_answer_and_raise_as_pathlibs(
    tree: Path, probe: Callable[[str], bool], pathlib_probe: Callable[[Path], bool]
) -> None:
    names = [
        "b",
        "b/v/a",
        "b/linked",
        "b/v/dangling",
        "b/v/loop",
        "b/v/loop/x",
        "missing",
        "b/v/a/under-a-file",
    ]
    for rel in [*names, "n" * 300, "a\0b"]:
        path = tree / rel if "\0" not in rel else Path(str(tree) + "/" + rel)
        try:
            expected: object = pathlib_probe(path)
        except OSError as error:
            expected = type(error)
        try:
            found: object = probe(str(path))
        except OSError as error:
            found = type(error)
        assert found == expected, rel


@_SAME_PATHLIB
def test_folders_are_made_as_pathlib_makes_them(tree: Path) -> None:
    paths.make_folders(str(tree / "new" / "deeper"))
    paths.make_folders(str(tree / "new"))  # there already: fine
    assert (tree / "new" / "deeper").is_dir()
    with pytest.raises(NotADirectoryError):
        paths.make_folders(str(tree / "b" / "v" / "a" / "x" / "y"))
    with pytest.raises(NotADirectoryError):
        (tree / "b" / "v" / "a" / "x" / "y").mkdir(parents=True, exist_ok=True)


@_SAME_PATHLIB
def test_resolving_is_pathlibs(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree)
    for rel in ("b/linked", "./b//v/..", "missing/x", "."):
        assert paths.resolve(rel) == str(Path(rel).resolve())
    with pytest.raises(RuntimeError, match="Symlink loop from") as ours:
        paths.resolve("b/v/loop")
    with pytest.raises(RuntimeError, match="Symlink loop from") as theirs:
        Path("b/v/loop").resolve()
    assert str(ours.value) == str(theirs.value)


def test_relative_is_pathlibs() -> None:
    for root, rel in ((".", "a/b"), ("/", "a"), ("out", "a/b"), ("//", "x")):
        joined = paths.join(root, rel)
        assert paths.relative(joined, root) == Path(joined).relative_to(root).as_posix()
    with pytest.raises(ValueError):
        paths.relative("elsewhere/a", "out")
    assert os.sep == "/"  # mlcc.paths spells POSIX paths only


def test_gen_prints_output_folders_as_pathlib_spells_them(cli) -> None:  # type: ignore[no-untyped-def]
    """What users read is unchanged: "./out//" is "out", a variant's files follow it."""
    result = cli("gen", "maskrcnn", "--cuda", "10.1", "-o", "./out//", "--openshift-output", "oc/./x/")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert "created   out/maskrcnn/cuda10.1-cudnn7-ubi8-x86_64/Dockerfile" in lines
    assert "created   oc/x/maskrcnn/maskrcnn.yaml" in lines
    again = cli("gen", "maskrcnn", "--cuda", "10.1", "-o", "./out//", "--openshift-output", "oc/./x/")
    assert again.out.splitlines()[-1] == "nothing changed under out and oc/x"
