"""One variant rendered: its files, its digest, and its stage graph (:func:`render`).

The package's public face is :mod:`mlcc.render`; this module is where :func:`render` lives.
"""

from __future__ import annotations

import shlex
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Dict, NamedTuple, Optional, Tuple

from mlcc.errors import UsageError
from mlcc.kb.model import HOST_MIRRORS
from mlcc.render import digest as digests
from mlcc.render.fetches import as_fetched
from mlcc.render.formats import Context, apptainer, dockerfile, script
from mlcc.render.graph import BASE, IMAGE, Stage, StageGraph
from mlcc.render.manifest import stack_text
from mlcc.render.mirror import PIP_SETTINGS
from mlcc.render.plan import DEFAULT_OPTIONS, Options, Plan, build_plan
from mlcc.resolve.flavour import as_devel
from mlcc.resolve.stack import Stack

if TYPE_CHECKING:
    from mlcc.render.formats import Writer
    from mlcc.resolve.request import Request

FILES = Path(__file__).parent / "files"


class Format(NamedTuple):
    write: Writer
    file_name: str  # the main file of a variant folder


FORMATS: Dict[str, Format] = {
    "dockerfile": Format(dockerfile.write, dockerfile.DOCKERFILE),
    "script": Format(script.write, script.SCRIPT),
    "singularity": Format(apptainer.write, apptainer.DEFINITION),
}


class Rendered(NamedTuple):
    stack: Stack
    fmt: str
    files: Tuple[Tuple[str, str], ...]  # (name, content), sorted by name
    digest: str
    build_args: Tuple[Tuple[str, str], ...]
    platform: str
    plan: Plan
    options: Options
    command: str  # the request, in the header comment: recorded, not hashed
    # The digest with the base image at the stack's own reference (``digest`` when no
    # --base-image was given): what a build hashes beside the base's manifest digest once
    # it has pinned one. The digest names the base's bytes then, so a mirror of the base
    # that serves the same manifest builds the published image (BuildJob.digest).
    base_free_digest: str
    # The images a build of it makes: one stage FROM the base (a chained build's stages:
    # mlcc.render.chain.chain_graph)
    graph: StageGraph

    @property
    def variant(self) -> str:
        return self.stack.variant

    @property
    def main_file(self) -> str:
        return FORMATS[self.fmt].file_name

    def content(self, name: str) -> str:
        return dict(self.files)[name]


@cache
def _recorder() -> str:
    """The recording script every rendering ships (one file of the package)."""
    return (FILES / "mlcc-record").read_text(encoding="utf-8")


def gen_command(stack: Stack, options: Options, fmt: str, request: Optional[Request] = None) -> str:
    """The command that regenerates these files, for the header comment: the request as
    typed (without one, the benchmark's: its pins would resolve to the same stack)."""
    parts = ["mlcc", "gen", stack.benchmark.name]
    # quoted: ``--cuda >=10.1,<10.2`` unquoted would be two shell redirections
    flags = request.flags(quote=shlex.quote) if request is not None else ""
    if flags:
        parts.append(flags)
    if options.base_image:
        parts.append(f"--base-image {shlex.quote(options.base_image)}")
    if options.mirror:
        parts.append(f"--mirror {shlex.quote(options.mirror)}")
    mirror_flags: Dict[str, str] = {m.var: m.flag for m in HOST_MIRRORS}
    mirror_flags.update((p.var, p.flag) for p in PIP_SETTINGS)
    parts += [f"{mirror_flags[name]} {shlex.quote(url)}" for name, url in options.mirrors]
    if fmt != "dockerfile":
        parts.append(f"--format {fmt}")
    return " ".join(parts)


def render(
    stack: Stack,
    fmt: str = "dockerfile",
    options: Options = DEFAULT_OPTIONS,
    request: Optional[Request] = None,
) -> Rendered:
    """The files of one variant: a function of the stack, the format and the options alone.

    ``request`` (the pins as typed) is recorded in the header comment only, which the
    digest hashes as a placeholder: every request for one stack builds one image."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}", hint=f"formats: {', '.join(FORMATS)}")
    if fmt != "dockerfile":
        # install.sh sets up a host, and an Apptainer file here builds in one stage: both
        # keep the build (a runtime image is a multi-stage Dockerfile)
        stack = as_devel(stack)
    plan = build_plan(stack, options)
    files = _files(stack, plan, fmt)
    build_args = _build_args(plan)
    platform = f"linux/{stack.arch.oci}"
    # The digest sees a verified mirror at its placeholder (Plan.hashed): the files it
    # hashes are those this stack renders without that mirror asked for.
    hashed = plan.hashed()
    hashed_files = files if hashed is plan else _files(stack, hashed, fmt)
    value = digests.digest(hashed_files.items(), build_args, platform, plan.placeholders)
    base_free = value
    if plan.base_image != stack.base.ref:
        base_free = _base_free(stack, hashed, fmt, build_args, platform)
    command = gen_command(stack, options, fmt, request)
    stamped = tuple(sorted((n, digests.stamp(c, value, command)) for n, c in files.items()))
    graph = flat_graph(stack, plan, stamped, FORMATS[fmt].file_name, build_args, value)
    return Rendered(
        stack, fmt, stamped, value, build_args, platform, plan, options, command, base_free, graph
    )


def flat_graph(
    stack: Stack,
    plan: Plan,
    files: Tuple[Tuple[str, str], ...],
    main: str,
    build_args: Tuple[Tuple[str, str], ...],
    digest: str,
) -> StageGraph:
    """A flat image: one stage FROM the base (a runtime image's final stage too), the
    variant's files as rendered (stamped)."""
    stage = Stage(
        kind=IMAGE,
        repository=stack.benchmark.name,
        tag=stack.variant,
        dockerfile=dict(files)[main],
        files=tuple((n, c) for n, c in files if n != main),
        build_args=build_args,
        labels=tuple((name, digests.stamp(value, digest)) for name, value in plan.labels),
        digest=digest,
        parent=BASE,
        # a runtime image's two stages, the build and the final one, are both FROM the base
        runtime_parent=BASE if plan.build_steps else None,
    )
    return StageGraph((stage,), stack.flavour, plan.base_image, build_args, digest)


def _base_free(
    stack: Stack, hashed: Plan, fmt: str, build_args: Tuple[Tuple[str, str], ...], platform: str
) -> str:
    """The digest of ``hashed`` (a plan as the digest sees it) on the stack's own base
    reference: the files and the BASE_IMAGE build arg name that reference instead."""
    stock = stack.base.ref
    plan = hashed._replace(base_image=stock)
    args = tuple((name, stock if name == "BASE_IMAGE" else value) for name, value in build_args)
    return digests.digest(_files(stack, plan, fmt).items(), args, platform, plan.placeholders)


def _files(stack: Stack, plan: Plan, fmt: str) -> Dict[str, str]:
    """The files of a variant, with the placeholders of the digest and the request."""
    fetched = as_fetched(plan.fetches, plan.mirror, plan.build_args)
    text = stack_text(stack, base_image=plan.base_image, mirror=plan.mirror, fetches=fetched)
    files = {"stack.json": text, "mlcc-record": _recorder()}
    build = stack.benchmark.build
    for name, content in build.scripts if build else ():
        files[f"scripts/{name}"] = content
    write, name = FORMATS[fmt]
    context = Context(
        command=digests.REQUEST_PLACEHOLDER, files=files, base_title=stack.base.title, arch=stack.arch.name
    )
    files[name] = write(plan, context)
    return files


def _build_args(plan: Plan) -> Tuple[Tuple[str, str], ...]:
    mirrors = tuple((arg, value) for arg, value in plan.build_args if value is not None)
    return (("BASE_IMAGE", plan.base_image), ("NVIDIA_MIRROR", plan.mirror), *mirrors)


def render_dockerfile(plan: Plan, *, command: str) -> str:
    """A Dockerfile for ``plan`` alone (the stages of a chained build use this)."""
    described = any(target.endswith("/stack.json") for step in plan.steps for _, target in step.copies)
    return dockerfile.write(plan, Context(command=command, files={}, described=described))
