"""Canonical JSON text: the one spelling of stack.json and the SBOM that digests are taken over.

Sorted keys, two-space indentation, UTF-8 characters written as they are, and no NaN or
infinity (JSON has no spelling for them): the same document always gives the same bytes.
"""

from __future__ import annotations

import json
from typing import Any


def dumps(value: Any) -> str:
    """``value`` as canonical JSON, without a trailing newline.

    Raises ``TypeError`` for what JSON cannot hold (or keys that do not sort together) and
    ``ValueError`` for NaN and infinity.
    """
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
