"""The ``mlcc`` command line: argument parsing and printing over :mod:`mlcc.app`.

One module per command (or group of related commands). The root group knows each command
by name and the module that holds it, and imports that module only when the command runs
(or --help lists it): this is the one place start-up laziness lives, so ``mlcc resolve``
pays for the resolver and not for Jinja2, jsonschema or a container SDK. Every other
module imports at its top.
"""

from __future__ import annotations

import importlib
import io
import os
import sys
import warnings
from typing import Any, Dict, List, Optional, Sequence, TextIO, Type, Union

import click

from mlcc import __version__
from mlcc.cli.values import PATH
from mlcc.errors import EXIT_INTERNAL, IncompleteRecipe, MlccError, UsageError
from mlcc.stdio import OUTPUT_ERRNOS, output_failed, silence_stdout
from mlcc.ui.safe_text import echo

EPILOG = """\b
Exit codes: 0 done, 2 usage or recipe error, 3 no compatible stack,
4 build failed, 5 registry error, 6 image drift, 7 generated files stale,
8 lint findings, 9 build history locked or damaged, 10 kb check findings,
11 an INCOMPLETE recipe under --strict (or CI=true), 130 interrupted.
Docs and examples: README.md."""

# command name -> "module:attribute" of its click command, in the order --help lists them.
COMMANDS: Dict[str, str] = {
    "list": "mlcc.cli.knowledge:list_command",
    "resolve": "mlcc.cli.knowledge:resolve_command",
    "gen": "mlcc.cli.gen:gen_command",
    "build": "mlcc.cli.build:build_command",
    "inspect": "mlcc.cli.images:inspect_command",
    "diff": "mlcc.cli.images:diff_command",
    "verify": "mlcc.cli.images:verify_command",
    "sbom": "mlcc.cli.sbom:sbom_command",
    "matrix": "mlcc.cli.matrix:matrix_command",
    "history": "mlcc.cli.history:history_command",
    "report": "mlcc.cli.matrix:report_command",
    "results": "mlcc.cli.results:results_group",
    "advise": "mlcc.cli.advise:advise_command",
    "lint": "mlcc.cli.lint:lint_command",
    "kb": "mlcc.cli.kb:kb_group",
    "completion": "mlcc.cli.completion:completion_command",
}


class Settings:
    """What the root group passes to every command (the knowledge base loads on demand)."""

    def __init__(self, recipes: Optional[str]) -> None:
        self.recipes = recipes


class StrictGroup(click.Group):
    """A group whose commands refuse a single-valued option given twice (click keeps the last)."""

    def resolve_command(
        self, ctx: click.Context, args: List[str]
    ) -> tuple[Optional[str], Optional[click.Command], List[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None and not isinstance(command, click.Group):
            _refuse_repeats(command, rest)
        return name, command, rest


class LazyGroup(StrictGroup):
    """A group that knows its commands as ``name -> "module:attribute"`` and imports a
    command's module only when that command runs (or --help lists it). The root group and
    any group with costly subcommands (``mlcc results``) are LazyGroups."""

    def __init__(self, *args: Any, commands: Dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.table = commands

    def list_commands(self, ctx: click.Context) -> List[str]:
        return list(self.table)

    def get_command(self, ctx: click.Context, cmd_name: str) -> Optional[click.Command]:
        target = self.table.get(cmd_name)
        if target is None:
            return None
        module, _, attribute = target.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target} is not a click command")
        return command


def _refuse_repeats(command: click.Command, args: Sequence[str]) -> None:
    """A single-valued option given twice is an error: click would silently keep the last."""

    single: Dict[str, str] = {}
    for param in command.params:
        if isinstance(param, click.Option) and not param.multiple and not param.count:
            for opt in (*param.opts, *param.secondary_opts):
                single[opt] = str(param.name)
    used: Dict[str, List[str]] = {}
    for token in args:
        if token == "--":
            break
        opt = token.split("=", 1)[0] if token.startswith("--") else token
        if opt in single:
            used.setdefault(single[opt], []).append(opt)
    for spelled in used.values():
        if len(spelled) > 1:
            raise UsageError(
                f"{spelled[0]} is given {len(spelled)} times ({', '.join(spelled)}); give it once",
                hint="only --with, --nccl-env and the other repeatable options take several values",
            )


@click.group(
    cls=LazyGroup,
    commands=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=EPILOG,
)
@click.version_option(__version__, "--version", "-V", prog_name="mlcc")
@click.option(
    "--recipes",
    metavar="DIR",
    type=PATH,
    envvar="MLCC_RECIPES",
    help="Knowledge base folder (default: the recipes/ shipped with mlcc). Env: MLCC_RECIPES.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Make a recipe marked INCOMPLETE an error (exit 11), not a warning. On when CI=true.",
)
@click.pass_context
def cli(ctx: click.Context, recipes: Optional[str], strict: bool) -> None:
    """mlcc: resolve, generate, build and verify ML benchmark container images
    for RHEL/UBI and OpenShift.

    \b
    Quick start:
      mlcc list benchmarks
      mlcc resolve maskrcnn --cuda 10.1
      mlcc gen maskrcnn --cuda 10.1           # Dockerfile + OpenShift objects
      mlcc build maskrcnn --cuda 10.1 --push --registry quay.io/me
      mlcc verify quay.io/me/maskrcnn:cuda10.1-cudnn7-ubi8-x86_64
      mlcc matrix --explain
    """
    ctx.obj = Settings(recipes)
    if strict or os.environ.get("CI", "").lower() in CI_TRUE:
        warnings.simplefilter("error", IncompleteRecipe)


# CI=true (GitHub Actions, GitLab CI and most others set it) makes warnings of mlcc's own
# kinds errors: a pipeline must not publish what a recipe says does not run yet.
CI_TRUE = ("true", "1", "yes")


def _show_warning(
    message: Union[Warning, str],
    category: Type[Warning],
    filename: str,
    lineno: int,
    file: Optional[TextIO] = None,
    line: Optional[str] = None,
) -> None:
    """mlcc's warnings on stderr as one line of their own, not Python's file:line form."""
    echo(f"mlcc: warning: {message}", err=True)


def run(argv: Optional[Sequence[str]] = None) -> int:
    """Run the CLI; return the exit code instead of exiting (used by tests)."""
    with warnings.catch_warnings():  # the filters and the printer hold for this run only
        warnings.simplefilter("always", IncompleteRecipe)
        warnings.showwarning = _show_warning
        return _run(argv)


def _run(argv: Optional[Sequence[str]]) -> int:
    try:
        result = cli.main(
            args=list(argv) if argv is not None else None, prog_name="mlcc", standalone_mode=False
        )
    except MlccError as error:
        echo(f"mlcc: error: {error}", err=True)
        return error.exit_code
    except click.exceptions.ClickException as error:
        shown = io.StringIO()  # click repeats the bad value: it goes through the printable filter too
        error.show(file=shown)
        echo(shown.getvalue(), err=True, nl=False)
        return error.exit_code
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.exceptions.Abort:
        echo("mlcc: interrupted", err=True)
        return 130
    except KeyboardInterrupt:
        echo("mlcc: interrupted", err=True)
        return 130
    except SystemExit as exiting:
        # click answers EPIPE on stdout with sys.exit(1), even outside standalone mode,
        # after wrapping sys.stdout in its flush-pacifier: that wrapper says the pipe broke
        pacifier = getattr(click.utils, "_PacifyFlushWrapper", None)
        if exiting.code == 1 and pacifier is not None and isinstance(sys.stdout, pacifier):
            silence_stdout()  # `mlcc list | head` is not an error
            return 0
        raise
    except BrokenPipeError:
        silence_stdout()  # `mlcc list | head` is not an error, nor is the exit's last flush
        return 0
    except OSError as error:
        if error.errno not in OUTPUT_ERRNOS or os.environ.get("MLCC_DEBUG"):
            raise
        silence_stdout()
        return output_failed(error)  # /dev/full, a closed stdout: the output went nowhere
    except Exception as error:  # a bug: one clear line, the traceback only on request
        if os.environ.get("MLCC_DEBUG"):
            raise
        echo(
            f"mlcc: internal error: {type(error).__name__}: {error} "
            "(set MLCC_DEBUG=1 for a traceback, and please report it)",
            err=True,
        )
        return EXIT_INTERNAL
    return result if isinstance(result, int) else 0


def main() -> None:
    sys.exit(run())
