"""NVIDIA's v0.6 launch at the size asked: the configuration file the scripts source.

NVIDIA's ``run_and_time.sh`` sources ``config_${DGXSYSTEM}.sh`` (falling back to
``config_DGX1.sh``), which sets the system size (DGXNGPU, DGXNNODES, DGXNSOCKET,
DGXSOCKETCORES, DGXHT) and the DL parameters tuned for that size. Setting DGXNGPU in the
environment is undone by that file, so mlcc writes a ``config_<system>.sh`` for the size asked
(recipes: ``build.launch``) and sets DGXSYSTEM to it. The DL parameters come from the NVIDIA
configuration nearest the size asked, with the settings the recipe marks as linear in the GPU
count scaled (maskrcnn's global batch and learning rate).
"""

from __future__ import annotations

import math
import shlex
from typing import List, NamedTuple, Optional, Tuple

from mlcc.errors import UsageError
from mlcc.kb.model import Launch, LaunchConfig

MASTER_PORT = 29500  # bind_launch's default --master_port


class Size(NamedTuple):
    nodes: int
    gpus: int  # per node

    @property
    def total(self) -> int:
        return self.nodes * self.gpus


def sockets_for(launch: Launch, gpus: int, benchmark: str) -> int:
    """DGXNSOCKET for ``gpus`` processes per node, or a clear error.

    bind_launch gives every socket ``gpus // sockets`` processes and binds local rank r to NUMA
    node ``r // (gpus // sockets)``: with a GPU count that is not a multiple of the socket count
    the last ranks land on NUMA nodes the machine lacks, and below it the division is by zero.
    One GPU runs on one socket.
    """
    if gpus > launch.max_gpus:
        raise UsageError(
            f"--gpus {gpus}: a {benchmark} node runs at most {launch.max_gpus} GPUs",
            hint=f"NVIDIA's configurations are for {launch.max_gpus} GPUs per node; use --nodes for more",
        )
    if gpus == 1:
        return 1
    if gpus % launch.sockets:
        allowed = ", ".join(
            ["1", *(str(n) for n in range(launch.sockets, launch.max_gpus + 1, launch.sockets))]
        )
        raise UsageError(
            f"--gpus {gpus}: {benchmark}'s launcher binds GPUs evenly to {launch.sockets} CPU sockets",
            hint=f"give one of {allowed} GPUs per node",
        )
    return launch.sockets


def check_size(launch: Optional[Launch], size: Size, benchmark: str, can_mpi: bool) -> None:
    """Refuse a size the benchmark cannot run at, before anything is written."""
    if launch is not None:
        sockets_for(launch, size.gpus, benchmark)
    if size.nodes > 1 and not (can_mpi and (launch is None or launch.multi_node)):
        raise UsageError(
            f"--nodes {size.nodes}: mlcc knows no multi-node launch for {benchmark}",
            hint="run it on one node (--nodes 1), or add a launch and mpi section to its recipe",
        )


def nearest_config(launch: Launch, total: int) -> LaunchConfig:
    """NVIDIA's configuration whose GPU count is nearest (by ratio) the total asked."""
    return min(launch.configs, key=lambda c: (abs(math.log(total / c.gpus)), c.gpus))


def _scaled(value: str, factor: float, what: str, benchmark: str) -> str:
    number = float(value)
    result = number * factor
    if value.isdigit():
        if abs(result - round(result)) > 1e-9:
            raise UsageError(
                f"{benchmark}: {what} = {value} does not scale to a whole number at this size",
                hint="choose a GPU count that divides it evenly",
            )
        return str(round(result))
    return f"{result:.6g}"


def scaled_settings(
    launch: Launch, config: LaunchConfig, size: Size, benchmark: str
) -> List[Tuple[str, object]]:
    factor = size.total / config.gpus
    settings: List[Tuple[str, object]] = []
    for name, value in config.settings:
        if isinstance(value, tuple):
            items = list(value)
            for key in launch.scale:
                array, _, element = key.partition(":")
                if array == name and element in items[:-1]:
                    at = items.index(element) + 1
                    items[at] = _scaled(items[at], factor, element, benchmark)
            settings.append((name, tuple(items)))
        else:
            settings.append(
                (name, _scaled(value, factor, name, benchmark) if name in launch.scale else value)
            )
    return settings


def config_file(launch: Launch, size: Size, benchmark: str) -> str:
    """The text of config_<system>.sh for ``size``."""
    config = nearest_config(launch, size.total)
    sockets = sockets_for(launch, size.gpus, benchmark)
    cores = launch.socket_cores * launch.sockets // sockets
    lines = [
        "#!/bin/bash",
        f"# Written by mlcc for {size.nodes} node(s) x {size.gpus} GPU(s): sourced by run_and_time.sh",
        f"# (DGXSYSTEM={launch.system}) in place of NVIDIA's config_DGX1.sh. DL parameters from NVIDIA's",
        f"# {config.file} ({config.nodes} x {config.gpus_per_node} GPUs)"
        + (f", scaled by {size.total}/{config.gpus}: {', '.join(launch.scale)}" if launch.scale else "")
        + ".",
        f"# Source: {launch.source}",
        "",
        "## DL params",
    ]
    for name, value in scaled_settings(launch, config, size, benchmark):
        if isinstance(value, tuple):
            lines.append(f"{name}=(" + " ".join(shlex.quote(v) for v in value) + ")")
        else:
            lines.append(f"{name}={shlex.quote(str(value))}")
    lines += [f"export {name}={shlex.quote(value)}" for name, value in config.exports]
    lines += [
        "",
        "## System run params",
        f"DGXNNODES={size.nodes}",
        f"DGXSYSTEM={launch.system}",
        "",
        "## System config params",
        f"DGXNGPU={size.gpus}",
        f"DGXSOCKETCORES={cores}",
        f"DGXNSOCKET={sockets}",
        f"DGXHT={launch.hyperthreads}",
        "DGXIBDEVICES=''",
        "BIND_LAUNCH=1",
        "",
    ]
    return "\n".join(lines)


def bind_file(launch: Launch, gpus: int, benchmark: str) -> str:
    """ompi_bind_<system>.sh for per-GPU launches: numactl binding by Open MPI's local rank,
    computed for this node size the way NVIDIA's ompi_bind_DGX1.sh lays out a DGX-1."""
    sockets = sockets_for(launch, gpus, benchmark)
    per_socket = gpus // sockets
    cores = launch.socket_cores * launch.sockets // sockets // per_socket
    threads = launch.socket_cores * launch.sockets
    lines = [
        "#!/bin/bash",
        f"# Written by mlcc: {gpus} rank(s) per node on {sockets} socket(s). Source: {launch.source}",
        'case "${OMPI_COMM_WORLD_LOCAL_RANK}" in',
    ]
    for rank in range(gpus):
        socket, slot = divmod(rank, per_socket)
        first = socket * (threads // sockets) + slot * cores
        cpus = f"{first}-{first + cores - 1}"
        if launch.hyperthreads == 2:
            cpus += f",{first + threads}-{first + threads + cores - 1}"
        lines.append(f'{rank}) exec numactl --physcpubind={cpus} --membind={socket} "$@" ;;')
    lines += [
        '*) echo "ERROR: unknown local rank ${OMPI_COMM_WORLD_LOCAL_RANK}" >&2; exit 1 ;;',
        "esac",
        "",
    ]
    return "\n".join(lines)


def files(launch: Launch, size: Size, benchmark: str) -> List[Tuple[str, str]]:
    """(file name in the work directory, content): what the run's ConfigMap carries."""
    found = [(f"config_{launch.system}.sh", config_file(launch, size, benchmark))]
    if launch.style == "per-gpu":
        found.append((f"ompi_bind_{launch.system}.sh", bind_file(launch, size.gpus, benchmark)))
    return found


def environment(launch: Launch, size: Size) -> List[Tuple[str, str]]:
    """What run.sub hands run_and_time.sh: the system name and the tasks per node."""
    return [
        ("DGXSYSTEM", launch.system),
        ("DGXNGPU", str(size.gpus)),
        ("DGXNNODES", str(size.nodes)),
        ("SLURM_NTASKS_PER_NODE", str(size.gpus)),
        ("SLURM_NNODES", str(size.nodes)),
        ("SLURM_JOB_NUM_NODES", str(size.nodes)),
    ]


def node_script(size: Size, entrypoint: str) -> str:
    """One node of a per-node launch: the MULTI_NODE arguments run.sub gives node h."""
    multi = (
        f" --nnodes={size.nodes} --node_rank=${{OMPI_COMM_WORLD_RANK}}"
        f" --master_addr=${{MLCC_MASTER_ADDR}} --master_port={MASTER_PORT}"
    )
    return f'export MULTI_NODE="{multi}"; exec {entrypoint}'
