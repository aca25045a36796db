"""Which host drivers run the CUDA an NGC image holds: its CUDA release's minimum driver, or
a driver of an older branch its forward-compatibility package serves.

NVIDIA's NGC images carry CUDA's forward-compatibility package (/usr/local/cuda/compat): on
an NVIDIA data-center GPU they run their CUDA on a kernel driver of an older branch (NVIDIA
ran NGC 25.04's CUDA 12.9 on a 570 kernel module, 25.01's CUDA 12.8 on a 535 one). Which
branches is the base's record (recipes/bases-ngc.yaml ``forward_compat``), which GPUs
qualify the GPU's (recipes/gpus.yaml ``data_center``). The GPU's own minimum driver still
holds: a kernel module that does not know the GPU cannot drive it, whatever the image
carries. mlcc's own images (UBI) carry no compat package: for them the release's minimum
driver is the rule (:mod:`mlcc.resolve.rules`), unchanged.
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Sequence

from mlcc.kb.model import Base, BaseContents, Gpu, KnowledgeBase
from mlcc.versions import parse_version

# Where the compat libraries come from in a container whose entrypoint mlcc replaces: the
# cluster's NVIDIA Container Toolkit (recipes/bases-ngc.yaml, source toolkit-cuda-compat-hook).
TOOLKIT_CONDITION = (
    "with NVIDIA Container Toolkit's enable-cuda-compat hook on the node"
    " (not turned off by cuda-compat-mode=disabled)"
)


class DriverFit(NamedTuple):
    """Whether a host driver runs an image base's CUDA, and how."""

    runs: bool
    forward: bool = False  # through the image's forward-compatibility package
    why: str = ""  # why not, when it does not run


def branch(driver: str) -> int:
    """The driver's branch: its major number (570 for 570.133.20)."""
    return parse_version(driver).release[0]


def branches_text(branches: Sequence[int]) -> str:
    """ "R535, R550 or R570"."""
    names = [f"R{number}" for number in branches]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def ways_out(contents: BaseContents) -> str:
    """The drivers that run the image's CUDA, said as the way out of a refusal."""
    minimum = f"driver >= {contents.cuda_min_driver}"
    if not contents.forward_compat:
        return minimum
    return (
        f"{minimum}, or on a data-center GPU a driver of branch {branches_text(contents.forward_compat)}"
        " (the image's forward-compatibility package)"
    )


def fit(kb: KnowledgeBase, base: Base, driver: str, gpu: Optional[str]) -> DriverFit:
    """Whether ``driver`` runs the CUDA the image base holds on ``gpu`` (any data-center GPU
    when None).

    Args:
        kb: The knowledge base (its GPUs).
        base: An image base (NGC): one with ``contents``.
        driver: The host's driver version (``--driver``).
        gpu: The GPU's name (``--gpu``), or None.

    Returns:
        ``runs`` and, when it runs through the forward-compatibility package, ``forward``;
        when it does not, ``why`` (a sentence naming both ways out).
    """
    contents = base.contents
    assert contents is not None, base.name
    if parse_version(driver) >= parse_version(contents.cuda_min_driver):
        return DriverFit(True)
    held = f"{base.name} holds CUDA {contents.cuda}, which needs {ways_out(contents)}; --driver is {driver}"
    if branch(driver) not in contents.forward_compat:
        return DriverFit(False, why=f"{held} (branch R{branch(driver)})")
    if gpu is None:
        return DriverFit(True, forward=True)
    return _on_gpu(kb.gpus[gpu], driver, held)


def _on_gpu(gpu: Gpu, driver: str, held: str) -> DriverFit:
    """A driver of a forward-compatible branch on the GPU asked: the GPU must be a data-center
    GPU, and the kernel driver one that knows it."""
    if not gpu.data_center:
        return DriverFit(
            False,
            why=f"{held}: forward compatibility works on data-center GPUs only, and {gpu.title} is not"
            f" known to be one ({gpu.prov.origin})",
        )
    if parse_version(driver) < parse_version(gpu.min_driver):
        return DriverFit(
            False,
            why=f"{held}, a forward-compatible branch, but {gpu.title} needs a kernel driver"
            f" >= {gpu.min_driver} (the driver of CUDA {gpu.min_cuda}, the first that targets it)",
        )
    return DriverFit(True, forward=True)


def note(kb: KnowledgeBase, base: Base, driver: str, gpu: Optional[str]) -> Optional[str]:
    """What to tell a user whose ``--driver`` runs the image's CUDA only through its
    forward-compatibility package, or None. Printed beside the stack, never part of it.

    Args:
        kb: The knowledge base.
        base: The stack's base.
        driver: The host's driver version (``--driver``).
        gpu: The GPU's name (``--gpu``), or None.

    Returns:
        One sentence: the driver, the image's CUDA, the conditions (data-center GPU, the
        toolkit's hook) and the branches the image accepts, or None when the driver meets the
        CUDA release's minimum (or the base is no image base).
    """
    contents = base.contents
    if contents is None or not fit(kb, base, driver, gpu).forward:
        return None
    which = f", as {kb.gpus[gpu].title} is" if gpu is not None else " (--gpu names none)"
    sentence = (
        f"driver {driver} runs NGC {contents.release}'s CUDA {contents.cuda_release} through the"
        f" image's forward-compatibility package: data-center GPUs only{which}, {TOOLKIT_CONDITION}"
        f" ({branches_text(contents.forward_compat)} accepted; CUDA {contents.cuda_release} itself"
        f" needs >= {contents.cuda_min_driver}; {base.prov.origin})"
    )
    if "contents.forward_compat" in base.prov.unverified_fields:
        sentence += f"; unconfirmed for this image: see {base.name}'s note"
    return sentence
