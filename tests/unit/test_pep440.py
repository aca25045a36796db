"""mlcc.pep440.Version reads, prints and orders versions as packaging.version does.

Versions are generated from PEP 440's grammar with every spelling it allows (case,
separators, pre/post/dev synonyms, implicit numbers, epochs, locals, a leading v,
surrounding whitespace), then mangled, so both valid and invalid text is compared.
"""

from typing import Optional

from hypothesis import example, given, settings
from hypothesis import strategies as st
from packaging.version import InvalidVersion
from packaging.version import Version as Packaging

from mlcc.pep440 import Version

separator = st.sampled_from(["", ".", "-", "_"])
number = st.integers(min_value=0, max_value=120).map(str) | st.sampled_from(["00", "007", ""])


def _tagged(tags: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(separator, tags, separator, number).map("".join)


def _cased(text: str, upper: bool) -> str:
    return text.upper() if upper else text


versions = st.tuples(
    st.sampled_from(["", "v", "V", " ", "\t"]),
    st.sampled_from(["", "1!", "0!", "12!"]),
    st.lists(st.integers(min_value=0, max_value=300).map(str), min_size=1, max_size=5).map(".".join),
    st.none() | _tagged(st.sampled_from(["a", "alpha", "b", "beta", "c", "rc", "pre", "preview", "RC"])),
    st.none() | _tagged(st.sampled_from(["post", "rev", "r"])) | number.map(lambda n: f"-{n}"),
    st.none() | _tagged(st.sampled_from(["dev", "DEV"])),
    st.none() | st.from_regex(r"\A[a-z0-9]{1,4}([-_.][a-z0-9]{1,4}){0,3}\Z").map(lambda t: "+" + t),
    st.sampled_from(["", " ", "\n"]),
    st.booleans(),
).map(lambda p: _cased("".join(part or "" for part in p[:8]), p[8]))

mangled = st.tuples(
    versions, st.integers(min_value=0, max_value=30), st.sampled_from(list(".-_+!a1 x/"))
).map(lambda t: t[0][: t[1]] + t[2] + t[0][t[1] :])


def _packaging(text: str) -> Optional[Packaging]:
    try:
        return Packaging(text)
    except InvalidVersion:
        return None


def _ours(text: str) -> Optional[Version]:
    try:
        return Version(text)
    except ValueError:
        return None


@settings(max_examples=600, deadline=None)
@given(versions | mangled | st.text(alphabet="0123456789.!+-_abcdeloprstv ", max_size=14))
@example("1.0a.")
@example("1.0-1")
@example("1..0")
@example("1.0.")
@example("+local")
@example("1.0+")
@example("1.0+a..b")
@example("1!")
@example("v")
@example("1.0de1")  # near misses of each tag
@example("1.0alph1")
@example("1.0pos1")
@example("1.0re1")
@example("1.0previe1")
def test_the_same_versions_read_the_same_way(text: str) -> None:
    theirs, ours = _packaging(text), _ours(text)
    assert (ours is None) == (theirs is None), text
    if ours is None or theirs is None:
        return
    assert str(ours) == str(theirs)
    assert ours.public == theirs.public
    assert ours.local == theirs.local
    assert ours.release == theirs.release and ours.epoch == theirs.epoch
    assert ours.pre == theirs.pre and ours.post == theirs.post and ours.dev == theirs.dev
    assert ours.is_prerelease == theirs.is_prerelease
    assert ours.is_postrelease == theirs.is_postrelease
    assert Version(str(ours)) == ours  # the canonical text reads back as itself


@settings(max_examples=600, deadline=None)
@given(versions, versions)
@example("1.0", "1.0.0")
@example("1.0.dev1", "1.0a1")
@example("1.0+abc", "1.0+1")
@example("1.0+1.a", "1.0+1")
@example("1.0.post1", "1.0+local")
def test_the_same_versions_order_the_same_way(first: str, second: str) -> None:
    a, b = _packaging(first), _packaging(second)
    ours_a, ours_b = _ours(first), _ours(second)
    if a is None or b is None or ours_a is None or ours_b is None:
        assert (ours_a is None, ours_b is None) == (a is None, b is None)
        return
    assert (ours_a < ours_b, ours_a == ours_b, ours_a > ours_b) == (a < b, a == b, a > b)
    assert (ours_a <= ours_b, ours_a >= ours_b) == (a <= b, a >= b)
    assert (hash(ours_a) == hash(ours_b)) or ours_a != ours_b


def test_text_beyond_ascii_is_refused() -> None:
    """Pins are checked against an ASCII alphabet before they get here; the knowledge
    base's versions by its schemas' patterns. A lookalike digit is not a version here."""
    assert _ours("1.\u0661") is None and _ours("\u212a") is None
