"""The Apptainer / Singularity definition writer: %files, %post, %environment, %labels,
%runscript."""

from __future__ import annotations

from typing import List

import mlcc
from mlcc.render.escaping import double_quoted
from mlcc.render.formats import Context, header, mirror_exports, shell_body, shell_heading
from mlcc.render.plan import Plan, Step

DEFINITION = "Singularity.def"
INDENT = "    "


def write(plan: Plan, context: Context) -> str:
    out = [
        header(mlcc.__version__, context.command),
        "# Apptainer / Singularity definition: apptainer build image.sif Singularity.def\n"
        f"Bootstrap: docker\nFrom: {plan.base_image}\n\n%files\n",
    ]
    for step in plan.steps:
        for source, target in step.copies:
            out.append(f"{INDENT}{source} {target}\n")
    out.append(f"\n%post\n{INDENT}set -eu\n{mirror_exports(plan, INDENT)}")
    for step in plan.steps:
        _step(step, out)
    out.append("\n\n%environment\n")
    for name, value in plan.runtime_env:
        out.append(f"{INDENT}export {name}={double_quoted(value)}\n")
    out.append("\n%labels\n")
    for name, value in plan.labels:
        out.append(f"{INDENT}{name} {value}\n")
    if plan.entrypoint or plan.cmd:
        out.append("\n%runscript\n")
        if plan.workdir:
            out.append(f"{INDENT}cd {plan.workdir}\n")
        out.append(f'{INDENT}exec {" ".join(plan.entrypoint + plan.cmd)} "$@"\n')
    out.append("\n")  # the files have always ended with a blank line; kept byte-identical
    return "".join(out)


def _step(step: Step, out: List[str]) -> None:
    shell_heading(step, INDENT, out)
    shell_body(step, INDENT, out)
