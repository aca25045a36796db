"""From a resolved Stack to a build plan: ordered steps of shell commands and environment.

The plan is format-neutral; the Dockerfile, bash script and Apptainer definition are
three renderings of it (writers in ``formats/``). Package-manager commands are data in
recipes/families.yaml (the base's family and package manager), so nothing here spells
``dnf`` or ``apt-get``.

Layer order is chosen for the build cache: system packages, NVIDIA repositories, CUDA,
cuDNN, NCCL and the Python environment come first and depend on nothing else, so every
stack sharing base + CUDA + cuDNN + NCCL + Python renders the same leading instructions.
The compiler, framework and benchmark follow; the manifest and labels come last.

The planner is one class made of cohesive parts, each in its own module: :mod:`.model`
(the plan's data), :mod:`.commands` (shell words and commands), :mod:`.writer` (the
state and how a step is added), :mod:`.stack`, :mod:`.framework` and :mod:`.benchmark`
(the steps of each stage); :class:`_Planner` orders them.
"""

from __future__ import annotations

from typing import Dict, Tuple

from mlcc.render.manifest import labels
from mlcc.render.plan.benchmark import BenchmarkSteps
from mlcc.render.plan.commands import _url_word, locked_pip_command, merged_args, place_args
from mlcc.render.plan.framework import FrameworkSteps
from mlcc.render.plan.model import (
    BUILD_STAGE,
    DEFAULT_OPTIONS,
    HANDOFF,
    NON_ROOT_UID,
    SOURCE_DATE_EPOCH,
    STAGES,
    Options,
    Plan,
    Step,
)
from mlcc.render.plan.stack import StackSteps
from mlcc.render.verified import declared, mirror_uses
from mlcc.resolve.stack import Stack

__all__ = [
    "BUILD_STAGE",
    "DEFAULT_OPTIONS",
    "HANDOFF",
    "SOURCE_DATE_EPOCH",
    "STAGES",
    "Options",
    "Plan",
    "Step",
    "_url_word",
    "build_plan",
    "locked_pip_command",
    "merged_args",
    "place_args",
    "planned_env",
]


class _Planner(StackSteps, FrameworkSteps, BenchmarkSteps):
    """A stack's plan: the stack's, the framework's and the benchmark's steps in layer order."""

    def plan(self) -> Plan:
        self.runtime_stack()
        self.compiler()
        if self.stack.framework is not None and not self.stack.from_base:
            self.framework()
        self.benchmark()
        if not self.stack.runtime:
            self.manifest()
            return self.finish()
        self.handoff()
        # The final stage: the same leading steps on runtime packages, then what the build made.
        built = tuple(self.steps)
        self.steps = []
        self.library_path = []
        self.runtime_stage = True
        self.runtime_stack()
        self.runtime_benchmark()
        self.manifest()
        return self.finish(built)

    def finish(self, built: Tuple[Step, ...] = ()) -> Plan:
        """The plan of the steps planned; ``built``: a runtime image's build stage before them.

        Each stage declares the mirror build args it uses itself (a Dockerfile ARG is scoped
        to its stage), so the plan's build args are both stages' in their order."""
        build = self.stack.benchmark.build
        build_steps, first_args = place_args(built, self.options, self.hosts) if built else ((), ())
        steps, final_args = place_args(self.steps, self.options, self.hosts)
        build_args = merged_args(first_args, final_args)
        mirror = (self.options.mirror or self.stack.download_host).rstrip("/")
        nvidia = self.stack.download_host
        return Plan(
            base_image=self.options.base_image or self.base.ref,
            mirror=mirror,
            steps=steps,
            labels=labels(self.stack),
            workdir=build.workdir if build else None,
            user=None if (build is None or build.run_as_root) else NON_ROOT_UID,
            entrypoint=build.entrypoint if build else (),
            cmd=build.cmd if build else (),
            pip_installs=tuple(self.pip_installs),
            fetches=tuple(self.fetched),
            build_args=build_args,
            build_steps=build_steps,
            mirrors=mirror_uses(
                self.fetched,
                self.pip_installs,
                self.unrecorded,
                "\n".join(["\n".join(step.commands) for step in (*build_steps, *self.steps)]),
                declared(mirror, nvidia, build_args, self.hosts),
                nvidia,
                self.hosts,
            ),
        )


def build_plan(stack: Stack, options: Options = DEFAULT_OPTIONS) -> Plan:
    return _Planner(stack, options).plan()


def planned_env(plan: Plan) -> Dict[str, str]:
    """The environment at the end of the build, later settings winning."""
    result: Dict[str, str] = {}
    for name, value in plan.runtime_env:
        result[name] = value.replace(f"${{{name}}}", result.get(name, f"${{{name}}}"))
    return result
