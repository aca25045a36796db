"""``mlcc completion SHELL``: the shell completion script."""

from __future__ import annotations

import click
from click.shell_completion import get_completion_class

from mlcc.ui.safe_text import echo


@click.command("completion")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
@click.pass_context
def completion_command(ctx: click.Context, shell: str) -> None:
    """Print the shell completion script: eval "$(mlcc completion bash)"."""
    completion = get_completion_class(shell)
    if completion is None:  # click.Choice admits only shells click supports
        raise click.BadParameter(shell)
    echo(completion(ctx.find_root().command, {}, "mlcc", "_MLCC_COMPLETE").source())
