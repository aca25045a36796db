"""The resolver's search stages, in the order it fixes components (shared by the search and
the explanation of a conflict, which ranks rejections by how deep they came)."""

from __future__ import annotations

from typing import NamedTuple

SEARCH_STAGES = ("benchmark", "framework", "cuda", "base", "python", "cudnn", "nccl", "gcc")
STAGE_RANK = {stage: rank for rank, stage in enumerate(SEARCH_STAGES)}

# Stages that pick one value (rather than filter candidates) reject with rule and pin
# failures together: the rules are then what stands between the pin and a stack.
PICK_STAGES = ("python", "cudnn", "nccl", "gcc")


class Failure(NamedTuple):
    """One reason a candidate is unacceptable."""

    rule: str
    message: str
    origin: str
    pin: bool = False  # True when the user's own pin excluded it
