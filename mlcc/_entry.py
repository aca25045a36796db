"""The console script's entry: a Ctrl-C while mlcc is still importing exits 130 quietly,
and output that cannot be written is a one-line error with its exit code (:mod:`mlcc.stdio`).

``mlcc.cli.run`` handles interrupts and errors once it runs; importing the CLI (click, the
commands) happens before that, and a KeyboardInterrupt there would print Python's
traceback. A closed standard output and the last flush at exit happen outside ``run``.
So this module imports only ``sys`` at its top: everything else (mlcc.stdio pulls in
``typing``, tens of milliseconds) is imported inside ``main``'s interrupt handler. What is
left is the interpreter's own start (``site``), before any mlcc code runs.
"""

from __future__ import annotations

import sys


def main() -> None:
    try:
        import io

        from mlcc.cli import run
        from mlcc.stdio import OUTPUT_ERRNOS, ClosedOutput, finish_output, output_failed
    except KeyboardInterrupt:
        sys.stderr.write("mlcc: interrupted\n")
        sys.exit(130)
    if sys.stdout is None:
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(ClosedOutput()), encoding="utf-8")
    try:
        code = run()
    except OSError as error:  # raised while run() reported another error
        if error.errno not in OUTPUT_ERRNOS:
            raise
        code = output_failed(error)
    sys.exit(finish_output(code))
