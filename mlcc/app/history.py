"""The build history as a use case: which database, which rows."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from mlcc.errors import UsageError
from mlcc.history import History
from mlcc.validate import INT32_MAX, int_in_range, path_flag


def open_history(path: Optional[str]) -> History:
    """``--history FILE``, else MLCC_HISTORY, else the XDG data folder."""

    return History(path_flag(path, "--history"))


def history_rows(
    history: History,
    *,
    benchmark: Optional[str] = None,
    variant: Optional[str] = None,
    status: Optional[str] = None,
    limit: int = 50,
) -> List[Dict[str, Any]]:
    if limit < 1:
        raise UsageError(f"--limit {limit}: give at least 1")

    int_in_range(limit, "--limit", 1, INT32_MAX)
    return history.rows(benchmark=benchmark, variant=variant, status=status, limit=limit)
