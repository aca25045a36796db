"""A rendered variant split into chained stage images: stack, framework, benchmark.

The stack stage (base + CUDA + cuDNN + NCCL + Python) and the framework stage on it are
shared: each renders its own Dockerfile, byte-identical for every variant of every
benchmark on that stage, and is named by that Dockerfile's digest. The benchmark stage is
built FROM the last shared stage and makes the variant's image.

A runtime image adds a third shared stage, ``runtime``: the runtime stack (the same base,
CUDA's runtime packages, cuDNN and NCCL without -devel, the interpreter), built FROM the
base. Its benchmark stage is then a multi-stage Dockerfile: the benchmark's build steps
FROM the last devel stage (BASE_IMAGE), and its runtime steps FROM the runtime stage
(RUNTIME_IMAGE), copying what the first made. The devel stages are the very ones a devel
image of the same stack chains from. OpenShift's ``--chain``
(:func:`mlcc.render.openshift.build.chain_specs`) and the local engines' ``--chain``
(:mod:`mlcc.app.build`) both build these, so a stage has one name wherever it is built.

    stages = shared_stages(rendered, base="mlcc-base-ubi8:8.10")
    stages[0].tag        # cuda12.6-nccl2.23-ubi8-x86_64-a218944a
    final = benchmark_stage(rendered, parent=stages[-1].reference)
"""

from __future__ import annotations

from hashlib import sha256
from typing import List, NamedTuple, Optional, Tuple

from mlcc.render import Rendered, render_dockerfile
from mlcc.render.mirror import routes
from mlcc.render.plan import STAGES, Plan, Step, merged_args, place_args

# Every shared stage lives in an image repository of this name beside the benchmarks'
# (an ImageStream on OpenShift, <registry>/mlcc-stack with --registry).
SHARED = STAGES[:-1]
RUNTIME = "runtime"  # a runtime image's shared runtime stack stage


class SharedStage(NamedTuple):
    """One shared stage of a variant: what to build, and the names it goes by."""

    stage: str  # "stack", "framework" or (a runtime image's) "runtime"
    readable: str  # cuda12.6-nccl2.23-ubi8-x86_64, pytorch1.0.0-source ...
    dockerfile: str  # the same bytes for every benchmark on this stage
    digest: str  # sha256 of the Dockerfile as the content digest sees it (_stage_digest)
    labels: Tuple[Tuple[str, str], ...]  # in the Dockerfile's LABEL, sorted
    build_args: Tuple[Tuple[str, Optional[str]], ...]  # the mirror args it declares, with defaults
    parent: str  # the FROM its Dockerfile names by default: the base, or the stage before

    @property
    def repository(self) -> str:
        """The repository name every stage of this kind goes to: ``mlcc-stack``, ``mlcc-framework``."""
        return f"mlcc-{self.stage}"

    @property
    def tag(self) -> str:
        """The readable name and the Dockerfile digest's first 8 hex digits."""
        return f"{self.readable}-{self.digest[7:15]}"

    @property
    def reference(self) -> str:
        """``mlcc-<stage>:<tag>``: what the next stage's Dockerfile names by default."""
        return f"{self.repository}:{self.tag}"


class FinalStage(NamedTuple):
    """The benchmark stage: the variant's own steps on the last shared stage."""

    dockerfile: str  # its header names the request; LABEL io.mlcc.digest holds the placeholder
    build_args: Tuple[Tuple[str, Optional[str]], ...]
    parent: str
    runtime_parent: Optional[str] = None  # a runtime image's: the runtime stage it ends FROM


def shared_stages(rendered: Rendered, base: str) -> List[SharedStage]:
    """The stack and framework stages of a variant, each FROM the one before.

    Args:
        rendered: The variant.
        base: What the stack stage's Dockerfile names as its base by default (an
            ImageStreamTag on OpenShift); the build replaces it with the pinned base.

    Returns:
        The stages that have steps, in build order (a variant without a framework has
        only the stack stage); a runtime image's ``runtime`` stage last, FROM ``base``.
    """
    plan = rendered.plan
    found: List[SharedStage] = []
    parent = base
    devel = plan.build_steps or plan.steps
    for stage in SHARED:
        steps = tuple(s for s in devel if s.stage == stage)
        if steps:
            found.append(_shared(rendered, stage, steps, parent))
            parent = found[-1].reference
    if plan.build_steps:
        steps = tuple(s for s in plan.steps if s.stage == "stack")
        found.append(_shared(rendered, RUNTIME, steps, base))
    return found


def _shared(rendered: Rendered, stage: str, steps: Tuple[Step, ...], parent: str) -> SharedStage:
    """One shared stage: ``steps`` FROM ``parent``, named by its Dockerfile's digest."""
    plan = rendered.plan
    labels = _stage_labels(rendered, stage)
    placed, build_args = place_args(steps, rendered.options, routes(rendered.stack.hosts))
    stage_plan = plan._replace(
        base_image=parent,  # the build names the real parent (a digest, an ImageStreamTag)
        steps=placed,
        labels=labels,
        workdir=None,
        user=None,
        entrypoint=(),
        cmd=(),
        build_args=build_args,
        build_steps=(),
        runtime_base=None,
    )
    # no benchmark in the text: every benchmark on this stage must render it byte for byte
    shared = f"mlcc gen BENCHMARK --chain: the {stage} stage every benchmark on it shares"
    dockerfile = render_dockerfile(stage_plan, command=shared)
    digest = _stage_digest(stage_plan, dockerfile, shared)
    readable = stage_readable(rendered, stage)
    return SharedStage(stage, readable, dockerfile, digest, labels, build_args, parent)


def benchmark_stage(rendered: Rendered, parent: str, runtime_parent: Optional[str] = None) -> FinalStage:
    """The benchmark stage's Dockerfile, FROM ``parent`` (the last shared stage) by default.

    Args:
        rendered: The variant.
        parent: The last devel stage's reference (:attr:`SharedStage.reference`).
        runtime_parent: A runtime image's runtime stage reference, its final stage's FROM
            (the ``runtime`` stage's reference when None).

    Returns:
        The Dockerfile and the mirror args its steps declare.
    """
    plan = rendered.plan
    hosts = routes(rendered.stack.hosts)
    benchmark = STAGES[-1]
    if plan.build_steps:
        built, first = place_args(
            tuple(s for s in plan.build_steps if s.stage == benchmark), rendered.options, hosts
        )
        steps, then = place_args(
            tuple(s for s in plan.steps if s.stage == benchmark), rendered.options, hosts
        )
        build_args = merged_args(first, then)
        runtime = runtime_parent or shared_stages(rendered, rendered.stack.base.ref)[-1].reference
        final_plan = plan._replace(
            base_image=parent, steps=steps, build_steps=built, build_args=build_args, runtime_base=runtime
        )
    else:
        steps, build_args = place_args(
            tuple(s for s in plan.steps if s.stage == benchmark), rendered.options, hosts
        )
        final_plan = plan._replace(base_image=parent, steps=steps, build_args=build_args)
    command = rendered.command + " --chain (stage: benchmark)"  # the request as typed, outside every digest
    return FinalStage(
        render_dockerfile(final_plan, command=command), build_args, parent, final_plan.runtime_base
    )


def _stage_digest(stage_plan: Plan, dockerfile: str, command: str) -> str:
    """What names a stage image: the digest of its Dockerfile as the content digest sees a
    rendering (:meth:`Plan.hashed`), each verified mirror at its placeholder. A stage built
    through such a mirror fetches the published stage's verified bytes: it takes the
    published tag, and every chain through any verified mirror shares it."""
    hashed = stage_plan.hashed()
    text = dockerfile if hashed is stage_plan else render_dockerfile(hashed, command=command)
    return "sha256:" + sha256(text.encode()).hexdigest()


def stage_readable(rendered: Rendered, stage: str) -> str:
    """A stage's readable name: ``cuda12.6-nccl2.23-ubi8-x86_64``, ``pytorch1.0.0-source``."""
    stack = rendered.stack
    if stage in ("stack", RUNTIME):
        parts = [f"cuda{stack.cuda.minor}" if stack.cuda else "cpu"]
        if stack.cudnn:
            parts.append(f"cudnn{stack.cudnn.version.split('.')[0]}")
        if stack.nccl:
            parts.append("nccl" + ".".join(stack.nccl.version.split(".")[:2]))
        if stack.python:
            parts.append(f"py{stack.python.version}")
        parts += [stack.base.name, stack.arch.name]
        return "-".join(parts)
    framework = stack.framework
    assert framework is not None
    return f"{framework.framework}{framework.version.split('+')[0]}-{framework.variant}"


def _stage_labels(rendered: Rendered, stage: str) -> Tuple[Tuple[str, str], ...]:
    keep = {
        "io.mlcc.version",
        "io.mlcc.arch",
        "io.mlcc.base",
        "io.mlcc.accelerator",
        "io.mlcc.cuda",
        "io.mlcc.cudnn",
        "io.mlcc.nccl",
        "io.mlcc.python",
        "io.mlcc.driver.min",
        "org.opencontainers.image.base.name",
        "org.opencontainers.image.vendor",
    }
    if stage == "framework":
        keep |= {"io.mlcc.gcc", "io.mlcc.framework", "io.mlcc.framework.version", "io.mlcc.framework.variant"}
    found = [(k, v) for k, v in rendered.plan.labels if k in keep]
    found.append(("io.mlcc.stage", stage))
    found.append(("org.opencontainers.image.title", f"mlcc {stage} {stage_readable(rendered, stage)}"))
    return tuple(sorted(found))
