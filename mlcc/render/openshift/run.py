"""Run manifests for a variant: a Pod, a Job and (where the recipe says how) an MPIJob.

What a GPU benchmark pod needs (see README, "Running"): the GPUs as ``nvidia.com/gpu``
limits and the matching toleration, a memory-backed ``/dev/shm`` (the container default
of 64 MiB starves NCCL and data loaders), the dataset volume, the benchmark's environment
with its GPU count made consistent, and the restricted security context where the
benchmark allows it.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from mlcc.errors import UsageError
from mlcc.kb.model import Dataset, System
from mlcc.render.openshift import launch as launching
from mlcc.render.openshift import names
from mlcc.render.openshift.build import common_labels, image_reference, metadata
from mlcc.render.openshift.launch import Size
from mlcc.render.openshift.options import ClusterOptions, nccl_settings
from mlcc.render.openshift.seed import seed_env, seeded
from mlcc.render.plan.writer import spell_gpu_arch
from mlcc.render.variant import Rendered

if TYPE_CHECKING:
    Obj = Dict[str, Any]

GPU = "nvidia.com/gpu"
GPU_TOLERATION = {"key": GPU, "operator": "Exists", "effect": "NoSchedule"}
# Environment names that state a GPU count the pod must agree with.
GPU_COUNT_ENV = ("DGXNGPU",)
EXAMPLE_NODES = 2  # the MPIJob's size when --nodes is not given
# A run pod's memory request where neither a node system nor the recipe's shm sizes it.
FALLBACK_MEMORY = "1Gi"
# The MPIJob launcher runs mpirun and ssh only: one core and 1 GiB (mlcc's floor, not NVIDIA's)
# keep it out of BestEffort.
LAUNCHER_REQUESTS = {"cpu": "1", "memory": "1Gi"}
# NVIDIA's v2.1 run_with_docker.sh (bert, maskrcnn, ssd, rnnt): TORCH_RUN, one process per GPU
TORCH_RUN = ("python", "-m", "torch.distributed.run", "--standalone", "--no_python")
LAUNCH_VOLUME = "launch"
IPC_LOCK = "IPC_LOCK"  # RDMA pins memory (ibv_reg_mr): memlock beyond the default limit
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


def run_size(rendered: Rendered, options: ClusterOptions, nodes: int) -> Size:
    """The size of one run, checked against what the benchmark's launch can honour."""
    bench = rendered.stack.benchmark
    build = bench.build
    assert build is not None
    size = Size(nodes, gpu_count(rendered, options))
    can_mpi = build.mpi is not None and rendered.stack.cuda is not None
    launching.check_size(
        build.launch if size.gpus else None,
        size,
        bench.name,
        can_mpi,
        rendered.stack.gpu_capability,
    )
    return size


class PodResources(NamedTuple):
    """What a run pod (an MPIJob worker) requests besides its GPUs, and its /dev/shm."""

    cpu: str
    memory: str
    shm: Optional[str]  # the memory-backed /dev/shm's size limit (None: the runtime's default)


def node_system(rendered: Rendered, size: Size) -> Optional[System]:
    """The machine each node of ``size`` is taken to be (the launch's node shape for the
    stack's GPU, :func:`launching.choose`), where recipes/systems.yaml knows it."""
    build = rendered.stack.benchmark.build
    assert build is not None
    if build.launch is None or not size.gpus:
        return None
    bench = rendered.stack.benchmark.name
    shape = launching.choose(build.launch, size, bench, rendered.stack.gpu_capability).shape
    return next((s for s in rendered.stack.systems if s.name == shape.name), None)


def pod_resources(rendered: Rendered, options: ClusterOptions, size: Size) -> PodResources:
    """CPU and memory requests, so that a run pod is never BestEffort (the first a node evicts),
    and its /dev/shm.

    On a node NVIDIA ran on (recipes/systems.yaml): the cores of the pod's GPUs' share of the
    node (NVIDIA's launchers bind each GPU's process to cores/gpus cores) and, as /dev/shm and
    the memory request, half of their share of the memory (NVIDIA's containers run with
    --ipc=host: the host's /dev/shm, a tmpfs of half the RAM). Elsewhere one core per GPU (one
    per pod without GPUs) and the recipe's shm. --run-cpu and --run-memory override the requests;
    no limits are set, so the pod is Burstable and may use what the node has free.
    """
    build = rendered.stack.benchmark.build
    assert build is not None
    system = node_system(rendered, size)
    shm: Optional[str] = build.shm
    cpu = str(max(1, size.gpus))
    if system is not None:
        cpu, shm = str(system.cores_for(size.gpus)), _mebibytes(system.shm_mib_for(size.gpus))
    return PodResources(options.run_cpu or cpu, options.run_memory or shm or FALLBACK_MEMORY, shm)


def _mebibytes(mib: int) -> str:
    """``mib`` MiB as a Kubernetes quantity in the largest binary unit that holds it whole."""
    for unit, size in (("Ti", 1024 * 1024), ("Gi", 1024)):
        if mib % size == 0:
            return f"{mib // size}{unit}"
    return f"{mib}Mi"


def _env(rendered: Rendered, size: Size, extra: Sequence[Tuple[str, str]] = ()) -> List[Obj]:
    """The container's env: the recipe's values, which the image's ENV holds too, written
    again so that the pod states them beside what it sets for its size (the GPU count
    agreeing with its limit, the launch configuration's variables). The variables the
    recipe extends (``build.env_extensions``: PATH, LD_LIBRARY_PATH ...) are left to the
    image: Kubernetes expands no ``${NAME}`` from the image's environment, so a value
    written here would replace the extended one rather than repeat it. The CUDA arch lists
    are the image's, as --gpu spelled them."""
    values = dict(_env_values(rendered, size))
    values.update(extra)
    return [{"name": name, "value": value} for name, value in values.items()]


def _env_values(rendered: Rendered, size: Size) -> List[Tuple[str, str]]:
    """The recipe's values as the pod states them (see :func:`_env`), before ``extra``."""
    build = rendered.stack.benchmark.build
    assert build is not None
    values = dict(spell_gpu_arch(rendered.stack, build.env, build.arch_list_names))
    for name in GPU_COUNT_ENV:
        if name in values and size.gpus:
            values[name] = str(size.gpus)
    if build.launch is not None and size.gpus:
        values.update(launching.environment(build.launch, size))
    return list(values.items())


def launch_config_name(rendered: Rendered, size: Size) -> str:
    return names.object_name(rendered.stack.benchmark.name, rendered.variant, f"{size.nodes}x{size.gpus}")


def launch_configmap(rendered: Rendered, options: ClusterOptions, size: Size) -> Optional[Obj]:
    """The configuration NVIDIA's scripts source, for this size (None: nothing to configure)."""
    build = rendered.stack.benchmark.build
    assert build is not None
    if build.launch is None or not size.gpus:
        return None
    name = launch_config_name(rendered, size)
    labels = common_labels(rendered.stack.benchmark.name, name, rendered.variant, "benchmark-config")
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(name, labels, options),
        "data": dict(
            launching.files(build.launch, size, rendered.stack.benchmark.name, rendered.stack.gpu_capability)
        ),
    }


def _launch_mounts(rendered: Rendered, size: Size) -> Tuple[List[Obj], List[Obj]]:
    """The generated files, mounted one by one into the work directory the scripts run in."""
    build = rendered.stack.benchmark.build
    assert build is not None
    if build.launch is None or not size.gpus:
        return [], []
    found = launching.files(build.launch, size, rendered.stack.benchmark.name, rendered.stack.gpu_capability)
    volume = {
        "name": LAUNCH_VOLUME,
        "configMap": {"name": launch_config_name(rendered, size), "defaultMode": 0o755},
    }
    mounts = [
        {"name": LAUNCH_VOLUME, "mountPath": f"{build.workdir}/{file}", "subPath": file, "readOnly": True}
        for file, _ in found
    ]
    return [volume], mounts


def _volumes(
    rendered: Rendered, options: ClusterOptions, size: Size
) -> Tuple[List[Obj], List[Obj], List[str]]:
    """(volumes, volume mounts, notes) for /dev/shm, the dataset and the results."""
    build = rendered.stack.benchmark.build
    assert build is not None
    volumes: List[Obj] = []
    mounts: List[Obj] = []
    notes: List[str] = []
    shm = pod_resources(rendered, options, size).shm
    if shm:
        volumes.append({"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": shm}})
        mounts.append({"name": "dshm", "mountPath": "/dev/shm"})
    for dataset in build.datasets[:1]:  # the dataset: --data-claim or --data-hostpath
        volume: Obj = {"name": "data"}
        if options.data_hostpath:
            volume["hostPath"] = {"path": options.data_hostpath, "type": "Directory"}
            notes.append("hostPath volumes need an SCC that allows them (e.g. hostmount-anyuid)")
        else:
            claim = options.data_claim or names.object_name(rendered.stack.benchmark.name, "data")
            volume["persistentVolumeClaim"] = {"claimName": claim}
        volumes.append(volume)
        mounts.append({"name": "data", "mountPath": dataset.mount})
    for index, (dataset, claim) in enumerate(_more_claims(rendered), 1):
        volumes.append({"name": f"data-{index}", "persistentVolumeClaim": {"claimName": claim}})
        mounts.append({"name": f"data-{index}", "mountPath": dataset.mount, "readOnly": True})
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


def _more_claims(rendered: Rendered) -> List[Tuple[Dataset, str]]:
    """The datasets after the first (llama31_405b's checkpoint beside its C4 data), each read
    from a claim of its own named after it: NVIDIA's scripts mount each from its own host path."""
    build = rendered.stack.benchmark.build
    assert build is not None
    bench = rendered.stack.benchmark.name
    return [(dataset, names.object_name(bench, dataset.name)) for dataset in build.datasets[1:]]


def volume_claims(rendered: Rendered, options: ClusterOptions) -> List[Obj]:
    """With --storage-class: the PVCs the run manifests mount (dataset ReadWriteMany, so every
    node of an MPIJob reads it; the results too when --results-claim names one)."""
    build = rendered.stack.benchmark.build
    assert build is not None
    if options.storage_class is None:
        return []
    bench = rendered.stack.benchmark.name
    wanted: List[Tuple[str, str, str]] = []
    if build.datasets:
        assert options.data_size is not None  # checked with the options
        wanted.append((options.data_claim or names.object_name(bench, "data"), options.data_size, "dataset"))
        # the others at the same --data-size: no option sizes them apart
        wanted += [(claim, options.data_size, "dataset") for _, claim in _more_claims(rendered)]
    if options.results_claim and _results_path(rendered):
        wanted.append((options.results_claim, options.results_size, "results"))
    claims = []
    for name, size, component in wanted:
        labels = common_labels(bench, name, rendered.variant, f"benchmark-{component}")
        claims.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": metadata(name, labels, options),
                "spec": {
                    "accessModes": ["ReadWriteMany"],
                    "storageClassName": options.storage_class,
                    "resources": {"requests": {"storage": size}},
                },
            }
        )
    return claims


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
    size: Size,
    mounts: List[Obj],
    *,
    command: Optional[List[str]] = None,
    extra_env: Sequence[Tuple[str, str]] = (),
    run_as_root: bool = False,
    gpus: Optional[int] = None,
    seed: bool = False,
) -> Obj:
    """The benchmark's container; ``gpus`` (default: the size's) is what it requests. With
    ``seed`` its command starts under the run-seed script where the recipe has a run seed
    (:mod:`.seed`): the containers a run starts from, not the MPIJob's sshd workers."""
    build = rendered.stack.benchmark.build
    assert build is not None
    request = size.gpus if gpus is None else gpus
    args = run_arguments(rendered, size.gpus) + list(build.cmd)
    container: Obj = {
        "name": names.object_name(rendered.stack.benchmark.name),
        "image": image_reference(rendered, options),
        "imagePullPolicy": "IfNotPresent",
    }
    if command is not None:
        container["command"] = seeded(build, command) if seed else command
    else:
        container["command"] = seeded(build, build.entrypoint) if seed else list(build.entrypoint)
        if args:
            container["args"] = args
    container["workingDir"] = build.workdir
    container["env"] = _env(rendered, size, extra_env)
    if gpus == 0 and size.gpus:  # the MPIJob's launcher: mpirun, no GPU
        container["resources"] = {"requests": dict(LAUNCHER_REQUESTS)}
    else:
        asked = pod_resources(rendered, options, size)
        container["resources"] = {"requests": {"cpu": asked.cpu, "memory": asked.memory}}
        if request:
            container["resources"]["limits"] = {GPU: request}
    if mounts:
        container["volumeMounts"] = mounts
    container["securityContext"] = _container_security(run_as_root or build.run_as_root)
    return container


def single_node_command(rendered: Rendered, size: Size) -> Optional[List[str]]:
    """Per-GPU launches (Horovod) start under mpirun even on one node, as NVIDIA's run.sub does;
    scripts that read torch.distributed's variables (``rank_env: torch``) under
    torch.distributed.run, one process per GPU, as NVIDIA's v2.1 run_with_docker.sh starts
    them on one node; None: the entrypoint itself (bind_launch starts a process per GPU)."""
    build = rendered.stack.benchmark.build
    assert build is not None
    if build.mpi is not None and build.mpi.rank_env == "torch" and size.gpus:
        return [*TORCH_RUN, f"--nproc_per_node={size.gpus}", *build.entrypoint]
    if build.launch is None or build.launch.style != "per-gpu" or build.mpi is None or not size.gpus:
        return None
    prefix = build.mpi.prefix_for(rendered.stack.base.family)
    return [f"{prefix}/bin/mpirun", "-np", str(size.gpus), "--bind-to", "none", *build.entrypoint]


def _node_selector(rendered: Rendered, options: ClusterOptions) -> Dict[str, str]:
    found = {"kubernetes.io/arch": rendered.stack.arch.kubernetes}
    if options.gpu_product:
        found["nvidia.com/gpu.product"] = options.gpu_product
    return found


def pod_spec(rendered: Rendered, options: ClusterOptions, size: Size) -> Tuple[Obj, List[str]]:
    build = rendered.stack.benchmark.build
    assert build is not None
    volumes, mounts, notes = _volumes(rendered, options, size)
    launch_volumes, launch_mounts = _launch_mounts(rendered, size)
    container = benchmark_container(
        rendered,
        options,
        size,
        mounts + launch_mounts,
        command=single_node_command(rendered, size),
        seed=True,
    )
    spec: Obj = {
        "restartPolicy": "Never",
        "containers": [container],
        "nodeSelector": _node_selector(rendered, options),
    }
    if size.gpus:
        spec["tolerations"] = [dict(GPU_TOLERATION)]
    if volumes or launch_volumes:
        spec["volumes"] = volumes + launch_volumes
    spec["securityContext"] = _pod_security(build.run_as_root, options)
    if build.run_as_root:
        notes.append("runs as root: the benchmark cannot run under the restricted SCC (see its recipe note)")
    if launch_volumes:
        notes.append(
            f"apply run/launch-{size.nodes}x{size.gpus}.yaml first: the configuration its scripts source"
        )
    return spec, notes


def _annotations(rendered: Rendered, notes: Sequence[str]) -> Dict[str, str]:
    build = rendered.stack.benchmark.build
    assert build is not None
    found = {"openshift.io/generated-by": "mlcc", "mlcc.io/variant": rendered.variant}
    if build.datasets:
        found["mlcc.io/dataset"] = "; ".join(
            f"{dataset.name} ({dataset.size}) at {dataset.mount}: {dataset.download}"
            for dataset in build.datasets
        )
    if notes:
        found["mlcc.io/notes"] = "; ".join(notes)
    return found


def _single_run(rendered: Rendered, options: ClusterOptions) -> Tuple[Obj, Obj, Obj]:
    """metadata, labels and pod spec of a one-pod run: what the Pod and the Job share."""
    spec, notes = pod_spec(rendered, options, run_size(rendered, options, 1))
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


def mpi_size(rendered: Rendered, options: ClusterOptions) -> Optional[Size]:
    """The MPIJob's size; None when the benchmark has no multi-node launch or one node was asked."""
    build = rendered.stack.benchmark.build
    assert build is not None
    if build.mpi is None or rendered.stack.cuda is None:
        return None
    if build.launch is not None and not build.launch.multi_node:
        return None
    if options.nodes == 1:
        return None
    return run_size(rendered, options, options.nodes or EXAMPLE_NODES)


# A worker's sshd with host keys of its own, made as the pod starts: the image carries none
# (a key baked into a pushed image is every puller's, and every pod's of every run).
SSHD_START = "ssh-keygen -A && exec /usr/sbin/sshd -De"


def launcher_script(rendered: Rendered, size: Size, knobs: Sequence[Tuple[str, str]]) -> str:
    """The launcher's mpirun line. Remote ranks start from sshd, not from the pod, and sshd
    gives them neither the image's ENV nor the pod's env, so every setting travels with -x
    (the run seed too: the launcher's, :mod:`.seed`); the first host of mpi-operator's
    hostfile is the master (rank 0). The recipe's values (its env, the arch lists as --gpu
    spells them) and the variables it extends travel by name, as PATH and LD_LIBRARY_PATH
    do: the launcher's pod env holds the former, and its image's ENV the latter."""
    stack = rendered.stack
    build = stack.benchmark.build
    assert build is not None and build.mpi is not None
    prefix = build.mpi.prefix_for(stack.base.family)
    launch = build.launch
    seed = seed_env(build)
    valued = [*knobs, *(launching.environment(launch, size) if launch is not None else ())]
    by_name = ["PATH", "LD_LIBRARY_PATH"]
    by_name += [ext.name for ext in build.env_extensions]
    by_name += [name for name, _ in _env_values(rendered, size)]
    by_name = [name for name in dict.fromkeys(by_name) if name not in dict(valued)]
    exports = [*by_name, *([seed] if seed else []), *(f"{k}={v}" for k, v in valued)]
    mpirun = [f"{prefix}/bin/mpirun", "--allow-run-as-root", "--prefix", prefix]
    if build.mpi.ranks == "node":
        mpirun += ["-np", str(size.nodes), "--map-by", "ppr:1:node", "--bind-to", "none"]
    else:
        mpirun += ["-np", str(size.total), "--map-by", "slot", "--bind-to", "none"]
    mpirun += ["-wdir", build.workdir]
    for item in exports:
        mpirun += ["-x", item]
    words = " ".join(shlex.quote(w) for w in mpirun)
    if build.mpi.ranks == "node":
        node = launching.node_script(size, " ".join(build.entrypoint))
        words += ' -x MLCC_MASTER_ADDR="$master" /bin/bash -c ' + shlex.quote(node)
    elif build.mpi.rank_env == "torch":
        rank = launching.torch_rank_script(" ".join(shlex.quote(w) for w in build.entrypoint))
        words += ' -x MLCC_MASTER_ADDR="$master" /bin/bash -c ' + shlex.quote(rank)
    else:
        args = list(build.mpi.args) if build.mpi.args else run_arguments(rendered, 1)
        words += " " + " ".join(shlex.quote(w) for w in [*build.entrypoint, *args])
    return "set -eu\nmaster=$(awk 'NR==1 {print $1}' /etc/mpi/hostfile)\nexec " + words + "\n"


def _rdma(options: ClusterOptions, container: Obj, template: Obj) -> None:
    """RDMA for the workers: the device plugin's resource or an SR-IOV network, IPC_LOCK."""
    if options.rdma_resource:
        container["resources"]["limits"][options.rdma_resource] = 1
    if options.sriov_network:
        template["metadata"]["annotations"] = {"k8s.v1.cni.cncf.io/networks": options.sriov_network}
    if options.rdma_resource or options.sriov_network:
        container["securityContext"]["capabilities"] = {"add": [IPC_LOCK]}


def _network(options: ClusterOptions, spec: Obj) -> None:
    if options.host_network:
        spec["hostNetwork"] = True
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"


def _sizing_notes(options: ClusterOptions, size: Size, launch_config: bool) -> List[str]:
    """What a multi-node run object tells its user about its size and launch configuration
    (the MPIJob's and the PyTorchJob's alike)."""
    notes = []
    if launch_config:
        notes.append(
            f"apply run/launch-{size.nodes}x{size.gpus}.yaml first: the configuration its scripts source"
        )
    if options.nodes is None:
        notes.append(f"sized for {size.nodes} nodes as an example: mlcc gen --nodes N sizes it")
    return notes


def _gpu_pod_template(
    rendered: Rendered,
    options: ClusterOptions,
    container: Obj,
    volumes: List[Obj],
    labels: Obj,
    run_as_root: bool,
) -> Obj:
    """The pod template of a multi-node run's GPU replicas (the MPIJob's workers, the
    PyTorchJob's master and workers): on GPU nodes of the stack's arch, with the host
    network and RDMA the options ask for."""
    spec: Obj = {
        "containers": [container],
        "nodeSelector": _node_selector(rendered, options),
        "tolerations": [dict(GPU_TOLERATION)],
        **({"volumes": volumes} if volumes else {}),
        "securityContext": _pod_security(run_as_root, options),
    }
    _network(options, spec)
    template: Obj = {"metadata": {"labels": labels}, "spec": spec}
    _rdma(options, container, template)
    return template


def _run_policy() -> Obj:
    """A multi-node run object's runPolicy: never retried, kept a week after it ends."""
    return {
        "cleanPodPolicy": "Running",
        "backoffLimit": 0,  # a failed benchmark run is a result, not something to retry
        "ttlSecondsAfterFinished": JOB_TTL_SECONDS,
    }


def _mpi_launcher_template(
    rendered: Rendered,
    options: ClusterOptions,
    size: Size,
    knobs: Sequence[Tuple[str, str]],
    results: Tuple[List[Obj], List[Obj]],
    labels: Obj,
) -> Obj:
    """The MPIJob launcher's pod template: mpirun (:func:`launcher_script`) on any node of
    the stack's arch, no GPU, only the results volume (``results``: volumes, mounts)."""
    volumes, mounts = results
    launcher = benchmark_container(
        rendered,
        options,
        size,
        mounts,
        command=["/bin/bash", "-c", launcher_script(rendered, size, knobs)],
        run_as_root=True,
        gpus=0,
        seed=True,
    )
    launcher["securityContext"] = {"allowPrivilegeEscalation": False}
    return {
        "metadata": {"labels": labels},
        "spec": {
            "containers": [launcher],
            "nodeSelector": {"kubernetes.io/arch": rendered.stack.arch.kubernetes},
            **({"volumes": volumes} if volumes else {}),
            "securityContext": _pod_security(True, options),
        },
    }


def mpijob(rendered: Rendered, options: ClusterOptions) -> Optional[Obj]:
    """kubeflow.org/v2beta1 MPIJob, for benchmarks whose recipe says how to launch them."""
    stack = rendered.stack
    size = mpi_size(rendered, options)
    if size is None:
        return None
    knobs = nccl_settings(stack.nccl_profiles, options)
    volumes, mounts, notes = _volumes(rendered, options, size)
    launch_volumes, launch_mounts = _launch_mounts(rendered, size)
    notes = [MPI_USER_NOTE, *notes, *_sizing_notes(options, size, bool(launch_volumes))]
    name = names.object_name(stack.benchmark.name, rendered.variant)
    labels = common_labels(stack.benchmark.name, name, rendered.variant, "benchmark-run")
    results = ([v for v in volumes if v["name"] == "results"], [m for m in mounts if m["name"] == "results"])
    launcher = _mpi_launcher_template(rendered, options, size, knobs, results, labels)
    worker = benchmark_container(
        rendered,
        options,
        size,
        mounts + launch_mounts,
        command=["/bin/sh", "-c", SSHD_START],
        extra_env=knobs,
        run_as_root=True,
    )
    worker["securityContext"] = {"allowPrivilegeEscalation": False}
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": metadata(name, labels, options, **_annotations(rendered, notes)),
        "spec": {
            "slotsPerWorker": size.gpus,
            "runPolicy": _run_policy(),
            "mpiImplementation": "OpenMPI",
            "sshAuthMountPath": "/root/.ssh",
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "restartPolicy": "Never", "template": launcher},
                "Worker": {
                    "replicas": size.nodes,
                    "restartPolicy": "Never",
                    "template": _gpu_pod_template(
                        rendered, options, worker, volumes + launch_volumes, labels, run_as_root=True
                    ),
                },
            },
        },
    }


# Kubeflow's training operator names the container it configures "pytorch" and gives each
# replica MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK and, with nprocPerNode, the PET_NNODES,
# PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_ADDR and PET_MASTER_PORT torchrun reads as its
# defaults (github:kubeflow/training-operator v1.9.0 pkg/controller.v1/pytorch/envvar.go).
PYTORCH_CONTAINER = "pytorch"
TORCH_RUN_PER_NODE = ("python", "-m", "torch.distributed.run", "--no_python")


def pytorchjob(rendered: Rendered, options: ClusterOptions) -> Optional[Obj]:
    """kubeflow.org/v1 PyTorchJob for a benchmark whose recipe asks for one (``mpi.pytorchjob``):
    a Master and ``nodes - 1`` Workers, each pod starting torch.distributed.run with one process
    per GPU of the entrypoint, the node count, rank and master taken from the operator's PET_*
    variables. The same size, configuration and volumes as the MPIJob, without sshd. Where the
    recipe has a run seed, the Master hands its seed to the Workers first (:mod:`.seed`)."""
    stack = rendered.stack
    build = stack.benchmark.build
    assert build is not None
    size = mpi_size(rendered, options)
    if size is None or build.mpi is None or not build.mpi.pytorchjob:
        return None
    knobs = nccl_settings(stack.nccl_profiles, options)
    volumes, mounts, notes = _volumes(rendered, options, size)
    launch_volumes, launch_mounts = _launch_mounts(rendered, size)
    notes = [*notes, *_sizing_notes(options, size, bool(launch_volumes))]
    container = benchmark_container(
        rendered,
        options,
        size,
        mounts + launch_mounts,
        command=[*TORCH_RUN_PER_NODE, *build.entrypoint],
        extra_env=knobs,
        seed=True,
    )
    container["name"] = PYTORCH_CONTAINER
    name = names.object_name(stack.benchmark.name, rendered.variant)
    labels = common_labels(stack.benchmark.name, name, rendered.variant, "benchmark-run")
    volumes = volumes + launch_volumes
    template = _gpu_pod_template(rendered, options, container, volumes, labels, build.run_as_root)
    replicas: Obj = {"Master": {"replicas": 1, "restartPolicy": "Never", "template": template}}
    if size.nodes > 1:
        replicas["Worker"] = {"replicas": size.nodes - 1, "restartPolicy": "Never", "template": template}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": metadata(name, labels, options, **_annotations(rendered, notes)),
        "spec": {
            "nprocPerNode": str(size.gpus),
            "runPolicy": _run_policy(),
            "pytorchReplicaSpecs": replicas,
        },
    }
