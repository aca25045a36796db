"""mlcc.lazy_pattern.LazyPattern compiles when first used and answers as re does."""

import re

from hypothesis import given
from hypothesis import strategies as st

from mlcc.lazy_pattern import LazyPattern

PATTERN = r"(?P<word>[a-z]+)-([0-9]{1,3})"


def test_nothing_is_compiled_before_the_first_use() -> None:
    lazy = LazyPattern(PATTERN)
    assert lazy._compiled is None
    assert lazy.match("ab-1") is not None
    assert lazy.compiled is re.compile(PATTERN)  # re's own cache: the same object


@given(st.text(alphabet="ab-19 x", max_size=12))
def test_it_answers_as_the_compiled_pattern(text: str) -> None:
    lazy, eager = LazyPattern(PATTERN, re.IGNORECASE), re.compile(PATTERN, re.IGNORECASE)
    for method in ("match", "fullmatch", "search"):
        got, want = getattr(lazy, method)(text), getattr(eager, method)(text)
        assert (got and got.span()) == (want and want.span())
    assert lazy.sub("<\\g<word>>", text, count=1) == eager.sub("<\\g<word>>", text, count=1)
    assert lazy.sub(lambda m: m.group(2), text) == eager.sub(lambda m: m.group(2), text)


def test_every_lazy_pattern_in_mlcc_compiles() -> None:
    """The cost of laziness: a broken pattern would no longer fail at import."""
    import importlib
    import pkgutil

    import mlcc

    found = []
    for module in pkgutil.walk_packages(mlcc.__path__, "mlcc."):
        if module.name == "mlcc.__main__":
            continue
        for value in vars(importlib.import_module(module.name)).values():
            if isinstance(value, LazyPattern):
                found.append(value.compiled)
    assert len(found) >= 15
