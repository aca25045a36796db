"""Kubernetes names: what the API server accepts, derived from mlcc's variant names."""

from __future__ import annotations

import re
from hashlib import sha256
from typing import Optional

from mlcc.errors import UsageError

_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")
# Pod names of an MPIJob are <name>-launcher and <name>-worker-<i>: keep room for them.
NAME_MAX = 52


def is_label(value: str) -> bool:
    """A DNS-1123 label: namespaces, Pod and MPIJob names."""
    return len(value) <= 63 and bool(_LABEL.match(value))


def is_subdomain(value: str) -> bool:
    """A DNS-1123 subdomain: most object names (Secrets, claims, BuildConfigs)."""
    return len(value) <= 253 and bool(_SUBDOMAIN.match(value))


def is_label_value(value: str) -> bool:
    return len(value) <= 63 and bool(_LABEL_VALUE.match(value))


def object_name(*parts: str) -> str:
    """``maskrcnn`` + ``cuda10.1-cudnn7-ubi8-x86_64`` -> ``maskrcnn-cuda10-1-cudnn7-ubi8-x86-64``.

    Dots and underscores become dashes so the name is also a valid Pod name prefix; a
    name longer than NAME_MAX keeps its start and gains a hash of the whole.
    """
    text = "-".join(parts).lower()
    name = re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "-", text)).strip("-")
    if len(name) > NAME_MAX:
        digest = sha256(text.encode()).hexdigest()[:8]
        name = name[: NAME_MAX - 9].rstrip("-") + "-" + digest
    return name


def label_value(text: str) -> str:
    """A label value from free text (at most 63 characters, alphanumeric at both ends)."""
    value = re.sub(r"[^A-Za-z0-9_.-]", "-", text)[:63]
    return value.strip("-_.")


def check(value: Optional[str], option: str, *, kind: str = "subdomain") -> Optional[str]:
    """Refuse a user-given name the API server would refuse, before anything is written."""
    if value is None:
        return None
    ok = is_label(value) if kind == "label" else is_subdomain(value)
    if not ok:
        rule = (
            "a DNS-1123 label: lowercase letters, digits and '-', at most 63 characters"
            if kind == "label"
            else "a DNS-1123 subdomain: lowercase letters, digits, '-' and '.', at most 253 characters"
        )
        suggestion = object_name(value) or "my-name"
        raise UsageError(
            f"{option}: {value!r} is not a valid Kubernetes name", hint=f"use {rule}, e.g. {suggestion}"
        )
    return value
