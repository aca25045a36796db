"""Deterministic YAML for Kubernetes objects: insertion order kept, multi-line strings as
literal blocks (an inline Dockerfile stays readable), nothing wrapped, no aliases."""

from __future__ import annotations

from typing import Any

import yaml


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def dumps(document: Any) -> str:
    """One YAML document. The pure-Python emitter on purpose: libyaml's may differ."""
    return yaml.dump(
        document,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=1 << 16,
    )
