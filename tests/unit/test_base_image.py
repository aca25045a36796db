"""The base image check: os-release parsing, the mismatch reasons, and the history that
lets a rebuild say the base tag moved (format 1 databases are upgraded in place)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from mlcc.history import COLUMNS, SCHEMA_VERSION, History, Record
from mlcc.image.base import ResolvedBase, mismatch, parse_os_release

UBI8 = (
    'NAME="Red Hat Enterprise Linux"\nVERSION="8.10 (Ootpa)"\n'
    'ID="rhel"\nID_LIKE="fedora"\nVERSION_ID="8.10"\n'
)
CENTOS7 = 'NAME="CentOS Linux"\nID="centos"\nID_LIKE="rhel fedora"\nVERSION_ID="7"\n'
DIGEST = "sha256:" + "a" * 64


def _base(text: str, arch: str = "x86_64") -> ResolvedBase:
    fields = parse_os_release(text)
    return ResolvedBase(
        "registry.example/ubi8/ubi:8.10",
        DIGEST,
        arch,
        (fields.get("ID", ""), *fields.get("ID_LIKE", "").split()),
        fields.get("VERSION_ID"),
    )


def test_os_release_fields_lose_their_quotes() -> None:
    fields = parse_os_release(UBI8 + "# a comment\n\nBROKEN\n")
    assert fields["ID"] == "rhel" and fields["VERSION_ID"] == "8.10" and fields["VERSION"] == "8.10 (Ootpa)"
    assert "BROKEN" not in fields


def test_the_right_base_passes() -> None:
    assert mismatch(_base(UBI8), arch="x86_64", family="rhel", release="8.10", name="ubi8") is None
    # a RHEL rebuild names rhel in ID_LIKE
    assert mismatch(_base(CENTOS7), arch="x86_64", family="rhel", release="7.9.2009", name="centos7") is None


@pytest.mark.parametrize(
    ("text", "arch", "release", "expected"),
    [
        (
            UBI8.replace('"8.10"', '"9.5"'),
            "x86_64",
            "8.10",
            "VERSION_ID 9.5, the stack is for ubi8 (release 8)",
        ),
        (UBI8, "ppc64le", "8.10", "it is a ppc64le image, the stack is x86_64"),
        ('ID=ubuntu\nID_LIKE=debian\nVERSION_ID="22.04"\n', "x86_64", "8.10", "ID ubuntu debian"),
        ("", "x86_64", "8.10", "no /etc/os-release"),
    ],
)
def test_a_wrong_base_is_refused_with_the_reason(text: str, arch: str, release: str, expected: str) -> None:
    why = mismatch(_base(text, arch), arch="x86_64", family="rhel", release=release, name="ubi8")
    assert why is not None and expected in why, why


def test_the_pinned_reference_drops_the_tag() -> None:
    assert _base(UBI8).pinned == f"registry.example/ubi8/ubi@{DIGEST}"


def _record(base_digest: str, status: str = "built") -> Record:
    return Record(
        benchmark="nccl-tests",
        variant="v",
        content_digest="sha256:" + "c" * 64,
        backend="buildah",
        status=status,
        seconds=1.0,
        inputs_digest="sha256:" + "i" * 64,
        base_digest=base_digest,
    )


def test_history_tells_the_base_a_build_last_used(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite")
    inputs = "sha256:" + "i" * 64
    assert history.base_before("nccl-tests", "v", inputs) is None
    history.record(_record("sha256:" + "1" * 64))
    history.record(_record("sha256:" + "2" * 64, status="failed"))  # a failure pulled nothing built
    assert history.base_before("nccl-tests", "v", inputs) == "sha256:" + "1" * 64
    assert history.base_before("nccl-tests", "v", "sha256:" + "o" * 64) is None


def test_a_format_1_history_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    later = ("inputs_digest", "base_digest", "uncompressed", "flavour", "largest_layers")  # formats 2, 3
    old_columns = [c for c in COLUMNS if c not in later]
    connection = sqlite3.connect(str(path))
    connection.executescript(
        "CREATE TABLE builds (id INTEGER PRIMARY KEY AUTOINCREMENT, "
        + ", ".join(f"{c} TEXT" for c in old_columns)
        + "); PRAGMA user_version = 1;"
    )
    connection.execute(
        f"INSERT INTO builds ({', '.join(old_columns)}) VALUES ({', '.join('?' for _ in old_columns)})",
        ["2026-01-01T00:00:00Z", "ssd", "v", None, None, None, None, "sha256:x", "buildah", "built", "1.0"]
        + [None] * (len(old_columns) - 11),
    )
    connection.commit()
    connection.close()
    history = History(path)
    history.record(_record("sha256:" + "1" * 64))
    rows = history.rows()
    assert len(rows) == 2 and rows[1]["base_digest"] is None and rows[0]["base_digest"].endswith("1" * 64)
    assert sqlite3.connect(str(path)).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
