"""`mlcc gen BENCHMARK [pins] [-o DIR] [--openshift-output DIR] [--only ...] [--format ...]`
without click (see :mod:`mlcc.fastpath`): the command users type most, with every other
option at its default. Any other option (the mirrors, the cluster's, --all, -i ...) goes
to click.

Everything up to the writing -- options, knowledge base, resolution, rendering -- runs
first; an error there returns None with nothing written. An error while writing also
returns None: click then runs the same gen and reports it, and files this run wrote
before the error are unchanged by then (writes are whole files, renamed into place).
"""

from __future__ import annotations

import sys

from mlcc.app.generate import OutputFlags, SourceFlags, generate, roots_shown, write
from mlcc.app.kb import knowledge_base, resolve
from mlcc.fastpath.parse import parse
from mlcc.output import change_lines
from mlcc.records import NamedTuple
from mlcc.render.openshift import ClusterOptions, check_cluster_options
from mlcc.resolve.pins import Pins

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, Sequence

    from mlcc.fastpath.parse import OptionTypes

GEN_TYPES: OptionTypes = (("pins", Pins), ("out", OutputFlags))


class GenArgs(NamedTuple):
    benchmark: str
    pins: Pins
    out: OutputFlags = OutputFlags()


def parse_gen(args: Sequence[str]) -> Optional[GenArgs]:
    """The arguments after ``gen`` when they are a benchmark, plain pins and output folders
    (-o, --openshift-output); else None."""
    parsed = parse(args, GEN_TYPES)
    if parsed is None:
        return None
    return GenArgs(parsed.positional, parsed.values["pins"], parsed.values["out"])


def run(args: Sequence[str]) -> Optional[int]:
    parsed = parse_gen(args)
    if parsed is None:
        return None
    try:
        # the click command's order: options, output roots, knowledge base, stack
        options = SourceFlags().options()
        cluster = check_cluster_options(ClusterOptions())
        roots = parsed.out.roots()
        kb = knowledge_base()
        stack = resolve(kb, parsed.benchmark, parsed.pins)
        one = generate(
            kb,
            stack,
            fmt=parsed.out.fmt,
            options=options,
            cluster=cluster if roots.openshift else None,
            request=parsed.pins.request(kb, parsed.benchmark),
        )
        changes = write(roots, [one])
    except Exception:  # bad input, a conflict, an output problem or a bug: click reports it
        return None
    try:
        sys.stdout.write("".join(line + "\n" for line in change_lines(changes, roots_shown(roots))))
        sys.stdout.flush()
    except BrokenPipeError:
        sys.stderr.close()  # as mlcc.cli.run
    return 0
