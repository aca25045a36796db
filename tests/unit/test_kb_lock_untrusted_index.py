"""`mlcc kb lock` treats the package index as outside input: nothing it serves runs here,
meaningless hashes are refused, its dependency chains are bounded, every read has a time
and a size limit, and credentials in an index URL never reach an error, a cache or a lock.

Every index here is a real HTTP server on 127.0.0.1 (tests/unit/simple_index.py or a
small handler of its own for answers no honest index gives)."""

from __future__ import annotations

import base64
import concurrent.futures
import functools
import hashlib
import http.server
import io
import json
import sys
import tarfile
import threading
import time
from pathlib import Path
from typing import Callable, Dict, Iterator, List

import pytest

from mlcc.errors import FactError, IndexUnreachable
from mlcc.kb.index import MAX_PAGE_BYTES, IndexClient, read_url, without_credentials
from mlcc.kb.pip_locks import LockTarget, PipInstall
from mlcc.kbtools import lock as kb_lock
from mlcc.kbtools.lock import EMPTY, STATIC_SOURCE, Locker, Unlockable

from .simple_index import IndexServer, serve
from .test_pip_locks import _publish, _wheel

TARGET = LockTarget(f"{sys.version_info[0]}.{sys.version_info[1]}", "x86_64", "2.17")


def _locker(url: str, **kwargs: object) -> Locker:
    return Locker(IndexClient(url, cache=""), metadata_cache="", **kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- no code runs


def _sdist_with(files: Dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"mlccrun-1.0/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _publish_mlccrun(index: IndexServer, pkg_info: str, marker: Path) -> None:
    # a setup.py that leaves a mark when anything runs it, as a hostile one would do worse
    setup_py = (
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('setup.py ran')\n"
        "from setuptools import setup\n"
        "setup(name='mlccrun', version='1.0', install_requires=['mlccdep>=1.0'])\n"
    )
    sdist = _sdist_with({"setup.py": setup_py, "PKG-INFO": pkg_info})
    index.add("/files/mlccrun-1.0.tar.gz", sdist, "application/octet-stream")
    digest = hashlib.sha256(sdist).hexdigest()
    link = f'<a href="/files/mlccrun-1.0.tar.gz#sha256={digest}">mlccrun-1.0.tar.gz</a>'
    index.add("/simple/mlccrun/", f"<html><body>{link}</body></html>".encode())


def test_an_sdist_only_pin_never_runs_its_setup_py_and_is_refused_naming_what_to_do(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    for index in serve():
        _publish(index, {"mlccdep-1.0-py3-none-any.whl": _wheel("mlccdep", "1.0", [])})
        _publish_mlccrun(index, "Metadata-Version: 2.1\nName: mlccrun\nVersion: 1.0\n", marker)
        locker = _locker(index.url + "/simple/")
        with pytest.raises(Unlockable) as caught:
            locker.resolve(TARGET, PipInstall(("mlccrun==1.0",)), EMPTY)
        said = str(caught.value)
        assert said.startswith("mlccrun-1.0.tar.gz: its dependencies are known only by running its setup.py")
        assert "mlcc runs nothing from an index" in said and "sdist_requires" in said
        assert '{name: mlccrun, version: "1.0"' in said and "recipes/tools.yaml" in said
    assert not marker.exists(), "the index's setup.py ran on this machine"


def test_an_sdist_with_static_metadata_is_locked_from_its_pkg_info_without_running_it(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    pkg_info = "Metadata-Version: 2.2\nName: mlccrun\nVersion: 1.0\nRequires-Dist: mlccdep>=1.0\n"
    for index in serve():
        _publish(index, {"mlccdep-1.0-py3-none-any.whl": _wheel("mlccdep", "1.0", [])})
        _publish_mlccrun(index, pkg_info, marker)
        packages, _ = _locker(index.url + "/simple/").resolve(TARGET, PipInstall(("mlccrun==1.0",)), EMPTY)
        by_name = {p["name"]: p for p in packages}
        assert set(by_name) == {"mlccrun", "mlccdep"}
        assert by_name["mlccrun"]["dependencies"] == ["mlccdep>=1.0"]
        assert by_name["mlccrun"]["dependencies_from"] == STATIC_SOURCE
    assert not marker.exists()


def test_dynamic_requires_dist_in_pkg_info_is_not_taken_as_static(tmp_path: Path) -> None:
    pkg_info = "Metadata-Version: 2.2\nName: mlccrun\nVersion: 1.0\nDynamic: Requires-Dist\n"
    for index in serve():
        _publish_mlccrun(index, pkg_info, tmp_path / "ran")
        with pytest.raises(Unlockable, match=r"known only by running its setup\.py"):
            _locker(index.url + "/simple/").resolve(TARGET, PipInstall(("mlccrun==1.0",)), EMPTY)


# --------------------------------------------------------------------------- hashes


@pytest.mark.parametrize(
    "digest, said",
    [
        ("0" * 64, "a placeholder"),
        ("f" * 64, "a placeholder"),
        ("ab" * 16, "not 64 lower-case hexadecimal digits"),
        ("g" * 64, "not 64 lower-case hexadecimal digits"),
    ],
)
def test_a_meaningless_sha256_from_the_index_is_refused_not_written(digest: str, said: str) -> None:
    for index in serve():
        wheel = _wheel("mlccdep", "1.0", [])
        index.add("/files/mlccdep-1.0-py3-none-any.whl", wheel, "application/octet-stream")
        link = (
            f'<a href="/files/mlccdep-1.0-py3-none-any.whl#sha256={digest}">mlccdep-1.0-py3-none-any.whl</a>'
        )
        index.add("/simple/mlccdep/", f"<html><body>{link}</body></html>".encode())
        locker = _locker(index.url + "/simple/")
        record, _ = locker.lock_install(TARGET, PipInstall(("mlccdep==1.0",)), EMPTY, None)
        assert "packages" not in record and said in record["unlocked"]
        assert "mlccdep-1.0-py3-none-any.whl the sha256" in record["unlocked"]
        assert digest not in json.dumps(locker.documents())


# --------------------------------------------------------------------------- bounds


def test_a_dependency_chain_longer_than_the_bound_stops_the_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kb_lock, "MAX_CHAIN_LINKS", 4)
    wheels = {
        f"mlccc{n}-1.0-py3-none-any.whl": _wheel(f"mlccc{n}", "1.0", [f"mlccc{n + 1}"]) for n in range(8)
    }
    for index in serve():
        _publish(index, wheels)
        with pytest.raises(FactError) as caught:
            _locker(index.url + "/simple/").resolve(TARGET, PipInstall(("mlccc0",)), EMPTY)
        message = str(caught.value)
        assert (
            "pip install mlccc0: the index's metadata makes a dependency chain longer than 4 links" in message
        )
        assert "mlccc0 1.0 -> mlccc1 1.0" in message and "nothing written" in message
        assert "mlccc6" not in "".join(index.hits), "the chain was followed past the bound"


def test_an_install_asking_for_more_packages_than_the_bound_stops_the_lock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(kb_lock, "MAX_PACKAGES", 3)
    wheels = {"mlccw-1.0-py3-none-any.whl": _wheel("mlccw", "1.0", [f"mlccx{n}" for n in range(6)])}
    wheels.update({f"mlccx{n}-1.0-py3-none-any.whl": _wheel(f"mlccx{n}", "1.0", []) for n in range(6)})
    for index in serve():
        _publish(index, wheels)
        with pytest.raises(FactError, match="asks for more than 3 packages"):
            _locker(index.url + "/simple/").resolve(TARGET, PipInstall(("mlccw",)), EMPTY)


def test_a_final_release_is_taken_before_a_newer_pre_release_as_pip_does() -> None:
    wheels = {
        "mlccdep-1.0-py3-none-any.whl": _wheel("mlccdep", "1.0", []),
        "mlccdep-2.0rc1-py3-none-any.whl": _wheel("mlccdep", "2.0rc1", []),
        "mlccpre-1.0rc1-py3-none-any.whl": _wheel("mlccpre", "1.0rc1", []),
    }
    for index in serve():
        _publish(index, wheels)
        locker = _locker(index.url + "/simple/")

        def version(requirement: str, locker: Locker = locker) -> str:
            packages, _ = locker.resolve(TARGET, PipInstall((requirement,)), EMPTY)
            return str(packages[0]["version"])

        assert version("mlccdep>=0.5") == "1.0"
        assert version("mlccdep>=2.0rc1") == "2.0rc1"  # the specifier names a pre-release
        assert version("mlccdep==2.0rc1") == "2.0rc1"
        assert version("mlccpre") == "1.0rc1"  # no final release at all


# --------------------------------------------------------------------------- network limits


def _server(handler: Callable[[http.server.BaseHTTPRequestHandler], None]) -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            try:
                handler(self)
            except OSError:
                return  # the client stopped reading, as it should

        def log_message(self, *args: object) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple/"
    finally:
        server.shutdown()
        server.server_close()


def _drip(request: http.server.BaseHTTPRequestHandler) -> None:
    request.send_response(200)
    request.send_header("Content-Type", "text/html")
    request.send_header("Content-Length", "100000")
    request.end_headers()
    for _ in range(100000):  # a byte every 50 ms: no single read ever times out
        request.wfile.write(b" ")
        request.wfile.flush()
        time.sleep(0.05)


def _drip_headers(request: http.server.BaseHTTPRequestHandler) -> None:
    request.wfile.write(b"HTTP/1.0 200 OK\r\nX-Slow: ")
    for _ in range(100000):  # one header, a byte every 50 ms: the status line came at once
        request.wfile.write(b"a")
        request.wfile.flush()
        time.sleep(0.05)


def _redirect_to(target: str) -> Callable[[http.server.BaseHTTPRequestHandler], None]:
    def handler(request: http.server.BaseHTTPRequestHandler) -> None:
        request.send_response(302)
        request.send_header("Location", target)
        request.end_headers()

    return handler


def _huge(declared: bool) -> Callable[[http.server.BaseHTTPRequestHandler], None]:
    def handler(request: http.server.BaseHTTPRequestHandler) -> None:
        request.send_response(200)
        request.send_header("Content-Type", "text/html")
        if declared:
            request.send_header("Content-Length", str(2 * 1024**3))
        request.end_headers()  # HTTP/1.0 without a length: the body ends when the server closes
        chunk = b"<a>" * (1024 * 1024 // 3)
        for _ in range(2 * 1024):
            request.wfile.write(chunk)

    return handler


def _within(seconds: float, call: Callable[[], object]) -> BaseException:
    """The exception ``call`` raises, which it must do within ``seconds`` (never hang)."""
    pool = concurrent.futures.ThreadPoolExecutor(1)
    future = pool.submit(call)
    try:
        error = future.exception(timeout=seconds)
    except concurrent.futures.TimeoutError:
        pytest.fail(f"the read was still going after {seconds} s")
    finally:
        pool.shutdown(wait=False)
    assert error is not None, "the read succeeded"
    return error


@pytest.mark.parametrize("handler", [_drip, _drip_headers], ids=["dripping-body", "dripping-headers"])
def test_a_dripping_index_page_is_cut_off_at_the_time_limit(
    handler: Callable[[http.server.BaseHTTPRequestHandler], None],
) -> None:
    for url in _server(handler):
        client = IndexClient(url, cache="", timeout=1.0)
        started = time.monotonic()
        error = _within(20, functools.partial(client.project, "mlccdep"))
        assert isinstance(error, IndexUnreachable) and "took longer than 1 s" in str(error)
        assert time.monotonic() - started < 5


@pytest.mark.parametrize("declared", [True, False], ids=["content-length-2GiB", "no-length"])
def test_a_2_gib_index_page_is_refused_at_the_size_limit(declared: bool) -> None:
    for url in _server(_huge(declared)):
        client = IndexClient(url, cache="", timeout=30.0)
        error = _within(60, functools.partial(client.project, "mlccdep"))
        assert isinstance(error, IndexUnreachable)
        assert f"{MAX_PAGE_BYTES} bytes" in str(error)


def test_a_file_url_on_an_index_page_is_never_opened(tmp_path: Path) -> None:
    wheel = _wheel("mlccdep", "1.0", [])
    local = tmp_path / "mlccdep-1.0-py3-none-any.whl"  # named as the page says: a local file
    local.write_bytes(wheel)
    with pytest.raises(IndexUnreachable, match="only http and https URLs are read"):
        read_url(local.as_uri(), timeout=5, limit=1024)
    for index in serve():
        digest = hashlib.sha256(wheel).hexdigest()
        link = f'<a href="{local.as_uri()}#sha256={digest}">mlccdep-1.0-py3-none-any.whl</a>'
        index.add("/simple/mlccdep/", f"<html><body>{link}</body></html>".encode())
        with pytest.raises(IndexUnreachable, match="only http and https"):
            _locker(index.url + "/simple/").resolve(TARGET, PipInstall(("mlccdep==1.0",)), EMPTY)


@pytest.mark.parametrize("scheme", ["file", "ftp"])
def test_a_redirect_off_http_is_never_followed(tmp_path: Path, scheme: str) -> None:
    local = tmp_path / "page.html"
    local.write_text('<a href="mlccdep-1.0-py3-none-any.whl#sha256=' + "a" * 64 + '">x</a>')
    target = local.as_uri() if scheme == "file" else "ftp://127.0.0.1:9/simple/mlccdep/"
    for url in _server(_redirect_to(target)):
        with pytest.raises(IndexUnreachable) as caught:
            IndexClient(url, cache="", timeout=5).project("mlccdep")
        # urllib refuses to redirect to file:, and ftp: has no handler here
        refused = "HTTP 302" if scheme == "file" else "unknown url type: ftp"
        assert refused in str(caught.value)


# --------------------------------------------------------------------------- credentials


def test_credentials_in_an_index_url_are_sent_to_its_host_and_never_written_or_shown() -> None:
    basic = "Basic " + base64.b64encode(b"mlcc-user:s3cret-token").decode()
    for index in serve(authorization=basic):
        _publish(index, {"mlccdep-1.0-py3-none-any.whl": _wheel("mlccdep", "1.0", [])})
        netloc = index.url.split("//", 1)[1]
        url = f"http://mlcc-user:s3cret-token@{netloc}/simple/"
        client = IndexClient(url, cache="")
        assert client.index_url == index.url + "/simple/"
        locker = Locker(client, metadata_cache="")
        record, _ = locker.lock_install(TARGET, PipInstall(("mlccdep==1.0",), index_url=url), EMPTY, None)
        assert [p["name"] for p in record["packages"]] == ["mlccdep"]
        assert set(index.authorizations) == {basic}  # every read carried them
        locker.records[TARGET] = {"x": record}
        written = json.dumps(locker.documents()) + json.dumps(record)
        assert "s3cret" not in written and "mlcc-user" not in written
        # a wrong token: the error names the index without it
        wrong = IndexClient(f"http://mlcc-user:wr0ng@{netloc}/simple/", cache="")
        with pytest.raises(IndexUnreachable) as caught:
            wrong.project("mlccdep")
        assert "HTTP 401" in str(caught.value) and "wr0ng" not in str(caught.value)
        assert "mlcc-user" not in str(caught.value)


def test_credentials_never_appear_in_an_unreachable_index_error() -> None:
    client = IndexClient("http://mlcc-user:s3cret-token@127.0.0.1:9/simple/", cache="", timeout=5)
    with pytest.raises(IndexUnreachable) as caught:
        client.project("mlccdep")
    shown = str(caught.value)
    assert "127.0.0.1:9/simple/mlccdep/" in shown
    assert "s3cret" not in shown and "mlcc-user" not in shown


def test_credentials_are_cut_from_every_url_form() -> None:
    cases: List[str] = [
        "https://user:token@mirror.example/simple/",
        "https://token@mirror.example/simple/",
        "https://user:p%40ss@mirror.example:8443/simple/",
    ]
    for case in cases:
        clean = without_credentials(case)
        assert "@" not in clean and "token" not in clean and "p%40ss" not in clean
        assert clean.startswith("https://mirror.example")
    assert without_credentials("https://mirror.example/simple/") == "https://mirror.example/simple/"
