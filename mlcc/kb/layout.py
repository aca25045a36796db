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
FOLDERS = {"frameworks": "framework", "benchmarks": "benchmark"}
# A later MLPerf round's benchmarks live in recipes/benchmarks/<round>/ (v2.1/maskrcnn.yaml,
# scripts in v2.1/maskrcnn.d/); the top-level files are v0.6's and the non-MLPerf tools.
ROUND_FOLDER = re.compile(r"v[0-9]+\.[0-9]+\Z")
# Files other stages own (the matrix is read by mlcc.matrix); part of the cache key.
OTHER_FILES = ("matrix.yaml",)

__all__ = ["FOLDERS", "OTHER_FILES", "ROUND_FOLDER", "SCHEMA_DIR", "SINGLE_FILES"]
