"""The console script's entry: a Ctrl-C while mlcc is still importing exits 130 quietly,
and output that cannot be written is a one-line error with its exit code (:mod:`mlcc.stdio`).

``mlcc.cli.run`` handles interrupts and errors once it runs; importing the CLI (click, the
commands) happens before that, and a KeyboardInterrupt there would print Python's
traceback. A closed standard output and the last flush at exit happen outside ``run``.
"""

from __future__ import annotations

import io
import sys

from mlcc.stdio import OUTPUT_ERRNOS, ClosedOutput, finish_output, output_failed


def main() -> None:
    if sys.stdout is None:
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(ClosedOutput()), encoding="utf-8")
    try:
        from mlcc.cli import run
    except KeyboardInterrupt:
        sys.stderr.write("mlcc: interrupted\n")
        sys.exit(130)
    try:
        code = run()
    except OSError as error:  # raised while run() reported another error
        if error.errno not in OUTPUT_ERRNOS:
            raise
        code = output_failed(error)
    sys.exit(finish_output(code))
