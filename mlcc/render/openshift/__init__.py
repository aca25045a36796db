"""OpenShift and Kubernetes objects for a rendered variant.

    files = render_openshift(rendered, ClusterOptions(openshift="4"))
    files.files   # (("maskrcnn/<variant>/build.yaml", ...), ("maskrcnn/<variant>/run/job.yaml", ...))

``build.yaml`` is a List of the ImageStreams, ConfigMaps and BuildConfig(s) that build the
variant (``oc apply -f <variant>/``); ``run/`` holds the Pod, Job and MPIJob that run it.
``benchmark_list`` merges the build objects of all variants of a benchmark into
``<benchmark>/<benchmark>.yaml`` (``oc apply -f buildconfigs/<benchmark>/``). Objects are
dicts built in a fixed key order and written by :mod:`.yamlout`: byte-identical output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from mlcc.errors import UsageError
from mlcc.render.openshift.build import dedupe, variant_build_objects
from mlcc.render.openshift.options import (
    DEFAULT_CLUSTER,
    OPENSHIFT_VERSIONS,
    ClusterOptions,
    check_cluster_options,
)
from mlcc.render.openshift.run import (
    job,
    launch_configmap,
    mpi_size,
    mpijob,
    pod,
    pytorchjob,
    run_size,
    volume_claims,
)
from mlcc.render.openshift.yamlout import dumps
from mlcc.render.variant import Rendered

if TYPE_CHECKING:
    Obj = Dict[str, Any]
BUILD_FILE = "build.yaml"

__all__ = [
    "BUILD_FILE",
    "DEFAULT_CLUSTER",
    "OPENSHIFT_VERSIONS",
    "ClusterOptions",
    "OpenShiftFiles",
    "benchmark_list",
    "check_cluster_options",
    "object_list",
    "render_openshift",
]


class OpenShiftFiles(NamedTuple):
    folder: str  # <benchmark>/<variant>
    files: Tuple[Tuple[str, str], ...]  # (path under the OpenShift root, content)
    build_objects: Tuple[Obj, ...]


def object_list(items: Sequence[Obj]) -> Obj:
    return {"apiVersion": "v1", "kind": "List", "items": list(items)}


def render_openshift(rendered: Rendered, options: ClusterOptions = DEFAULT_CLUSTER) -> OpenShiftFiles:
    folder = f"{rendered.stack.benchmark.name}/{rendered.variant}"
    build_objects = variant_build_objects(rendered, options)
    files: List[Tuple[str, str]] = [(f"{folder}/{BUILD_FILE}", dumps(object_list(build_objects)))]
    if options.nodes is not None and options.nodes > 1:
        run_size(rendered, options, options.nodes)  # refuses a benchmark with no multi-node launch
    else:
        files.append((f"{folder}/run/pod.yaml", dumps(pod(rendered, options))))
        files.append((f"{folder}/run/job.yaml", dumps(job(rendered, options))))
        one = run_size(rendered, options, 1)
        config = launch_configmap(rendered, options, one)
        if config is not None:
            files.append((f"{folder}/run/launch-1x{one.gpus}.yaml", dumps(config)))
    claims = volume_claims(rendered, options)
    if claims:
        files.append((f"{folder}/run/volumes.yaml", dumps(object_list(claims))))
    mpi = mpijob(rendered, options)
    if mpi is not None:
        files.append((f"{folder}/run/mpijob.yaml", dumps(mpi)))
        torch_job = pytorchjob(rendered, options)
        if torch_job is not None:
            files.append((f"{folder}/run/pytorchjob.yaml", dumps(torch_job)))
        size = mpi_size(rendered, options)
        assert size is not None
        config = launch_configmap(rendered, options, size)
        if config is not None:
            files.append((f"{folder}/run/launch-{size.nodes}x{size.gpus}.yaml", dumps(config)))
    elif (
        options.nccl_env
        or options.nccl_profile
        or options.rdma_resource
        or options.sriov_network
        or options.host_network
    ):
        raise UsageError(
            f"{rendered.stack.benchmark.name}: NCCL and RDMA options configure an MPIJob, and"
            f" {rendered.variant} gets none",
            hint="drop --nccl-env, --nccl-profile, --rdma-resource, --sriov-network and --host-network",
        )
    return OpenShiftFiles(folder, tuple(sorted(files)), tuple(build_objects))


def benchmark_list(
    benchmark: str, variants: Sequence[Tuple[str, Sequence[Obj]]], built: Optional[Mapping[str, str]] = None
) -> Tuple[str, str]:
    """``<benchmark>/<benchmark>.yaml``: every variant's build objects, each object once.

    Args:
        benchmark: The benchmark's name.
        variants: ``(variant, build objects)`` for every variant of the benchmark.
        built: Variant -> the text of its ``build.yaml`` where it was just dumped: when the
            merged list is exactly those objects in that order (a benchmark with one
            variant), the file is that text, not a second dump of the same document.

    Returns:
        The file's path under the OpenShift root and its content.

    Raises:
        UsageError: Two variants define one object differently.
    """
    objects: List[Obj] = []
    origins: List[str] = []
    for variant, items in sorted(variants, key=lambda v: v[0]):
        objects += items
        origins += [f"{benchmark}/{variant}/{BUILD_FILE}"] * len(items)
    merged = dedupe(objects, origins)
    # ImageStreams first, then ConfigMaps, then BuildConfigs: what `oc apply` creates in order
    order = {"ImageStream": 0, "ConfigMap": 1, "BuildConfig": 2}
    merged.sort(key=lambda o: order.get(o["kind"], 3))
    path = f"{benchmark}/{benchmark}.yaml"
    for variant, items in variants:
        text = (built or {}).get(variant)
        if text is not None and len(items) == len(merged) and all(a is b for a, b in zip(items, merged)):
            return path, text  # the very objects of that variant's build.yaml, in its order
    return path, dumps(object_list(merged))
