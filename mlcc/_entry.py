"""The console script's entry: a Ctrl-C while mlcc is still importing exits 130 quietly.

``mlcc.cli.run`` handles interrupts once it runs; importing the CLI (click, the commands)
happens before that, and a KeyboardInterrupt there would print Python's traceback. The
click-free fast path (mlcc.fastpath) runs first, inside the same guard.
"""

from __future__ import annotations

import sys


def main() -> None:
    try:
        # `mlcc resolve ... --json` and `mlcc gen BENCHMARK [pins] [output options]` run without importing
        # click when their arguments are plain
        from mlcc.fastpath import run

        code = run(sys.argv[1:])
        if code is not None:
            sys.exit(code)
        from mlcc.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("mlcc: interrupted\n")
        sys.exit(130)
    cli_main()
