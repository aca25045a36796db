"""ImageStreams, ConfigMaps and BuildConfigs for one rendered variant, flat or chained.

Conventions (see README, "OpenShift"): the Docker strategy builds FROM the base's
ImageStreamTag, so an ImageChange trigger rebuilds the image when the base is re-imported;
the build context is the variant folder, carried by ConfigMaps beside an inline Dockerfile
(or a Git repository holding dockerfiles/ with ``--git-uri``); webhook secrets are only
ever referenced by name.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

import mlcc
from mlcc.errors import UsageError
from mlcc.render.chain import chain_graph
from mlcc.render.graph import BASE, RUNTIME, Stage
from mlcc.render.openshift import names
from mlcc.render.openshift.options import ClusterOptions
from mlcc.render.variant import Rendered

if TYPE_CHECKING:
    Obj = Dict[str, Any]

# The API server refuses a larger inline Dockerfile (openshift-apiserver validation).
INLINE_DOCKERFILE_MAX = 60000
CONFIGMAP_MAX = 1024 * 1024
BUILD_HISTORY = 5
BUILD_DEADLINE_SECONDS = 6 * 3600  # a PyTorch source build on 2 cores takes hours
INTERNAL_REGISTRY = {
    "4": "image-registry.openshift-image-registry.svc:5000",
    "3.11": "docker-registry.default.svc:5000",
}


class Source(NamedTuple):
    """Where a BuildConfig's image comes from: an ImageStreamTag in the namespace."""

    stream: str
    tag: str

    @property
    def name(self) -> str:
        return f"{self.stream}:{self.tag}"


def metadata(name: str, labels: Dict[str, str], options: ClusterOptions, **annotations: str) -> Obj:
    """``annotations`` given here are kept in order; OpenShift objects also name their API version."""
    meta: Obj = {"name": name}
    if options.namespace:
        meta["namespace"] = options.namespace
    meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    return meta


def _annotations(options: ClusterOptions) -> Dict[str, str]:
    # mlcc lint validates an object against the schema of the version it was written for
    return {"openshift.io/generated-by": "mlcc", "mlcc.io/openshift": options.openshift}


def common_labels(benchmark: str, instance: str, version: str, component: str) -> Dict[str, str]:
    """The Kubernetes recommended labels, on every object mlcc writes."""
    return {
        "app.kubernetes.io/name": names.label_value(benchmark),
        "app.kubernetes.io/instance": names.label_value(instance),
        "app.kubernetes.io/version": names.label_value(version),
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/part-of": "mlcc",
        "app.kubernetes.io/managed-by": "mlcc",
    }


# ----------------------------------------------------------------------------- streams


def base_stream(rendered: Rendered, options: ClusterOptions) -> Tuple[Obj, Source]:
    """The base image, imported from its registry and re-imported on a schedule."""
    base = rendered.stack.base
    reference = rendered.plan.base_image
    tag = _tag_of(reference)
    stream = names.object_name("mlcc-base", base.name)
    policy: Obj = {"scheduled": True}
    if options.openshift != "3.11":
        # keep every architecture of a multi-arch base, so a ppc64le build node gets ppc64le
        policy["importMode"] = "PreserveOriginal"
    labels = common_labels(base.name, stream, tag, "base-image")
    obj: Obj = {
        "apiVersion": "image.openshift.io/v1",
        "kind": "ImageStream",
        "metadata": metadata(stream, labels, options, **_annotations(options)),
        "spec": {
            "lookupPolicy": {"local": False},
            "tags": [
                {
                    "name": tag,
                    "from": {"kind": "DockerImage", "name": reference},
                    "importPolicy": policy,
                    "referencePolicy": {"type": "Local"},
                }
            ],
        },
    }
    return obj, Source(stream, tag)


def output_stream(stream: str, labels: Dict[str, str], options: ClusterOptions) -> Obj:
    """The stream builds push to; ``lookupPolicy.local`` lets run manifests say stream:tag."""
    return {
        "apiVersion": "image.openshift.io/v1",
        "kind": "ImageStream",
        "metadata": metadata(stream, labels, options, **_annotations(options)),
        "spec": {"lookupPolicy": {"local": True}},
    }


def _tag_of(reference: str) -> str:
    name = reference.split("@", 1)[0].rsplit("/", 1)[1]
    if ":" in name:
        return name.split(":", 1)[1]
    return "sha256-" + reference.split("@sha256:", 1)[1][:12]


# ----------------------------------------------------------------------------- builds


class BuildConfigSpec(NamedTuple):
    """One BuildConfig to write: its name, Dockerfile, context files, FROM and output."""

    name: str
    component: str
    dockerfile: str
    files: Tuple[Tuple[str, str], ...]  # (path in the context, content)
    source: Source
    output: Tuple[str, str]  # (stream, tag) in the namespace
    labels: Tuple[Tuple[str, str], ...]  # imageLabels
    digest: str
    git_context: Optional[str] = None  # contextDir, when building from Git
    compiles: str = ""  # "framework-source", "extensions" or "" (what the build compiles)
    # A runtime image's build stage parent, which `from` (the last FROM's) cannot name: the
    # BASE_IMAGE build arg, an ImageStreamTag's pull spec in the internal registry, and an
    # ImageChange trigger on that tag. None: one FROM (or the base, by its ARG default).
    build_stage_from: Optional[Source] = None


def context_configmaps(spec: BuildConfigSpec, labels: Dict[str, str], options: ClusterOptions) -> List[Obj]:
    """The build context as ConfigMaps, one per folder (ConfigMap keys hold no '/')."""
    folders: Dict[str, Dict[str, str]] = {}
    for path, content in spec.files:
        folder, _, name = path.rpartition("/")
        folders.setdefault(folder, {})[name] = content
    found = []
    for folder in sorted(folders):
        suffix = "context" if not folder else names.object_name("context", folder)
        data = dict(sorted(folders[folder].items()))
        size = sum(len(k) + len(v.encode()) for k, v in data.items())
        if size > CONFIGMAP_MAX:
            raise UsageError(
                f"{spec.name}: the build context folder {folder or '.'!r} is {size} bytes,"
                f" more than a ConfigMap holds ({CONFIGMAP_MAX})",
                hint="build from Git instead: --git-uri URL (the repository holding dockerfiles/)",
            )
        found.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": metadata(f"{spec.name}-{suffix}", labels, options),
                "data": data,
            }
        )
    return found


def build_config(spec: BuildConfigSpec, labels: Dict[str, str], options: ClusterOptions, arch: str) -> Obj:
    # No ConfigChange trigger: applying the objects starts no build of its own, so `mlcc build`
    # (or `oc start-build`) starts exactly one. ImageChange rebuilds when the base moves.
    triggers: List[Obj] = [{"type": "ImageChange", "imageChange": {}}]
    if spec.build_stage_from is not None and spec.build_stage_from != spec.source:
        # A chained runtime image: its build stage's parent (the framework stage, the end of
        # the chain from the base) is what rebuilds it; the runtime stage, FROM the base
        # too, is built before that chain starts (mlcc build starts it first).
        stage_parent = {"kind": "ImageStreamTag", "name": spec.build_stage_from.name}
        triggers = [{"type": "ImageChange", "imageChange": {"from": stage_parent}}]
    secret = {"secretReference": {"name": options.webhook_secret}}
    if spec.git_context is not None:
        triggers.append({"type": "GitHub", "github": dict(secret)})
    triggers.append({"type": "Generic", "generic": dict(secret)})
    to: Obj
    if spec.component == "benchmark" and options.push_to:
        to = {"kind": "DockerImage", "name": f"{options.push_to}:{spec.output[1]}"}
    else:
        to = {"kind": "ImageStreamTag", "name": f"{spec.output[0]}:{spec.output[1]}"}
    output: Obj = {"to": to}
    if to["kind"] == "DockerImage":
        output["pushSecret"] = {"name": options.push_secret}
    output["imageLabels"] = [{"name": name, "value": value} for name, value in spec.labels]
    docker: Obj = {
        "from": {"kind": "ImageStreamTag", "name": spec.source.name},
        "buildArgs": [
            {"name": name, "value": value}
            for name, value in (*_stage_from(spec, options), *_mirror_args(spec.dockerfile))
        ],
        "noCache": False,
        "forcePull": False,
    }
    memory, jobs = build_size(spec, options)
    if jobs is not None:
        docker["env"] = [{"name": "MAX_JOBS", "value": str(jobs)}]
    spec_obj: Obj = {
        "runPolicy": "Serial",
        "triggers": triggers,
        "source": _source(spec, options),
        "strategy": {"type": "Docker", "dockerStrategy": docker},
        "output": output,
        "resources": {
            "requests": {"cpu": options.build_cpu, "memory": memory},
            "limits": {"memory": memory},
        },
        "nodeSelector": {"kubernetes.io/arch": arch},
        "completionDeadlineSeconds": BUILD_DEADLINE_SECONDS,
        "successfulBuildsHistoryLimit": BUILD_HISTORY,
        "failedBuildsHistoryLimit": BUILD_HISTORY,
    }
    obj: Obj = {
        "apiVersion": "build.openshift.io/v1",
        "kind": "BuildConfig",
        "metadata": metadata(
            spec.name,
            labels,
            options,
            **_annotations(options),
            **{"mlcc.io/digest": spec.digest},
        ),
        "spec": spec_obj,
    }
    if options.openshift == "3.11":
        obj["status"] = {"lastVersion": 0}  # the 3.11 API marks status as required
    return obj


def _source(spec: BuildConfigSpec, options: ClusterOptions) -> Obj:
    if spec.git_context is not None:
        assert options.git_uri is not None
        return {
            "type": "Git",
            "git": {"uri": options.git_uri, "ref": options.git_ref or "main"},
            "contextDir": spec.git_context,
        }
    size = len(spec.dockerfile.encode())
    if size > INLINE_DOCKERFILE_MAX:
        raise UsageError(
            f"{spec.name}: the Dockerfile is {size} bytes; OpenShift takes at most"
            f" {INLINE_DOCKERFILE_MAX} inline",
            hint="build from Git instead: --git-uri URL (the repository holding dockerfiles/)",
        )
    source: Obj = {"type": "Dockerfile", "dockerfile": spec.dockerfile}
    folders = sorted({path.rpartition("/")[0] for path, _ in spec.files})
    if folders:
        source["configMaps"] = [
            {
                "configMap": {
                    "name": f"{spec.name}-" + ("context" if not f else names.object_name("context", f))
                },
                **({"destinationDir": f} if f else {}),
            }
            for f in folders
        ]
    return source


def _stage_from(spec: BuildConfigSpec, options: ClusterOptions) -> List[Tuple[str, str]]:
    """BASE_IMAGE for a runtime image's build stage: the pull spec of its ImageStreamTag."""
    if spec.build_stage_from is None:
        return []
    return [("BASE_IMAGE", internal_pull_spec(spec.build_stage_from, options))]


def internal_pull_spec(source: Source, options: ClusterOptions) -> str:
    """An ImageStreamTag as a build pulls it from the cluster's internal registry.

    Raises:
        UsageError: No namespace is given (the pull spec names it).
    """
    if not options.namespace:
        raise UsageError(
            "a runtime image's build stage is FROM an ImageStreamTag that the BuildConfig's"
            " `from` cannot name (it replaces the last FROM): its pull spec names the namespace",
            hint="give --namespace NS, or --flavour devel",
        )
    return f"{INTERNAL_REGISTRY[options.openshift]}/{options.namespace}/{source.name}"


def _mirror_args(dockerfile: str) -> List[Tuple[str, str]]:
    """The mirror build arguments the Dockerfile declares with a value (NVIDIA_MIRROR first),
    each once (a multi-stage Dockerfile declares them in each stage that uses them): a
    cluster's own mirrors are one edit of these away. pip's PIP_INDEX_URL without one is
    left out: an empty value would be an empty index."""
    found: Dict[str, str] = {}
    for line in dockerfile.splitlines():
        if line.startswith("ARG ") and "=" in line:
            name, value = line[len("ARG ") :].split("=", 1)
            if name not in ("BASE_IMAGE", "RUNTIME_IMAGE"):
                found.setdefault(name, value)
    if not found or next(iter(found)) != "NVIDIA_MIRROR":
        raise AssertionError("every mlcc Dockerfile declares NVIDIA_MIRROR first")
    return list(found.items())


# ----------------------------------------------------------------------------- sizes

DEFAULT_BUILD_MEMORY = "8Gi"
# A PyTorch source build runs thousands of nvcc/c++ jobs; with ninja's default parallelism on a
# large node it outgrows any fixed memory limit and is OOM-killed. Memory and MAX_JOBS (read by
# PyTorch's setup.py and torch.utils.cpp_extension, so by apex and maskrcnn_benchmark too) are
# sized together. 4 GiB per job is a conservative assumption for nvcc on PyTorch's kernels, not a
# measurement made here.
SOURCE_BUILD_MEMORY = "16Gi"
GIB_PER_JOB = 4
_UNITS = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def quantity_bytes(value: str) -> float:
    """A Kubernetes memory quantity in bytes (the forms options.py accepts)."""
    match = re.match(r"^([0-9]+(?:\.[0-9]+)?)([A-Za-z]*)$", value)
    assert match is not None
    number, unit = match.groups()
    return float(number) * _UNITS.get(unit, 1)


def build_size(spec: BuildConfigSpec, options: ClusterOptions) -> Tuple[str, Optional[int]]:
    """(memory, MAX_JOBS) of a build: None jobs when it compiles nothing."""
    default = SOURCE_BUILD_MEMORY if spec.compiles == "framework-source" else DEFAULT_BUILD_MEMORY
    memory = options.build_memory or default
    if not spec.compiles:
        return memory, None
    if options.build_max_jobs is not None:
        return memory, options.build_max_jobs
    return memory, max(1, int(quantity_bytes(memory) // (GIB_PER_JOB * 2**30)))


def compiles(rendered: Rendered, parts: Sequence[str]) -> str:
    """What a build of ``parts`` (framework, benchmark) compiles from source."""
    stack = rendered.stack
    if "framework" in parts and stack.framework is not None and stack.framework.install.method == "source":
        return "framework-source"
    build = stack.benchmark.build
    compiled = ("git", "make", "install", "script")
    if "benchmark" in parts and build is not None and any(step.kind in compiled for step in build.steps):
        return "extensions"
    return ""


# ----------------------------------------------------------------------------- specs


def flat_spec(
    rendered: Rendered, name: str, stream: str, source: Source, options: ClusterOptions
) -> BuildConfigSpec:
    """One BuildConfig for the whole variant (the Dockerfile in dockerfiles/): the graph's
    one stage."""
    image = rendered.graph.final
    git_context = f"{options.git_context_root}/{image.repository}/{image.tag}" if options.git_uri else None
    return BuildConfigSpec(
        name=name,
        component="benchmark",
        dockerfile=image.dockerfile,
        files=() if git_context else image.files,
        source=source,
        output=(stream, image.tag),
        labels=image.labels,
        digest=image.digest,
        git_context=git_context,
        compiles=compiles(rendered, ("framework", "benchmark")),
        # both stages of a runtime image are FROM the base; `from` replaces the last FROM,
        # so the first takes the same ImageStreamTag through its build arg
        build_stage_from=source if image.runtime_parent and options.namespace else None,
    )


def chain_specs(
    rendered: Rendered, name: str, stream: str, base: Source, options: ClusterOptions
) -> List[BuildConfigSpec]:
    """One BuildConfig per stage of the chained graph (:func:`mlcc.render.chain.chain_graph`),
    each FROM the ImageStreamTag of the stage its graph names as its parent.

    The stack and framework stages are named by a digest of their own Dockerfile, so every
    variant (of any benchmark) that renders the same stage shares one BuildConfig.
    """
    if options.git_uri:
        raise UsageError("--chain builds from inline Dockerfiles; it does not combine with --git-uri")
    graph = chain_graph(rendered, base.name)  # the BuildConfig's `from` replaces it
    sources = {BASE: base, **{s.kind: Source(s.repository, s.tag) for s in graph.shared}}
    specs = [
        BuildConfigSpec(
            name=names.object_name(stage.kind, _short(stage), stage.digest[7:15]),
            component=stage.kind,
            dockerfile=stage.dockerfile,
            files=(),
            source=sources[stage.parent],
            output=(stage.repository, stage.tag),
            labels=(*stage.labels, ("io.mlcc.stage.digest", stage.digest)),
            digest=stage.digest,
            compiles=compiles(rendered, (stage.kind,)),
        )
        for stage in graph.shared
    ]
    # the BuildConfig's `from` replaces the last FROM: the benchmark stage's parent, or a
    # runtime image's runtime stage (its build stage's parent is then a build arg)
    final = graph.final
    runtime = sources[final.runtime_parent] if final.runtime_parent else None
    specs.append(
        BuildConfigSpec(
            name=name,
            component="benchmark",
            dockerfile=final.dockerfile,
            files=final.files,
            source=runtime or sources[final.parent],
            build_stage_from=sources[final.parent] if runtime else None,
            output=(stream, final.tag),
            # the image is built FROM the framework stage, whose io.mlcc.stage it would
            # inherit: it names its own stage, as the local engines' chained builds do
            labels=final.labels,
            digest=final.digest,
            compiles=compiles(rendered, ("benchmark",)),
        )
    )
    return specs


def _short(stage: Stage) -> str:
    """A BuildConfig name part short enough for build pod names (the tag keeps the rest)."""
    readable = stage.readable
    return (
        "-".join(p for p in readable.split("-") if not p.startswith("nccl"))
        if stage.kind in ("stack", RUNTIME)
        else readable
    )


# ----------------------------------------------------------------------------- a variant


def variant_build_objects(rendered: Rendered, options: ClusterOptions) -> List[Obj]:
    """Everything ``oc apply -f`` needs to build one variant, in apply order."""
    stack = rendered.stack
    bench = stack.benchmark.name
    variant = rendered.variant
    name = names.object_name(bench, variant)
    stream = names.object_name(bench)
    base_obj, base_source = base_stream(rendered, options)
    arch = stack.arch.kubernetes
    specs = (
        chain_specs(rendered, name, stream, base_source, options)
        if options.chain
        else [flat_spec(rendered, name, stream, base_source, options)]
    )
    objects: List[Obj] = [base_obj]
    streams = {base_source.stream}
    for spec in specs:
        pushed_out = spec.component == "benchmark" and options.push_to
        if spec.output[0] not in streams and not pushed_out:
            streams.add(spec.output[0])
            app = bench if spec.component == "benchmark" else spec.output[0]
            labels = common_labels(app, spec.output[0], mlcc.__version__, f"{spec.component}-image")
            objects.append(output_stream(spec.output[0], labels, options))
    for spec in specs:
        app = bench if spec.component == "benchmark" else f"mlcc-{spec.component}"
        version = variant if spec.component == "benchmark" else spec.output[1]
        labels = common_labels(app, spec.name, version, "build")
        objects.extend(context_configmaps(spec, labels, options))
        objects.append(build_config(spec, labels, options, arch))
    return objects


def image_reference(rendered: Rendered, options: ClusterOptions) -> str:
    """What run manifests pull: the pushed repository, the internal registry, or stream:tag."""
    variant = rendered.variant
    stream = names.object_name(rendered.stack.benchmark.name)
    if options.push_to:
        return f"{options.push_to}:{variant}"
    if options.namespace:
        return f"{INTERNAL_REGISTRY[options.openshift]}/{options.namespace}/{stream}:{variant}"
    return f"{stream}:{variant}"  # resolved through the ImageStream's lookupPolicy.local


def dedupe(objects: Sequence[Obj], where: Sequence[str]) -> List[Obj]:
    """One copy of each object; two different objects with one name are an error."""
    seen: Dict[Tuple[str, str, str], Tuple[Obj, str]] = {}
    found: List[Obj] = []
    for obj, origin in zip(objects, where):
        key = (obj["apiVersion"], obj["kind"], obj["metadata"]["name"])
        if key in seen:
            if seen[key][0] != obj:
                raise UsageError(
                    f"{obj['kind']} {key[2]} is defined differently in {seen[key][1]} and {origin}",
                    hint="regenerate those variants with the same --openshift, --namespace and mirrors",
                )
            continue
        seen[key] = (obj, origin)
        found.append(obj)
    return found
