"""Credentials never reach output, logs or messages: find them in URLs, strip them from text.

mlcc takes credentials only from the environment and auth files; a URL with a password
in it is refused (the password would be written into YAML), and any text a server sends
back is cleaned of the secrets mlcc knows before it is shown.
"""

from __future__ import annotations

import base64
import re
import urllib.parse
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


def _spellings(secret: str) -> Iterable[str]:
    """The ways a server may echo ``secret``: as it is, URL-encoded (``quote`` and
    ``quote_plus``) and base64-encoded (standard and URL-safe alphabets); matched without
    regard to case, which also covers upper- and lower-cased echoes and %xx hex case."""
    raw = secret.encode("utf-8", "surrogatepass")
    yield secret
    yield urllib.parse.quote(secret, safe="")
    yield urllib.parse.quote_plus(secret, safe="")
    for encoded in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
        yield encoded.decode("ascii")
        yield encoded.decode("ascii").rstrip("=")


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every known secret (in each of its echoed spellings), and anything that
    looks like an echoed credential, masked."""
    spellings = {spelled for s in secrets if s and len(s) >= 4 for spelled in _spellings(s)}
    for spelled in sorted((s for s in spellings if len(s) >= 4), key=len, reverse=True):
        text = re.sub(re.escape(spelled), REDACTED, text, flags=re.IGNORECASE)
    return _ECHOED.sub(lambda m: m.group(1) + REDACTED, text)
