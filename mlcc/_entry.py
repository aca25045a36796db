"""The console script's entry: a Ctrl-C while mlcc is still importing exits 130 quietly.

``mlcc.cli.run`` handles interrupts once it runs; importing the CLI (click, the commands)
happens before that, and a KeyboardInterrupt there would print Python's traceback.
"""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from mlcc.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("mlcc: interrupted\n")
        sys.exit(130)
    cli_main()
