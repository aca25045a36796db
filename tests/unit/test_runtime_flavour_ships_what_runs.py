"""--flavour runtime: a multi-stage image whose final stage, on the runtime stack, carries
what the build stage made and nothing that built it (issue 28)."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from typing import Dict, List, Tuple

import pytest
import yaml

from mlcc.api import Pins, request_for
from mlcc.errors import RecipeError, UsageError
from mlcc.kb import load
from mlcc.kb.model import KnowledgeBase
from mlcc.render import BASE, RUNTIME, Rendered, chain_graph, render
from mlcc.resolve import Resolver
from tests.conftest import RECIPES, run_mlcc


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return load(str(RECIPES))


def _rendered(kb: KnowledgeBase, benchmark: str, fmt: str = "dockerfile", **pins: str) -> Rendered:
    stack = Resolver(kb).resolve(request_for(kb, benchmark, Pins(**pins)))  # type: ignore[arg-type]
    return render(stack, fmt)


def _stages(dockerfile: str) -> Tuple[str, str]:
    """(build stage, final stage) of a runtime Dockerfile."""
    head, _, final = dockerfile.partition("\nFROM ${BASE_IMAGE}\n")
    assert "FROM ${BASE_IMAGE} AS build\n" in head and final
    return head, final


def _run_lines(text: str) -> List[str]:
    return [line for line in text.splitlines() if line.startswith("RUN ")]


def test_a_runtime_image_installs_cuda_runtime_packages_and_copies_what_the_build_made(
    kb: KnowledgeBase,
) -> None:
    rendered = _rendered(kb, "maskrcnn", cuda="10.1", flavour="runtime")
    build, final = _stages(rendered.content("Dockerfile"))
    cuda = rendered.stack.cuda
    assert cuda is not None and rendered.stack.runtime
    runtime_names = set(cuda.runtime_packages)
    devel_only = [p.name for p in cuda.packages if p.name not in runtime_names]
    assert devel_only and "cuda-minimal-build-10-1" in devel_only
    for name in devel_only:  # nvcc, headers, static libraries: the build stage only
        assert f" {name}-" in build and f" {name}-" not in final
    for name in runtime_names:
        assert f" {name}-" in final
    # no compiler, no -devel package is installed by the final stage
    installs = " ".join(line for line in _run_lines(final) if "dnf install" in line)
    assert not re.search(r"\b(gcc|gcc-c\+\+|make|python3-devel|[\w-]+-devel)\b", installs), installs
    assert "COPY --from=build /opt/mlcc/venv /opt/mlcc/venv" in final
    assert "COPY --from=build /workspace/object_detection /workspace/object_detection" in final
    assert "/opt/src/pytorch" in build and "/opt/src/pytorch" not in final  # the source tree stays behind
    # a script that sets up what runs outside the work directory (maskrcnn's /coco link) runs in both
    assert (
        "RUN bash /opt/mlcc/scripts/link-coco.sh" in build
        and "RUN bash /opt/mlcc/scripts/link-coco.sh" in final
    )
    assert "COPY scripts/link-coco.sh /opt/mlcc/scripts/link-coco.sh" in final
    assert 'io.mlcc.flavour="runtime"' in final and "--nvcc" not in final
    document = json.loads(rendered.content("stack.json"))
    assert document["flavour"] == "runtime"
    # runtime is maskrcnn's default: the variant name spells no flavour
    assert document["variant"] == rendered.stack.variant == "cuda10.1-cudnn7-ubi8-x86_64"
    assert sorted(p.split("-10.")[0] for p in document["components"]["cuda"]["packages"]) == sorted(
        n for n in runtime_names
    )
    assert any(c["component"] == "flavour" and c["version"] == "runtime" for c in document["choices"])


def test_a_devel_image_keeps_the_build_in_one_stage_and_says_so(kb: KnowledgeBase) -> None:
    rendered = _rendered(kb, "maskrcnn", cuda="10.1", flavour="devel")
    dockerfile = rendered.content("Dockerfile")
    assert " AS build" not in dockerfile and "COPY --from" not in dockerfile
    assert 'io.mlcc.flavour="devel"' in dockerfile and "--nvcc /usr/local/cuda/bin/nvcc" in dockerfile
    document = json.loads(rendered.content("stack.json"))
    assert document["flavour"] == "devel" and rendered.stack.variant == "cuda10.1-cudnn7-ubi8-x86_64-devel"
    assert [c["reason"] for c in document["choices"] if c["component"] == "flavour"] == [
        "asked for (--flavour devel); by default: runtime"
    ]
    runtime = _rendered(kb, "maskrcnn", cuda="10.1")
    assert rendered.digest != runtime.digest
    assert runtime.digest == _rendered(kb, "maskrcnn", cuda="10.1", flavour="runtime").digest


def test_every_runtime_stack_renders_the_same_leading_runtime_steps_for_every_benchmark(
    kb: KnowledgeBase,
) -> None:
    """Issue 28 item 2: the final stage's stack steps are byte-identical across benchmarks on
    one stack, so a matrix build's runtime images share those layers."""
    groups: Dict[Tuple[str, ...], Dict[str, str]] = defaultdict(dict)
    resolver = Resolver(kb)
    for benchmark in ("maskrcnn", "ssd", "resnet50", "gnmt", "transformer", "ncf", "tf_cnn_benchmarks"):
        stack = resolver.try_resolve(
            request_for(kb, benchmark, Pins(cuda="10.1", base="ubi8", flavour="runtime"))
        )
        if stack is None:
            continue
        _, final = _stages(render(stack).content("Dockerfile"))
        leading = final.split(f"\n# {benchmark}:", 1)[0]
        python = stack.python.version if stack.python else ""
        key = (stack.base.name, stack.arch.name, stack.cuda.version if stack.cuda else "", python)
        key += tuple(lib.version if lib else "" for lib in (stack.cudnn, stack.nccl))
        groups[key][benchmark] = leading
    shared = [g for g in groups.values() if len(g) > 1]
    assert shared, f"no two benchmarks share a runtime stack: {sorted(groups)}"
    for group in shared:
        assert len(set(group.values())) == 1, sorted(group)


def test_runtime_is_refused_with_the_reason_where_a_stack_has_none(kb: KnowledgeBase) -> None:
    resolver = Resolver(kb)
    with pytest.raises(UsageError) as kept:
        resolver.resolve(request_for(kb, "minigo", Pins(flavour="runtime")))
    assert "keeps its build at run time" in str(kept.value) and "--flavour devel" in (kept.value.hint or "")
    with pytest.raises(UsageError) as unknown:
        resolver.resolve(request_for(kb, "nccl-tests", Pins(cuda="10.1.105", base="ubi7", flavour="runtime")))
    assert "no runtime image of CUDA 10.1.105" in str(unknown.value)
    with pytest.raises(UsageError) as typo:
        request_for(kb, "nccl-tests", Pins(flavour="slim"))
    assert "--flavour: unknown flavour 'slim'" in str(typo.value)


def test_the_cli_says_why_and_exits_with_the_usage_code() -> None:
    result = run_mlcc(["resolve", "minigo", "--flavour", "runtime"])
    assert result.code == 2 and "--flavour runtime: minigo keeps its build at run time" in result.err
    assert "Traceback" not in result.err


def test_a_host_install_and_an_apptainer_file_keep_the_build(kb: KnowledgeBase) -> None:
    script = _rendered(kb, "nccl-tests", "script", flavour="runtime")
    assert script.stack.cuda is not None
    minor = "-".join(script.stack.cuda.version.split(".")[:2])
    assert not script.stack.runtime and f"cuda-minimal-build-{minor}" in script.content("install.sh")


def test_chained_runtime_images_share_the_devel_stages_and_a_runtime_stage(kb: KnowledgeBase) -> None:
    runtime = _rendered(kb, "maskrcnn", cuda="10.1")
    devel = _rendered(kb, "maskrcnn", cuda="10.1", flavour="devel")
    base = runtime.stack.base.ref
    graph = chain_graph(runtime, base)
    runtime_stages = graph.shared
    devel_stages = chain_graph(devel, base).shared
    assert [s.kind for s in runtime_stages] == ["stack", "framework", RUNTIME]
    assert [s.dockerfile for s in runtime_stages[:2]] == [s.dockerfile for s in devel_stages]
    assert runtime_stages[-1].parent == BASE and "cuda-minimal-build" not in runtime_stages[-1].dockerfile
    assert f"ARG BASE_IMAGE={base}\n" in runtime_stages[-1].dockerfile
    final = graph.final
    assert (final.parent, final.runtime_parent) == ("framework", RUNTIME)
    assert final.dockerfile.count("\nFROM ") == 2
    assert f"ARG RUNTIME_IMAGE={runtime_stages[-1].reference}\n" in final.dockerfile
    assert (
        "FROM ${BASE_IMAGE} AS build\n" in final.dockerfile and "FROM ${RUNTIME_IMAGE}\n" in final.dockerfile
    )


def test_a_runtime_package_that_the_release_does_not_list_is_a_recipe_error(tmp_path: object) -> None:
    import shutil
    from pathlib import Path

    root = Path(str(tmp_path)) / "recipes"
    shutil.copytree(RECIPES, root)
    cuda = root / "cuda.yaml"
    text = cuda.read_text()
    cuda.write_text(
        text.replace("runtime_packages: [cuda-cudart-11-8,", "runtime_packages: [cuda-nvcc-11-8,", 1)
    )
    with pytest.raises(RecipeError) as error:
        load(str(root))
    assert "cuda.yaml" in str(error.value) and "cuda-nvcc-11-8 not in its packages" in str(error.value)


def test_the_openshift_objects_of_a_runtime_image_build_both_stages_from_the_base_stream(
    tmp_path: object,
) -> None:
    from pathlib import Path

    out = Path(str(tmp_path))
    result = run_mlcc(
        [
            "gen",
            "nccl-tests",
            "--flavour",
            "runtime",
            "--only",
            "openshift",
            "--namespace",
            "mlperf",
            "--openshift-output",
            str(out),
        ]
    )
    assert result.code == 0, result.err
    [build] = list(out.rglob("build.yaml"))
    objects = yaml.safe_load(build.read_text())["items"]  # a List
    configs = [o for o in objects if o["kind"] == "BuildConfig"]
    [config] = configs
    docker = config["spec"]["strategy"]["dockerStrategy"]
    args = {a["name"]: a["value"] for a in docker["buildArgs"]}
    assert args["BASE_IMAGE"].endswith(f"/mlperf/{docker['from']['name']}")
    assert list(args).count("NVIDIA_MIRROR") == 1
    dockerfile = config["spec"]["source"]["dockerfile"]
    assert dockerfile.count("\nFROM ${BASE_IMAGE}") == 2


def test_a_conda_framework_runtime_image_copies_the_environment_it_runs_in(kb: KnowledgeBase) -> None:
    rendered = _rendered(kb, "ssd", arch="ppc64le")
    assert rendered.stack.runtime and rendered.stack.framework is not None
    assert rendered.stack.framework.install.method == "conda"
    build, final = _stages(rendered.content("Dockerfile"))
    assert "conda create -y -p /opt/mlcc/conda" in build
    assert "COPY --from=build /opt/mlcc/conda /opt/mlcc/conda" in final and "/opt/conda " not in final
    assert "/opt/mlcc/conda/bin:" in final  # PATH: its python runs the benchmark


def test_a_stack_without_its_own_python_that_pip_installs_stays_devel(tmp_path: object) -> None:
    """Its packages go into the base's interpreter, which a runtime image does not copy."""
    import shutil
    from pathlib import Path

    root = Path(str(tmp_path)) / "recipes"
    shutil.copytree(RECIPES, root)
    recipe = root / "benchmarks" / "nccl-tests.yaml"
    text = recipe.read_text()
    assert "  steps:\n" in text
    recipe.write_text(text.replace("  steps:\n", "  steps:\n    - pip: [six==1.16.0]\n", 1))
    kb = load(str(root))
    stack = Resolver(kb).resolve(request_for(kb, "nccl-tests", Pins()))
    assert stack.python is None and stack.flavour == "devel"
    reasons = [c.reason for c in stack.choices if c.component == "flavour"]
    assert reasons and "python: none" in reasons[0]
