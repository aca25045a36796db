"""Every size an engine or a registry reports is range-checked: a value beyond SQLite's
integer (2^63), a negative one, a missing one or an empty answer is unknown -- never 0, never
a crash of the history write after a build that succeeded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlcc.errors import RegistryError
from mlcc.history import History, Record
from mlcc.image.registry import Manifest
from mlcc.image.sizes import from_engine_history, from_manifest

DIGEST = "sha256:" + "a" * 64


@pytest.mark.parametrize("size", [2**63, 2**64 + 5, -1, None, "x", 1.5, True, "9" * 30], ids=str)
def test_an_engine_layer_size_out_of_range_makes_the_sizes_unknown(size: object) -> None:
    entries = [{"size": 100}, {"size": size}] if size is not None else [{"size": 100}, {}]
    assert from_engine_history(json.dumps(entries)) is None


def test_an_empty_engine_answer_is_unknown_not_zero_bytes() -> None:
    assert from_engine_history("") is None
    assert from_engine_history("   \n") is None
    assert from_engine_history("[]") is None


def test_engine_totals_beyond_sqlites_integer_are_unknown() -> None:
    sizes = from_engine_history(json.dumps([{"size": 2**62}, {"size": 2**62}, {"size": 2**62}]))
    assert sizes is None or sizes.uncompressed is None


def test_a_manifest_layer_without_a_size_is_unknown_not_zero() -> None:
    sizes = from_manifest({"config": {"size": 10}, "layers": [{"size": 5}, {}]}, {})
    assert sizes.compressed is None
    assert [layer.compressed for layer in sizes.layers] == [5, None]


def test_a_negative_config_size_is_refused() -> None:
    body = json.dumps(
        {
            "schemaVersion": 2,
            "config": {
                "digest": DIGEST,
                "size": -10,
                "mediaType": "application/vnd.oci.image.config.v1+json",
            },
            "layers": [],
        }
    ).encode()
    manifest = Manifest("application/vnd.oci.image.manifest.v1+json", DIGEST, body)
    with pytest.raises(RegistryError, match="size"):
        manifest.config_digest()


def test_the_history_keeps_a_build_whose_size_is_out_of_range(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite")
    record = Record(
        benchmark="maskrcnn",
        variant="v",
        content_digest="d",
        backend="podman",
        status="built",
        seconds=1.0,
        size=2**64,
        uncompressed=2**70,
    )
    history.record(record)
    [row] = history.rows()
    assert row["status"] == "built" and row["size"] is None and row["uncompressed"] is None


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "size": st.one_of(
                    st.integers(min_value=-(2**70), max_value=2**70), st.none(), st.text(max_size=25)
                )
            }
        ),
        max_size=6,
    )
)
def test_any_engine_answer_gives_known_bounded_sizes_or_unknown(entries: list) -> None:  # type: ignore[type-arg]
    sizes = from_engine_history(json.dumps(entries))
    if sizes is None:
        return
    assert entries, "an empty answer is unknown"
    assert sizes.uncompressed is None or 0 <= sizes.uncompressed <= 2**63 - 1
    for layer in sizes.layers:
        assert layer.uncompressed is not None and 0 < layer.uncompressed <= 2**63 - 1


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.one_of(st.integers(min_value=-(2**70), max_value=2**70), st.none()), max_size=5),
    st.one_of(st.integers(min_value=-(2**70), max_value=2**70), st.none()),
)
def test_any_manifest_gives_known_bounded_sizes_or_unknown(layers: list, config: object) -> None:  # type: ignore[type-arg]
    manifest = {
        "config": {} if config is None else {"size": config},
        "layers": [{} if s is None else {"size": s} for s in layers],
    }
    sizes = from_manifest(manifest, {})
    valid = all(s is not None and 0 <= s < 2**63 for s in [*layers, config])
    if valid and 0 < sum(layers) + config < 2**63:  # type: ignore[operator]
        assert sizes.compressed == sum(layers) + config  # type: ignore[operator]
    else:
        assert sizes.compressed is None
