"""Engines come from entry points; a plugin's engine goes through the same build path
(lock, skip-if-built, history) as mlcc's own."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from mlcc import engines
from mlcc.engines.base import Engine, ImageEngine
from mlcc.errors import UsageError
from mlcc.history import History
from tests.engine_plugin import installed_engine_plugin

PLUGIN = '''
import json
from pathlib import Path

from mlcc.engines.base import BuildResult, Engine


class Recording(Engine):
    """Builds nothing: writes each content digest to a file, and finds it there again."""

    name = "recording"
    store = Path(__file__).with_name("built.json")

    def check(self):
        pass

    def _built(self):
        return json.loads(self.store.read_text()) if self.store.exists() else []

    def find_built(self, job, policy):
        if job.digest in self._built():
            return BuildResult(job, "skipped", "recorded before", 0.0)
        return None

    def build(self, job, policy, log):
        log("recording " + job.variant)
        self.store.write_text(json.dumps([*self._built(), job.digest]))
        return BuildResult(job, "built", "recorded", 0.0, image="recorded")
'''


@pytest.fixture
def plugin(tmp_path: Path) -> Iterator[Path]:
    """A real installed distribution (a dist-info folder on sys.path) declaring an engine."""
    with installed_engine_plugin(tmp_path, "mlcc_recording", PLUGIN, {"recording": "Recording"}):
        yield tmp_path


def test_mlcc_declares_its_four_engines() -> None:
    assert engines.names()[:4] == ["buildah", "podman", "docker", "openshift"]
    for name in ("buildah", "podman", "docker"):
        assert issubclass(engines.engine_class(name), ImageEngine)
    assert issubclass(engines.engine_class("openshift"), Engine)
    assert not issubclass(engines.engine_class("openshift"), ImageEngine)


def test_an_unknown_backend_names_the_installed_ones() -> None:
    with pytest.raises(UsageError, match="--backend nope: unknown") as raised:
        engines.create("nope")
    assert "buildah, podman, docker, openshift" in (raised.value.hint or "")


def test_a_plugin_engine_builds_skips_and_records_through_the_shared_path(cli, plugin: Path) -> None:  # type: ignore[no-untyped-def]
    assert "recording" in engines.names()
    history = plugin / "history.sqlite"
    first = cli("build", "nccl-tests", "--backend", "recording", "--history", str(history))
    assert first.code == 0, first.err
    assert "recording nccl-tests" not in first.out and "built in" in first.out
    second = cli("build", "nccl-tests", "--backend", "recording", "--history", str(history))
    assert second.code == 0 and "skipped: recorded before" in second.out
    forced = cli("build", "nccl-tests", "--backend", "recording", "--history", str(history), "--force")
    assert forced.code == 0 and "built in" in forced.out
    rows = History(history).rows()
    assert [(r["backend"], r["status"]) for r in rows] == [
        ("recording", "built"),
        ("recording", "skipped"),
        ("recording", "built"),
    ]
