"""The system a result folder's runs ran on, as its submission describes it.

An MLPerf submission keeps its logs at ``<org>/results/<system>/<benchmark>/result_N.txt``
and the system's description at ``<org>/systems/<system>.json`` (the layout of
mlcommons/training_results_v2.1; the description's fields are those of mlcommons'
system_desc_id.json: ``number_of_nodes``, ``accelerators_per_node``,
``accelerator_model_name``, as strings). A log read from such a folder takes its node and
GPU counts from that file where the log does not say them itself: NVIDIA's v2.1 MLLOG
logs name the node count only (``submission_platform`` ``1xNVIDIA DGX A100``) and no GPU
count at all.

The file is outside input: it is read only when it is a regular file of at most
``MAX_SYSTEM_BYTES`` and a JSON object (else it is not used, and the log's problems say
why), and a count is used only when it is a whole number written in ASCII digits; the
log's own values, or unknown, stand otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from mlcc.results.parse import LogFile, log_text
from mlcc.safeio import UnreadableFile, read_text

MAX_SYSTEM_BYTES = 64 * 1024  # a system description is about 2 KB
MAX_COUNT_DIGITS = 7  # no submission had millions of nodes or GPUs per node
# description field -> the name mlcc.results.parse gives the same fact of a log
FIELDS = {"number_of_nodes": "nodes", "accelerators_per_node": "gpus_per_node"}


def description_file(log_path: str) -> Optional[Path]:
    """``<org>/systems/<system>.json`` for a log at ``<org>/results/<system>/<benchmark>/FILE``."""
    path = Path(log_path)
    parents = path.parents
    if len(parents) < 4 or parents[2].name != "results":
        return None
    return parents[3] / "systems" / f"{parents[1].name}.json"


def read_description(path: Path) -> Tuple[Dict[str, str], Optional[str]]:
    """The facts of a system description mlcc stores with a run: nodes, GPUs per node, GPU model.

    Args:
        path: The description's JSON file.

    Returns:
        ``nodes``, ``gpus_per_node`` and ``accelerator`` where the file gives them, and why
        the file was not used when it exists but cannot be (unreadable, too large, not a
        JSON object); ``({}, None)`` when there is no such file.
    """
    if not path.exists():
        return {}, None
    try:
        document: Any = json.loads(read_text(path, limit=MAX_SYSTEM_BYTES))
    except UnreadableFile as error:
        return {}, str(error)
    except (ValueError, RecursionError):
        return {}, "not JSON"
    if not isinstance(document, dict):
        return {}, "not a JSON object"
    facts: Dict[str, str] = {}
    for field, name in FIELDS.items():
        value = document.get(field)
        text = str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
        text = text.strip()
        if text.isascii() and text.isdigit() and len(text) <= MAX_COUNT_DIGITS:
            facts[name] = str(int(text))
    model = document.get("accelerator_model_name")
    if isinstance(model, str) and model.strip():
        facts["accelerator"] = log_text(model.strip(), 100)
    return facts, None


def described(log: LogFile) -> LogFile:
    """The log with each run's system completed from its folder's system description; what
    the log says itself stays.

    Args:
        log: A parsed log.

    Returns:
        The same log, its runs' ``system`` given the description's nodes, GPUs per node and
        GPU model where the log lacks them; a description that cannot be used is one of the
        log's problems.
    """
    path = description_file(log.path)
    if path is None or not log.runs:
        return log
    facts, problem = read_description(path)
    if problem is not None:
        return log._replace(problems=(*log.problems, f"{path}: system description not used ({problem})"))
    runs = tuple(run._replace(system=dict(sorted({**facts, **run.system}.items()))) for run in log.runs)
    return log._replace(runs=runs)
