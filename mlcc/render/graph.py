"""The stage graph of a rendered variant: the images a build makes, and what each is FROM.

A flat image is a graph of one stage, FROM the base (``Rendered.graph``, as
:func:`mlcc.render.render` returns it). A chained build (``--chain``) is the graph
:func:`mlcc.render.chain.chain_graph` renders: the stack stage (base + CUDA + cuDNN + NCCL +
Python) and the framework stage on it are shared, each named by its own Dockerfile's
digest; the benchmark stage is built FROM the last shared stage and makes the variant's
image (a runtime image's adds a ``runtime`` stage FROM the base, which its final stage is
FROM). Each :class:`Stage` names its parent: :data:`BASE` or another stage's kind.

The engines map the same stages to jobs (:mod:`mlcc.app.build`) and OpenShift to
BuildConfigs (:func:`mlcc.render.openshift.build.chain_specs`), so a stage has one name
wherever it is built. Binding what a stage is really built on -- the base pinned by
digest, a parent built or found in a registry -- is data (:meth:`StageGraph.bind`), never
a second rendering.

    graph = chain_graph(rendered, base="mlcc-base-ubi8:8.10")
    graph.stages[0].tag   # cuda12.6-nccl2.23-ubi8-x86_64-a218944a
    bound = graph.bind(graph.final, base="quay.io/...@sha256:...", built={"framework": "..."})
    bound.build_args      # BASE_IMAGE names the built framework stage; the Dockerfile is as rendered
"""

from __future__ import annotations

from typing import Mapping, NamedTuple, Optional, Tuple

from mlcc.render.digest import stamp
from mlcc.render.plan import STAGES

BASE = "base"  # a stage's parent when it is FROM the base image
IMAGE = "image"  # the one stage of a flat image
RUNTIME = "runtime"  # a runtime image's shared runtime stack stage
BENCHMARK = STAGES[-1]  # the variant's own stage of a chain
# The stages a chain shares between variants (their images live in mlcc-<kind> repositories
# beside the benchmarks': an ImageStream on OpenShift, <registry>/mlcc-stack with --registry).
SHARED = (*STAGES[:-1], RUNTIME)

Args = Tuple[Tuple[str, Optional[str]], ...]


class Stage(NamedTuple):
    """One image of a build: what it is, what it is FROM, and the names it goes by."""

    kind: str  # IMAGE (a flat image), "stack", "framework", RUNTIME or BENCHMARK
    repository: str  # mlcc-stack, mlcc-framework ...; the variant's own stage: the benchmark
    tag: str  # a shared stage: readable name + 8 hex of its digest; else the variant's name
    dockerfile: str  # the main file (a flat script or Apptainer variant's: that file)
    files: Tuple[Tuple[str, str], ...]  # the build context beside the main file
    build_args: Args  # the args its main file declares, with their defaults
    labels: Tuple[Tuple[str, str], ...]  # a shared stage: its Dockerfile's LABEL, sorted
    digest: str  # a shared stage: its Dockerfile's; the variant's own: the content digest
    parent: str  # BASE, or the kind of the stage it is FROM (BASE_IMAGE)
    # a runtime image's: the kind its final stage is FROM (RUNTIME_IMAGE when not ``parent``)
    runtime_parent: Optional[str] = None
    readable: str = ""  # a shared stage's readable name: cuda12.6-nccl2.23-ubi8-x86_64 ...

    @property
    def shared(self) -> bool:
        """Whether variants share this stage (its image is named by its Dockerfile)."""
        return self.kind in SHARED

    @property
    def reference(self) -> str:
        """``<repository>:<tag>``: what a stage built on it names by default."""
        return f"{self.repository}:{self.tag}"


class Bound(NamedTuple):
    """A stage with what it is built on: its build args name the parents given."""

    stage: Stage
    dockerfile: str  # the variant's own stage: its content digest stamped into the label
    build_args: Tuple[Tuple[str, str], ...]
    parent: str
    runtime_parent: Optional[str]


class StageGraph(NamedTuple):
    """The stages of a variant in build order, each after the stages it is built on."""

    stages: Tuple[Stage, ...]
    flavour: str  # "devel" or "runtime": what the variant's image carries
    base: str  # what the stages FROM the base name by default
    values: Tuple[Tuple[str, str], ...]  # the variant's build args (BASE_IMAGE, the mirrors)
    digest: str  # the variant's content digest

    @property
    def final(self) -> Stage:
        """The stage that makes the variant's image (a flat image's only one)."""
        return self.stages[-1]

    @property
    def shared(self) -> Tuple[Stage, ...]:
        """The shared stages (none for a flat image), in build order."""
        return self.stages[:-1]

    @property
    def chained(self) -> bool:
        """Whether the variant's image is built on stage images of its own."""
        return len(self.stages) > 1

    def stage(self, kind: str) -> Stage:
        """The stage of a kind.

        Raises:
            KeyError: The graph has no such stage.
        """
        for stage in self.stages:
            if stage.kind == kind:
                return stage
        raise KeyError(kind)

    def bind(
        self, stage: Stage, base: Optional[str] = None, built: Optional[Mapping[str, str]] = None
    ) -> Bound:
        """What ``stage`` is built on, as its build args: data, the Dockerfile as rendered.

        Args:
            stage: A stage of this graph.
            base: The base image as the build pulls it (its digest pinned); None: the
                variant's own ``BASE_IMAGE``.
            built: A built stage image per kind (``{"framework": "<repo>@sha256:..."}``);
                a parent not in it is named by its reference (``mlcc-framework:<tag>``).

        Returns:
            The stage with ``BASE_IMAGE`` (and ``RUNTIME_IMAGE``) naming its parents, and of
            the variant's other build args those its Dockerfile declares (an undeclared build
            arg is an engine warning); the variant's own stage has its digest stamped.
        """
        values = dict(self.values)
        built = built or {}
        names = {s.kind: built.get(s.kind, s.reference) for s in self.shared}
        names[BASE] = base if base is not None else values["BASE_IMAGE"]
        parent = names[stage.parent]
        # a final stage FROM another image than its build stage names it by RUNTIME_IMAGE
        other = stage.runtime_parent is not None and stage.runtime_parent != stage.parent
        runtime = names[stage.runtime_parent] if other and stage.runtime_parent else None
        declared = {"NVIDIA_MIRROR", *(name for name, _ in stage.build_args)}
        mirrors = tuple((n, v) for n, v in self.values if n != "BASE_IMAGE" and n in declared)
        args = (("BASE_IMAGE", parent), *mirrors, *((("RUNTIME_IMAGE", runtime),) if runtime else ()))
        dockerfile = stage.dockerfile if stage.shared else stamp(stage.dockerfile, self.digest)
        return Bound(stage, dockerfile, args, parent, runtime)
