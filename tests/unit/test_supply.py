"""Every byte that enters a published image is pinned and verified (issue 12's walk).

The committed Dockerfiles (dockerfiles/) are read as a builder reads them: each file a
RUN downloads is checked with ``sha256sum -c`` before use, each git source is a full
commit proven with ``git rev-parse HEAD`` (or waived by a reason the recipe gives), and
no GitHub archive (not byte-stable) is fetched. The recipes behind them say where each
checksum comes from, or why none exists.
"""

from __future__ import annotations

import io
import re
import shlex
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
import yaml
from dockerfile_parse import DockerfileParser

from mlcc.errors import RecipeError

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = sorted((REPO / "dockerfiles").glob("*/*/Dockerfile"))
FULL_SHA = re.compile(r"^[0-9a-f]{40}\Z")


def _runs(path: Path) -> List[Tuple[str, List[str]]]:
    """(RUN text, the waiver comments right above it) for each RUN."""
    parser = DockerfileParser(fileobj=io.BytesIO(path.read_bytes()))
    runs, comments = [], []
    for item in parser.structure:
        if item["instruction"] == "COMMENT":
            comments.append(item["value"])
        elif item["instruction"] == "RUN":
            runs.append((item["value"], [c for c in comments if c.startswith("mlcc: ")]))
            comments = []
    return runs


def _commands(run: str) -> List[List[str]]:
    return [shlex.split(part.strip(" ()")) for part in re.split(r"&&|\|\|", run) if part.strip(" ()")]


def _downloaded_files(commands: List[List[str]]) -> List[str]:
    return [words[words.index("-o") + 1] for words in commands if words[:1] == ["curl"] and "-o" in words]


def test_the_published_set_is_there() -> None:
    assert len(PUBLISHED) >= 20


@pytest.mark.parametrize("path", PUBLISHED, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_every_download_is_checksum_verified_before_use(path: Path) -> None:
    for run, _ in _runs(path):
        commands = _commands(run)
        assert not any(w[:1] == ["wget"] for w in commands), run
        assert "/archive/" not in run, f"GitHub archives are not byte-stable: {run}"
        files = _downloaded_files(commands)
        for index, words in enumerate(commands):
            if words[:1] != ["curl"]:
                continue
            target = words[words.index("-o") + 1]
            if target.endswith(".sha256"):
                continue  # the checksum file itself
            later = [" ".join(w) for w in commands[index + 1 :]]
            check = next(i for i, line in enumerate(later) if line.startswith("sha256sum -c"))
            listing = later[check].split()[-1]
            # the listing is the recipe's value written for this file, or the project's file
            assert any(line.startswith("echo") and target in line for line in later[:check]) or (
                listing.endswith(".sha256") and Path(target).name + ".sha256" == Path(listing).name
            ), (path, target)
            use = [i for i, line in enumerate(later) if target.split("/")[-1] in line and i > check]
            first_use = min(use) if use else len(later)
            assert check < first_use, (path, target)
        assert len(files) == len(set(files))


@pytest.mark.parametrize("path", PUBLISHED, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_every_git_source_is_a_verified_full_commit(path: Path) -> None:
    for run, notes in _runs(path):
        commands = _commands(run)
        for words in commands:
            for word in words:
                if word.startswith("git+"):
                    assert FULL_SHA.match(word.split("@", 1)[1].split("#", 1)[0]), word
        refs = [w[-1] for w in commands if w[:2] == ["git", "checkout"]]
        if not any(w[:2] in (["git", "clone"], ["git", "fetch"]) for w in commands):
            continue
        assert refs, run
        for ref in refs:
            verified = f'test "$(git rev-parse HEAD)" = {ref}' in run
            if FULL_SHA.match(ref):
                assert verified, (path, ref)
            else:  # a short hash: only with the recipe's reason, and still prefix-checked
                assert any(n.startswith(f"mlcc: DF006 waived: {ref} is a short hash: ") for n in notes), ref
                assert f'expr "$(git rev-parse HEAD)" : {ref}' in run, ref


def test_every_tarball_and_tool_download_in_recipes_has_a_sourced_checksum_or_a_reason() -> None:
    counted: Dict[str, int] = {"sourced": 0, "unavailable": 0}
    for name in ("cudnn", "nccl"):
        for entry in yaml.safe_load((REPO / "recipes" / f"{name}.yaml").read_text())["builds"]:
            if entry["method"] != "tarball":
                continue
            if "sha256" in entry:
                assert re.match(r"^[0-9a-f]{64}\Z", entry["sha256"])
                assert "5d080f35" in entry["sha256_source"], entry
                counted["sourced"] += 1
            else:
                assert len(entry["sha256_unavailable"]) > 20, entry
                counted["unavailable"] += 1
    for entry in yaml.safe_load((REPO / "recipes" / "tools.yaml").read_text())["downloads"]:
        assert ("sha256" in entry and "sha256_source" in entry) or entry.get("sha256_unavailable"), entry
    assert counted["sourced"] >= 11


def test_nvidias_published_examples_are_the_recorded_values(kb) -> None:  # type: ignore[no-untyped-def]
    """Four sums NVIDIA's CUDA images check (gitlab.com/nvidia/container-images/cuda: the 10.1
    and 10.2 ubi8 cudnn7 devel and the 10.1 ubi7/ubi8 runtime Dockerfiles)."""
    expected = {
        "cudnn-10.1-linux-x64-v7.6.5.32.tgz": "7eaec8039a2c30ab0bc758d303588767"
        "693def6bf49b22485a2c00bf2e136cb3",
        "cudnn-10.2-linux-x64-v7.6.5.32.tgz": "600267f2caaed2fd58eb214ba669d8ea"
        "35f396a7d19b94822e6b36f9f7088c20",
        "nccl_2.8.4-1+cuda10.1_x86_64.txz": "bcff1cf98e4b24d7ca189577a9d90998"
        "0d8df88075223d70dc4638e428c53f84",
        "nccl_2.8.4-1+cuda10.1_ppc64le.txz": "72e587b4029188616c20113fae867a9d"
        "1ab50cac529640f9d4fefa55ea33a3cf",
    }
    recorded = {lib.url.rsplit("/", 1)[1]: lib.sha256 for lib in (*kb.cudnn, *kb.nccl) if lib.url}
    for name, value in expected.items():
        assert recorded[name] == value, name


def test_a_tarball_without_checksum_or_reason_is_refused(tmp_path: Path) -> None:
    import shutil

    from mlcc.kb import load

    recipes = tmp_path / "recipes"
    shutil.copytree(REPO / "recipes", recipes)
    path = recipes / "nccl.yaml"
    text = path.read_text()
    stripped = re.sub(r"\n  sha256: [0-9a-f]{64}\n  sha256_source: [^\n]*", "", text, count=1)
    assert stripped != text
    path.write_text(stripped)
    with pytest.raises(RecipeError) as error:
        load(str(recipes))
    assert "nccl.yaml" in str(error.value)
    path.write_text(
        stripped.replace(
            "  method: tarball\n", "  method: tarball\n  sha256_unavailable: never published by anyone\n", 1
        )
    )
    assert load(str(recipes)).nccl
