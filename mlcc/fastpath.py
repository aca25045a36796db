"""`mlcc resolve BENCHMARK [pins] --json` without importing click (issue 9, start-up).

Importing click (and the inspect, uuid, platform and datetime it brings) was a fifth of a
warm ``mlcc resolve``: the same resolution from a script that skips click took 0.95x HPC
Container Maker's time, the CLI 1.16x (perf/README.md). This parser reads the options from
the same metadata the click command is built from (the :class:`~mlcc.flags.Flag` fields of
:class:`~mlcc.resolve.pins.Pins` and :class:`~mlcc.app.kb.ResolveView`) and understands only
their plain forms. Anything else -- another command, root options, --help, shell
completion, MLCC_RECIPES, an unknown, repeated or unusual option, a value that looks like an
option, ``--``, the table output, a conflict or any other error -- returns None and the
click CLI runs instead, from the start, as if this module did not exist: errors, exit codes
and messages stay click's. ``tests/unit/test_fastpath.py`` checks with hypothesis that
whatever this parser accepts, click parses to the same values.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from mlcc.app.kb import ResolveView, knowledge_base, resolve, resolved_json
from mlcc.flags import Flag, flags_of, from_flags
from mlcc.resolve.pins import Pins

# The command's option types, by the argument name the click command receives them as.
_RESOLVE_TYPES: Tuple[Tuple[str, type], ...] = (("pins", Pins), ("view", ResolveView))
# Settings the click CLI reads from the environment; with any of them set, click runs.
_CLICK_ENVIRONMENT = ("MLCC_RECIPES", "_MLCC_COMPLETE")


class ResolveArgs(NamedTuple):
    benchmark: str
    pins: Pins
    view: ResolveView


def _options() -> Dict[str, Tuple[str, str, Flag]]:
    """``{"--cuda": ("pins", "cuda", flag)}`` for every spelling of every option."""
    found: Dict[str, Tuple[str, str, Flag]] = {}
    for argument, cls in _RESOLVE_TYPES:
        for field, (spec, _default) in flags_of(cls).items():
            for name in (spec.name, spec.short):
                if name:
                    found[name] = (argument, field, spec)
    return found


def _plain(spec: Flag) -> bool:
    """An option whose value click hands over unconverted (no choices, types, pairs)."""
    return not (spec.choices or spec.value_type or spec.convert or spec.secondary)


def parse_resolve(args: Sequence[str]) -> Optional[ResolveArgs]:
    """The arguments after ``resolve`` when every token is a plain form; else None."""
    options = _options()
    values: Dict[str, Dict[str, Any]] = {argument: {} for argument, _ in _RESOLVE_TYPES}
    benchmark: Optional[str] = None
    tokens: List[str] = list(args)
    while tokens:
        token = tokens.pop(0)
        if not token.startswith("-"):
            if benchmark is not None or not token:
                return None
            benchmark = token
            continue
        name, equals, value = token.partition("=")
        if name not in options or not _plain(options[name][2]):
            return None
        argument, field, spec = options[name]
        given = values[argument]
        if spec.is_flag:
            if equals or field in given:
                return None
            given[field] = True
            continue
        if not equals:
            if not tokens or tokens[0].startswith("-"):
                return None
            value = tokens.pop(0)
        if spec.multiple:
            given.setdefault(field, []).append(value)
        elif field in given:
            return None  # click refuses a repeated single-valued option
        else:
            given[field] = value
    if benchmark is None:
        return None
    return ResolveArgs(benchmark, from_flags(Pins, values["pins"]), from_flags(ResolveView, values["view"]))


def run(argv: Sequence[str]) -> Optional[int]:
    """Run ``argv`` (without the program name) and return the exit code, or None when the
    click CLI must run it."""
    if not argv or argv[0] != "resolve" or any(name in os.environ for name in _CLICK_ENVIRONMENT):
        return None
    parsed = parse_resolve(argv[1:])
    if parsed is None or not parsed.view.json:
        return None
    try:
        text = resolved_json(resolve(knowledge_base(), parsed.benchmark, parsed.pins))
    except Exception:  # a conflict, bad input or a bug: click runs again and reports it its way
        return None
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        sys.stderr.close()  # as mlcc.cli.run: `mlcc resolve ... --json | head` is not an error
    return 0
