"""The ``mlcc`` command line: a thin click layer over :mod:`mlcc.api`.

Only click is imported at start-up; each command imports what it needs when it runs, so
``mlcc resolve`` pays for the resolver and not for Jinja2, jsonschema or a container SDK.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Sequence, TypeVar

import click

from mlcc import __version__
from mlcc.errors import EXIT_INTERNAL, MlccError

if TYPE_CHECKING:
    from mlcc.api import Pins
    from mlcc.kb import KnowledgeBase

F = TypeVar("F", bound=Callable[..., Any])

EPILOG = """\b
Exit codes: 0 done, 2 usage or recipe error, 3 no compatible stack,
4 build failed, 5 registry error, 6 image drift, 7 generated files stale,
8 lint findings.
Docs and examples: README.md."""


class _Context:
    def __init__(self, recipes: Optional[str]) -> None:
        self.recipes = recipes
        self._kb: Optional[KnowledgeBase] = None

    @property
    def kb(self) -> KnowledgeBase:
        if self._kb is None:
            from mlcc.api import knowledge_base

            self._kb = knowledge_base(self.recipes)
        return self._kb


def _complete_benchmark(ctx: click.Context, param: click.Parameter, incomplete: str) -> List[str]:
    try:
        from mlcc.api import knowledge_base

        root = ctx.find_root()
        recipes = root.params.get("recipes") if root else None
        return [b for b in knowledge_base(recipes).benchmarks if b.startswith(incomplete)]
    except Exception:  # completion must never print a traceback into the shell
        return []


def _complete_base(ctx: click.Context, param: click.Parameter, incomplete: str) -> List[str]:
    try:
        from mlcc.api import knowledge_base

        return [b.name for b in knowledge_base(None).bases if b.name.startswith(incomplete)]
    except Exception:
        return []


def stack_options(func: F) -> F:
    """The pins every stack-producing command takes (resolve, gen, build, matrix)."""
    options = [
        click.option(
            "--cuda",
            metavar="VERSION",
            help="CUDA release: prefix (10.1), exact (10.1.243) or specifier ('>=10.1,<11').",
        ),
        click.option("--cudnn", metavar="VERSION", help="cuDNN version pin, e.g. 7 or 7.6.5."),
        click.option("--nccl", metavar="VERSION", help="NCCL version pin, e.g. 2.8."),
        click.option("--python", metavar="VERSION", help="Python version pin, e.g. 3.6."),
        click.option(
            "--gcc",
            metavar="VERSION",
            help="Host GCC pin, e.g. 8; picks a toolset when the system GCC does not match.",
        ),
        click.option(
            "--base",
            metavar="NAME",
            shell_complete=_complete_base,
            help="Base image name (mlcc list bases).",
        ),
        click.option(
            "--arch",
            metavar="ARCH",
            help="CPU architecture: x86_64, ppc64le or aarch64 (aliases amd64, ppc64el, arm64).",
        ),
        click.option(
            "--driver",
            metavar="VERSION",
            help="Host NVIDIA driver; only CUDA releases whose minimum driver it meets.",
        ),
        click.option("--cpu", is_flag=True, help="No CUDA: a CPU-only stack."),
        click.option(
            "--with",
            "with_",
            metavar="NAME=VERSION",
            multiple=True,
            help="Pin any other component, e.g. --with tensorflow=1.13 (repeatable).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def pins_from(kwargs: dict) -> Pins:  # type: ignore[type-arg]
    from mlcc.api import Pins

    names = ("cuda", "cudnn", "nccl", "python", "gcc", "base", "arch", "driver", "cpu", "with_")
    return Pins(**{name: kwargs.pop(name) for name in names})


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=EPILOG,
)
@click.version_option(__version__, "--version", "-V", prog_name="mlcc")
@click.option(
    "--recipes",
    metavar="DIR",
    envvar="MLCC_RECIPES",
    help="Knowledge base folder (default: the recipes/ shipped with mlcc). Env: MLCC_RECIPES.",
)
@click.pass_context
def cli(ctx: click.Context, recipes: Optional[str]) -> None:
    """mlcc: resolve, generate, build and verify ML benchmark container images
    for RHEL/UBI and OpenShift.

    \b
    Quick start:
      mlcc list benchmarks
      mlcc resolve maskrcnn --cuda 10.1
      mlcc resolve maskrcnn --arch ppc64le --json
    """
    ctx.obj = _Context(recipes)


@cli.command("list")
@click.argument(
    "what",
    type=click.Choice(["benchmarks", "bases", "cuda", "cudnn", "nccl", "frameworks", "arches"]),
    default="benchmarks",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array instead of a table.")
@click.pass_obj
def list_command(obj: _Context, what: str, as_json: bool) -> None:
    """List what the knowledge base knows: benchmarks (default), bases, cuda,
    cudnn, nccl, frameworks or arches."""
    from mlcc.api import list_rows
    from mlcc.cli.output import list_table

    rows = list_rows(obj.kb, what)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        click.echo(list_table(what, rows))


@cli.command("resolve")
@click.argument("benchmark", shell_complete=_complete_benchmark)
@stack_options
@click.option("--json", "as_json", is_flag=True, help="Print the stack (or the conflict) as one JSON object.")
@click.option("-v", "--verbose", is_flag=True, help="Show where each fact comes from.")
@click.pass_obj
def resolve_command(obj: _Context, /, benchmark: str, as_json: bool, verbose: bool, **kwargs: Any) -> None:
    """Resolve a compatible stack for BENCHMARK and the pins given.

    \b
    Examples:
      mlcc resolve maskrcnn --cuda 10.1
      mlcc resolve tf_cnn_benchmarks --cpu --base ubi9
      mlcc resolve minigo --with tensorflow=1.13 --arch ppc64le --json
      mlcc resolve nccl-tests --driver 450.80.02
    """
    from mlcc.api import request_for
    from mlcc.errors import ConflictError
    from mlcc.resolve import Resolver

    kb = obj.kb
    request = request_for(kb, benchmark, pins_from(kwargs))
    try:
        stack = Resolver(kb).resolve(request)
    except ConflictError as conflict:
        if as_json and hasattr(conflict, "to_dict"):
            click.echo(json.dumps(conflict.to_dict(), indent=2))
        raise
    if as_json:
        click.echo(json.dumps(stack.to_dict(), indent=2))
    else:
        from mlcc.cli.output import stack_table

        click.echo(stack_table(stack, verbose=verbose))


@cli.command("gen")
@click.argument("benchmark", required=False, shell_complete=_complete_benchmark)
@stack_options
@click.option(
    "-o",
    "--output",
    "output",
    metavar="DIR",
    default="dockerfiles",
    show_default=True,
    help="Write into DIR/<benchmark>/<variant>/.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["dockerfile", "script", "singularity"]),
    default="dockerfile",
    show_default=True,
    help="Dockerfile, a bash script for bare-metal installs, or an Apptainer definition.",
)
@click.option("--base-image", metavar="REF", help="Build FROM this (mirrored) image instead of the base's.")
@click.option(
    "--mirror",
    metavar="URL",
    help="Fetch NVIDIA packages and files from URL instead of "
    "https://developer.download.nvidia.com (also a build arg: NVIDIA_MIRROR).",
)
@click.option("--all", "all_", is_flag=True, help="Regenerate the published set (recipes/matrix.yaml).")
@click.option(
    "--check", is_flag=True, help="With --all: change nothing, exit 7 if the files on disk are stale."
)
@click.pass_obj
def gen_command(
    obj: _Context,
    /,
    benchmark: Optional[str],
    output: str,
    fmt: str,
    base_image: Optional[str],
    mirror: Optional[str],
    all_: bool,
    check: bool,
    **kwargs: Any,
) -> None:
    """Generate the Dockerfile (and stack.json) for BENCHMARK and the pins given.

    \b
    Examples:
      mlcc gen maskrcnn --cuda 10.1
      mlcc gen maskrcnn --arch ppc64le --format script -o out/
      mlcc gen ssd --base-image registry.example.com/ubi8:8.10 --mirror https://mirror.example.com/nvidia
      mlcc gen --all --check
    """
    from pathlib import Path

    from mlcc import gen
    from mlcc.errors import UsageError

    options = gen.check_options(base_image, mirror)
    root = Path(output)
    if all_:
        if benchmark is not None or any(v not in (None, False, ()) for v in kwargs.values()):
            raise UsageError("--all regenerates the published set; it takes no benchmark or pins")
        generated = gen.generate_all(obj.kb, fmt=fmt, options=options)
        if check:
            gen.check_all(root, generated)
            click.echo(f"{len(generated)} variants under {root} are up to date")
            return
        _report(gen.write_all(root, generated), root)
        return
    if check:
        raise UsageError("--check goes with --all")
    if benchmark is None:
        raise UsageError("name a benchmark (mlcc list benchmarks), or use --all")
    from mlcc.api import request_for
    from mlcc.resolve import Resolver

    kb = obj.kb
    stack = Resolver(kb).resolve(request_for(kb, benchmark, pins_from(kwargs)))
    _report(gen.write(root, [gen.generate(kb, stack, fmt=fmt, options=options)]), root)


def _report(changes: Sequence[Any], root: Any) -> None:
    written = [c for c in changes if c.status != "unchanged"]
    for change in changes:
        click.echo(f"{change.status:9} {change.path}")
    if not written:
        click.echo(f"nothing changed under {root}")


@cli.command("lint")
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option("--rules", is_flag=True, help="List the rules and exit.")
def lint_command(paths: Sequence[str], rules: bool) -> None:
    """Check Dockerfiles (default: dockerfiles/) against mlcc's rules: pinned base,
    pinned NVIDIA and pip packages, caches cleaned in the same layer, no blanket
    update, labels present, non-root user. Exit 8 on any error."""
    from pathlib import Path

    from mlcc.errors import LintError, UsageError
    from mlcc.lint import RULES, lint_paths

    if rules:
        for rule, text in RULES.items():
            click.echo(f"{rule}  {text}")
        return
    targets = [Path(p) for p in paths] or [p for p in (Path("dockerfiles"),) if p.exists()]
    if not targets:
        raise UsageError("nothing to lint: give paths, or run where dockerfiles/ exists")
    missing = [str(p) for p in targets if not p.exists()]
    if missing:
        raise UsageError(f"no such file or folder: {', '.join(missing)}")
    findings = lint_paths(targets)
    for finding in findings:
        click.echo(str(finding))
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        raise LintError(f"{len(errors)} lint error(s) in {len({f.path for f in errors})} file(s)")
    click.echo(f"lint: {len(findings)} warning(s), no errors")


@cli.command("completion")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion_command(shell: str) -> None:
    """Print the shell completion script: eval "$(mlcc completion bash)"."""
    from click.shell_completion import get_completion_class

    completion = get_completion_class(shell)
    assert completion is not None
    click.echo(completion(cli, {}, "mlcc", "_MLCC_COMPLETE").source())


def run(argv: Optional[Sequence[str]] = None) -> int:
    """Run the CLI; return the exit code instead of exiting (used by tests)."""
    try:
        result = cli.main(
            args=list(argv) if argv is not None else None, prog_name="mlcc", standalone_mode=False
        )
    except MlccError as error:
        click.echo(f"mlcc: error: {error}", err=True)
        return error.exit_code
    except click.exceptions.ClickException as error:
        error.show()
        return error.exit_code
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.exceptions.Abort:
        click.echo("mlcc: interrupted", err=True)
        return 130
    except KeyboardInterrupt:
        click.echo("mlcc: interrupted", err=True)
        return 130
    except BrokenPipeError:
        sys.stderr.close()  # `mlcc list | head` is not an error
        return 0
    except Exception as error:  # a bug: one clear line, the traceback only on request
        if os.environ.get("MLCC_DEBUG"):
            raise
        click.echo(
            f"mlcc: internal error: {type(error).__name__}: {error} "
            "(set MLCC_DEBUG=1 for a traceback, and please report it)",
            err=True,
        )
        return EXIT_INTERNAL
    return result if isinstance(result, int) else 0


def main() -> None:
    sys.exit(run())
