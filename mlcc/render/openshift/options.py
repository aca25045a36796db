"""What the user chooses about the cluster: OpenShift version, names, GPUs, storage."""

from __future__ import annotations

import re
from typing import NamedTuple, Optional, Tuple

from mlcc.errors import UsageError
from mlcc.render.openshift import names

OPENSHIFT_VERSIONS = ("3.11", "4")
# registry[:port]/path (no tag: mlcc appends :<variant>)
_REPOSITORY = re.compile(r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)+\Z")
_GIT_URI = re.compile(r"^(https://|ssh://|git@)[A-Za-z0-9.@:/~_-]+\Z")
_GIT_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}\Z")
_QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?\Z")
_HOST_PATH = re.compile(r"^/[A-Za-z0-9._/-]*\Z")


class ClusterOptions(NamedTuple):
    openshift: str = "4"
    namespace: Optional[str] = None
    push_to: Optional[str] = None  # an external repository: registry/namespace/name
    push_secret: Optional[str] = None
    webhook_secret: str = "mlcc-webhook"
    git_uri: Optional[str] = None  # build from a Git repository holding dockerfiles/
    git_ref: str = "main"
    git_context_root: str = "dockerfiles"
    chain: bool = False
    gpus: Optional[int] = None  # default: the benchmark's reference GPU count
    nodes: int = 2  # MPIJob workers
    data_claim: Optional[str] = None
    data_hostpath: Optional[str] = None
    results_claim: Optional[str] = None
    build_cpu: str = "2"
    build_memory: str = "8Gi"
    nccl_env: Tuple[Tuple[str, str], ...] = ()  # NCCL_* knobs for the MPIJob


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
    if options.gpus is not None and options.gpus < 1:
        raise UsageError(
            f"--gpus: {options.gpus} is not a GPU count",
            hint="give a whole number of GPUs per pod, at least 1 (CPU stacks take no --gpus)",
        )
    if options.nodes < 1:
        raise UsageError(f"--nodes: {options.nodes} is not a node count", hint="at least 1 MPI worker")
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
            raise UsageError(
                f"--nccl-env {name}={value}: not an NCCL setting",
                hint="NCCL_NAME=value, e.g. --nccl-env NCCL_P2P_LEVEL=NVL --nccl-env NCCL_DEBUG=WARN",
            )
    for option, value in (("--build-cpu", options.build_cpu), ("--build-memory", options.build_memory)):
        if not _QUANTITY.match(value):
            raise UsageError(f"{option}: {value!r} is not a Kubernetes quantity", hint="e.g. 4, 500m, 16Gi")
    return options


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
        return
    if not _GIT_URI.match(options.git_uri):
        raise UsageError(
            f"--git-uri: {options.git_uri!r} is not a Git URL",
            hint="https://github.com/acme/benchmarks.git or git@github.com:acme/benchmarks.git",
        )
    if not _GIT_REF.match(options.git_ref) or ".." in options.git_ref:
        raise UsageError(f"--git-ref: {options.git_ref!r} is not a branch, tag or commit")
    root = options.git_context_root
    if root.startswith("/") or ".." in root.split("/") or not re.match(r"^[A-Za-z0-9._/-]+$", root):
        raise UsageError(f"--git-context: {root!r} must be a relative folder inside the repository")
