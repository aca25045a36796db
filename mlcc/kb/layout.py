"""The layout of a recipes folder: which file or folder holds which kind of fact."""

from __future__ import annotations

import os
import re

# The JSON Schemas every recipe file is checked against (part of the cache key too).
SCHEMA_DIR = os.path.join(os.path.dirname(__file__), "schemas")  # os.path: no pathlib at start

# Where each kind of fact lives: one kind per file or folder.
SINGLE_FILES = {
    "arches.yaml": "arches",
    "bases.yaml": "bases",
    "bases-ngc.yaml": "bases",  # NVIDIA's NGC framework images (bases with contents)
    "cuda.yaml": "cuda",
    "cudnn.yaml": "cudnn",
    "families.yaml": "families",
    "nccl.yaml": "nccl",
    "tools.yaml": "tools",
    "gpus.yaml": "gpus",
    "systems.yaml": "systems",
    "hosts.yaml": "hosts",
    "nccl-profiles.yaml": "nccl_profiles",
}
FOLDERS = {"frameworks": "framework", "benchmarks": "benchmark", "rounds": "round"}
# An MLPerf round is a record, recipes/rounds/<round>.yaml (its scoring rules, systems, shared
# sources), plus its benchmarks: the default round's (the record saying default: true) at the
# top of recipes/benchmarks/ beside the non-MLPerf tools, any other round's in
# recipes/benchmarks/<round>/ (v2.1/maskrcnn.yaml, a benchmark's own scripts in v2.1/maskrcnn.d/,
# scripts several of the round's benchmarks run in v2.1/scripts/; the top level's in scripts/).
ROUND_FOLDER = re.compile(r"v[0-9]+\.[0-9]+\Z")
# The folder of the scripts a folder's benchmarks share (a round's, or the top level's), beside
# their recipes.
ROUND_SCRIPTS = "scripts"
# Files other stages own (the matrix is read by mlcc.matrix); part of the cache key.
OTHER_FILES = ("matrix.yaml",)

__all__ = ["FOLDERS", "OTHER_FILES", "ROUND_FOLDER", "ROUND_SCRIPTS", "SCHEMA_DIR", "SINGLE_FILES"]
