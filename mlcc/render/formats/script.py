"""The install.sh writer: the Dockerfile's steps as a bash script for a bare-metal host.

A host is not an image: a step's ``host`` variant replaces what only an image needs (the
group-0 permissions OpenShift's arbitrary UID wants would change the owners' /data and
/results), and the environment the steps export, which dies with the script's shell, is
also written to :data:`ENV_FILE`, which the closing message tells the user to source.
"""

from __future__ import annotations

from typing import List, Mapping, Tuple

import mlcc
from mlcc.render.escaping import double_quoted
from mlcc.render.formats import Context, header, mirror_exports, shell_body, shell_heading
from mlcc.render.plan import Plan, Step

SCRIPT = "install.sh"
# The here-document delimiter of inlined files; quoted, so nothing in them expands.
EOF_MARK = "MLCC_FILE_EOF"
# The stack's environment for the shells that run the benchmark (the script's own exports
# end with it); next to the stack.json an install writes.
ENV_FILE = "/etc/mlcc/env.sh"
# An image sets HOME for OpenShift's arbitrary UID, which has none; a user has a home.
NOT_FOR_A_USER_SHELL = {"HOME"}
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
        "# the same steps the Dockerfile runs. Run it as root; it changes the system.\n"
        f"# The environment it sets is written to {ENV_FILE}: source it in each new shell.\n",
        ROOT_CHECK,
        mirror_exports(plan),
    ]
    steps = [step.host or step for step in plan.steps]
    for step in steps:
        _step(step, context.files, out)
    out.append(_env_file(steps))
    usage = f" with {' '.join(plan.entrypoint)}" if plan.entrypoint else ""
    run = f", then run the benchmark from {plan.workdir}{usage}" if plan.workdir else ""
    out.append(f'\necho "mlcc: done; in each new shell first: source {ENV_FILE}{run}"\n')
    return "".join(out)


def _env_file(steps: List[Step]) -> str:
    exports: List[Tuple[str, str]] = [
        (name, value) for step in steps for name, value in step.env if name not in NOT_FOR_A_USER_SHELL
    ]
    lines = "".join(f"export {name}={double_quoted(value)}\n" for name, value in exports)
    return (
        f"\n# The environment above, for the shells that run the benchmark: {ENV_FILE}\n"
        f"install -D -m 0644 /dev/stdin {ENV_FILE} <<'{EOF_MARK}'\n"
        f"# the stack's environment, written by install.sh: source {ENV_FILE}\n"
        f"{lines}{EOF_MARK}\n"
    )


def _step(step: Step, files: Mapping[str, str], out: List[str]) -> None:
    shell_heading(step, "", out)
    # no build context on a host: the files a Dockerfile COPYs are written from the script
    for source, target in step.copies:
        out.append(f"install -D -m 0644 /dev/stdin {target} <<'{EOF_MARK}'\n{files[source]}{EOF_MARK}\n")
    shell_body(step, "", out)
