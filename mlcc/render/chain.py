"""The chained stages of a variant (``--chain``), each rendered once, and the one place that
says what each stage is FROM (the graph's types: :mod:`mlcc.render.graph`).

The stack stage and the framework stage on it are shared: each renders its own
Dockerfile, byte-identical for every variant of every benchmark on that stage, and is
named by that Dockerfile's digest. A runtime image adds a shared ``runtime`` stage (the
same base, CUDA's runtime packages, cuDNN and NCCL without -devel, the interpreter) FROM
the base; its benchmark stage is then a multi-stage Dockerfile: the benchmark's build
steps FROM the last devel stage (BASE_IMAGE), its runtime steps FROM the runtime stage
(RUNTIME_IMAGE), copying what the first made. The devel stages are the very ones a devel
image of the same stack chains from.
"""

from __future__ import annotations

from hashlib import sha256
from typing import Dict, List, Optional, Tuple

from mlcc.render.graph import BASE, BENCHMARK, RUNTIME, Stage, StageGraph
from mlcc.render.mirror import routes
from mlcc.render.plan import STAGES, Plan, Step, merged_args, place_args
from mlcc.render.variant import Rendered, render_dockerfile


def chain_graph(rendered: Rendered, base: str) -> StageGraph:
    """The chained stages of a variant, each rendered once: the one place that says what
    each stage is FROM.

    Args:
        rendered: The variant.
        base: What the stages FROM the base name by default (an ImageStreamTag on
            OpenShift; the stack's own base reference on a local engine, whatever
            ``--base-image`` names, so a mirror serving the same manifest shares the stage).
            A build binds the pinned base (:meth:`StageGraph.bind`).

    Returns:
        The stack stage, the framework stage when the variant has one (each FROM the one
        before), a runtime image's ``runtime`` stage (FROM the base), then the benchmark
        stage (FROM the last devel stage; a runtime image's final stage FROM ``runtime``).
    """
    plan = rendered.plan
    found: List[Stage] = []
    parent = BASE
    devel = plan.build_steps or plan.steps
    for kind in STAGES[:-1]:
        steps = tuple(s for s in devel if s.stage == kind)
        if steps:
            found.append(_shared(rendered, kind, steps, parent, _name(found, parent, base)))
            parent = kind
    runtime: Optional[str] = None
    if plan.build_steps:
        steps = tuple(s for s in plan.steps if s.stage == "stack")
        found.append(_shared(rendered, RUNTIME, steps, BASE, base))
        runtime = RUNTIME
    by_kind: Dict[str, Stage] = {s.kind: s for s in found}
    final = _benchmark(rendered, parent, by_kind[parent].reference, runtime and by_kind[runtime].reference)
    found.append(final._replace(runtime_parent=runtime))
    return StageGraph(tuple(found), rendered.stack.flavour, base, rendered.build_args, rendered.digest)


def _name(found: List[Stage], parent: str, base: str) -> str:
    """How a stage's Dockerfile names its parent by default: the base, or its reference."""
    return base if parent == BASE else next(s for s in found if s.kind == parent).reference


def _shared(rendered: Rendered, kind: str, steps: Tuple[Step, ...], parent: str, named: str) -> Stage:
    """One shared stage: ``steps`` FROM ``named``, named by its Dockerfile's digest."""
    plan = rendered.plan
    labels = _stage_labels(rendered, kind)
    placed, build_args = place_args(steps, rendered.options, routes(rendered.stack.hosts))
    stage_plan = plan._replace(
        base_image=named,  # the build binds the real parent (a digest, an ImageStreamTag)
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
    shared = f"mlcc gen BENCHMARK --chain: the {kind} stage every benchmark on it shares"
    dockerfile = render_dockerfile(stage_plan, command=shared)
    digest = _stage_digest(stage_plan, dockerfile, shared)
    readable = stage_readable(rendered, kind)
    tag = f"{readable}-{digest[7:15]}"
    return Stage(
        kind, f"mlcc-{kind}", tag, dockerfile, (), build_args, labels, digest, parent, None, readable
    )


def _benchmark(rendered: Rendered, parent: str, named: str, runtime: Optional[str]) -> Stage:
    """The benchmark stage: the variant's own steps FROM ``named`` (the last devel stage's
    reference); a runtime image's final stage FROM ``runtime``."""
    plan = rendered.plan
    hosts = routes(rendered.stack.hosts)
    if plan.build_steps:
        built, first = place_args(
            tuple(s for s in plan.build_steps if s.stage == BENCHMARK), rendered.options, hosts
        )
        steps, then = place_args(
            tuple(s for s in plan.steps if s.stage == BENCHMARK), rendered.options, hosts
        )
        build_args = merged_args(first, then)
        final_plan = plan._replace(
            base_image=named, steps=steps, build_steps=built, build_args=build_args, runtime_base=runtime
        )
    else:
        steps, build_args = place_args(
            tuple(s for s in plan.steps if s.stage == BENCHMARK), rendered.options, hosts
        )
        final_plan = plan._replace(base_image=named, steps=steps, build_args=build_args)
    command = rendered.command + " --chain (stage: benchmark)"  # the request as typed, outside every digest
    flat = rendered.graph.final
    labels = (*flat.labels, ("io.mlcc.stage", BENCHMARK))
    dockerfile = render_dockerfile(final_plan, command=command)
    return flat._replace(
        kind=BENCHMARK, dockerfile=dockerfile, build_args=build_args, labels=labels, parent=parent
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
