"""YAML typing: every string written reads back as that string in YAML 1.1, 1.2 and Go."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
import yaml
from ruamel.yaml import YAML

from mlcc.render.openshift.yamlout import dumps

HOSTILE = [
    "1e3",
    "1234e56",
    "0o17",
    "0x1F",
    "0b101",
    "y",
    "Y",
    "n",
    "N",
    "yes",
    "Off",
    "ON",
    "~",
    "null",
    "",
    "1_000",
    "12:30",
    "2001-12-14",
    ".inf",
    "-.5",
    "+1",
    "0x1p3",
    "3.11",
    "1e-5",
    "x\u2028y",
    "a\u2029",
    "\ufeffbom",
    "line\nbreak",
    "two\nlines\u2028here\n",
    "ends\u2029\n",
    "tab\tx",
    "- x",
    "#c",
    "a: b",
    "'q'",
    '"d"',
    "\x07bell",
    "\u0085nel",
    "-_",
    "._",
    "+_",
    "-._",
]


def go_reads_as_non_string(plain: str) -> bool:
    """Go yaml.v2 resolve(): YAML 1.1 booleans and null, then strconv ints and floats."""
    if plain in {
        "y",
        "Y",
        "yes",
        "Yes",
        "YES",
        "n",
        "N",
        "no",
        "No",
        "NO",
        "true",
        "True",
        "TRUE",
        "false",
        "False",
        "FALSE",
        "on",
        "On",
        "ON",
        "off",
        "Off",
        "OFF",
        "~",
        "null",
        "Null",
        "NULL",
        "",
    }:
        return True
    if not plain or plain[0] not in "+-.0123456789":
        return False
    text = plain.replace("_", "")
    if re.fullmatch(r"[-+]?0[xX][0-9a-fA-F.]*[pP][-+]?[0-9]+", text):
        return True
    for parse in (lambda t: int(t, 0), float):
        try:
            parse(text)
            return True
        except ValueError:
            pass
    return False


def _yaml12(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(io.StringIO(text))


@pytest.mark.parametrize("value", HOSTILE)
def test_strings_read_back_as_the_same_string_everywhere(value: str) -> None:
    text = dumps({"metadata": {"namespace": value}, "list": [value]})
    assert yaml.safe_load(text) == {"metadata": {"namespace": value}, "list": [value]}
    assert _yaml12(text) == {"metadata": {"namespace": value}, "list": [value]}
    if "\n" in value:
        return
    scalar = text.splitlines()[1].split(":", 1)[1].strip()
    if scalar[:1] not in ("'", '"'):
        assert not go_reads_as_non_string(scalar), scalar
