"""mlcc's YAML writer: whatever it writes, PyYAML (pure and libyaml) reads back unchanged."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from mlcc.render.openshift.yamlout import dumps

texts = st.text(max_size=30) | st.sampled_from(
    [
        "yes",
        "no",
        "on",
        "off",
        "null",
        "~",
        "1:20",
        "0x1f",
        "010",
        "1e3",
        ".inf",
        "2001-12-14",
        "=",
        "<<",
        "a: b",
        "#x",
        "- x",
        "x:",
        "line\n",
        "two\nlines",
        "\n",
        " lead",
        "trail ",
        "tab\tinside",
        "a\n\nb\n\n",
        "FROM x\nRUN y \\\n && z\n",
        "--prefix",
        "---",
        "--- x",
        "-",
        "- x",
        "-1",
        "-.inf",
        "'quoted'",
        '"dq"',
        "\u2028",
        "caf\u00e9",
    ]
)
keys = st.text(min_size=1, max_size=12) | st.sampled_from(
    ["app.kubernetes.io/name", "nvidia.com/gpu", "on", "1"]
)
leaves = st.none() | st.booleans() | st.integers() | texts
documents = st.recursive(
    leaves,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=30,
)


def _loaders() -> list:  # type: ignore[type-arg]
    found = [yaml.SafeLoader]
    if hasattr(yaml, "CSafeLoader"):
        found.append(yaml.CSafeLoader)
    return found


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(keys, documents, min_size=1, max_size=5))
def test_round_trip(document: Any) -> None:
    text = dumps(document)
    for loader in _loaders():
        assert yaml.load(text, Loader=loader) == document, text


def test_layout_matches_what_oc_prints() -> None:
    document = {
        "kind": "List",
        "items": [{"name": "a", "args": ["-g", "1"], "spec": {"x": {}}}],
        "dockerfile": "FROM x\nRUN y\n",
        "port": 8,
        "version": "8.10",
    }
    assert dumps(document) == (
        "kind: List\n"
        "items:\n"
        "- name: a\n"
        "  args:\n"
        "  - -g\n"
        "  - '1'\n"
        "  spec:\n"
        "    x: {}\n"
        "dockerfile: |\n"
        "  FROM x\n"
        "  RUN y\n"
        "port: 8\n"
        "version: '8.10'\n"
    )
