"""``build --matrix --dry-run --format github`` turned every cell whose state could not be
told into a silent build-all (exit 0) where the table says unknown: a plan where no cell's
state can be told is refused, and a cell that cannot be told carries why."""

from __future__ import annotations

import json
import socket
from pathlib import Path


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_plan_whose_every_cell_is_unknown_is_refused(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    registry = f"127.0.0.1:{_closed_port()}/me"
    argv = (
        "build",
        "--matrix",
        "nccl-tests",
        "--dry-run",
        "--push",
        "--registry",
        registry,
        "--no-tls-verify",
    )
    table = cli(*argv)
    assert "unknown" in table.out, table
    result = cli(*argv, "--format", "github")
    assert result.code == 5, result
    assert "cannot tell" in result.err and "Traceback" not in result.err
    assert not result.out.strip() or "levels" not in json.loads(result.out)
