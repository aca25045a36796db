"""Version pins: mlcc's release prefix and pre-release rule on top of packaging's specifiers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from mlcc.errors import UsageError
from mlcc.versions import parse_pin, satisfies

releases = st.lists(st.integers(min_value=0, max_value=30), min_size=1, max_size=4)


@st.composite
def versions(draw: st.DrawFn) -> str:
    text = ".".join(map(str, draw(releases)))
    if draw(st.booleans()):
        text += draw(st.sampled_from(["a", "b", "rc"])) + str(draw(st.integers(0, 3)))
    if draw(st.integers(0, 4)) == 0:
        text += ".post" + str(draw(st.integers(0, 2)))
    if draw(st.integers(0, 4)) == 0:
        text += "+" + draw(st.sampled_from(["cu101", "828a6a3", "cpu", "local.1"]))
    return text


@st.composite
def specifiers(draw: st.DrawFn) -> str:
    clauses = []
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["==", "!=", "<=", ">=", "<", ">", "~="]))
        release = draw(releases)
        if op == "~=" and len(release) < 2:
            release = [*release, 0]
        value = ".".join(map(str, release))
        if op in ("==", "!=") and draw(st.booleans()):
            value += ".*"
        elif draw(st.integers(0, 3)) == 0 and op not in ("~=",):
            value += "a1"
        clauses.append(op + value)
    return ",".join(clauses)


@given(versions(), st.integers(min_value=1, max_value=4))
def test_release_prefix_pin_matches_its_own_version(version: str, parts: int) -> None:
    release = Version(version).release
    prefix = ".".join(map(str, release[:parts]))
    # PEP 440: a pin that names no pre-release does not select one
    assert parse_pin(prefix, flag="--cuda").matches(version) == (not Version(version).is_prerelease)


@given(versions(), specifiers())
@settings(max_examples=300, deadline=None)
def test_specifier_pin_takes_prereleases_only_when_it_names_one(version: str, spec: str) -> None:
    # PEP 440 ("pre-releases ... excluded unless explicitly requested"), stricter than
    # packaging 26's SpecifierSet.contains default
    named = any(
        op != "!=" and not value.endswith(".*") and Version(value).is_prerelease
        for op, value in (_split_clause(c) for c in spec.split(","))
    )
    expected = SpecifierSet(spec).contains(Version(version), prereleases=True) and (
        named or not Version(version).is_prerelease
    )
    assert parse_pin(spec, flag="--with pytorch").matches(version) == expected, (version, spec)


def _split_clause(clause: str) -> tuple[str, str]:
    index = next(i for i, c in enumerate(clause) if c.isdigit())
    return clause[:index], clause[index:]


def test_a_release_pin_does_not_select_its_prerelease() -> None:
    assert not parse_pin("1.1.0", flag="--with pytorch").matches("1.1.0a0+828a6a3")
    assert not parse_pin("1.1", flag="--with pytorch").matches("1.1.0a0+828a6a3")
    assert not parse_pin("==1.1.0", flag="--with pytorch").matches("1.1.0a0+828a6a3")
    assert parse_pin("1.1.0", flag="--with pytorch").matches("1.1.0")
    assert parse_pin("1.1.0a0+828a6a3", flag="--with pytorch").matches("1.1.0a0+828a6a3")
    assert parse_pin(">=1.1.0a0,<1.2", flag="--with pytorch").matches("1.1.0a0+828a6a3")
    assert not parse_pin(">=1.0,<1.2", flag="--with pytorch").matches("1.1.0a0+828a6a3")
    assert not parse_pin("!=1.1.0a0", flag="--with pytorch").matches("1.1.0b1")


@given(versions())
def test_prefix_pin_does_not_match_a_different_line(version: str) -> None:
    release = Version(version).release
    other = ".".join(map(str, (release[0] + 1, *release[1:])))
    assert not parse_pin(other, flag="--cuda").matches(version)


@given(versions())
def test_exact_and_specifier_pins_roundtrip_their_text(version: str) -> None:
    public = Version(version).public  # PEP 440: only == and != take a local version
    for text in (version, f">={public}", f"<{public},>=0", f"=={version}"):
        pin = parse_pin(text, flag="--with torch")
        again = parse_pin(pin.text, flag="--with torch")
        assert again == pin
        assert again.matches(version) == pin.matches(version)


@given(st.text(min_size=1, max_size=40))
@settings(max_examples=400)
def test_arbitrary_text_is_a_pin_or_a_usage_error(text: str) -> None:
    try:
        pin = parse_pin(text, flag="--cuda")
    except UsageError as error:
        assert "--cuda" in str(error)
        return
    for forbidden in ";|&$`'\"\n\\(){}":
        assert forbidden not in pin.text


def test_prefix_semantics_are_release_segments_not_strings() -> None:
    pin = parse_pin("10.1", flag="--cuda")
    assert pin.matches("10.1.243") and pin.matches("10.1.105")
    assert not pin.matches("10.10.0")
    assert parse_pin("10.1.*", flag="--cuda") == pin


def test_specifier_pin() -> None:
    pin = parse_pin(">=10.1, <11", flag="--cuda")
    assert pin.kind == "specifier"
    assert pin.matches("10.2.89") and not pin.matches("11.0.3") and not pin.matches("10.0.130")
    assert str(pin) == "<11,>=10.1"


def test_exact_pin_with_local_version() -> None:
    pin = parse_pin("1.1.0a0+828a6a3", flag="--with pytorch")
    assert pin.kind == "exact"
    assert pin.matches("1.1.0a0+828a6a3") and not pin.matches("1.1.0")


@pytest.mark.parametrize(
    "text",
    ["10.1; rm -rf /", "$(reboot)", "10.1`id`", "10.1 && true", "", "   ", "x" * 200, "10..1", ">=", "=="],
)
def test_malicious_or_malformed_pins_are_rejected(text: str) -> None:
    with pytest.raises(UsageError) as error:
        parse_pin(text, flag="--cuda")
    assert "--cuda" in str(error.value)


def test_satisfies_none_means_no_constraint() -> None:
    assert satisfies("1.0", None)
    assert satisfies("11.4.1", "<12") and not satisfies("11.4.1", "<11.2")


def test_prerelease_of_the_bound_is_not_below_it() -> None:
    # PEP 440: "<1.2" does not admit 1.2's own pre-releases
    assert not satisfies("1.2.0a0", ">=1.1.0a0,<1.2")
    assert satisfies("1.1.0a0+828a6a3", ">=1.1.0a0,<1.2")


@pytest.mark.parametrize("text", [">=0.post0+cu101", "<1.0+cpu", "~=1.1+cu101"])
def test_a_local_version_in_an_ordered_specifier_is_refused(text: str) -> None:
    # PEP 440 allows a local version label in == and != only
    with pytest.raises(UsageError, match="not a valid version specifier"):
        parse_pin(text, flag="--with pytorch")
    with pytest.raises(ValueError):
        satisfies("1.0", text)


def test_a_local_version_in_an_equality_specifier_is_kept() -> None:
    pin = parse_pin("==1.1.0a0+828a6a3", flag="--with pytorch")
    assert pin.matches("1.1.0a0+828a6a3") and not pin.matches("1.1.0a0")
