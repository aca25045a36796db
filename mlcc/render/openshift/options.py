"""What the user chooses about the cluster: OpenShift version, names, GPUs, storage."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from mlcc.errors import UsageError
from mlcc.flags import flag
from mlcc.render.openshift import names
from mlcc.validate import INT32_MAX

if TYPE_CHECKING:
    from mlcc.kb.model import NcclProfile

OPENSHIFT_VERSIONS = ("3.11", "4")
# registry[:port]/path (no tag: mlcc appends :<variant>)
_REPOSITORY = re.compile(r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)+\Z")
_GIT_URI = re.compile(r"^(https://|ssh://|git@)[A-Za-z0-9.@:/~_-]+\Z")
_GIT_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}\Z")
_QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?\Z")
_RESOURCE = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?\Z")
_NETWORK = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?/)?[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
# a profile's name as recipes/nccl-profiles.yaml may spell it (the profiles themselves are there)
_NCCL_PROFILE = re.compile(r"^[a-z][a-z0-9-]{0,19}\Z")
DEFAULT_RESULTS_SIZE = "10Gi"
# Kubernetes' documented scalability limit (kubernetes.io, "Considerations for large clusters":
# no more than 5,000 nodes): an MPIJob of more workers is one no launcher can run
KUBERNETES_MAX_NODES = 5000
_HOST_PATH = re.compile(r"^/[A-Za-z0-9._/-]*\Z")
_QUANTITY_UNITS = {
    "m": Decimal("0.001"),
    **{suffix: Decimal(1000) ** (power + 1) for power, suffix in enumerate("kMGTPE")},
    **{
        suffix: Decimal(1024) ** (power + 1)
        for power, suffix in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))
    },
}
# Kubernetes keeps a quantity in an int64: a larger one is rounded to nonsense, not refused
QUANTITY_MAX = 2**63 - 1


def _nccl_env(items: Tuple[str, ...]) -> Tuple[Tuple[str, str], ...]:
    """``NAME=VALUE`` strings from the command line as pairs (checked later, with the rest)."""
    pairs: List[Tuple[str, str]] = []
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"--nccl-env {item!r}: expected NAME=VALUE, e.g. NCCL_P2P_LEVEL=NVL")
        earlier = [f"{name}={v}" for n, v in pairs if n == name]
        if earlier:  # the last would silently win
            raise UsageError(
                f"--nccl-env {name!r} is given twice ({earlier[0]!r}, {item!r}); give each setting once",
                hint=f"keep the one you mean: --nccl-env {item!r}",
            )
        pairs.append((name, value))
    return tuple(pairs)


@dataclass(frozen=True)
class ClusterOptions:
    """How the OpenShift objects are written (gen, build --backend openshift); the fields of
    group "run" shape only the run manifests (gen)."""

    openshift: str = flag(
        "--openshift",
        "OpenShift API to write for (3.11 wants status, triggers and a nodeSelector).",
        default="4",
        choices=OPENSHIFT_VERSIONS[::-1],
        show_default=True,
    )
    namespace: Optional[str] = flag(
        "--namespace", "Namespace of every object (default: the current project).", default=None, metavar="NS"
    )
    push_to: Optional[str] = flag(  # an external repository: registry/namespace/name
        "--push-to",
        "Push the benchmark image to this external repository (registry/namespace/name).",
        default=None,
        metavar="REPO",
    )
    push_secret: Optional[str] = flag(
        "--push-secret", "The dockerconfigjson Secret for --push-to.", default=None, metavar="NAME"
    )
    webhook_secret: str = flag(
        "--webhook-secret",
        "Secret (key WebHookSecretKey) the Generic/GitHub webhook triggers reference.",
        default="mlcc-webhook",
        metavar="NAME",
        show_default=True,
    )
    git_uri: Optional[str] = flag(  # build from a Git repository holding dockerfiles/
        "--git-uri",
        "Build from this Git repository (holding dockerfiles/) instead of inline Dockerfiles.",
        default=None,
        metavar="URL",
    )
    git_ref: Optional[str] = flag(
        "--git-ref", "Branch, tag or commit of --git-uri (default: main).", default=None, metavar="REF"
    )
    git_context_root: str = flag(
        "--git-context",
        "Folder of the variant folders inside the Git repository.",
        default="dockerfiles",
        metavar="DIR",
        show_default=True,
    )
    chain: bool = flag(
        "--chain",
        "Three chained builds: stack image, framework image, benchmark image, each named by"
        " its content (mlcc build with buildah, podman or docker: the stage images go to"
        " --registry, and a stage found there is pulled, not built).",
        default=False,
        is_flag=True,
    )
    gpus: Optional[int] = flag(  # default: the benchmark's reference GPU count
        "--gpus",
        "GPUs per pod (default: the benchmark's reference).",
        default=None,
        metavar="N",
        value_type=int,
        group="run",
    )
    nodes: Optional[int] = flag(
        "--nodes",
        "Nodes: 1 writes the Pod and Job only, N > 1 an MPIJob of N workers only "
        "(default: both, the MPIJob at 2 nodes as an example).",
        default=None,
        metavar="N",
        value_type=int,
        group="run",
    )
    data_claim: Optional[str] = flag(
        "--data-claim",
        "PVC with the dataset (default: <benchmark>-data).",
        default=None,
        metavar="NAME",
        group="run",
    )
    data_hostpath: Optional[str] = flag(
        "--data-hostpath",
        "Mount the dataset from this host path instead.",
        default=None,
        metavar="PATH",
        group="run",
    )
    results_claim: Optional[str] = flag(
        "--results-claim",
        "PVC for the results (default: an emptyDir).",
        default=None,
        metavar="NAME",
        group="run",
    )
    storage_class: Optional[str] = flag(
        "--storage-class",
        "Write run/volumes.yaml: PVCs of this storage class for the dataset (ReadWriteMany) "
        "and, with --results-claim, the results.",
        default=None,
        metavar="NAME",
        group="run",
    )
    data_size: Optional[str] = flag(
        "--data-size",
        "Size of the dataset PVC (with --storage-class).",
        default=None,
        metavar="QTY",
        group="run",
    )
    results_size: str = flag(
        "--results-size",
        "Size of the results PVC (with --storage-class and --results-claim).",
        default=DEFAULT_RESULTS_SIZE,
        metavar="QTY",
        show_default=True,
        group="run",
    )
    run_cpu: Optional[str] = flag(
        "--run-cpu",
        "CPU request of a run pod (MPIJob: of each worker); default: its GPUs' share of the "
        "cores of the node NVIDIA ran on (recipes/systems.yaml), else one per GPU.",
        default=None,
        metavar="QTY",
        group="run",
    )
    run_memory: Optional[str] = flag(
        "--run-memory",
        "Memory request of a run pod (MPIJob: of each worker); default: its /dev/shm, half its "
        "GPUs' share of the node's memory (NVIDIA's --ipc=host), else the recipe's shm.",
        default=None,
        metavar="QTY",
        group="run",
    )
    build_cpu: str = flag(
        "--build-cpu", "CPU request of builds.", default="2", metavar="QTY", show_default=True
    )
    build_memory: Optional[str] = flag(
        "--build-memory",
        "Memory of builds (default: 8Gi, 16Gi for source-built frameworks).",
        default=None,
        metavar="QTY",
    )
    build_max_jobs: Optional[int] = flag(
        "--build-max-jobs",
        "MAX_JOBS of builds that compile (default: one per 4 GiB of build memory).",
        default=None,
        metavar="N",
        value_type=int,
    )
    nccl_env: Tuple[Tuple[str, str], ...] = flag(  # NCCL_* knobs for the MPIJob
        "--nccl-env",
        "NCCL setting for the MPIJob on top of --nccl-profile, e.g. NCCL_SOCKET_IFNAME=ib0 (repeatable).",
        default=(),
        metavar="NAME=VALUE",
        multiple=True,
        convert=_nccl_env,
        group="run",
    )
    nccl_profile: Optional[str] = flag(
        "--nccl-profile",
        "NCCL settings for the MPIJob: a profile of recipes/nccl-profiles.yaml.",
        default=None,
        metavar="NAME",
        describe=lambda kb: _nccl_profile_help(kb.nccl_profiles),
        group="run",
    )
    rdma_resource: Optional[str] = flag(
        "--rdma-resource",
        "RDMA device-plugin resource each worker requests, e.g. rdma/rdma_shared_device_a.",
        default=None,
        metavar="NAME",
        group="run",
    )
    sriov_network: Optional[str] = flag(
        "--sriov-network",
        "SR-IOV network attachment for the workers.",
        default=None,
        metavar="NAME",
        group="run",
    )
    host_network: bool = flag(
        "--host-network",
        "Run the MPIJob workers on the host network.",
        default=False,
        is_flag=True,
        group="run",
    )
    gpu_product: Optional[str] = flag(
        "--gpu-product",
        "Select nodes by their nvidia.com/gpu.product label.",
        default=None,
        metavar="LABEL",
        group="run",
    )


DEFAULT_CLUSTER = ClusterOptions()


def check_cluster_options(options: ClusterOptions) -> ClusterOptions:
    """Every value that reaches a manifest, checked before anything is rendered."""
    if options.openshift not in OPENSHIFT_VERSIONS:
        raise UsageError(
            f"--openshift: unknown OpenShift version {options.openshift!r}",
            hint=f"choose one of {', '.join(OPENSHIFT_VERSIONS)} (4 covers 4.x)",
        )
    names.check(options.namespace, "--namespace", kind="label")
    names.check(options.push_secret, "--push-secret")
    names.check(options.webhook_secret, "--webhook-secret")
    names.check(options.data_claim, "--data-claim")
    names.check(options.results_claim, "--results-claim")
    _check_push(options)
    _check_git(options)
    if options.gpus is not None and options.gpus > INT32_MAX:
        raise UsageError(f"--gpus: {options.gpus} is beyond a Kubernetes int32", hint="a GPU count per pod")
    if options.nodes is not None and options.nodes > INT32_MAX:
        raise UsageError(f"--nodes: {options.nodes} is beyond a Kubernetes int32", hint="an MPI worker count")
    if options.gpus is not None and options.gpus < 1:
        raise UsageError(
            f"--gpus: {options.gpus} is not a GPU count",
            hint="give a whole number of GPUs per pod, at least 1 (CPU stacks take no --gpus)",
        )
    if options.nodes is not None and options.nodes < 1:
        raise UsageError(f"--nodes: {options.nodes} is not a node count", hint="at least 1 node")
    if options.nodes is not None and options.nodes > KUBERNETES_MAX_NODES:
        raise UsageError(
            f"--nodes: {options.nodes} nodes is more than a Kubernetes cluster runs",
            hint=f"Kubernetes supports clusters of up to {KUBERNETES_MAX_NODES:,} nodes; give at most that",
        )
    _check_network(options)
    _check_storage(options)
    if options.data_claim and options.data_hostpath:
        raise UsageError("--data-claim and --data-hostpath both name the dataset volume; give one")
    if options.data_hostpath is not None and (
        not _HOST_PATH.match(options.data_hostpath) or "/../" in options.data_hostpath + "/"
    ):
        raise UsageError(
            f"--data-hostpath: {options.data_hostpath!r} is not an absolute path",
            hint="e.g. /mnt/datasets/coco2017",
        )
    for name, value in options.nccl_env:
        if not re.match(r"^NCCL_[A-Z0-9_]+$", name) or not re.match(r"^[A-Za-z0-9_.,:=/+-]*$", value):
            raise UsageError(  # repr: a newline in the value must not split the message
                f"--nccl-env {name + '=' + value!r}: not an NCCL setting",
                hint="NCCL_NAME=value, e.g. --nccl-env NCCL_P2P_LEVEL=NVL --nccl-env NCCL_DEBUG=WARN",
            )
    if options.build_max_jobs is not None and options.build_max_jobs < 1:
        raise UsageError(f"--build-max-jobs: {options.build_max_jobs} is not a job count", hint="at least 1")
    quantities: Tuple[Tuple[str, Optional[str]], ...] = (
        ("--build-cpu", options.build_cpu),
        ("--build-memory", options.build_memory),
        ("--run-cpu", options.run_cpu),
        ("--run-memory", options.run_memory),
    )
    for option, quantity in quantities:
        if quantity is not None:
            check_quantity(option, quantity, "e.g. 4, 500m, 16Gi")
    return options


def check_quantity(option: str, quantity: str, example: str) -> None:
    """A Kubernetes quantity (``16Gi``, ``500m``) above 0 and no larger than Kubernetes can hold
    (a CPU request or a volume of 0 is no request at all)."""
    match = _QUANTITY.match(quantity)
    if not match:
        raise UsageError(f"{option}: {quantity[:40]!r} is not a Kubernetes quantity", hint=example)
    unit = match.group(2) or ""
    number = (
        Decimal(quantity[: len(quantity) - len(unit)]) if len(quantity) <= 40 else Decimal(QUANTITY_MAX + 1)
    )
    if number <= 0:
        raise UsageError(f"{option}: {quantity!r} is nothing; give a quantity above 0", hint=example)
    if number * _QUANTITY_UNITS.get(unit, Decimal(1)) > QUANTITY_MAX:
        raise UsageError(
            f"{option}: {quantity[:40]!r} is larger than a Kubernetes quantity can be (2^63-1)",
            hint=example,
        )


def _nccl_profile_help(profiles: Sequence[NcclProfile]) -> str:
    """--nccl-profile's help, from recipes/nccl-profiles.yaml."""
    defaults = {"rdma": "the default with --rdma-resource/--sriov-network", "sockets": "the default without"}
    named = [
        f"{p.name} ({p.description}{'; ' + defaults[p.default_for] if p.default_for in defaults else ''})"
        for p in profiles
    ]
    return "NCCL settings for the MPIJob: " + ", ".join(named) + "."


def nccl_settings(profiles: Sequence[NcclProfile], options: ClusterOptions) -> Tuple[Tuple[str, str], ...]:
    """The profile's NCCL settings (``profiles``: the Stack's, from recipes/nccl-profiles.yaml) with
    --nccl-env on top, sorted by name. InfiniBand without an RDMA device is refused."""
    rdma = bool(options.rdma_resource or options.sriov_network)
    wanted = options.nccl_profile
    chosen = [
        p
        for p in profiles
        if (p.name == wanted if wanted else p.default_for == ("rdma" if rdma else "sockets"))
    ]
    if not chosen:
        raise UsageError(
            f"--nccl-profile: no profile {wanted!r} in recipes/nccl-profiles.yaml"
            if wanted
            else "recipes/nccl-profiles.yaml has no default NCCL profile for this run",
            hint="the profiles: " + (", ".join(p.name for p in profiles) or "none"),
        )
    values = dict(chosen[0].env)
    values.update(options.nccl_env)
    if values.get("NCCL_IB_DISABLE") == "0" and not rdma:
        raise UsageError(
            "NCCL_IB_DISABLE=0 (InfiniBand) without an RDMA device in the pods",
            hint="add --rdma-resource rdma/rdma_shared_device_a or --sriov-network NAME,"
            " or a profile without InfiniBand (--nccl-profile)",
        )
    return tuple(sorted(values.items()))


def _check_network(options: ClusterOptions) -> None:
    if options.nccl_profile is not None and not _NCCL_PROFILE.match(options.nccl_profile):
        raise UsageError(
            f"--nccl-profile: {options.nccl_profile[:40]!r} is not a profile name",
            hint="a profile of recipes/nccl-profiles.yaml (mlcc gen --help lists them), e.g. tcp",
        )
    if options.rdma_resource is not None and not _RESOURCE.match(options.rdma_resource):
        raise UsageError(
            f"--rdma-resource: {options.rdma_resource!r} is not an extended resource name",
            hint="the RDMA device plugin's resource, e.g. rdma/rdma_shared_device_a",
        )
    if options.sriov_network is not None and not _NETWORK.match(options.sriov_network):
        raise UsageError(
            f"--sriov-network: {options.sriov_network!r} is not a network attachment name",
            hint="[namespace/]name of a NetworkAttachmentDefinition, e.g. sriov-ib0",
        )
    if options.gpu_product is not None and not re.match(
        r"^[A-Za-z0-9][-A-Za-z0-9_.]{0,62}\Z", options.gpu_product
    ):
        raise UsageError(
            f"--gpu-product: {options.gpu_product!r} is not a label value",
            hint="the nvidia.com/gpu.product label of the nodes, e.g. Tesla-V100-SXM2-16GB",
        )
    multi = options.nodes is None or options.nodes > 1
    for option, given in (
        ("--nccl-env", bool(options.nccl_env)),
        ("--nccl-profile", options.nccl_profile is not None),
        ("--rdma-resource", options.rdma_resource is not None),
        ("--sriov-network", options.sriov_network is not None),
        ("--host-network", options.host_network),
    ):
        if given and not multi:
            raise UsageError(
                f"{option} has no effect with --nodes 1: it configures the MPIJob only",
                hint="drop it, or ask for several nodes (--nodes N)",
            )


def _check_storage(options: ClusterOptions) -> None:
    names.check(options.storage_class, "--storage-class")
    if options.storage_class is None:
        if options.data_size is not None or options.results_size != DEFAULT_RESULTS_SIZE:
            raise UsageError(
                "--data-size and --results-size have no effect without --storage-class",
                hint="add --storage-class NAME to have mlcc write the PVCs, or drop the sizes",
            )
        return
    if options.results_size != DEFAULT_RESULTS_SIZE and options.results_claim is None:
        raise UsageError(
            "--results-size has no effect without --results-claim: no results volume is written",
            hint="add --results-claim NAME for a results PVC of that size, or drop --results-size",
        )
    if options.data_hostpath is not None:
        raise UsageError("--storage-class writes a dataset PVC, --data-hostpath mounts a host path; give one")
    if options.data_size is None:
        raise UsageError(
            "--storage-class needs --data-size: how large the dataset PVC is",
            hint="the dataset's size is in the benchmark's recipe (build.datasets), e.g. --data-size 200Gi",
        )
    for option, quantity in (("--data-size", options.data_size), ("--results-size", options.results_size)):
        check_quantity(option, quantity, "e.g. 200Gi")


def _check_push(options: ClusterOptions) -> None:
    if options.push_to is None:
        if options.push_secret is not None:
            raise UsageError("--push-secret goes with --push-to REGISTRY/NAMESPACE/NAME")
        return
    if not _REPOSITORY.match(options.push_to):
        raise UsageError(
            f"--push-to: {options.push_to!r} is not an image repository",
            hint="registry/namespace/name without a tag (mlcc tags each variant), e.g. quay.io/acme/maskrcnn",
        )
    if options.push_secret is None:
        raise UsageError(
            "--push-to needs --push-secret NAME: the dockerconfigjson Secret the build pushes with",
            hint="oc create secret docker-registry NAME --docker-server=... (mlcc never writes credentials)",
        )


def _check_git(options: ClusterOptions) -> None:
    if options.git_uri is None:
        if options.git_ref is not None:
            raise UsageError(
                "--git-ref has no effect without --git-uri", hint="add --git-uri URL, or drop --git-ref"
            )
        return
    # the URL checks (base64, urllib.parse) serve a --git-uri given only
    from mlcc.secrets import url_has_password, without_userinfo

    if url_has_password(options.git_uri):
        raise UsageError(
            f"--git-uri: {without_userinfo(options.git_uri)!r} carries credentials; "
            "they would be written into the BuildConfig",
            hint="give the URL without them and a source secret: oc create secret generic NAME "
            "--from-literal=username=... --from-literal=password=... --type=kubernetes.io/basic-auth",
        )
    if not _GIT_URI.match(options.git_uri):
        raise UsageError(
            f"--git-uri: {without_userinfo(options.git_uri)!r} is not a Git URL",
            hint="https://git.example.com/acme/benchmarks.git or git@git.example.com:acme/benchmarks.git",
        )
    if options.git_ref is not None and (not _GIT_REF.match(options.git_ref) or ".." in options.git_ref):
        raise UsageError(f"--git-ref: {options.git_ref!r} is not a branch, tag or commit")
    root = options.git_context_root
    if root.startswith("/") or ".." in root.split("/") or not re.match(r"^[A-Za-z0-9._/-]+$", root):
        raise UsageError(f"--git-context: {root!r} must be a relative folder inside the repository")
