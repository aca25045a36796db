"""Words for Dockerfiles and POSIX shells: the escaping the format writers share.

Recipe values are schema-checked (no quotes, backticks or control characters), so these
functions guard against what the schema lets through and what a user's flags bring
(``--base-image``, ``--mirror``, a recipe title with ``$``), not against arbitrary text.
"""

from __future__ import annotations

from json.encoder import encode_basestring  # the C escaper, as json.dumps(ensure_ascii=False)
from typing import Sequence, Tuple


def double_quoted(value: str) -> str:
    """A value as a double-quoted word for Dockerfile ENV/LABEL and POSIX shells.

    ``$`` stays live on purpose (``${PATH}`` must expand); backslashes, double quotes and
    backticks are escaped, so the word cannot end early or run a command.
    """
    text = str(value)
    if "\\" in text or '"' in text or "`" in text:
        text = text.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`")
    return f'"{text}"'


def assignments(pairs: Sequence[Tuple[str, str]], separator: str) -> str:
    """NAME="value" pairs joined by ``separator`` (Dockerfile ENV and LABEL bodies)."""
    quoted = [f'{name}="{value}"' for name, value in pairs]
    # Recipe values hardly ever hold what double_quoted escapes: one scan of all of them
    # instead of a call per value (every pair holds two quotes of its own)
    scanned = "".join(quoted)
    if "\\" in scanned or "`" in scanned or scanned.count('"') != 2 * len(quoted):
        quoted = [f"{name}={double_quoted(value)}" for name, value in pairs]
    return separator.join(quoted)


def literal_assignments(pairs: Sequence[Tuple[str, str]], separator: str) -> str:
    """Like :func:`assignments`, with every ``$`` escaped: a LABEL holds the exact text.

    A builder expands ``$NAME`` in LABEL values, so a recipe title with ``$`` would make
    the image's label differ from the stack.json stamped beside it.
    """
    # one pass over the whole body: names (label keys) are expanded by builders too
    text = assignments(pairs, separator)
    return text.replace("$", "\\$") if "$" in text else text


def exec_form(words: Sequence[str]) -> str:
    """A JSON array for ENTRYPOINT/CMD: Docker parses the exec form as JSON.

    The same text as ``json.dumps(list(words), ensure_ascii=False)``, without building an
    encoder per call.
    """
    return "[" + ", ".join([encode_basestring(word) for word in words]) + "]"
