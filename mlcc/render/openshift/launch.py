"""NVIDIA's v0.6 launch at the size asked: the configuration file the scripts source.

NVIDIA's ``run_and_time.sh`` sources ``config_${DGXSYSTEM}.sh`` (falling back to
``config_DGX1.sh``), which sets the system size (DGXNGPU, DGXNNODES, DGXNSOCKET,
DGXSOCKETCORES, DGXHT) and the DL parameters tuned for that size. Setting DGXNGPU in the
environment is undone by that file, so mlcc writes a ``config_<system>.sh`` for the size asked
(recipes: ``build.launch``) and sets DGXSYSTEM to it.

The recipe carries every configuration file NVIDIA has for the benchmark (DGX-1, DGX-2 and
their multi-node files). At a total GPU count NVIDIA ran, mlcc starts from NVIDIA's file for
that count, whatever the node shape asked, and keeps its DL parameters. Between the sizes
NVIDIA ran it starts from the nearest file and scales the settings the recipe marks as linear
in the GPU count (maskrcnn's global batch and learning rate). The file written names the file
it started from and every value it changed.

Where NVIDIA tuned the same size on two GPU generations (v2.1: DGX A100 and DGX H100, each
node shape naming its GPU), the stack's GPU picks among them: a stack resolved with
``--gpu h100`` starts from the DGX H100 files, ``--gpu a100`` from the DGX A100 ones, and the
nearest size is sought among that GPU's files only. Without ``--gpu``, or for a GPU NVIDIA
ran none of the files on, every file counts, as before.

A file that needs what the image does not carry (the recipe's ``image_lacks``: v2.1's DGX H100
files pass flags only NVIDIA's unpublished preview code accepts) stays in the recipe with its
values, but no run starts from it: a run would stop at its first line, or run otherwise than
NVIDIA's. Where NVIDIA's file for the size on the GPU asked is such a file, the run starts from
the same size's file of another GPU (else the nearest the image runs); where every file of that
GPU is, from the files of the others (as for a GPU NVIDIA ran none on). config_MLCC.sh names the
files it passed over and what they need.
"""

from __future__ import annotations

import math
import shlex
import textwrap
from typing import List, NamedTuple, Optional, Sequence, Tuple, Union

from mlcc.errors import UsageError
from mlcc.kb.model import Launch, LaunchConfig, NodeShape

MASTER_PORT = 29500  # bind_launch's default --master_port

Value = Union[str, Tuple[str, ...]]


class Size(NamedTuple):
    nodes: int
    gpus: int  # per node

    @property
    def total(self) -> int:
        return self.nodes * self.gpus


class ConfigChoice(NamedTuple):
    """What the configuration for one size is made of."""

    start: LaunchConfig  # NVIDIA's file it starts from
    shape: NodeShape  # the machine each node is taken to be
    sockets: int  # DGXNSOCKET: the sockets the GPUs of a node are bound to
    # NVIDIA's files for the GPU asked, each needing what the image lacks (:func:`passed_over`)
    passed_over: Tuple[LaunchConfig, ...] = ()


def runnable(launch: Launch) -> Tuple[LaunchConfig, ...]:
    """NVIDIA's files the image can run: those the recipe marks no ``image_lacks`` on."""
    return tuple(c for c in launch.configs if c.image_lacks is None)


def passed_over(launch: Launch, capability: Optional[str], total: int) -> Tuple[LaunchConfig, ...]:
    """NVIDIA's files for the GPU of ``capability`` that a run would start from but for what
    they need and the image lacks: its files for ``total`` GPUs when it can run none of them,
    else every file of that GPU when it can run none at all."""
    if capability is None:
        return ()
    on_gpu = tuple(c for c in launch.configs if launch.shape(c.node_shape).gpu_capability == capability)
    for files in (tuple(c for c in on_gpu if c.gpus == total), on_gpu):
        if files:
            return files if all(c.image_lacks is not None for c in files) else ()
    return ()


def configs_for_gpu(
    launch: Launch, capability: Optional[str], benchmark: str = ""
) -> Tuple[LaunchConfig, ...]:
    """NVIDIA's files the image can run (:func:`runnable`) that ran on the GPU of
    ``capability`` (the stack's --gpu), or every file it can run when no GPU is asked or it can
    run none of that GPU's files.

    Raises:
        UsageError: the image can run none of NVIDIA's files.
    """
    candidates = runnable(launch)
    if not candidates:
        first = launch.configs[0]
        raise UsageError(
            f"{benchmark or 'the benchmark'}: NVIDIA's files need what its image lacks:"
            f" {first.file}: {first.image_lacks}",
            hint="the recipe's launch note says what a run of them needs",
        )
    if capability is None:
        return candidates
    on_gpu = tuple(c for c in candidates if launch.shape(c.node_shape).gpu_capability == capability)
    return on_gpu or candidates


def start_config(
    launch: Launch, total: int, gpus: int, capability: Optional[str] = None, benchmark: str = ""
) -> LaunchConfig:
    """Among the files for the stack's GPU (:func:`configs_for_gpu`): NVIDIA's file for
    ``total`` GPUs if it has one (of the node shape asked if there are several, else the
    recipe's first), else the one whose GPU count is nearest by ratio."""
    candidates = configs_for_gpu(launch, capability, benchmark)
    same_total = [c for c in candidates if c.gpus == total]
    if not same_total and passed_over(launch, capability, total):
        # the file NVIDIA tuned for this size on this GPU needs what the image lacks: the same
        # size tuned on another GPU is nearer to it than another size of this GPU
        same_total = [c for c in runnable(launch) if c.gpus == total]
    if same_total:
        return next((c for c in same_total if c.gpus_per_node == gpus), same_total[0])
    return min(candidates, key=lambda c: (abs(math.log(total / c.gpus)), c.gpus))


def node_shape(launch: Launch, start: LaunchConfig, gpus: int) -> NodeShape:
    """The machine a node of ``gpus`` GPUs is taken to be: the one the starting file ran on
    when it ran as many GPUs per node, else the smallest machine that holds them (among
    those, one with the starting file's GPU)."""
    started_on = launch.shape(start.node_shape)
    if start.gpus_per_node == gpus:
        return started_on
    return min(
        (s for s in launch.node_shapes if s.gpus >= gpus),
        key=lambda s: (s.gpus, s.gpu != started_on.gpu, s.name),
    )


def _sockets(shape: NodeShape, gpus: int) -> int:
    return 1 if gpus == 1 else shape.sockets


def choose(launch: Launch, size: Size, benchmark: str, capability: Optional[str] = None) -> ConfigChoice:
    """The starting file and node for ``size``, or a clear error for a size NVIDIA's
    launcher cannot bind.

    bind_launch gives every socket ``gpus // sockets`` processes and binds local rank r to NUMA
    node ``r // (gpus // sockets)``: with a GPU count that is not a multiple of the socket count
    the last ranks land on NUMA nodes the machine lacks, and below it the division is by zero.
    One GPU runs on one socket. ``capability`` is the stack's GPU (:func:`configs_for_gpu`).
    """
    if size.gpus > launch.max_gpus:
        largest = max(launch.node_shapes, key=lambda s: s.gpus)
        raise UsageError(
            f"--gpus {size.gpus}: a {benchmark} node runs at most {launch.max_gpus} GPUs",
            hint=f"NVIDIA's largest node for it is a {largest.name} ({largest.gpus} GPUs);"
            " use --nodes for more",
        )
    start = start_config(launch, size.total, size.gpus, capability, benchmark)
    shape = node_shape(launch, start, size.gpus)
    lacking = passed_over(launch, capability, size.total)
    if lacking and launch.shape(lacking[0].node_shape).gpus >= size.gpus:
        shape = launch.shape(lacking[0].node_shape)  # the nodes are the GPU's asked, whatever file
    sockets = _sockets(shape, size.gpus)
    if size.gpus % sockets:
        allowed = ", ".join(["1", *(str(n) for n in range(sockets, launch.max_gpus + 1, sockets))])
        raise UsageError(
            f"--gpus {size.gpus}: {benchmark}'s launcher binds GPUs evenly to {sockets} CPU sockets",
            hint=f"give one of {allowed} GPUs per node",
        )
    return ConfigChoice(start, shape, sockets, lacking)


def check_size(
    launch: Optional[Launch],
    size: Size,
    benchmark: str,
    can_mpi: bool,
    capability: Optional[str] = None,
) -> None:
    """Refuse a size the benchmark cannot run at, before anything is written."""
    if launch is not None:
        choose(launch, size, benchmark, capability)
    if size.nodes > 1 and not (can_mpi and (launch is None or launch.multi_node)):
        raise UsageError(
            f"--nodes {size.nodes}: mlcc knows no multi-node launch for {benchmark}",
            hint="run it on one node (--nodes 1), or add a launch and mpi section to its recipe",
        )


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
) -> List[Tuple[str, Value]]:
    """The starting file's DL parameters at ``size``: unchanged at the size NVIDIA tuned
    them for, the recipe's linear settings scaled by the GPU count elsewhere."""
    if size.total == config.gpus:
        return list(config.settings)
    factor = size.total / config.gpus
    settings: List[Tuple[str, Value]] = []
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


def system_settings(nodes: int, gpus: int, shape: NodeShape) -> List[Tuple[str, Value]]:
    """The system parameters a config file sets for ``nodes`` x ``gpus`` on ``shape``."""
    sockets = _sockets(shape, gpus)
    return [
        ("DGXNNODES", str(nodes)),
        ("DGXNGPU", str(gpus)),
        ("DGXSOCKETCORES", str(shape.socket_cores * shape.sockets // sockets)),
        ("DGXNSOCKET", str(sockets)),
        ("DGXHT", str(shape.hyperthreads)),
    ]


def _changes(before: Sequence[Tuple[str, Value]], after: Sequence[Tuple[str, Value]]) -> List[str]:
    """``NAME old -> new`` (``ARRAY KEY old -> new`` inside an array) for each value changed."""
    found: List[str] = []
    old = dict(before)
    for name, value in after:
        was = old[name]
        if isinstance(value, tuple) and isinstance(was, tuple):
            found += [
                f"{name} {value[i - 1]} {was[i]} -> {value[i]}"
                for i in range(1, len(value))
                if value[i] != was[i]
            ]
        elif value != was:
            found.append(f"{name} {was} -> {value}")
    return found


def _wrapped(prefix: str, items: List[str]) -> List[str]:
    """``prefix`` and ``items`` as comment lines of a readable width."""
    lines = [f"# {prefix}"]
    for item in items:
        if len(lines[-1]) + len(item) + 2 > 100:
            lines[-1] += ","
            lines.append(f"#   {item}")
        else:
            lines[-1] += ("" if lines[-1].endswith(":") else ",") + f" {item}"
    return lines


def header(
    launch: Launch,
    size: Size,
    chosen: ConfigChoice,
    settings: Sequence[Tuple[str, Value]],
    capability: Optional[str] = None,
) -> List[str]:
    """The comment lines that say which NVIDIA file the configuration starts from and what
    mlcc changed in it. The sizes it names as NVIDIA's are those of the files it chose among:
    the stack's GPU's (:func:`configs_for_gpu`)."""
    start = chosen.start
    if start.gpus == size.total:
        why = [f"# NVIDIA's file for {size.total} GPUs."]
    else:
        among = configs_for_gpu(launch, capability)
        ran = ", ".join(str(n) for n in sorted({c.gpus for c in among})) + " GPUs"
        if len(among) < len(runnable(launch)):
            ran += f" on {launch.shape(start.node_shape).name}"
        lacking = [c.file for c in launch.configs if c.gpus == size.total and c.image_lacks is not None]
        nearest = (
            f"# NVIDIA's {size.total}-GPU files need what this image lacks ({', '.join(lacking)});"
            f" of those it runs ({ran}) this is the nearest."
            if lacking
            else f"# NVIDIA ran no {size.total}-GPU configuration ({ran}); this is the nearest."
        )
        why = [
            nearest,
            f"# Scaled by {size.total}/{start.gpus}: "
            + (", ".join(launch.scale) or "nothing (the recipe marks no setting linear in the GPU count)")
            + ".",
        ]
    if chosen.passed_over:
        why.append("# Passed over: NVIDIA's files that need what this image lacks:")
        for config in chosen.passed_over:
            text = f"{config.file}: {config.image_lacks}"
            why += textwrap.wrap(
                text, width=98, initial_indent="#   ", subsequent_indent="#     ", break_on_hyphens=False
            )
    before = system_settings(start.nodes, start.gpus_per_node, launch.shape(start.node_shape))
    after = system_settings(size.nodes, size.gpus, chosen.shape)
    changed = _changes(start.settings, settings) + _changes(before, after)
    lines = [
        "#!/bin/bash",
        f"# Written by mlcc for {size.nodes} node(s) x {size.gpus} GPU(s), {size.total} in all, on"
        f" {chosen.shape.name} nodes:",
        f"# sourced by run_and_time.sh (DGXSYSTEM={launch.system}).",
        f"# Started from NVIDIA's {start.file}"
        f" ({start.nodes} x {start.gpus_per_node} GPUs on {start.node_shape}):",
        *why,
        f"# Source: {start.source}",
    ]
    if changed:
        return lines + _wrapped("Changed from it:", changed)
    return [*lines, "# Changed from it: nothing (DGXSYSTEM aside): NVIDIA's values."]


def config_file(launch: Launch, size: Size, benchmark: str, capability: Optional[str] = None) -> str:
    """The text of config_<system>.sh for ``size`` on the GPU of ``capability``."""
    chosen = choose(launch, size, benchmark, capability)
    settings = scaled_settings(launch, chosen.start, size, benchmark)
    lines = [*header(launch, size, chosen, settings, capability), "", "## DL params"]
    for name, value in settings:
        if isinstance(value, tuple):
            lines.append(f"{name}=(" + " ".join(shlex.quote(v) for v in value) + ")")
        else:
            lines.append(f"{name}={shlex.quote(str(value))}")
    lines += [f"export {name}={shlex.quote(value)}" for name, value in chosen.start.exports]
    system = dict(system_settings(size.nodes, size.gpus, chosen.shape))
    lines += [
        "",
        "## System run params",
        f"DGXNNODES={system['DGXNNODES']}",
        f"DGXSYSTEM={launch.system}",
        "",
        "## System config params",
        f"DGXNGPU={system['DGXNGPU']}",
        f"DGXSOCKETCORES={system['DGXSOCKETCORES']}",
        f"DGXNSOCKET={system['DGXNSOCKET']}",
        f"DGXHT={system['DGXHT']}",
        "DGXIBDEVICES=''",
        "BIND_LAUNCH=1",
        "",
    ]
    return "\n".join(lines)


def bind_file(launch: Launch, size: Size, benchmark: str, capability: Optional[str] = None) -> str:
    """ompi_bind_<system>.sh for per-GPU launches: numactl binding by Open MPI's local rank,
    computed for the node the way NVIDIA's ompi_bind_DGX1.sh and ompi_bind_DGX2.sh lay out a
    DGX-1 and a DGX-2."""
    chosen = choose(launch, size, benchmark, capability)
    gpus, sockets, shape = size.gpus, chosen.sockets, chosen.shape
    per_socket = gpus // sockets
    cores = shape.socket_cores * shape.sockets // sockets // per_socket
    threads = shape.socket_cores * shape.sockets
    lines = [
        "#!/bin/bash",
        f"# Written by mlcc: {gpus} rank(s) per node on {sockets} socket(s) of a {shape.name}.",
        f"# Source: {launch.source}",
        'case "${OMPI_COMM_WORLD_LOCAL_RANK}" in',
    ]
    for rank in range(gpus):
        socket, slot = divmod(rank, per_socket)
        first = socket * (threads // sockets) + slot * cores
        cpus = f"{first}-{first + cores - 1}"
        if shape.hyperthreads == 2:
            cpus += f",{first + threads}-{first + threads + cores - 1}"
        lines.append(f'{rank}) exec numactl --physcpubind={cpus} --membind={socket} "$@" ;;')
    lines += [
        '*) echo "ERROR: unknown local rank ${OMPI_COMM_WORLD_LOCAL_RANK}" >&2; exit 1 ;;',
        "esac",
        "",
    ]
    return "\n".join(lines)


def files(
    launch: Launch, size: Size, benchmark: str, capability: Optional[str] = None
) -> List[Tuple[str, str]]:
    """(file name in the work directory, content): what the run's ConfigMap carries."""
    found = [(f"config_{launch.system}.sh", config_file(launch, size, benchmark, capability))]
    if launch.style == "per-gpu":
        found.append((f"ompi_bind_{launch.system}.sh", bind_file(launch, size, benchmark, capability)))
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


def torch_rank_script(entrypoint: str) -> str:
    """One rank of a per-GPU launch whose scripts read torch.distributed's env:// variables
    (NVIDIA's v2.1 PyTorch benchmarks): what torchrun, or NVIDIA's enroot hook under Slurm's
    one task per GPU, gives each process, here from Open MPI's rank variables. The scripts
    then take their path for a launched process (run_and_time.sh's "Mode 2": python
    directly, each process on its LOCAL_RANK's GPU)."""
    return (
        "export RANK=${OMPI_COMM_WORLD_RANK} WORLD_SIZE=${OMPI_COMM_WORLD_SIZE}"
        " LOCAL_RANK=${OMPI_COMM_WORLD_LOCAL_RANK} LOCAL_WORLD_SIZE=${OMPI_COMM_WORLD_LOCAL_SIZE}"
        f" MASTER_ADDR=${{MLCC_MASTER_ADDR}} MASTER_PORT={MASTER_PORT}; exec {entrypoint}"
    )
