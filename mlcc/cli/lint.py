"""``mlcc lint``: Dockerfiles and OpenShift/Kubernetes YAML against mlcc's rules."""

from __future__ import annotations

import json
from typing import Optional, Sequence

import click

from mlcc.app.lint import RULES, lint, lint_error, lint_report
from mlcc.cli.values import PATH
from mlcc.errors import UsageError
from mlcc.kbtools.offline import lint_pins
from mlcc.ui.progress import ProgressReport
from mlcc.ui.safe_text import echo


@click.command("lint")
@click.argument("paths", nargs=-1, type=PATH, metavar="[PATH]...")
@click.option(
    "--schema-dir",
    metavar="DIR",
    type=PATH,
    envvar="MLCC_SCHEMA_DIR",
    help="JSON Schemas of the API objects, kubeconform / openapi2jsonschema layout "
    "(env MLCC_SCHEMA_DIR; default: the OpenShift and MPIJob schemas mlcc ships). Kubernetes' own "
    "kinds are validated by kubernetes-validate when installed; every kind without a schema gets "
    "a KS001 warning naming it: mlcc's rules only.",
)
@click.option(
    "--openshift",
    "openshift_version",
    type=click.Choice(["4", "3.11"]),
    help="Validate OpenShift objects for this version (default: what each object was written for).",
)
@click.option("--rules", is_flag=True, help="List the rules and exit.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the findings as one JSON object (schema mlcc-lint/1, docs/lint.md); same exit code.",
)
def lint_command(
    paths: Sequence[str],
    schema_dir: Optional[str],
    openshift_version: Optional[str],
    rules: bool,
    as_json: bool,
) -> None:
    """Check Dockerfiles and OpenShift/Kubernetes YAML (default: dockerfiles/ and
    buildconfigs/). Dockerfiles: hadolint's rules (with the nearest .hadolint.yaml, else
    for generated files the settings mlcc ships), and on files mlcc generated its own:
    pinned NVIDIA packages, every download checksum-verified, git sources at verified full
    commits, labels, non-root user.
    YAML: the API schemas, then the rules the API server and controllers apply.
    Exit 8 on any error.

    \b
    Examples:
      mlcc lint
      mlcc lint --schema-dir schemas/ buildconfigs/maskrcnn
      mlcc lint --rules
      mlcc lint --json buildconfigs
    """
    if rules:
        if as_json:
            raise UsageError("--json with --rules: --rules prints the rule table, --json lists findings")
        for rule, text in RULES.items():
            echo(f"{rule}  {text}")
        return
    with ProgressReport() as step:  # the published set takes about a minute
        findings = lint(
            paths, schema_dir=schema_dir, openshift=openshift_version, recipes_check=lint_pins, step=step
        )
    error = lint_error(findings)
    if as_json:
        echo(json.dumps(lint_report(findings), indent=2, sort_keys=True))
        if error is not None:
            raise error
        return
    for finding in findings:
        echo(str(finding))
    if error is not None:
        raise error
    echo(f"lint: {len(findings)} warning(s), no errors")
