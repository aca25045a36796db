"""``mlcc sbom``: an image's software bill of materials (CycloneDX 1.5 JSON)."""

from __future__ import annotations

from typing import Optional

import click

from mlcc.app.images import open_image, repository_types, sbom_document
from mlcc.cli.context import kb_of
from mlcc.cli.images import image_options
from mlcc.cli.values import PATH
from mlcc.image.sbom import sbom_bytes
from mlcc.output import write_tree
from mlcc.ui.safe_text import echo
from mlcc.validate import path_flag


@click.command("sbom")
@click.argument("image")
@image_options
@click.option(
    "-o", "--output", metavar="FILE", type=PATH, help="Write the SBOM to FILE instead of standard output."
)
@click.pass_context
def sbom_command(
    ctx: click.Context,
    image: str,
    tls_verify: bool,
    image_arch: Optional[str],
    backend: Optional[str],
    output: Optional[str],
) -> None:
    """Print the SBOM of IMAGE as CycloneDX 1.5 JSON, built from what mlcc stamped into
    it (/etc/mlcc/stack.json) and what its build recorded as installed
    (/etc/mlcc/installed.json). The same image gives the same bytes (the time is
    SOURCE_DATE_EPOCH, else the image's creation time). Exit 6 when the image lacks
    those files or they are damaged.

    \b
    IMAGE is a registry reference, local:REF, or oci-archive:PATH / docker-archive:PATH / oci:DIR.
    `mlcc build --push` also pushes it beside the image (tag sha256-<hex>.sbom).
    """
    target = path_flag(output, "-o")
    contents = open_image(image, tls_verify=tls_verify, arch=image_arch, backend=backend)
    types = repository_types(kb_of(ctx).hosts.values())
    data = sbom_bytes(sbom_document(contents, image, types)).decode()
    if target is None:
        echo(data, nl=False)
        return
    write_tree(target.parent, [(target.name, data)], flag="-o FILE")
    echo(f"wrote {target}", err=True)
