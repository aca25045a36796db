"""PEP 691 pages with fields of the wrong type are clear errors naming the field, never a
traceback further on (a list as ``requires-python`` reached the version parser), and a
page that is not JSON is not read as a project without files. Served by a real index on
loopback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlcc.errors import IndexUnreachable
from mlcc.kb.index import IndexClient

from .simple_index import IndexServer, serve

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
GOOD = {"filename": "demo-1.0-py3-none-any.whl", "url": "/f/demo-1.0-py3-none-any.whl", "hashes": {}}


@pytest.fixture
def index() -> Iterator[IndexServer]:
    yield from serve()


def _read(index: IndexServer, tmp_path: Path, body: bytes) -> Any:
    index.add("/simple/demo/", body, JSON_TYPE)
    return IndexClient(index.url + "/simple/", cache=str(tmp_path / "cache")).project("demo")


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({**GOOD, "requires-python": [">=3"]}, "files[0].requires-python"),
        ({**GOOD, "requires-python": 3.7}, "files[0].requires-python"),
        ({**GOOD, "filename": {"a": 1}}, "files[0].filename"),
        ({**GOOD, "filename": "../../etc/passwd"}, "files[0].filename is a path"),
        ({**GOOD, "filename": "demo\x1b[2J.whl"}, "files[0].filename"),
        ({**GOOD, "url": 5}, "files[0].url"),
        ({"filename": GOOD["filename"]}, "files[0].url"),
        ({**GOOD, "hashes": ["sha256", "ab"]}, "files[0].hashes"),
        ({**GOOD, "hashes": {"sha256": {"x": 1}}}, "files[0].hashes"),
        ({**GOOD, "yanked": {"reason": "x"}}, "files[0].yanked"),
        ("a string", "files[0] is not an object"),
    ],
)
def test_an_odd_pep691_field_is_an_error_naming_it(
    index: IndexServer, tmp_path: Path, entry: Any, field: str
) -> None:
    with pytest.raises(IndexUnreachable, match=field.replace("[", r"\[").replace("]", r"\]")):
        _read(index, tmp_path, json.dumps({"files": [entry]}).encode())


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100000 + b"]" * 100000,
        b"<html>not json</html>",
        b'{"files": {"a": 1}}',
        b"[]",
        b'{"name": "x"}',
    ],
    ids=["deep", "not-json", "files-object", "list", "no-files"],
)
def test_a_page_that_is_not_pep691_is_an_error_not_an_empty_project(
    index: IndexServer, tmp_path: Path, body: bytes
) -> None:
    with pytest.raises(IndexUnreachable, match="PEP 691 page"):
        _read(index, tmp_path, body)


def test_the_good_fields_still_read(index: IndexServer, tmp_path: Path) -> None:
    page = _read(
        index,
        tmp_path,
        json.dumps({"files": [{**GOOD, "yanked": "broken", "requires-python": ">=3.8"}]}).encode(),
    )
    [found] = page.files
    assert (
        found.yanked
        and found.requires_python == ">=3.8"
        and found.url.endswith("/f/demo-1.0-py3-none-any.whl")
    )


def test_a_damaged_cache_entry_is_fetched_again(index: IndexServer, tmp_path: Path) -> None:
    _read(index, tmp_path, json.dumps({"files": [GOOD]}).encode())
    [cached] = (tmp_path / "cache").iterdir()
    data = json.loads(cached.read_text())
    data["files"] = [{"no": "filename"}]
    cached.write_text(json.dumps(data))
    client = IndexClient(index.url + "/simple/", cache=str(tmp_path / "cache"))
    assert [f.filename for f in client.project("demo").files] == [GOOD["filename"]] and client.requests == 1


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=15,
)
FIELDS = st.sampled_from(["filename", "url", "hashes", "requires-python", "yanked", "core-metadata"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    page=st.fixed_dictionaries({"files": st.lists(st.dictionaries(FIELDS, JSON, max_size=6), max_size=3)})
    | JSON
)
def test_any_json_page_reads_or_is_a_clear_error(index: IndexServer, tmp_path: Path, page: Any) -> None:
    index.add("/simple/demo/", json.dumps(page).encode(), JSON_TYPE)
    client = IndexClient(index.url + "/simple/", cache="")
    try:
        found = client.project("demo")
    except IndexUnreachable as error:
        assert "PEP 691 page" in str(error)
        return
    for file in found.files:
        assert isinstance(file.filename, str) and "/" not in file.filename
        assert file.requires_python is None or isinstance(file.requires_python, str)
