"""`mlcc gen BENCHMARK [pins]` without click (see :mod:`mlcc.fastpath`): the command users
type most, with every other option at its default. Any other option (-o, --format, the
mirrors, the cluster's, --all, -i ...) goes to click.

Everything up to the writing -- options, knowledge base, resolution, rendering -- runs
first; an error there returns None with nothing written. An error while writing also
returns None: click then runs the same gen and reports it, and files this run wrote
before the error are unchanged by then (writes are whole files, renamed into place).
"""

import sys
from typing import NamedTuple, Optional, Sequence

from mlcc.app.generate import (
    DEFAULT_BUILD_ROOT,
    DEFAULT_OPENSHIFT_ROOT,
    SourceFlags,
    generate,
    output_roots,
    roots_shown,
    write,
)
from mlcc.app.kb import knowledge_base, resolve
from mlcc.fastpath.parse import OptionTypes, parse
from mlcc.output import change_lines
from mlcc.render.openshift import ClusterOptions, check_cluster_options
from mlcc.resolve.pins import Pins

GEN_TYPES: OptionTypes = (("pins", Pins),)


class GenArgs(NamedTuple):
    benchmark: str
    pins: Pins


def parse_gen(args: Sequence[str]) -> Optional[GenArgs]:
    """The arguments after ``gen`` when they are a benchmark and plain pins; else None."""
    parsed = parse(args, GEN_TYPES)
    return None if parsed is None else GenArgs(parsed.positional, parsed.values["pins"])


def run(args: Sequence[str]) -> Optional[int]:
    parsed = parse_gen(args)
    if parsed is None:
        return None
    try:
        # the click command's order: options, output roots, knowledge base, stack
        options = SourceFlags().options()
        cluster = check_cluster_options(ClusterOptions())
        roots = output_roots(DEFAULT_BUILD_ROOT, DEFAULT_OPENSHIFT_ROOT, None, "dockerfile")
        kb = knowledge_base()
        one = generate(kb, resolve(kb, parsed.benchmark, parsed.pins), options=options, cluster=cluster)
        changes = write(roots, [one])
    except Exception:  # bad input, a conflict, an output problem or a bug: click reports it
        return None
    try:
        sys.stdout.write("".join(line + "\n" for line in change_lines(changes, roots_shown(roots))))
        sys.stdout.flush()
    except BrokenPipeError:
        sys.stderr.close()  # as mlcc.cli.run
    return 0
