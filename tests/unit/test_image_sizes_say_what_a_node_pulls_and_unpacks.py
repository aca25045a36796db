"""An image's size as a node pays for it: compressed bytes pulled, uncompressed bytes
unpacked, and the layers that weigh most, read from a real engine's storage and archives."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from mlcc.api import request_for
from mlcc.app.build import FlavourTotal, totals_by_flavour
from mlcc.engines.base import BuildPolicy, BuildResult, job_for
from mlcc.history import History, Record
from mlcc.image.sizes import ImageSizes, LayerSize, combined, from_engine_history, from_manifest, human
from mlcc.kb import load
from mlcc.render import render
from mlcc.resolve import Resolver
from mlcc.resolve.pins import Pins

RANDOM_BYTES = 300_000  # random data: gzip cannot shrink it
ZERO_BYTES = 200_000  # zeros: gzip shrinks them to almost nothing


@pytest.fixture(scope="module")
def local_image(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A two-layer image built FROM scratch with podman (no network)."""
    if shutil.which("podman") is None:
        pytest.fail("podman is not installed: tests/run installs it (tests/system-tools.txt)")
    context = tmp_path_factory.mktemp("sizes")
    (context / "random").write_bytes(os.urandom(RANDOM_BYTES))
    (context / "zeros").write_bytes(b"\0" * ZERO_BYTES)
    (context / "Containerfile").write_text(
        "FROM scratch\nCOPY random /random\nCOPY zeros /zeros\nLABEL io.example=sizes\n"
    )
    tag = f"localhost/mlcc-sizes-test:{context.name}"
    subprocess.run(
        ["podman", "build", "--layers", "-q", "-t", tag, str(context)], check=True, capture_output=True
    )
    yield tag
    subprocess.run(["podman", "rmi", "-f", tag], capture_output=True)


def _history(tag: str) -> List[Dict[str, Any]]:
    out = subprocess.run(
        ["podman", "history", "--format", "json", tag], check=True, capture_output=True, text=True
    )
    loaded: List[Dict[str, Any]] = json.loads(out.stdout)
    return loaded


def test_a_local_image_shows_pulled_and_unpacked_bytes_per_layer(cli, local_image: str) -> None:  # type: ignore[no-untyped-def]
    shown = cli("inspect", f"local:{local_image}", "--backend", "podman", "--json")
    assert shown.code == 0, shown.err
    sizes = json.loads(shown.out)["sizes"]
    # unpacked: what podman's own history says, entry by entry
    assert sizes["uncompressed"] == sum(entry["size"] for entry in _history(local_image))
    assert sizes["layers"] == 2
    heaviest, lighter = sizes["largest_layers"]
    assert "/random" in heaviest["instruction"] and "/zeros" in lighter["instruction"]
    assert heaviest["compressed"] >= RANDOM_BYTES  # random data does not compress
    assert lighter["uncompressed"] >= ZERO_BYTES > 20 * lighter["compressed"]  # zeros do
    table = cli("inspect", f"local:{local_image}", "--backend", "podman")
    assert table.code == 0 and "compressed" in table.out and "uncompressed" in table.out


def test_a_docker_archive_gives_the_unpacked_sizes_only(cli, local_image: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    archive = tmp_path / "image.tar"
    subprocess.run(
        ["podman", "save", "--format", "docker-archive", "-o", str(archive), local_image],
        check=True,
        capture_output=True,
    )
    shown = cli("inspect", f"docker-archive:{archive}", "--json")
    assert shown.code == 0, shown.err
    sizes = json.loads(shown.out)["sizes"]
    # its layers are plain tar: their sizes are the unpacked ones, and nothing says what gzip would make
    assert sizes["compressed"] is None
    assert sizes["uncompressed"] == sum(entry["size"] for entry in _history(local_image))


def test_the_registry_and_the_engine_pair_their_layers_through_the_history() -> None:
    config = {
        "history": [
            {"created_by": "/bin/sh -c #(nop) COPY file:a in /a"},
            {"created_by": "LABEL x=y", "empty_layer": True},
            {"created_by": "RUN make"},
        ]
    }
    manifest = {"config": {"size": 10}, "layers": [{"size": 100}, {"size": 7}]}
    registry = from_manifest(manifest, config)
    assert registry.compressed == 117 and [layer.instruction for layer in registry.layers] == [
        "COPY file:a in /a",
        "RUN make",
    ]
    # the engine lists the newest entry first, one per history entry, 0 for the LABEL
    engine = from_engine_history(json.dumps([{"size": 9000}, {"size": 0}, {"size": 300}]))
    merged = combined(registry, engine)
    assert merged is not None and merged.uncompressed == 9300
    assert merged.layers == (LayerSize(100, 300, "COPY file:a in /a"), LayerSize(7, 9000, "RUN make"))
    assert merged.largest(1) == (LayerSize(7, 9000, "RUN make"),)


def test_a_history_that_does_not_match_its_layers_names_no_instruction() -> None:
    sizes = from_manifest(
        {"config": {"size": 0}, "layers": [{"size": 5}, {"size": 6}]}, {"history": [{"created_by": "RUN a"}]}
    )
    assert [layer.instruction for layer in sizes.layers] == ["", ""] and sizes.compressed == 11


@pytest.mark.parametrize(
    "output",
    [
        "not json",
        '{"size": -1}',
        '[{"size": "12a"}]',
        '[{"size": true}]',
        "[1, 2]",
        '[{"size": "1' + "0" * 30 + '"}]',
    ],
)
def test_engine_output_that_is_not_a_history_gives_no_sizes(output: str) -> None:
    assert from_engine_history(output) is None


def test_docker_gives_sizes_as_digits_and_they_count() -> None:
    lines = '{"CreatedBy": "RUN b", "Size": "2048"}\n{"CreatedBy": "FROM a", "Size": "1024"}\n'
    sizes = from_engine_history(lines)
    assert sizes is not None and sizes.uncompressed == 3072
    assert [layer.instruction for layer in sizes.layers] == ["FROM a", "RUN b"]


def test_an_instruction_from_an_image_cannot_drive_the_terminal(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    layout = tmp_path / "layout"
    (layout / "blobs" / "sha256").mkdir(parents=True)

    def blob(data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        (layout / "blobs" / "sha256" / digest).write_bytes(data)
        return f"sha256:{digest}"

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w"):
        pass
    layer = buffer.getvalue()
    config = json.dumps(
        {"architecture": "amd64", "os": "linux", "history": [{"created_by": "RUN \x1b]0;owned\x07 evil"}]}
    ).encode()
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": blob(config),
                "size": len(config),
            },
            "layers": [
                {
                    "mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": blob(layer),
                    "size": len(layer),
                }
            ],
        }
    ).encode()
    index = {
        "schemaVersion": 2,
        "manifests": [
            {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": blob(manifest),
                "size": len(manifest),
            }
        ],
    }
    (layout / "index.json").write_text(json.dumps(index))
    (layout / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    shown = cli("inspect", f"oci:{layout}")
    assert shown.code == 0, shown.err
    assert "\x1b" not in shown.out and "\x07" not in shown.out and "evil" in shown.out
    # a plain-tar layout layer is counted as unpacked bytes
    assert json.loads(cli("inspect", f"oci:{layout}", "--json").out)["sizes"]["uncompressed"] == len(layer)


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (None, "?"),
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.0 KiB"),
        (5 * 2**20, "5.0 MiB"),
        (3 * 2**40, "3072.0 GiB"),
    ],
)
def test_sizes_read_in_binary_units(size: int, text: str) -> None:
    assert human(size) == text


def test_the_largest_layers_rank_by_unpacked_bytes_and_keep_build_order_on_ties() -> None:
    sizes = ImageSizes(None, None, (LayerSize(9, 10, "a"), LayerSize(1, 30, "b"), LayerSize(99, 10, "c")))
    assert [layer.instruction for layer in sizes.largest()] == ["b", "a", "c"]


def test_the_report_shows_a_cells_flavour_and_sizes(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    history = History(tmp_path / "h.sqlite")
    history.record(
        Record(
            benchmark="ssd",
            variant="cuda10.1-cudnn7-ubi8-x86_64",
            content_digest="sha256:" + "a" * 64,
            backend="buildah",
            status="built",
            seconds=1.0,
            mlcc_version="0",
            size=2 * 2**30,
            uncompressed=5 * 2**30,
            flavour="devel",
        )
    )
    page = tmp_path / "report.html"
    assert cli("report", "--html", str(page), "--history", str(history.path)).code == 0
    assert '<div class="size">devel: 2.0 GiB pulled, 5.0 GiB unpacked</div>' in page.read_text()


def test_the_matrix_summary_sums_a_flavour_only_where_every_image_has_the_figure() -> None:
    kb = load()
    request = request_for(kb, "ssd", Pins(cuda="10.1"))
    rendered = render(Resolver(kb).resolve(request), request=request)
    job = job_for(rendered, BuildPolicy(registry="quay.io/acme"), "ssd")
    pushed = ImageSizes(3 * 2**30, 8 * 2**30)
    local = ImageSizes(None, 5 * 2**30)  # built, not pushed: nothing says what a node would pull
    results = [
        BuildResult(job, "built", "", 1.0, sizes=pushed),
        BuildResult(job, "skipped", "", 0.0, sizes=local),
        BuildResult(job, "failed", "", 0.0),
    ]
    # ssd's image is runtime (its label says so); the failed one weighs nothing and is not counted
    assert totals_by_flavour([job] * 3, results) == [FlavourTotal("runtime", 2, None, 13 * 2**30)]
    assert totals_by_flavour([job], results[:1]) == [FlavourTotal("runtime", 1, 3 * 2**30, 8 * 2**30)]
    devel_request = request_for(kb, "ssd", Pins(cuda="10.1", flavour="devel"))
    devel = job_for(render(Resolver(kb).resolve(devel_request)), BuildPolicy(registry="quay.io/acme"), "ssd")
    both = totals_by_flavour([devel, job], [results[0]._replace(job=devel), results[0]])
    assert both == [
        FlavourTotal("devel", 1, 3 * 2**30, 8 * 2**30),
        FlavourTotal("runtime", 1, 3 * 2**30, 8 * 2**30),
    ]
