"""The install.sh writer: the Dockerfile's steps as a bash script for a bare-metal host."""

from __future__ import annotations

from typing import List, Mapping

import mlcc
from mlcc.render.formats import Context, header, mirror_exports, shell_body, shell_heading
from mlcc.render.plan import Plan, Step

SCRIPT = "install.sh"
# The here-document delimiter of inlined files; quoted, so nothing in them expands.
EOF_MARK = "MLCC_FILE_EOF"
ROOT_CHECK = """\
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
  echo "run this as root: it installs system packages" >&2
  exit 1
fi
"""


def write(plan: Plan, context: Context) -> str:
    out = [
        "#!/usr/bin/env bash\n",
        header(mlcc.__version__, context.command),
        f"# Installs the stack on a bare-metal or virtual host running {context.base_title}"
        f" ({context.arch}),\n"
        "# the same steps the Dockerfile runs. Run it as root; it changes the system.\n",
        ROOT_CHECK,
        mirror_exports(plan),
    ]
    for step in plan.steps:
        _step(step, context.files, out)
    if plan.workdir:
        usage = f" with {' '.join(plan.entrypoint)}" if plan.entrypoint else ""
        out.append(f'\necho "mlcc: done; run the benchmark from {plan.workdir}{usage}"\n')
    return "".join(out)


def _step(step: Step, files: Mapping[str, str], out: List[str]) -> None:
    shell_heading(step, "", out)
    # no build context on a host: the files a Dockerfile COPYs are written from the script
    for source, target in step.copies:
        out.append(f"install -D -m 0644 /dev/stdin {target} <<'{EOF_MARK}'\n{files[source]}{EOF_MARK}\n")
    shell_body(step, "", out)
