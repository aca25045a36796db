"""The click-free fast paths: ``mlcc resolve ... --json`` and ``mlcc gen BENCHMARK [pins]``
with its output options (-o, --openshift-output, --only, --format).

Importing click (and the inspect, uuid, platform and datetime it brings) was a fifth of a
warm ``mlcc resolve`` and of a warm ``mlcc gen`` (perf/README.md), the two commands whose
start-up is measured against HPC Container Maker. A fast path parses the plain forms of a
command's options from the same :class:`~mlcc.flags.Flag` metadata the click command is
built from and runs the same use case. Anything else -- another command, root options,
--help, shell completion, MLCC_RECIPES, an unknown, repeated or unusual option, ``--``, an
error of any kind -- returns None and the click CLI runs instead, from the start, as if
this package did not exist: errors, exit codes and messages stay click's.
``tests/unit/test_fastpath.py`` holds the parses equal to click's with hypothesis and the
outputs equal to the click CLI's.

Like the click group's command table (mlcc/cli/__init__.py), this table names modules as
strings, so a command's fast path is imported only when that command runs.
"""

from __future__ import annotations

import importlib
import os
from typing import Dict, Optional, Sequence

# command -> the module whose run(args) is its fast path
FAST_COMMANDS: Dict[str, str] = {"resolve": "mlcc.fastpath.resolve", "gen": "mlcc.fastpath.gen"}
# Settings the click CLI reads from the environment; with any of them set, click runs.
CLICK_ENVIRONMENT = ("MLCC_RECIPES", "_MLCC_COMPLETE")


def run(argv: Sequence[str]) -> Optional[int]:
    """Run ``argv`` (without the program name) and return the exit code, or None when the
    click CLI must run it."""
    if not argv or argv[0] not in FAST_COMMANDS or any(name in os.environ for name in CLICK_ENVIRONMENT):
        return None
    code: Optional[int] = importlib.import_module(FAST_COMMANDS[argv[0]]).run(argv[1:])
    return code
