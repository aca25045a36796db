"""A kubeconfig read as outside input: regular files only, bounded, YAML of the right shape.

The Kubernetes client's own loader opens whatever path it is given (a FIFO blocks it
forever) and raises what its parser raises on a binary or mis-shaped file. Here each file
is read with :func:`mlcc.safeio.read_text` and parsed with ``yaml.safe_load`` first; the
client then loads the checked document (``load_kube_config_from_dict``). Several files in
``KUBECONFIG`` are merged as kubectl merges them: the first file to set a key wins.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import yaml
from kubernetes import config

from mlcc.errors import UsageError
from mlcc.safeio import UnreadableFile, read_text
from mlcc.ui.safe_text import printable

MAX_KUBECONFIG_BYTES = 4 * 1024 * 1024
HINT = "oc login writes one; or pass --kubeconfig FILE (or set KUBECONFIG)"
_LISTS = ("clusters", "contexts", "users")


def kubeconfig_paths(given: Optional[str]) -> List[Path]:
    """``--kubeconfig``, else each file of ``KUBECONFIG``, else ``~/.kube/config``."""
    if given is not None:
        return [Path(given)]
    listed = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    if listed:
        return [Path(p) for p in listed]
    return [Path(os.path.expanduser("~")) / ".kube" / "config"]


def _document(path: Path, what: str) -> Dict[str, Any]:
    try:
        text = read_text(path, limit=MAX_KUBECONFIG_BYTES)
    except UnreadableFile as error:
        shown = printable(str(path))
        raise UsageError(f"{what}: no usable kubeconfig at {shown}: {error}", hint=HINT) from None
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise UsageError(f"{what}: no usable kubeconfig: {where} is not YAML", hint=HINT) from None
    if not isinstance(loaded, dict):
        raise UsageError(f"{what}: no usable kubeconfig: {path} is not a mapping", hint=HINT)
    for key in _LISTS:
        entries = loaded.get(key)
        if entries is not None and not (
            isinstance(entries, list)
            and all(isinstance(e, dict) and isinstance(e.get("name"), str) for e in entries)
        ):
            raise UsageError(f"{what}: no usable kubeconfig: {path}'s {key} is not a list of named entries")
    return loaded


def read_kubeconfig(given: Optional[str], what: str) -> Dict[str, Any]:
    """The merged kubeconfig document, each file checked; ``what`` names the command."""
    merged: Dict[str, Any] = {}
    for path in kubeconfig_paths(given):
        if given is None and not path.exists() and len(kubeconfig_paths(None)) > 1:
            continue  # kubectl skips missing files of a KUBECONFIG list
        document = _document(path, what)
        for key, value in document.items():
            if key in _LISTS:
                known = {e["name"] for e in merged.setdefault(key, [])}
                merged[key].extend(e for e in value or [] if e["name"] not in known)
            else:
                merged.setdefault(key, value)
    return merged


def current_namespace(document: Dict[str, Any], context: Optional[str]) -> Optional[str]:
    """The namespace of ``context`` (default: the current context), or None."""
    name = context or document.get("current-context")
    for entry in document.get("contexts") or []:
        if entry.get("name") == name:
            inner = entry.get("context")
            namespace = inner.get("namespace") if isinstance(inner, dict) else None
            return namespace if isinstance(namespace, str) and namespace else None
    return None


def load(
    given: Optional[str], context: Optional[str], configuration: Any, what: str
) -> Tuple[Dict[str, Any], Any]:
    """Configure ``configuration`` (a ``kubernetes.client.Configuration``) from the checked
    kubeconfig; returns (document, configuration)."""
    document = read_kubeconfig(given, what)
    try:
        config.load_kube_config_from_dict(  # type: ignore[no-untyped-call]
            document, context=context, client_configuration=configuration, persist_config=False
        )
    # The client raises what its code meets on a document of an odd shape (a string where
    # a mapping belongs): each is a kubeconfig it cannot use, said as such.
    except (config.ConfigException, TypeError, ValueError, AttributeError, KeyError, OSError) as error:
        reason = printable(str(error))[:200]
        raise UsageError(f"{what}: no usable kubeconfig ({reason})", hint=HINT) from None
    # one try per call: urllib3's default retries made a silent API server cost four read
    # timeouts (242 s) before the call's error
    configuration.retries = False
    return document, configuration
