"""What a config_<system>.sh sets, as bash sees it after sourcing it.

NVIDIA's run_and_time.sh sources its configuration file; so do these helpers, in a real bash
with an empty environment (NVIDIA's files keep a value already in the environment,
``LR=${LR:-"2.0e-3"}``), and report every variable the file set: its value (a tuple for an
array) and whether it is exported.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Dict, NamedTuple, Tuple, Union

from tests.conftest import REPO

# NVIDIA's v0.6 files, byte for byte (tests/data/README.md says where from).
NVIDIA = REPO / "tests" / "data" / "mlperf-v0.6" / "NVIDIA" / "benchmarks"
# Each benchmark's implementation folder there.
IMPLEMENTATIONS = {
    "gnmt": NVIDIA / "gnmt" / "implementations" / "pytorch",
    "maskrcnn": NVIDIA / "maskrcnn" / "implementations" / "pytorch",
    "resnet50": NVIDIA / "resnet" / "implementations" / "mxnet",
    "ssd": NVIDIA / "ssd" / "implementations" / "pytorch",
    "transformer": NVIDIA / "transformer" / "implementations" / "pytorch",
}
# Prints NAME, attribute letters, element count and elements, NUL-separated, for every
# variable sourcing the file added; bash's own variables are listed before and left out.
_DUMP = r"""
before=" $(compgen -v | tr '\n' ' ') "
source "$1" >/dev/null
for n in $(compgen -v); do
  case "$before" in *" $n "*) continue ;; esac
  case "$n" in before|n|PIPESTATUS) continue ;; esac
  flags=$(declare -p "$n"); flags=${flags#declare -}; flags=${flags%% *}
  declare -n ref="$n"
  printf '%s\0%s\0%s\0' "$n" "$flags" "${#ref[@]}"
  printf '%s\0' "${ref[@]}"
  unset -n ref
done
"""


class Variable(NamedTuple):
    value: Union[str, Tuple[str, ...]]
    exported: bool


def sourced(path: Path) -> Dict[str, Variable]:
    """Every variable sourcing ``path`` sets, as bash holds it."""
    out = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", _DUMP, "dump", path.name],
        cwd=path.parent,
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        check=True,
    ).stdout.decode()
    fields = out.split("\0")[:-1]
    found: Dict[str, Variable] = {}
    at = 0
    while at < len(fields):
        name, flags, count = fields[at], fields[at + 1], int(fields[at + 2])
        values = tuple(fields[at + 3 : at + 3 + count])
        at += 3 + count
        value: Union[str, Tuple[str, ...]] = values if "a" in flags else values[0]
        found[name] = Variable(value, "x" in flags)
    return found
