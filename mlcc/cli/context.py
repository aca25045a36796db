"""What commands share: the knowledge base (loaded once, on demand), completions, printing."""

from __future__ import annotations

from typing import Any, Callable, List, TypeVar

import click

from mlcc.cli.options import COMPLETERS, kb_of

# kb_of lives with the options (an option's --help may read the knowledge base); commands take it from here
__all__ = [
    "benchmark_argument",
    "complete_arch",
    "complete_base",
    "complete_benchmark",
    "complete_gpu",
    "complete_nccl_profile",
    "kb_of",
]

F = TypeVar("F", bound=Callable[..., Any])


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


def complete_nccl_profile(ctx: click.Context, param: click.Parameter, incomplete: str) -> List[str]:
    try:
        return [p.name for p in kb_of(ctx).nccl_profiles if p.name.startswith(incomplete)]
    except Exception:
        return []


def complete_arch(ctx: click.Context, param: click.Parameter, incomplete: str) -> List[str]:
    try:
        names = [name for arch in kb_of(ctx).arches.values() for name in (arch.name, *arch.aliases)]
    except Exception:
        return []
    return [name for name in names if name.startswith(incomplete)]


def complete_gpu(ctx: click.Context, param: click.Parameter, incomplete: str) -> List[str]:
    try:
        return [name for name in kb_of(ctx).gpus if name.startswith(incomplete)]
    except Exception:
        return []


COMPLETERS["--base"] = complete_base
COMPLETERS["--nccl-profile"] = complete_nccl_profile
COMPLETERS["--arch"] = complete_arch
COMPLETERS["--gpu"] = complete_gpu


def benchmark_argument(required: bool = True) -> Callable[[F], F]:
    return click.argument("benchmark", required=required, shell_complete=complete_benchmark)
