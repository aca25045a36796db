"""MLLOG result lines, the format of MLPerf Training v0.7 and later.

Each line is ``:::MLLOG <json object>`` (mlcommons/logging, ``mlperf_logging/mllog``), e.g.
``:::MLLOG {"namespace": "", "time_ms": 1665220622406, "event_type": "INTERVAL_START",
"key": "run_start", "value": null, "metadata": {"file": "train.py", "lineno": 723}}``.
The time is Unix milliseconds; ``run_stop``'s ``metadata.status`` says whether the run
reached its target (``success``) or not (``aborted``).

A log is training output anyone can write, so each value a score uses is checked before
it is used: a JSON object (nested at most ``MLLOG_MAX_DEPTH`` deep, no NaN or Infinity), a key
of at most ``MAX_KEY`` word characters, a finite non-negative time no later than
``MAX_TIME_MS``, metadata that is an object. A line that is not so raises
:class:`MllogLineError` with the reason; :mod:`mlcc.results.parse` reports it with the
file and line number. The JSON is read by the standard library's ``json``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Dict, NamedTuple, Optional

MLLOG_MARKER = b":::MLLOG"
MAX_KEY = 100
MLLOG_MAX_DEPTH = 20  # MLLOG values are flat or one level deep (eval_accuracy {"BBOX": ..., "SEGM": ...})
MAX_TIME_MS = 10**13  # the year 2286: a later time_ms is no clock reading
_KEY = re.compile(r"[A-Za-z0-9_.]+")


class MllogLineError(ValueError):
    """A ``:::MLLOG`` line whose JSON or values are not what the format allows."""


class MllogEvent(NamedTuple):
    key: str
    seconds: float  # time_ms / 1000: the same unit as v0.6's :::MLL times
    value: Any
    metadata: Dict[str, Any]


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _depth(value: Any, limit: int) -> bool:
    """Whether ``value`` nests no deeper than ``limit`` (iteratively: no recursion to exhaust)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth >= limit:
                return False
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return True


def parse_event(line: bytes) -> Optional[MllogEvent]:
    """The event of one result line; None when the line holds no ``:::MLLOG`` marker.

    Raises:
        MllogLineError: The JSON after the marker is missing, not valid, or holds a value
            the format does not allow.
    """
    at = line.find(MLLOG_MARKER)
    if at < 0:
        return None
    payload = line[at + len(MLLOG_MARKER) :].strip()
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as error:
        raise MllogLineError(f"bytes that are not UTF-8 at offset {error.start}") from None
    try:
        document = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise MllogLineError(f"JSON nested deeper than {MLLOG_MAX_DEPTH} levels") from None
    except ValueError as error:
        raise MllogLineError(f"not valid JSON ({error}): {text[:80]!r}") from None
    if not isinstance(document, dict):
        raise MllogLineError(f"a JSON {type(document).__name__}, not an object: {text[:80]!r}")
    if not _depth(document, MLLOG_MAX_DEPTH):
        raise MllogLineError(f"JSON nested deeper than {MLLOG_MAX_DEPTH} levels")
    key = document.get("key")
    if not isinstance(key, str) or len(key) > MAX_KEY or not _KEY.fullmatch(key):
        raise MllogLineError(f"no valid key (letters, digits, '_' or '.', at most {MAX_KEY}): {key!r:.80}")
    stamp = document.get("time_ms")
    if isinstance(stamp, bool) or not isinstance(stamp, (int, float)):
        raise MllogLineError(f"{key}: time_ms is not a number: {stamp!r:.40}")
    if not math.isfinite(stamp) or not 0 <= stamp <= MAX_TIME_MS:
        raise MllogLineError(f"{key}: time_ms {stamp!r:.40} is not a time (0 .. {MAX_TIME_MS} ms)")
    metadata = document.get("metadata", {})
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise MllogLineError(f"{key}: metadata is not an object")
    return MllogEvent(key, float(stamp) / 1000.0, document.get("value"), metadata)
