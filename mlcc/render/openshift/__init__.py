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

from typing import Any, Dict, List, NamedTuple, Sequence, Tuple

from mlcc.render import Rendered
from mlcc.render.openshift.build import dedupe, variant_build_objects
from mlcc.render.openshift.options import (
    DEFAULT_CLUSTER,
    OPENSHIFT_VERSIONS,
    ClusterOptions,
    check_cluster_options,
)
from mlcc.render.openshift.run import job, mpijob, pod
from mlcc.render.openshift.yamlout import dumps

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
    files.append((f"{folder}/run/pod.yaml", dumps(pod(rendered, options))))
    files.append((f"{folder}/run/job.yaml", dumps(job(rendered, options))))
    mpi = mpijob(rendered, options)
    if mpi is not None:
        files.append((f"{folder}/run/mpijob.yaml", dumps(mpi)))
    return OpenShiftFiles(folder, tuple(sorted(files)), tuple(build_objects))


def benchmark_list(benchmark: str, variants: Sequence[Tuple[str, Sequence[Obj]]]) -> Tuple[str, str]:
    """``<benchmark>/<benchmark>.yaml``: every variant's build objects, each object once."""
    objects: List[Obj] = []
    origins: List[str] = []
    for variant, items in sorted(variants, key=lambda v: v[0]):
        objects += items
        origins += [f"{benchmark}/{variant}/{BUILD_FILE}"] * len(items)
    merged = dedupe(objects, origins)
    # ImageStreams first, then ConfigMaps, then BuildConfigs: what `oc apply` creates in order
    order = {"ImageStream": 0, "ConfigMap": 1, "BuildConfig": 2}
    merged.sort(key=lambda o: order.get(o["kind"], 3))
    return f"{benchmark}/{benchmark}.yaml", dumps(object_list(merged))
