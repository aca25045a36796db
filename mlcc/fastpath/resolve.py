"""`mlcc resolve BENCHMARK [pins] --json` without click (see :mod:`mlcc.fastpath`).

The table output, a conflict and every error go to click.
"""

from __future__ import annotations

import sys

from mlcc.app.kb import ResolveView, knowledge_base, resolve, resolved_json
from mlcc.fastpath.parse import parse
from mlcc.records import NamedTuple
from mlcc.resolve.pins import Pins

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, Sequence

    from mlcc.fastpath.parse import OptionTypes

# The command's option types, by the argument name the click command receives them as.
RESOLVE_TYPES: OptionTypes = (("pins", Pins), ("view", ResolveView))


class ResolveArgs(NamedTuple):
    benchmark: str
    pins: Pins
    view: ResolveView


def parse_resolve(args: Sequence[str]) -> Optional[ResolveArgs]:
    """The arguments after ``resolve`` when every token is a plain form; else None."""
    parsed = parse(args, RESOLVE_TYPES)
    if parsed is None:
        return None
    return ResolveArgs(parsed.positional, parsed.values["pins"], parsed.values["view"])


def run(args: Sequence[str]) -> Optional[int]:
    parsed = parse_resolve(args)
    if parsed is None or not parsed.view.json:
        return None
    try:
        kb = knowledge_base()
        stack = resolve(kb, parsed.benchmark, parsed.pins)
        text = resolved_json(stack, parsed.pins.request(kb, parsed.benchmark))
    except Exception:  # a conflict, bad input or a bug: click runs again and reports it its way
        return None
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        sys.stderr.close()  # as mlcc.cli.run: `mlcc resolve ... --json | head` is not an error
    return 0
