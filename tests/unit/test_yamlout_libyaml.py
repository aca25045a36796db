"""libyaml's emitter writes what PyYAML's pure-Python emitter writes, or does not write at all.

yamlout hands a document to libyaml's emitter (yaml.CSafeDumper, ten times faster) only
when libyaml's version is verified and the document holds nothing the two emitters write
differently (yamlout's module docstring). These tests are that verification: every
published and golden OpenShift document, adversarial strings in every place a string
goes, and random documents are written by both emitters; wherever the bytes differ,
yamlout must have seen it coming, and :func:`yamlout.dumps` must give the pure-Python
emitter's bytes. The pure-Python emitter is the reference, so nothing here depends on
libyaml being right, only on it being caught when it differs.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from mlcc.render.openshift import yamlout
from tests.conftest import REPO

pytestmark = pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML built without libyaml")


def _both(document: Any) -> List[Optional[str]]:
    """The pure-Python emitter's text and libyaml's (None when libyaml cannot write it)."""
    node = yamlout.represent(document).node
    try:
        libyaml: Optional[str] = yamlout.emit(node, libyaml=True)
    except UnicodeEncodeError:  # a lone surrogate: libyaml encodes to UTF-8 first
        libyaml = None
    return [yamlout.emit(node, libyaml=False), libyaml]


def _check(document: Any) -> bool:
    """Assert yamlout's promise for ``document``; True when the two emitters differ on it."""
    pure, libyaml = _both(document)
    if pure != libyaml:
        assert yamlout.represent(document).libyaml_differs, (document, pure, libyaml)
    assert yamlout.dumps(document) == pure
    return pure != libyaml


def _openshift_files() -> List[Path]:
    published = sorted((REPO / "buildconfigs").rglob("*.yaml"))
    golden = sorted(p for p in (REPO / "tests" / "golden").rglob("*.yaml") if "expected" in p.parts)
    return published + golden


def test_libyaml_writes_every_published_and_golden_document_byte_for_byte() -> None:
    files = _openshift_files()
    assert len(files) > 100, "the published set and the golden files hold OpenShift documents"
    for path in files:
        text = path.read_text(encoding="utf-8")
        node = yamlout.represent(yaml.safe_load(text)).node
        assert yamlout.emit(node, libyaml=False) == text, path
        assert yamlout.emit(node, libyaml=True) == text, path


def test_the_published_set_is_written_by_libyaml() -> None:
    """None of the published documents holds what sends a document to the slow emitter."""
    for path in sorted((REPO / "buildconfigs").rglob("*.yaml")):
        assert not yamlout.represent(yaml.safe_load(path.read_text(encoding="utf-8"))).libyaml_differs, path


def test_the_installed_libyaml_is_a_verified_version() -> None:
    """Fails when PyYAML brings a libyaml these tests have not passed on: run them, and when
    they pass, add the version to yamlout.LIBYAML_VERIFIED (until then, output is right but
    written by the slow emitter)."""
    from yaml._yaml import get_version

    assert get_version() in yamlout.LIBYAML_VERIFIED


@pytest.mark.parametrize(
    ("document", "by_libyaml"),
    [
        ({"kind": "ConfigMap", "data": {"Dockerfile": "FROM x\nRUN y\n"}}, True),
        ({"kind": "ConfigMap", "data": {"note": "caf\u00e9 \U0001f600"}}, False),
        ({"kind": "ConfigMap", "data": {"Dockerfile": "FROM x\n\n"}, "z": 1}, False),
    ],
)
def test_dumps_takes_libyaml_only_where_it_writes_the_same(
    document: Dict[str, Any], by_libyaml: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    used: List[int] = []

    class Recording(yaml.CSafeDumper):
        """libyaml's dumper, noting each document it is asked to write."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            used.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(yaml, "CSafeDumper", Recording)
    assert yamlout.dumps(document) == yamlout.emit(yamlout.represent(document).node, libyaml=False)
    assert len(used) == (1 if by_libyaml else 0)


# Each difference the module docstring names, found by these tests on libyaml 0.2.5 and
# 0.2.6: the two emitters really differ on it, and yamlout sends it to the pure-Python one.
DOCUMENTED = {
    "outside the BMP": {"k": "a\U0001f600"},
    "lone surrogate": {"k": "a\ud800"},
    "carriage return in a key": {"a\rb": "v"},
    "|+ block before other keys": {"k": "x\n\n", "z": 1},
    "empty key": {"": "v"},
    "123-character key": {"a" * 123: "v"},
    "65 two-byte characters in a key": {"\u00e9" * 65: "v"},
    "43 three-byte characters in a key": {"\u65e5" * 43: "v"},
}


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_each_documented_difference_is_real_and_caught(name: str) -> None:
    assert _check(DOCUMENTED[name]), f"{name}: the emitters no longer differ; update yamlout's docstring"


# Pieces of strings that exercise the emitters' scalar analysis: indicators, YAML 1.1
# booleans and numbers, quotes, spaces and breaks at either end, every kind of line break,
# control and format characters, non-ASCII in 2, 3 and 4 UTF-8 bytes, long lines.
_PIECES = [
    "", " ", "a", "on", "no", "y", "N", "~", "null", "1", "0x1F", "1e3", "1:20", "2001-12-14",
    "#", "a #b", "a: b", "a:", "- a", "-", "---", "...", "? x", "'", '"', "\\", "%x", "@x",
    "`x", "|", ">", "!x", "&a", "*a", "{a}", "[a]", ",", "\t", "\x00", "\x07", "\x1b", "\x7f",
    "\x85", "\x9f", "\xa0", "\u2028", "\u2029", "\ufeff", "\ufffe", "\uffff", "\ud800",
    "\u00e9", "\u65e5\u672c", "\U0001f600", "\U0010ffff", "\ue000", "\r", "\r\n", "\n",
    "\n\n", " \n", "a \n", "x" * 130, "word " * 40,
]  # fmt: skip


def _wrapped(piece: str) -> Iterator[str]:
    yield from (piece, " " + piece, piece + " ", "a" + piece + "b", piece + "\n", piece + "\nx\n")
    yield from ("x\n" + piece, piece + "\n\n", "\n" + piece, "x\n" + piece + " \ny\n", piece * 3)


def _strings() -> List[str]:
    pairs = {a + b for a, b in itertools.product(_PIECES, repeat=2)}
    return sorted(pairs | {w for p in _PIECES for w in _wrapped(p)})


def _places(text: str) -> Iterator[Dict[Any, Any]]:
    """``text`` as a value, before another key, in a list, as a key, nested, last."""
    yield {"k": text}
    yield {"k": text, "z": 1}
    yield {"k": [text, "x"]}
    yield {text: "v"}
    yield {"k": {text: text}, "last": [text]}
    yield {"k": [{"a": text}]}


def test_adversarial_strings_in_every_place_are_written_as_pyyaml_writes_them() -> None:
    differing = [doc for text in _strings() for doc in _places(text) if _check(doc)]
    # the check above can fail: these strings do find where the emitters differ
    assert len(differing) > 100


def test_keys_of_every_length_are_written_as_pyyaml_writes_them() -> None:
    """Around both emitters' simple-key limits (122 characters, 128 bytes), in 1-, 2- and
    3-byte characters and with quotes and indicators that change how a key is written."""
    differing = [
        length
        for piece in ("a", "\u00e9", "\u65e5", "'", "a b", "a:b", "#", "\t")
        for length in range(1, 140)
        if _check({"k": {(piece * length)[:length]: 1}, "z": 2})
    ]
    assert differing, "the sweep crosses the emitters' key limits"


_any_text = st.text(st.characters(blacklist_categories=()), max_size=20)
_joined = st.builds("".join, st.lists(st.sampled_from(_PIECES), max_size=4))
_texts = _any_text | st.sampled_from(_PIECES) | _joined
_keys = _texts | st.text(st.sampled_from("a\u00e9\u65e5 '"), min_size=40, max_size=130)
_documents = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _texts,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_keys, children, max_size=4),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_keys, _documents, min_size=1, max_size=4))
def test_random_documents_are_written_as_pyyaml_writes_them(document: Dict[Any, Any]) -> None:
    _check(document)
