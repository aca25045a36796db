"""The escaping the format writers share, checked against the real consumers: a POSIX
shell for double-quoted words, the JSON encoder for exec-form arrays."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import List, Tuple

from hypothesis import given, settings
from hypothesis import strategies as st

from mlcc.render.escaping import assignments, double_quoted, exec_form, literal_assignments

SH = shutil.which("dash") or shutil.which("sh") or "sh"
# Text a shell word can carry: no NUL (no C string can), anything else printable or not.
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40)


def _through_the_shell(words: List[str]) -> List[str]:
    """What a real shell makes of each word: printf prints each argument, NUL-terminated."""
    script = "printf '%s\\0' " + " ".join(words)
    out = subprocess.run([SH, "-c", script], capture_output=True, check=True).stdout
    return out.decode("utf-8", "surrogateescape").split("\0")[:-1]


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXT.filter(lambda t: "$" not in t), min_size=1, max_size=8))
def test_a_double_quoted_word_is_the_exact_text_to_a_shell(texts: List[str]) -> None:
    assert _through_the_shell([double_quoted(t) for t in texts]) == texts


def test_a_double_quoted_word_keeps_variables_live() -> None:
    # ${PATH} in ENV PATH="/opt/bin:${PATH}" must expand: that is why $ is left alone
    assert _through_the_shell([double_quoted("${HOME}x")]) != ["${HOME}x"]
    assert double_quoted("/opt/bin:${PATH}") == '"/opt/bin:${PATH}"'


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=8))
def test_a_literal_assignment_is_the_exact_text_even_with_dollars(texts: List[str]) -> None:
    words = [literal_assignments([("N", t)], "").split("=", 1)[1] for t in texts]
    assert _through_the_shell(words) == texts


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(TEXT, TEXT), max_size=6))
def test_assignments_quote_each_value_as_double_quoted_does(pairs: List[Tuple[str, str]]) -> None:
    """The one-scan way for values that need no escaping gives what a call per value does."""
    assert assignments(pairs, " \\\n    ") == " \\\n    ".join(f"{n}={double_quoted(v)}" for n, v in pairs)


def test_assignments_are_joined_by_the_separator() -> None:
    pairs = [("A", "1"), ("B", 'say "hi"')]
    assert assignments(pairs, " \\\n    ") == 'A="1" \\\n    B="say \\"hi\\""'
    assert literal_assignments([("T", "cost $5")], " ") == 'T="cost \\$5"'


@given(st.lists(TEXT, max_size=6))
def test_exec_form_is_the_json_array_docker_parses(words: List[str]) -> None:
    text = exec_form(words)
    assert text == json.dumps(words, ensure_ascii=False)
    assert json.loads(text) == words
