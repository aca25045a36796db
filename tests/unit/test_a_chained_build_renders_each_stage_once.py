"""A chained build renders each of its stages once: the job carries the stage graph, and
binding the pinned base and the stage images built is data, not another rendering."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest

import mlcc.render.chain as chain
from mlcc.api import request_for
from mlcc.app import build as building
from mlcc.engines.base import BuildPolicy, EngineBuild, EngineSettings, ImageEngine, Log, job_for
from mlcc.image.base import ResolvedBase
from mlcc.image.reference import Reference
from mlcc.kb import load
from mlcc.render import render
from mlcc.resolve import Resolver
from mlcc.resolve.pins import Pins

BASE_DIGEST = "sha256:" + "1" * 64


class _Storage(ImageEngine):
    """A local engine with an empty storage that keeps each build's context instead of
    running it: what the build is handed is what is checked."""

    name = "storage"

    def __init__(self) -> None:
        super().__init__(EngineSettings())
        self.builds: List[Dict[str, Any]] = []
        self.tags: Dict[str, str] = {}

    def check(self) -> None: ...

    def build_image(self, spec: EngineBuild, log: Log) -> str:
        files = {p.name: p.read_text() for p in spec.context.iterdir() if p.is_file()}
        self.builds.append({"dockerfile": files[spec.dockerfile], "args": dict(spec.build_args)})
        return f"image{len(self.builds)}"

    def tag(self, image: str, ref: str) -> None:
        self.tags[ref] = image

    def push(self, ref: Reference, *, tls_verify: bool, credentials: Any, log: Log) -> None:
        raise AssertionError("nothing is pushed")

    def exists(self, ref: str) -> bool:
        return ref in self.tags

    def save(self, ref: str, destination: Path) -> Path:
        raise AssertionError("nothing is saved")


def _counted(monkeypatch: pytest.MonkeyPatch) -> List[str]:
    """Count the calls of the real stage renderer (and of render), each still doing its work."""
    calls: List[str] = []

    def counting(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return real(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(chain, "render_dockerfile", counting("stage", chain.render_dockerfile))
    monkeypatch.setattr(building, "render", counting("render", building.render))
    return calls


@pytest.mark.parametrize("flavour", ["devel", "runtime"])
def test_a_chained_build_renders_each_stage_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, flavour: str
) -> None:
    monkeypatch.setenv("MLCC_CACHE_DIR", str(tmp_path / "cache"))
    kb = load()
    request = request_for(kb, "maskrcnn", Pins(cuda="10.1", flavour=flavour))
    rendered = render(Resolver(kb).resolve(request), request=request)
    calls = _counted(monkeypatch)
    policy = BuildPolicy(chain=True)
    job = job_for(rendered, policy, "maskrcnn")
    base = ResolvedBase(rendered.plan.base_image, BASE_DIGEST, rendered.stack.arch.name, ("rhel",), "8.10")
    engine = _Storage()
    result = building.run_job(engine, job._replace(base=base), policy, Log(None))

    assert job.graph is not None
    kinds = [stage.kind for stage in job.graph.stages]
    expected = (
        ["stack", "framework", "benchmark"]
        if flavour == "devel"
        else ["stack", "framework", "runtime", "benchmark"]
    )
    assert kinds == expected
    # one rendering per stage, however often the build read the job's args and files
    assert calls == ["stage"] * len(kinds)
    assert result.status == "built" and len(engine.builds) == len(kinds)
    # each stage was built FROM what the graph names as its parent, bound to what was built
    built = {stage.kind: engine.builds[i] for i, stage in enumerate(job.graph.stages)}
    assert built["stack"]["args"]["BASE_IMAGE"] == base.pinned
    assert built["framework"]["args"]["BASE_IMAGE"].startswith("localhost/mlcc/mlcc-stack:mlcc-")
    assert built["benchmark"]["args"]["BASE_IMAGE"].startswith("localhost/mlcc/mlcc-framework:mlcc-")
    if flavour == "runtime":
        assert built["runtime"]["args"]["BASE_IMAGE"] == base.pinned
        assert built["benchmark"]["args"]["RUNTIME_IMAGE"].startswith("localhost/mlcc/mlcc-runtime:mlcc-")
    # the Dockerfiles built are the graph's, byte for byte (the benchmark's digest stamped)
    for stage in job.graph.shared:
        assert built[stage.kind]["dockerfile"] == stage.dockerfile
    assert f'io.mlcc.digest="{rendered.digest}"' in built["benchmark"]["dockerfile"]
    assert engine.tags[str(result.job.content)] == f"image{len(kinds)}"


@pytest.mark.parametrize("flavour", ["devel", "runtime"])
def test_a_flat_image_is_a_graph_of_one_stage_from_the_base(flavour: str) -> None:
    kb = load()
    request = request_for(kb, "maskrcnn", Pins(cuda="10.1", flavour=flavour))
    rendered = render(Resolver(kb).resolve(request), request=request)
    (image,) = rendered.graph.stages
    assert (image.kind, image.parent, image.tag) == ("image", "base", rendered.variant)
    assert image.dockerfile == rendered.content("Dockerfile") and "Dockerfile" not in dict(image.files)
    assert rendered.graph.flavour == flavour and image.digest == rendered.digest
    # a runtime image's final stage is FROM the base too: BASE_IMAGE names both, no RUNTIME_IMAGE
    assert image.runtime_parent == ("base" if flavour == "runtime" else None)
    pinned = "registry.example/ubi8/ubi@sha256:" + "1" * 64
    bound = rendered.graph.bind(image, base=pinned)
    assert bound.build_args == (("BASE_IMAGE", pinned), *rendered.build_args[1:])
    assert bound.dockerfile == image.dockerfile
