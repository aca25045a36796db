"""The build history as a use case: which database, which rows."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from mlcc.errors import UsageError
from mlcc.history import History
from mlcc.validate import INT32_MAX, int_in_range, path_flag


def open_history(path: Optional[str]) -> History:
    """The build history database: ``--history FILE``, else MLCC_HISTORY, else the XDG data folder.

    Args:
        path: The ``--history`` value, or None.

    Returns:
        The history; the database is opened (and created) on first use.

    Raises:
        UsageError: ``path`` is empty or not a usable path.
    """

    return History(path_flag(path, "--history"))


def history_rows(
    history: History,
    *,
    benchmark: Optional[str] = None,
    variant: Optional[str] = None,
    status: Optional[str] = None,
    limit: int = 50,
) -> List[Dict[str, Any]]:
    """The recorded builds, skips and failures, newest first, as ``mlcc history`` lists them.

    Args:
        history: The build history.
        benchmark: Only this benchmark's rows.
        variant: Only this variant's rows.
        status: Only rows of this status (``built``, ``skipped``, ``failed``).
        limit: At most this many rows.

    Returns:
        One dict per row.

    Raises:
        UsageError: ``limit`` is below 1 or out of range.
        HistoryError: The database is locked, damaged, read-only, or not mlcc's.
    """
    if limit < 1:
        raise UsageError(f"--limit {limit}: give at least 1")

    int_in_range(limit, "--limit", 1, INT32_MAX)
    return history.rows(benchmark=benchmark, variant=variant, status=status, limit=limit)
