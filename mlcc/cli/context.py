"""What commands share: the knowledge base (loaded once, on demand), completions, printing."""

from __future__ import annotations

from typing import Any, Callable, List, TypeVar

import click

from mlcc.app.kb import knowledge_base
from mlcc.cli.options import COMPLETERS
from mlcc.kb.model import KnowledgeBase

F = TypeVar("F", bound=Callable[..., Any])


def kb_of(ctx: click.Context) -> KnowledgeBase:
    """The knowledge base of ``--recipes`` (or the shipped one), loaded once per run."""
    root = ctx.find_root()
    kb = root.meta.get("mlcc.kb")
    if kb is None:
        kb = knowledge_base(root.params.get("recipes"))
        root.meta["mlcc.kb"] = kb
    return kb


def complete_benchmark(ctx: click.Context, param: click.Parameter, incomplete: str) -> List[str]:
    try:
        return [b for b in kb_of(ctx).benchmarks if b.startswith(incomplete)]
    except Exception:  # completion must never print a traceback into the shell
        return []


def complete_base(ctx: click.Context, param: click.Parameter, incomplete: str) -> List[str]:
    try:
        return [b.name for b in kb_of(ctx).bases if b.name.startswith(incomplete)]
    except Exception:
        return []


COMPLETERS["--base"] = complete_base


def benchmark_argument(required: bool = True) -> Callable[[F], F]:
    return click.argument("benchmark", required=required, shell_complete=complete_benchmark)
