"""What commands share: the knowledge base (loaded once, on demand), completions, printing."""

from __future__ import annotations

from typing import Any, Callable, Iterable, List, TypeVar

import click
from packaging.version import Version

from mlcc.cli.options import COMPLETERS, KnowledgeHelpOption, kb_of
from mlcc.kb.model import FLAVOURS, KnowledgeBase

# kb_of lives with the options (an option's --help may read the knowledge base); commands take it from here
__all__ = [
    "benchmark_argument",
    "complete_arch",
    "complete_base",
    "complete_benchmark",
    "complete_gpu",
    "complete_nccl_profile",
    "complete_round",
    "kb_of",
    "round_option",
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


def _offered(
    ctx: click.Context, incomplete: str, values_of: Callable[[KnowledgeBase], Iterable[str]]
) -> List[str]:
    """The knowledge base's values that start with what was typed, each once, in its order."""
    try:
        values = list(dict.fromkeys(values_of(kb_of(ctx))))
    except Exception:  # completion must never print a traceback into the shell
        return []
    return [value for value in values if value.startswith(incomplete)]


def complete_round(ctx: click.Context, param: click.Parameter, incomplete: str) -> List[str]:
    """The rounds of the benchmark already typed, else every round the recipes hold."""
    benchmark = ctx.params.get("benchmark")
    if benchmark is None:
        # `mlcc gen maskrcnn --round <TAB>`: click stops parsing at the option still waiting
        # for its value and leaves the words before it, the benchmark among them, in ctx.args
        benchmark = next((word for word in ctx.args if not word.startswith("-")), None)

    def rounds(kb: KnowledgeBase) -> Iterable[str]:
        return (kb.rounds_of(benchmark) if isinstance(benchmark, str) else ()) or kb.rounds()

    return _offered(ctx, incomplete, rounds)


def complete_cuda(ctx: click.Context, param: click.Parameter, incomplete: str) -> List[str]:
    """Each CUDA line (10.1) and release (10.1.243) the recipes know."""

    def versions(kb: KnowledgeBase) -> Iterable[str]:
        for release in kb.cuda:
            yield ".".join(release.version.split(".")[:2])
            yield release.version

    return _offered(ctx, incomplete, versions)


def complete_flavour(ctx: click.Context, param: click.Parameter, incomplete: str) -> List[str]:
    return [flavour for flavour in FLAVOURS if flavour.startswith(incomplete)]


def _library_completer(library: str) -> Callable[[click.Context, click.Parameter, str], List[str]]:
    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> List[str]:
        return _offered(
            ctx, incomplete, lambda kb: sorted({b.version for b in getattr(kb, library)}, key=Version)
        )

    return complete


def complete_python(ctx: click.Context, param: click.Parameter, incomplete: str) -> List[str]:
    return _offered(
        ctx, incomplete, lambda kb: sorted({p.version for b in kb.bases for p in b.pythons}, key=Version)
    )


def complete_with(ctx: click.Context, param: click.Parameter, incomplete: str) -> List[str]:
    """``NAME=VERSION`` for each framework build the recipes know."""
    return _offered(
        ctx,
        incomplete,
        lambda kb: (f"{f.name}={b.version}" for f in kb.frameworks.values() for b in f.builds),
    )


def complete_gcc(ctx: click.Context, param: click.Parameter, incomplete: str) -> List[str]:
    """The system GCCs of the bases and the GCCs of their toolsets."""

    def versions(kb: KnowledgeBase) -> Iterable[str]:
        found = {b.gcc_system for b in kb.bases} | {t.gcc for b in kb.bases for t in b.toolsets}
        return sorted(found, key=Version)

    return _offered(ctx, incomplete, versions)


COMPLETERS["--benchmark"] = complete_benchmark
COMPLETERS["--gcc"] = complete_gcc
COMPLETERS["--base"] = complete_base
COMPLETERS["--nccl-profile"] = complete_nccl_profile
COMPLETERS["--arch"] = complete_arch
COMPLETERS["--gpu"] = complete_gpu
COMPLETERS["--round"] = complete_round
COMPLETERS["--flavour"] = complete_flavour
COMPLETERS["--cuda"] = complete_cuda
COMPLETERS["--cudnn"] = _library_completer("cudnn")
COMPLETERS["--nccl"] = _library_completer("nccl")
COMPLETERS["--python"] = complete_python
COMPLETERS["--with"] = complete_with


def benchmark_argument(required: bool = True) -> Callable[[F], F]:
    return click.argument("benchmark", required=required, shell_complete=complete_benchmark)


def round_option(help_text: str) -> Callable[[F], F]:
    """``--round ROUND`` of a command that takes a round by itself (results, advise): its
    help names the rounds the recipes record where ``help_text`` says `mlcc list rounds`,
    and the shell completes them."""
    return click.option(
        "--round",
        "round_name",
        metavar="ROUND",
        help=help_text,
        cls=KnowledgeHelpOption,
        describe=lambda kb: help_text.replace("`mlcc list rounds`", ", ".join(kb.rounds())),
        shell_complete=complete_round,
    )
