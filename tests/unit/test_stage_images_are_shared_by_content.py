"""``--chain``: a variant splits into stage images (stack, framework, benchmark) named by
their content, so variants that share a stage build it once, wherever they build; the image
at the end is the variant's own, with its content tag. The plan of a chained matrix says
which stages the registry holds and waits only for a stage that is still to build."""

from __future__ import annotations

from typing import List, Optional

from mlcc.api import request_for
from mlcc.app import build as building
from mlcc.engines.base import BuildJob, BuildPolicy, job_for, stage_jobs
from mlcc.image.base import ResolvedBase
from mlcc.kb import load
from mlcc.kb.model import KnowledgeBase
from mlcc.render import Options, chain_graph, render
from mlcc.render.digest import DIGEST_PLACEHOLDER
from mlcc.render.openshift import ClusterOptions
from mlcc.render.openshift.build import Source, chain_specs
from mlcc.resolve import Resolver
from mlcc.resolve.pins import Pins

POLICY = BuildPolicy(registry="quay.io/acme", push=True, chain=True)
BASE_DIGEST = "sha256:" + "1" * 64


def _job(
    kb: KnowledgeBase,
    benchmark: str,
    options: Optional[Options] = None,
    digest: str = BASE_DIGEST,
    flavour: str = "devel",
) -> BuildJob:
    cuda = "10.1" if benchmark != "nccl-tests" else None
    request = request_for(kb, benchmark, Pins(cuda=cuda, flavour=flavour))
    rendered = render(Resolver(kb).resolve(request), options=options or Options(), request=request)
    base = ResolvedBase(rendered.plan.base_image, digest, rendered.stack.arch.name, ("rhel",), "8.10")
    return job_for(rendered, POLICY, benchmark)._replace(base=base)


def test_benchmarks_on_one_stack_and_framework_render_the_same_stages_byte_for_byte() -> None:
    kb = load()
    maskrcnn, gnmt, ssd = (_job(kb, b) for b in ("maskrcnn", "gnmt", "ssd"))
    stages = [chain_graph(job.rendered, "the-base").shared for job in (maskrcnn, gnmt, ssd)]
    assert [s.kind for s in stages[0]] == ["stack", "framework"]
    assert stages[0] == stages[1] == stages[2]  # PyTorch from the same source: one framework stage
    assert chain_graph(maskrcnn.rendered, "the-base").shared == stages[0]  # deterministic
    assert "maskrcnn" not in stages[0][1].dockerfile and "gnmt" not in stages[0][1].dockerfile
    # the framework stage is built FROM the stack stage, by the name that stage goes by
    assert stages[0][1].parent == "stack" and stages[0][0].reference == f"mlcc-stack:{stages[0][0].tag}"
    assert f"ARG BASE_IMAGE={stages[0][0].reference}\n" in stages[0][1].dockerfile
    assert stages[0][0].tag.startswith("cuda10.1-cudnn7-") and stages[0][0].tag.endswith(
        stages[0][0].digest[7:15]
    )
    nccl = chain_graph(_job(kb, "nccl-tests").rendered, "the-base").shared
    assert [s.kind for s in nccl] == ["stack"] and nccl[0].digest != stages[0][0].digest


def test_openshift_chains_the_same_stages_the_local_engines_build() -> None:
    kb = load()
    rendered = _job(kb, "maskrcnn").rendered
    base = Source("mlcc-base-ubi8", "8.10")
    specs = chain_specs(rendered, "maskrcnn-x", "maskrcnn", base, ClusterOptions(chain=True))
    runtime = chain_specs(
        _job(kb, "maskrcnn", flavour="runtime").rendered,
        "maskrcnn-r",
        "maskrcnn",
        base,
        ClusterOptions(chain=True, namespace="mlperf"),
    )
    # a runtime image chains from the very devel stages, and from a runtime stage on the base
    assert [s.digest for s in runtime[:2]] == [s.digest for s in specs[:2]]
    assert runtime[2].component == "runtime" and runtime[2].source == base
    assert runtime[-1].source == Source(*runtime[2].output)
    assert runtime[-1].build_stage_from == Source(*specs[1].output)
    graph = chain_graph(rendered, base.name)
    assert [(s.component, s.output, s.dockerfile, s.digest) for s in specs] == [
        (s.kind, (s.repository, s.tag), s.dockerfile, s.digest) for s in graph.stages
    ]
    # each image names its own stage; the final one is not taken for the framework it is built on
    assert [dict(spec.labels)["io.mlcc.stage"] for spec in specs] == ["stack", "framework", "benchmark"]


def test_a_stage_image_is_named_by_its_dockerfile_and_everything_under_it() -> None:
    kb = load()
    maskrcnn, gnmt = _job(kb, "maskrcnn"), _job(kb, "gnmt")
    stack, framework = stage_jobs(maskrcnn, POLICY)
    assert str(stack.content).startswith("quay.io/acme/mlcc-stack:mlcc-")
    assert str(framework.readable) == f"quay.io/acme/mlcc-framework:{framework.stage.tag}"
    assert stack.under == BASE_DIGEST and framework.under == stack.digest
    assert [s.content for s in stage_jobs(gnmt, POLICY)] == [stack.content, framework.content]
    # another base digest (the tag moved): new stages all the way up
    moved = stage_jobs(_job(kb, "maskrcnn", digest="sha256:" + "2" * 64), POLICY)
    assert moved[0].content != stack.content and moved[1].content != framework.content
    # --base-image of a mirror serving the same manifest: the same stages
    mirrored = _job(kb, "maskrcnn", Options(base_image="mirror.example.com/ubi8/ubi:8.10"))
    assert [s.content for s in stage_jobs(mirrored, POLICY)] == [stack.content, framework.content]


def test_the_chained_image_is_the_variants_own_with_its_content_tag() -> None:
    kb = load()
    job = _job(kb, "maskrcnn")
    parent = "quay.io/acme/mlcc-framework@sha256:" + "3" * 64
    stack = "quay.io/acme/mlcc-stack@sha256:" + "2" * 64
    chained = job._replace(built=(("stack", stack), ("framework", parent)))
    assert chained.content == job.content and chained.digest == job.digest
    dockerfile = dict(chained.files)["Dockerfile"]
    assert DIGEST_PLACEHOLDER not in dockerfile and f'io.mlcc.digest="{job.rendered.digest}"' in dockerfile
    assert "PyTorch" not in dockerfile.split("FROM", 1)[1].split("\nLABEL", 1)[0]  # the framework is below
    assert dict(chained.files)["stack.json"] == dict(job.files)["stack.json"]
    assert dict(chained.build_args)["BASE_IMAGE"] == parent
    assert ("io.mlcc.stage", "benchmark") in chained.labels and job.labels[0] in chained.labels


def _planned(
    jobs: List[BuildJob], built_stages: List[str], built: Optional[List[int]] = None
) -> List[building.Planned]:
    return [
        building.Planned(
            None,
            job,
            "in the registry" if built and index in built else None,
            stages=tuple(
                (stage, f"{stage.repository}@sha256:..." if stage.stage.kind in built_stages else None)
                for stage in stage_jobs(job, POLICY)
            ),
        )
        for index, job in enumerate(jobs)
    ]


def test_the_chained_plan_waits_only_for_a_stage_still_to_build() -> None:
    kb = load()
    jobs = [_job(kb, b) for b in ("maskrcnn", "nccl-tests", "gnmt", "ssd")]
    cold = building.stage_after(_planned(jobs, []))
    assert [entry.after for entry in cold] == [None, None, 0, 0]  # one PyTorch source build
    assert building.levels(cold) == [0, 0, 1, 1]
    stages = building.distinct_stages(cold)
    framework = [s for s in stages if s["stage"] == "framework"]
    assert len(framework) == 1 and framework[0]["built_by"] == "maskrcnn" and framework[0]["used_by"] == 3
    # the stages are in the registry, maskrcnn's image is not (its recipe changed): it alone builds,
    # at once, pulling the stages
    warm = building.stage_after(_planned(jobs, ["stack", "framework"], built=[1, 2, 3]))
    plan = building.github_levels(warm)
    assert [c["benchmark"] for c in plan["levels"][0]["include"]] == ["maskrcnn"]
    assert not any(level["include"] for level in plan["levels"][1:])
    assert all(s["built"] for s in plan["stages"])
    assert [s["built"] for s in plan["levels"][0]["include"][0]["stages"]] == [True, True]


def test_a_cold_chained_ci_plan_builds_each_framework_stage_in_one_job() -> None:
    """The published matrix, nothing in the registry: each distinct stage image is built by
    one cell, and every other cell that needs it is in a later level (its job pulls it)."""
    from mlcc.app.matrix import MatrixFilters

    kb = load()
    jobs = building.matrix_jobs(kb, MatrixFilters.from_pins(None, Pins(), None), POLICY, Options())
    pinned = [
        job._replace(
            base=ResolvedBase(
                job.rendered.plan.base_image, BASE_DIGEST, job.rendered.stack.arch.name, (), None
            )
        )
        for job in jobs
    ]
    plan = building.stage_after(_planned(pinned, []))
    levels = building.levels(plan)
    builders = {}
    for index, entry in enumerate(plan):
        for stage, _ in entry.stages:
            builders.setdefault(stage.digest, index)  # the first cell that needs it builds it
    for index, entry in enumerate(plan):
        for stage, _ in entry.stages:
            builder = builders[stage.digest]
            assert builder == index or levels[index] > levels[builder]  # type: ignore[operator]
    sources = [
        s for s in building.distinct_stages(plan) if s["stage"] == "framework" and "-src-" in s["readable"]
    ]
    assert sources and all(s["built_by"] is not None for s in sources)
    assert sum(s["used_by"] for s in sources) > len(sources)  # cells share the PyTorch source builds
    assert max(level for level in levels if level is not None) < building.GITHUB_LEVELS
    building.github_levels(plan)  # fits the workflow's level jobs


def test_a_chained_runtime_image_ends_from_its_runtime_stage() -> None:
    kb = load()
    devel, runtime = _job(kb, "maskrcnn"), _job(kb, "maskrcnn", flavour="runtime")
    stack, framework, runtime_stage = stage_jobs(runtime, POLICY)
    assert [stack.content, framework.content] == [s.content for s in stage_jobs(devel, POLICY)]
    assert runtime_stage.stage.kind == "runtime" and runtime_stage.under == BASE_DIGEST
    assert str(runtime_stage.content).startswith("quay.io/acme/mlcc-runtime:mlcc-")
    parent = "quay.io/acme/mlcc-framework@sha256:" + "3" * 64
    ends_on = "quay.io/acme/mlcc-runtime@sha256:" + "4" * 64
    chained = runtime._replace(built=(("framework", parent), ("runtime", ends_on)))
    assert chained.content == runtime.content and chained.content != devel.content
    args = dict(chained.build_args)
    assert args["BASE_IMAGE"] == parent and args["RUNTIME_IMAGE"] == ends_on
    dockerfile = dict(chained.files)["Dockerfile"]
    assert "FROM ${BASE_IMAGE} AS build\n" in dockerfile and "\nFROM ${RUNTIME_IMAGE}\n" in dockerfile
    final = dockerfile.split("\nFROM ${RUNTIME_IMAGE}\n", 1)[1]
    assert (
        "COPY --from=build /opt/mlcc/venv /opt/mlcc/venv" in final
        and "cuda-libraries-10-1-10.1.243" not in final
    )
