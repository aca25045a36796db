"""Checks for what images, archives and registries send: shapes before use, never a traceback.

Everything here comes from outside mlcc: an OCI layout someone saved, a registry's JSON,
the stack.json and installed.json inside an image. Each value is checked for the shape
the reader needs; a mismatch is a clear error naming the document, not a KeyError.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import jsonschema

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


@lru_cache(maxsize=1)
def _stack_validator() -> Any:

    schema = json.loads((Path(__file__).parents[1] / "render" / "schemas" / "stack.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


def stack_problem(stack: Any) -> Optional[str]:
    """Why an image's stack.json is not a stack manifest mlcc wrote, or None when it is one."""
    if not isinstance(stack, dict):
        return "not a JSON object"
    error = next(iter(_stack_validator().iter_errors(stack)), None)
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "(top)"
    return f"{where}: {error.message[:160]}"
