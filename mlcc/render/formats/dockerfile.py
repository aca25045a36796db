"""The Dockerfile writer: one RUN per step (commands joined by ``&&``), ENV after it."""

from __future__ import annotations

from typing import List

import mlcc
from mlcc.render.escaping import assignments, exec_form, literal_assignments
from mlcc.render.formats import Context, header
from mlcc.render.plan import BUILD_STAGE, SOURCE_DATE_EPOCH, Plan, Step

DOCKERFILE = "Dockerfile"
DESCRIBED = "# The stack is described in /etc/mlcc/stack.json inside the image.\n"
# Continuation lines: commands under RUN, assignments under ENV and LABEL, aligned.
RUN_SEPARATOR = " \\\n && "
ENV_SEPARATOR = " \\\n    "
LABEL_SEPARATOR = " \\\n      "
# Each stage's RUN steps see the source date (an ARG is in their environment): pip's
# compileall writes hash-based .pyc files, wheel builds stamp it, rather than the clock.
SOURCE_DATE = f"ARG SOURCE_DATE_EPOCH={SOURCE_DATE_EPOCH}\n"


def write(plan: Plan, context: Context) -> str:
    out = [header(mlcc.__version__, context.command)]
    if context.described:
        out.append(DESCRIBED)
    # The base and the mirror are build arguments: an air-gapped site overrides them
    # with --build-arg without regenerating.
    out.append(f"ARG BASE_IMAGE={plan.base_image}\n")
    final_base = "${BASE_IMAGE}"
    if plan.runtime_base is not None:  # a chained runtime image: its runtime stage image
        out.append(f"ARG RUNTIME_IMAGE={plan.runtime_base}\n")
        final_base = "${RUNTIME_IMAGE}"
    if plan.build_steps:
        # A runtime image: the build stage compiles on the devel stack; the final stage,
        # on the same base, takes only what that stage made (COPY --from).
        out.append(f"FROM ${{BASE_IMAGE}} AS {BUILD_STAGE}\nARG NVIDIA_MIRROR={plan.mirror}\n{SOURCE_DATE}")
        for step in plan.build_steps:
            _step(step, out)
        out.append("\n# The runtime stage: runtime packages, and what the build stage made\n")
    out.append(f"FROM {final_base}\nARG NVIDIA_MIRROR={plan.mirror}\n{SOURCE_DATE}")
    for step in plan.steps:
        _step(step, out)
    out.append("\n")
    if plan.labels:
        out.append(f"LABEL {literal_assignments(plan.labels, LABEL_SEPARATOR)}\n\n")
    if plan.workdir:
        out.append(f"WORKDIR {plan.workdir}\n")
    if plan.user:
        out.append(f"USER {plan.user}\n")
    if plan.entrypoint:
        out.append(f"ENTRYPOINT {exec_form(plan.entrypoint)}\n")
    if plan.cmd:
        out.append(f"CMD {exec_form(plan.cmd)}\n")
    return "".join(out)


def _step(step: Step, out: List[str]) -> None:
    out.append(f"\n# {step.title}\n")
    for note in step.notes:
        out.append(f"# {note}\n")
    for name, value in step.args:  # mirrors, declared where first used (plan.place_args)
        out.append(f"ARG {name}\n" if value is None else f"ARG {name}={value}\n")
    source_stage = f"--from={step.from_stage} " if step.from_stage else ""
    for source, target in step.copies:
        out.append(f"COPY {source_stage}{source} {target}\n")
    if step.workdir:
        out.append(f"WORKDIR {step.workdir}\n")
    if step.commands:
        out.append(f"RUN {RUN_SEPARATOR.join(step.commands)}\n")
    if step.workdir:
        out.append("WORKDIR /\n")  # the next step starts in / again, as in the script
    if step.env:
        out.append(f"ENV {assignments(step.env, ENV_SEPARATOR)}\n")
