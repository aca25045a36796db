"""``mlcc inspect``, ``mlcc diff`` and ``mlcc verify``: what an image holds."""

from __future__ import annotations

import json
from typing import Any, Callable, List, Optional, TypeVar

import click

from mlcc.app.images import (
    arch_of,
    diff_document,
    diff_rows,
    drift_error,
    inspect_document,
    is_mlcc_image,
    is_stack_path,
    open_image,
    open_stack_file,
    summary,
    verify_image,
)
from mlcc.app.rebuild import check_saved, rebuild_and_compare, rebuild_error
from mlcc.cli.context import complete_arch
from mlcc.cli.options import kb_of
from mlcc.engines.base import Log
from mlcc.errors import UsageError
from mlcc.image.content import ImageContent
from mlcc.image.sizes import layer_lines, summary_line
from mlcc.ui.safe_text import echo
from mlcc.ui.table import render

F = TypeVar("F", bound=Callable[..., Any])


def _say(text: str = "") -> None:
    """Print text that holds what an image or registry said: no raw control characters."""
    echo(text)


def image_option_list() -> List[Callable[[F], F]]:
    """The options that say where an image is read from (inspect, diff, verify, results)."""
    return [
        click.option(
            "--tls-verify/--no-tls-verify",
            "tls_verify",
            default=True,
            show_default=True,
            help="Verify the registry's TLS certificate.",
        ),
        click.option(
            "--arch",
            "image_arch",
            metavar="ARCH",
            help="The arch to read from a multi-arch image.",
            shell_complete=complete_arch,
        ),
        click.option(
            "--backend",
            type=click.Choice(["buildah", "podman", "docker"]),
            help="Engine whose storage holds local:REF images.",
        ),
    ]


def image_options(func: F) -> F:
    options = image_option_list()
    for option in reversed(options):
        func = option(func)
    return func


@click.command("inspect")
@click.argument("image")
@image_options
@click.option("--json", "as_json", is_flag=True, help="Print labels, stack.json and installed.json as JSON.")
def inspect_command(
    image: str, tls_verify: bool, image_arch: Optional[str], backend: Optional[str], as_json: bool
) -> None:
    """Show the software stack of IMAGE without running it: what was resolved
    (stack.json, labels) beside what the build recorded as installed.

    \b
    IMAGE is a registry reference (quay.io/me/maskrcnn:TAG), local:REF for an image in
    a local engine's storage, or oci-archive:PATH, docker-archive:PATH, oci:DIR.
    """
    contents = open_image(image, tls_verify=tls_verify, arch=image_arch, backend=backend)
    if as_json:
        documents = [inspect_document(c) for c in contents]
        echo(json.dumps(documents[0] if len(documents) == 1 else documents, indent=2))
        return
    for content in contents:
        _say(
            f"{content.reference}  {content.os}/{arch_of(content)}"
            + (f"  {content.digest}" if content.digest else "")
        )
        _say_sizes(content)
        if not is_mlcc_image(content):
            _say("  no /etc/mlcc/stack.json: not an mlcc image (labels below)")
            for name, value in sorted(content.labels.items()):
                _say(f"  {name}={value}")
            continue
        rows = [(r.component, r.resolved, r.installed) for r in summary(content)]
        _say(render(("component", "resolved", "installed (recorded by the build)"), rows))
        _say()


def _say_sizes(content: ImageContent) -> None:
    sizes = content.sizes
    flavour = content.labels.get("io.mlcc.flavour", "devel") if is_mlcc_image(content) else None
    _say(f"  size: {summary_line(sizes)}" + (f"  (flavour {flavour})" if flavour else ""))
    if sizes is None:
        return
    for line in layer_lines(sizes):
        _say(f"    {line}")


@click.command("diff")
@click.argument("image_a")
@click.argument("image_b")
@image_options
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the comparison as one JSON object (schema mlcc-diff/1, docs/images.md).",
)
def diff_command(
    image_a: str,
    image_b: str,
    tls_verify: bool,
    image_arch: Optional[str],
    backend: Optional[str],
    as_json: bool,
) -> None:
    """Show the stacks of IMAGE_A and IMAGE_B side by side; * marks what differs.

    \b
    Either may also be a stack.json that mlcc gen wrote, or its variant folder: two stacks
    compare before anything is built.
    """
    a, b = (
        [open_stack_file(t)]
        if is_stack_path(t)
        else open_image(t, tls_verify=tls_verify, arch=image_arch, backend=backend)
        for t in (image_a, image_b)
    )
    rows = diff_rows(a, b, (image_a, image_b))
    if as_json:
        echo(json.dumps(diff_document(rows, (image_a, image_b)), indent=2, allow_nan=False))
        return
    _say(render(("", "component", image_a, image_b), rows))
    changed = sum(1 for r in rows if r[0])
    _say(f"{changed} component(s) differ" if changed else "the stacks are the same")


@click.command("verify")
@click.argument("image")
@image_options
@click.option(
    "--json", "as_json", is_flag=True, help="Print the findings (with --rebuild: the comparison) as JSON."
)
@click.option(
    "--rebuild",
    is_flag=True,
    help="Rebuild IMAGE from its stamped stack (the same base digest and build files) with a local "
    "engine (--backend buildah or podman) and compare the two layer by layer; exit 6 naming the "
    "first differing layer and its paths (docs/reproducing.md).",
)
@click.option("--keep", is_flag=True, help="With --rebuild: keep the rebuilt image in local storage.")
@click.option("-q", "--quiet", is_flag=True, help="With --rebuild: do not show the build output.")
@click.pass_context
def verify_command(
    ctx: click.Context,
    image: str,
    tls_verify: bool,
    image_arch: Optional[str],
    backend: Optional[str],
    as_json: bool,
    rebuild: bool,
    keep: bool,
    quiet: bool,
) -> None:
    """Check that IMAGE holds the stack it claims: what the build recorded as installed
    against stack.json and the labels. Exit 6 listing each mismatch.

    \b
    IMAGE is a registry reference, local:REF, or oci-archive:PATH / docker-archive:PATH / oci:DIR.
    With --rebuild it is local:REF, oci-archive:PATH or oci:DIR: the image is built again and
    the two compared; exit 0 when identical, 6 when they differ.
    """
    if (keep or quiet) and not rebuild:
        raise UsageError("--keep and --quiet go with --rebuild")
    if rebuild:
        _verify_rebuild(ctx, image, image_arch, tls_verify, backend, as_json=as_json, keep=keep, quiet=quiet)
        return
    verified = verify_image(open_image(image, tls_verify=tls_verify, arch=image_arch, backend=backend))
    if as_json:
        report = [v.to_dict() for v in verified]
        echo(json.dumps(report if len(report) > 1 else report[0], indent=2))
    else:
        for v in verified:
            verdict = "not an mlcc image" if not is_mlcc_image(v.content) else "DRIFT" if v.drift else "ok"
            _say(f"{v.content.reference} ({arch_of(v.content)}): {verdict}")
            if not is_mlcc_image(v.content):
                continue  # no stack to compare with: its missing stack.json is the verdict
            for finding in v.findings:
                _say(f"  {'drift' if finding.severity == 'drift' else 'note '}  {finding}")
    error = drift_error(image, verified)
    if error is not None:
        raise error


def _verify_rebuild(
    ctx: click.Context,
    image: str,
    image_arch: Optional[str],
    tls_verify: bool,
    backend: Optional[str],
    *,
    as_json: bool,
    keep: bool,
    quiet: bool,
) -> None:
    check_saved(image)  # before a registry is asked for it
    contents = open_image(image, tls_verify=tls_verify, arch=image_arch, backend=backend)
    if len(contents) != 1:
        raise UsageError(f"{image} is a multi-arch image: rebuild one arch, pick it with --arch")
    log = Log(None if quiet else lambda line: echo(f"  | {line}", err=True))
    rebuilt = rebuild_and_compare(
        kb_of(ctx), image, contents[0], backend=backend, tls_verify=tls_verify, keep=keep, log=log
    )
    if as_json:
        echo(json.dumps(rebuilt.to_dict(), indent=2))
    else:
        for line in rebuilt.describe():
            _say(line)
    error = rebuild_error(rebuilt)
    if error is not None:
        raise error
