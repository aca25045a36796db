"""The chained ids of pip installs in the lock files (see :mod:`mlcc.kb.pip_locks`).

Apart from the lock types because they hash, which ``mlcc resolve`` does not:
only rendering and ``mlcc kb lock`` name installs.
"""

from __future__ import annotations

import json
from hashlib import sha256
from typing import List, Optional

from mlcc.kb.pip_locks import LOCK_FORMAT, LockTarget, PipInstall

# json.dumps(..., sort_keys=True) builds an encoder per call; the same text from one
_SORTED = json.JSONEncoder(sort_keys=True)


def install_id(previous: Optional[str], target: LockTarget, install: PipInstall) -> str:
    """The chained id of ``install``, made after ``previous`` (None: the first)."""
    text = _SORTED.encode([LOCK_FORMAT, previous, list(target), install.key()])
    return sha256(text.encode("utf-8")).hexdigest()[:16]


def environment_id(target: LockTarget, what: List[str]) -> str:
    """The id that starts a new environment (a conda env): its installs chain after it."""
    text = json.dumps([LOCK_FORMAT, "environment", list(target), what], sort_keys=True)
    return sha256(text.encode("utf-8")).hexdigest()[:16]
