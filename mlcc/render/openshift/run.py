"""Run manifests for a variant: a Pod, a Job and (where the recipe says how) an MPIJob.

What a GPU benchmark pod needs (see README, "Running"): the GPUs as ``nvidia.com/gpu``
limits and the matching toleration, a memory-backed ``/dev/shm`` (the container default
of 64 MiB starves NCCL and data loaders), the dataset volume, the benchmark's environment
with its GPU count made consistent, and the restricted security context where the
benchmark allows it.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from mlcc.errors import UsageError
from mlcc.render import Rendered
from mlcc.render.openshift import names
from mlcc.render.openshift.build import common_labels, image_reference, metadata
from mlcc.render.openshift.options import ClusterOptions

Obj = Dict[str, Any]

GPU = "nvidia.com/gpu"
GPU_TOLERATION = {"key": GPU, "operator": "Exists", "effect": "NoSchedule"}
# Environment names that state a GPU count the pod must agree with.
GPU_COUNT_ENV = ("DGXNGPU",)
NCCL_DEFAULTS = (("NCCL_DEBUG", "INFO"), ("NCCL_IB_DISABLE", "0"))
JOB_TTL_SECONDS = 7 * 24 * 3600
MPI_USER_NOTE = (
    "mpi-operator's workers run sshd as root: the service account needs an SCC that allows"
    " it (e.g. anyuid or privileged)"
)


def gpu_count(rendered: Rendered, options: ClusterOptions) -> int:
    """GPUs per pod: --gpus, else the benchmark's reference count; 0 for CPU stacks."""
    bench = rendered.stack.benchmark
    if rendered.stack.cuda is None:
        if options.gpus is not None:
            raise UsageError(
                f"--gpus {options.gpus}: {rendered.variant} is a CPU-only stack",
                hint="drop --gpus, or generate a CUDA variant",
            )
        return 0
    gpus = options.gpus if options.gpus is not None else bench.gpus_reference
    if gpus < bench.gpus_min:
        raise UsageError(
            f"--gpus {gpus}: {bench.name} needs at least {bench.gpus_min} GPU(s) per pod",
            hint=f"its reference run used {bench.gpus_reference}",
        )
    return gpus


def run_arguments(rendered: Rendered, gpus: int) -> List[str]:
    """The recipe's default arguments, ``{gpus}`` replaced by the GPUs each process drives."""
    build = rendered.stack.benchmark.build
    assert build is not None
    args = dict(build.run_args).get(rendered.stack.accelerator, ())
    return [arg.replace("{gpus}", str(gpus)) for arg in args]


def _env(rendered: Rendered, gpus: int, extra: Sequence[Tuple[str, str]] = ()) -> List[Obj]:
    build = rendered.stack.benchmark.build
    assert build is not None
    values = dict(build.env)
    for name in GPU_COUNT_ENV:
        if name in values and gpus:
            values[name] = str(gpus)
    values.update(extra)
    return [{"name": name, "value": value} for name, value in values.items()]


def _volumes(rendered: Rendered, options: ClusterOptions) -> Tuple[List[Obj], List[Obj], List[str]]:
    """(volumes, volume mounts, notes) for /dev/shm, the dataset and the results."""
    build = rendered.stack.benchmark.build
    assert build is not None
    volumes: List[Obj] = []
    mounts: List[Obj] = []
    notes: List[str] = []
    if build.shm:
        volumes.append({"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": build.shm}})
        mounts.append({"name": "dshm", "mountPath": "/dev/shm"})
    for dataset in build.datasets[:1]:  # one dataset volume; its description names the rest
        volume: Obj = {"name": "data"}
        if options.data_hostpath:
            volume["hostPath"] = {"path": options.data_hostpath, "type": "Directory"}
            notes.append("hostPath volumes need an SCC that allows them (e.g. hostmount-anyuid)")
        else:
            claim = options.data_claim or names.object_name(rendered.stack.benchmark.name, "data")
            volume["persistentVolumeClaim"] = {"claimName": claim}
        volumes.append(volume)
        mounts.append({"name": "data", "mountPath": dataset.mount})
    results = _results_path(rendered)
    if results and all(m["mountPath"] != results for m in mounts):
        if options.results_claim:
            volumes.append({"name": "results", "persistentVolumeClaim": {"claimName": options.results_claim}})
        else:
            volumes.append({"name": "results", "emptyDir": {}})
            notes.append(
                f"{results} is an emptyDir: copy the logs out before the pod goes (or --results-claim)"
            )
        mounts.append({"name": "results", "mountPath": results})
    return volumes, mounts, notes


def _results_path(rendered: Rendered) -> Optional[str]:
    build = rendered.stack.benchmark.build
    assert build is not None
    logdir = dict(build.env).get("LOGDIR")
    return logdir if logdir and logdir.startswith("/") else None


def _container_security(run_as_root: bool) -> Obj:
    context: Obj = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    if not run_as_root:
        context["runAsNonRoot"] = True
    return context


def _pod_security(run_as_root: bool, options: ClusterOptions) -> Obj:
    # seccompProfile is a field since Kubernetes 1.19; OpenShift 3.11 (1.11) has no such field
    context: Obj = {} if options.openshift == "3.11" else {"seccompProfile": {"type": "RuntimeDefault"}}
    if run_as_root:
        context["runAsUser"] = 0
    else:
        context["runAsNonRoot"] = True
    return context


def benchmark_container(
    rendered: Rendered,
    options: ClusterOptions,
    gpus: int,
    mounts: List[Obj],
    *,
    command: Optional[List[str]] = None,
    extra_env: Sequence[Tuple[str, str]] = (),
    run_as_root: bool = False,
) -> Obj:
    build = rendered.stack.benchmark.build
    assert build is not None
    args = run_arguments(rendered, gpus) + list(build.cmd)
    container: Obj = {
        "name": names.object_name(rendered.stack.benchmark.name),
        "image": image_reference(rendered, options),
        "imagePullPolicy": "IfNotPresent",
    }
    if command is not None:
        container["command"] = command
    else:
        container["command"] = list(build.entrypoint)
        if args:
            container["args"] = args
    container["workingDir"] = build.workdir
    container["env"] = _env(rendered, gpus, extra_env)
    if gpus:
        container["resources"] = {"limits": {GPU: gpus}}
    if mounts:
        container["volumeMounts"] = mounts
    container["securityContext"] = _container_security(run_as_root or build.run_as_root)
    return container


def pod_spec(rendered: Rendered, options: ClusterOptions, gpus: int) -> Tuple[Obj, List[str]]:
    build = rendered.stack.benchmark.build
    assert build is not None
    volumes, mounts, notes = _volumes(rendered, options)
    spec: Obj = {
        "restartPolicy": "Never",
        "containers": [benchmark_container(rendered, options, gpus, mounts)],
        "nodeSelector": {"kubernetes.io/arch": rendered.stack.arch.kubernetes},
    }
    if gpus:
        spec["tolerations"] = [dict(GPU_TOLERATION)]
    if volumes:
        spec["volumes"] = volumes
    spec["securityContext"] = _pod_security(build.run_as_root, options)
    if build.run_as_root:
        notes.append("runs as root: the benchmark cannot run under the restricted SCC (see its recipe note)")
    return spec, notes


def _annotations(rendered: Rendered, notes: Sequence[str]) -> Dict[str, str]:
    build = rendered.stack.benchmark.build
    assert build is not None
    found = {"openshift.io/generated-by": "mlcc", "mlcc.io/variant": rendered.variant}
    if build.datasets:
        dataset = build.datasets[0]
        found["mlcc.io/dataset"] = f"{dataset.name} ({dataset.size}) at {dataset.mount}: {dataset.download}"
    if notes:
        found["mlcc.io/notes"] = "; ".join(notes)
    return found


def _single_run(rendered: Rendered, options: ClusterOptions) -> Tuple[Obj, Obj, Obj]:
    """metadata, labels and pod spec of a one-pod run: what the Pod and the Job share."""
    spec, notes = pod_spec(rendered, options, gpu_count(rendered, options))
    name = names.object_name(rendered.stack.benchmark.name, rendered.variant)
    labels = common_labels(rendered.stack.benchmark.name, name, rendered.variant, "benchmark-run")
    return metadata(name, labels, options, **_annotations(rendered, notes)), labels, spec


def pod(rendered: Rendered, options: ClusterOptions) -> Obj:
    meta, _, spec = _single_run(rendered, options)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def job(rendered: Rendered, options: ClusterOptions) -> Obj:
    meta, labels, spec = _single_run(rendered, options)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {
            "backoffLimit": 0,  # a failed benchmark run is a result, not something to retry
            "ttlSecondsAfterFinished": JOB_TTL_SECONDS,
            "template": {"metadata": {"labels": labels}, "spec": spec},
        },
    }


def nccl_env(options_env: Sequence[Tuple[str, str]]) -> List[Tuple[str, str]]:
    values = dict(NCCL_DEFAULTS)
    values.update(options_env)
    return sorted(values.items())


def mpijob(rendered: Rendered, options: ClusterOptions) -> Optional[Obj]:
    """kubeflow.org/v2beta1 MPIJob, for benchmarks whose recipe says how to launch them."""
    stack = rendered.stack
    build = stack.benchmark.build
    assert build is not None
    if build.mpi is None or stack.cuda is None:
        return None
    gpus = gpu_count(rendered, options)
    workers = options.nodes
    prefix = build.mpi.prefix_for(stack.base.family)
    knobs = nccl_env(options.nccl_env)
    args = list(build.mpi.args) if build.mpi.args else run_arguments(rendered, 1)
    mpirun = [
        f"{prefix}/bin/mpirun",
        "--allow-run-as-root",
        "--prefix",
        prefix,
        "-np",
        str(workers * gpus),
        "-bind-to",
        "none",
        "-map-by",
        "slot",
    ]
    for name in ["LD_LIBRARY_PATH", "PATH", *(k for k, _ in knobs)]:
        mpirun += ["-x", name]
    mpirun += [*build.entrypoint, *args]
    volumes, mounts, notes = _volumes(rendered, options)
    notes = [MPI_USER_NOTE, *notes]
    launcher = benchmark_container(
        rendered,
        options,
        0,
        [m for m in mounts if m["name"] == "results"],
        command=mpirun,
        extra_env=knobs,
        run_as_root=True,
    )
    launcher["securityContext"] = {"allowPrivilegeEscalation": False}
    worker = benchmark_container(
        rendered, options, gpus, mounts, command=["/usr/sbin/sshd", "-De"], extra_env=knobs, run_as_root=True
    )
    worker["securityContext"] = {"allowPrivilegeEscalation": False}
    name = names.object_name(stack.benchmark.name, rendered.variant)
    labels = common_labels(stack.benchmark.name, name, rendered.variant, "benchmark-run")
    node = {"kubernetes.io/arch": stack.arch.kubernetes}
    launcher_volumes = [v for v in volumes if v["name"] == "results"]
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": metadata(name, labels, options, **_annotations(rendered, notes)),
        "spec": {
            "slotsPerWorker": gpus,
            "runPolicy": {
                "cleanPodPolicy": "Running",
                "backoffLimit": 0,
                "ttlSecondsAfterFinished": JOB_TTL_SECONDS,
            },
            "mpiImplementation": "OpenMPI",
            "sshAuthMountPath": "/root/.ssh",
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "restartPolicy": "Never",
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": {
                            "containers": [launcher],
                            "nodeSelector": node,
                            **({"volumes": launcher_volumes} if launcher_volumes else {}),
                            "securityContext": _pod_security(True, options),
                        },
                    },
                },
                "Worker": {
                    "replicas": workers,
                    "restartPolicy": "Never",
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": {
                            "containers": [worker],
                            "nodeSelector": node,
                            "tolerations": [dict(GPU_TOLERATION)],
                            **({"volumes": volumes} if volumes else {}),
                            "securityContext": _pod_security(True, options),
                        },
                    },
                },
            },
        },
    }
