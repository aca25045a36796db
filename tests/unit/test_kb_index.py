"""The package index client against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest

from mlcc.errors import IndexUnreachable
from mlcc.kb.index import IndexClient, default_index_url

from .simple_index import IndexServer, serve

JSON = "application/vnd.pypi.simple.v1+json"


@pytest.fixture
def index() -> Iterator[IndexServer]:
    yield from serve()


def test_reads_pep691_json_with_hashes_python_and_yanked(index: IndexServer, tmp_path: Path) -> None:
    page = {
        "meta": {"api-version": "1.0"},
        "name": "demo-pkg",
        "files": [
            {
                "filename": "demo_pkg-1.0-py3-none-any.whl",
                "url": "../../files/demo_pkg-1.0-py3-none-any.whl",
                "hashes": {"sha256": "ab" * 32},
                "requires-python": ">=3.7",
            },
            {
                "filename": "demo-pkg-0.9.tar.gz",
                "url": "/files/demo-pkg-0.9.tar.gz",
                "hashes": {},
                "yanked": "bad",
            },
        ],
    }
    index.add("/simple/demo-pkg/", json.dumps(page).encode(), JSON)
    client = IndexClient(index.url + "/simple", cache=str(tmp_path))
    result = client.project("Demo_Pkg")  # PEP 503 normalisation
    assert result.found
    wheel, sdist = result.files
    assert wheel.url == index.url + "/files/demo_pkg-1.0-py3-none-any.whl"
    assert wheel.requires_python == ">=3.7" and not wheel.yanked
    assert wheel.hash("sha256") == "ab" * 32
    assert sdist.yanked and sdist.requires_python is None


def test_reads_pep503_html_and_find_links_pages(index: IndexServer, tmp_path: Path) -> None:
    html = (
        '<html><body><a href="torch-1.1.0-cp36-cp36m-linux_x86_64.whl#sha256=' + "cd" * 32 + '">x</a>'
        '<a href="sub/torch-1.1.0-cp37-cp37m-linux_x86_64.whl" data-requires-python="&gt;=3.7">y</a>'
        "</body></html>"
    )
    url = index.add("/whl/cu100/torch_stable.html", html.encode())
    files = IndexClient(cache=str(tmp_path)).page(url).files
    assert [f.filename for f in files] == [
        "torch-1.1.0-cp36-cp36m-linux_x86_64.whl",
        "torch-1.1.0-cp37-cp37m-linux_x86_64.whl",
    ]
    assert files[0].hash() == "cd" * 32
    assert files[1].url == index.url + "/whl/cu100/sub/torch-1.1.0-cp37-cp37m-linux_x86_64.whl"
    assert files[1].requires_python == ">=3.7"


def test_a_missing_project_is_an_answer_not_an_error(index: IndexServer, tmp_path: Path) -> None:
    page = IndexClient(index.url + "/simple/", cache=str(tmp_path)).project("no-such-thing")
    assert not page.found and page.files == ()


def test_answers_are_cached_on_disk_until_the_ttl_or_a_refresh(index: IndexServer, tmp_path: Path) -> None:
    index.add("/simple/demo/", json.dumps({"files": []}).encode(), JSON)
    first = IndexClient(index.url + "/simple/", cache=str(tmp_path))
    first.project("demo")
    assert first.requests == 1
    second = IndexClient(index.url + "/simple/", cache=str(tmp_path))
    second.project("demo")
    assert second.requests == 0 and index.hits.count("/simple/demo/") == 1
    expired = IndexClient(index.url + "/simple/", cache=str(tmp_path), ttl=0)
    expired.project("demo")
    refreshed = IndexClient(index.url + "/simple/", cache=str(tmp_path), refresh=True)
    refreshed.project("demo")
    assert expired.requests == refreshed.requests == 1
    assert index.hits.count("/simple/demo/") == 3


def test_an_unreachable_index_is_a_clear_error(tmp_path: Path) -> None:
    server = IndexServer()
    url = server.url
    server.close()
    with pytest.raises(IndexUnreachable) as caught:
        IndexClient(url + "/simple/", cache=str(tmp_path), timeout=5).project("demo")
    assert url in str(caught.value) and "PIP_INDEX_URL" in str(caught.value)


def test_pip_index_url_names_the_mirror(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", "https://mirror.example/simple")
    assert default_index_url() == "https://mirror.example/simple"
    assert IndexClient(cache="").index_url == "https://mirror.example/simple/"
    monkeypatch.delenv("PIP_INDEX_URL")
    assert default_index_url() == "https://pypi.org/simple/"
