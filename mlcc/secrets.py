"""Credentials never reach output, logs or messages: find them in URLs, strip them from text.

mlcc takes credentials only from the environment and auth files; a URL with a password
in it is refused (the password would be written into YAML), and any text a server sends
back is cleaned of the secrets mlcc knows before it is shown.
"""

from __future__ import annotations

import re
from typing import Iterable, Optional

_USERINFO = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^@/?#]*)@")
# Header-like echoes: "Authorization: Basic abc", "Bearer abc", "token=abc", "password":"abc"
_ECHOED = re.compile(
    r"(?i)(authorization\s*[:=]\s*\"?(?:basic|bearer|token)?\s*|\b(?:basic|bearer)\s+"
    r"|\b(?:access_token|refresh_token|token|password|passwd|secret)\"?\s*[:=]\s*\"?)"
    r"([A-Za-z0-9+/=._~-]{4,})"
)
REDACTED = "[redacted]"


def url_userinfo(url: str) -> Optional[str]:
    """The ``user[:password]`` part of a URL, or None."""
    match = _USERINFO.match(url)
    return match.group("userinfo") if match else None


def url_has_password(url: str) -> bool:
    """https://user:pw@host, or https://token@host (a bare token is a secret too)."""
    match = _USERINFO.match(url)
    if not match:
        return False
    userinfo = match.group("userinfo")
    return ":" in userinfo or match.group("scheme").lower() in ("https://", "http://")


def without_userinfo(url: str) -> str:
    """The URL with its credentials replaced, for messages."""
    return _USERINFO.sub(lambda m: f"{m.group('scheme')}{REDACTED}@", url, count=1)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every known secret, and anything that looks like an echoed credential, masked."""
    for secret in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return _ECHOED.sub(lambda m: m.group(1) + REDACTED, text)
