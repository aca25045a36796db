"""mlcc's YAML quoting: whatever it writes, PyYAML (1.1), ruamel.yaml (1.2) and Go read back unchanged."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML
from ruamel.yaml.nodes import ScalarNode as RuamelScalarNode
from ruamel.yaml.resolver import VersionedResolver

from mlcc.render.openshift import yamlout
from mlcc.render.openshift.yamlout import dumps
from tests.unit.test_yaml_strings_read_back_as_strings import go_reads_as_non_string

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
        "-_",
        "._",
        "+_",
        "-._",
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


# The plain-scalar rule is mlcc's own; these check it against the real readers. Strings
# are drawn from the characters that make numbers, timestamps, booleans and nulls.
_TYPED_ALPHABET = "0123456789_.:-+ \teExXoObBTtZ<=~yYnNaAlLsSuUrRfFiI"
_TIMESTAMPISH = r"([ Tt][0-9]{1,2}(:[0-9]{2}){0,2}(\.[0-9]*)?)?( ?(Z|[-+][0-9]{1,2}))?"
typed_texts = st.text(alphabet=_TYPED_ALPHABET, max_size=14) | st.from_regex(
    rf"\A[-+]?[0-9]{{1,4}}([-:.][0-9]{{1,2}}){{0,3}}{_TIMESTAMPISH}\Z"
)


def _pyyaml_reads_string(text: str) -> bool:
    resolved = yaml.resolver.Resolver().resolve(yaml.ScalarNode, text, (True, False))
    return bool(resolved == "tag:yaml.org,2002:str")


def _ruamel_reads_string(text: str, version: Any) -> bool:
    """ruamel.yaml's resolver alone: its constructor crashes on some of what it types ("-_")."""
    resolved = VersionedResolver(version=version).resolve(RuamelScalarNode, text, (True, False))
    return bool(str(resolved) == "tag:yaml.org,2002:str")


@settings(max_examples=1000, deadline=None)
@given(typed_texts | texts.filter(lambda t: "\n" not in t))
def test_plain_only_what_every_reader_reads_as_a_string(text: str) -> None:
    """What the writer lets go plain is a string to PyYAML, to ruamel.yaml (YAML 1.2 and 1.1),
    to Go's yaml.v2 and in any letter case."""
    written = dumps({"k": text})
    if written[3] not in "'\"|":
        assert _pyyaml_reads_string(text)
        assert _ruamel_reads_string(text, (1, 2))
        assert _ruamel_reads_string(text, (1, 1))
        assert not go_reads_as_non_string(text)
        assert text.lower() not in {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", ""}


@settings(max_examples=500, deadline=None)
@given(typed_texts)
def test_plain_scalars_read_back_as_strings_in_yaml_11_and_12(text: str) -> None:
    """Whatever is written plain loads as the same string in PyYAML (1.1) and ruamel.yaml (1.2)."""
    written = dumps({"k": text})
    if written.startswith("k: ") and written[3] not in "'\"":
        for loader in _loaders():
            assert yaml.load(written, Loader=loader) == {"k": text}, written
        assert YAML(typ="safe", pure=True).load(written) == {"k": text}, written


def test_plain_rule_quotes_what_resolvers_type() -> None:
    """What some reader types is quoted; what looks like a number to none stays plain."""
    typed = ["0b_", "0x_", "1:20.5", "2001-12-14 21:59:43.10 -5", "2001-12-14t21:59:43Z", "<<", "=", ".NaN"]
    typed += ["-.inf", "+.INF", "190:20:30", "0o17", "1e3", "y", "N", "oFF", "~", ""]
    typed += ["-_", "._", "+__", "-._", "0o_", "1_000", "0x1p3", "-INFINITY", "+inf", "-NaN"]
    assert [t for t in typed if yamlout.reads_as_string(t)] == []
    assert all(yamlout.reads_as_string(t) for t in ["-.nan", "inf", "nan", "x1", "1.2.3", "v1", "1-2", "a=b"])
