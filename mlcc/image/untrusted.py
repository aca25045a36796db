"""Checks for what images, archives and registries send: shapes before use, never a traceback.

Everything here comes from outside mlcc: an OCI layout someone saved, a registry's JSON,
installed.json inside an image. Each value is checked for the shape the reader needs; a
mismatch is a clear error naming the document, not a KeyError. (stack.json is checked
against its schema by :mod:`mlcc.stackfile.document`.)
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Dict, List

from mlcc.errors import MlccError

DIGEST = re.compile(r"^sha256:[0-9a-f]{64}\Z|^sha512:[0-9a-f]{128}\Z")
ErrorFactory = Callable[[str], MlccError]


def obj(value: Any, what: str, error: ErrorFactory) -> Dict[str, Any]:
    if not isinstance(value, dict):
        raise error(f"{what} is not a JSON object")
    return value


def items(value: Any, what: str, error: ErrorFactory) -> List[Dict[str, Any]]:
    """A list of objects, or an empty list for a missing one."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise error(f"{what} is not a list of JSON objects")
    return value


def digest(value: Any, what: str, error: ErrorFactory) -> str:
    """A content digest; anything else (``../``, other algorithms, junk) is refused."""
    if not isinstance(value, str) or not DIGEST.match(value):
        raise error(f"{what} has no valid digest (sha256:<64 hex>), got {str(value)[:80]!r}")
    return value


def size(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def loads(data: bytes, what: str, error: ErrorFactory) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        raise error(f"{what} is not JSON") from None


def as_object(value: Any) -> Dict[str, Any]:
    """``value`` when it is an object, else an empty one (for optional nested records)."""
    return value if isinstance(value, dict) else {}
