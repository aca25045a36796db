"""The resolver's search stages, in the order it fixes components, and how a stage rejects
a candidate (shared by the search, the explanation of a conflict, which ranks rejections
by how deep they came, and the causes it leads with)."""

from __future__ import annotations

from typing import NamedTuple, Sequence, Tuple

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


class Rejection(NamedTuple):
    stage: str
    subject: str
    failures: Tuple[Failure, ...]
    # The candidate matched every pin; knowledge-base rules alone rejected it.
    by_rules_only: bool


def rejection(stage: str, subject: str, failures: Sequence[Failure]) -> Rejection:
    by_rules = any(not f.pin for f in failures) if stage in PICK_STAGES else not any(f.pin for f in failures)
    return Rejection(stage, subject, tuple(failures), by_rules)
