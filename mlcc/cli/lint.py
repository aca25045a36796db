"""``mlcc lint``: Dockerfiles and OpenShift/Kubernetes YAML against mlcc's rules."""

from __future__ import annotations

from typing import Optional, Sequence

import click

from mlcc.app.lint import RULES, lint, lint_error
from mlcc.cli.values import PATH
from mlcc.ui.safe_text import echo


@click.command("lint")
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option(
    "--schema-dir",
    metavar="DIR",
    type=PATH,
    envvar="MLCC_SCHEMA_DIR",
    help="JSON Schemas of the API objects, kubeconform / openapi2jsonschema layout "
    "(env MLCC_SCHEMA_DIR). Without it YAML is checked by mlcc's own rules only.",
)
@click.option(
    "--openshift",
    "openshift_version",
    type=click.Choice(["4", "3.11"]),
    help="Validate OpenShift objects for this version (default: what each object was written for).",
)
@click.option("--rules", is_flag=True, help="List the rules and exit.")
def lint_command(
    paths: Sequence[str], schema_dir: Optional[str], openshift_version: Optional[str], rules: bool
) -> None:
    """Check Dockerfiles and OpenShift/Kubernetes YAML (default: dockerfiles/ and
    buildconfigs/). Dockerfiles: hadolint's rules (with the nearest .hadolint.yaml),
    and on files mlcc generated its own: pinned NVIDIA packages, every download
    checksum-verified, git sources at verified full commits, labels, non-root user.
    YAML: the API schemas, then the rules the API server and controllers apply.
    Exit 8 on any error.

    \b
    Examples:
      mlcc lint
      mlcc lint --schema-dir schemas/ buildconfigs/maskrcnn
      mlcc lint --rules
    """
    if rules:
        for rule, text in RULES.items():
            echo(f"{rule}  {text}")
        return
    findings = lint(paths, schema_dir=schema_dir, openshift=openshift_version)
    for finding in findings:
        echo(str(finding))
    error = lint_error(findings)
    if error is not None:
        raise error
    echo(f"lint: {len(findings)} warning(s), no errors")
