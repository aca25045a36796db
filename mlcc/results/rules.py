"""The MLPerf Training scoring rules per round, read from ``scoring-rules.yaml`` beside this module.

The rules are data, not constants: each round's row cites the training_rules.adoc commit
it comes from, and a new round is a new row. A log's round is the one ``--round`` names or,
without it, the one round of the table whose logs write the log's format (``:::MLL`` for
v0.6, ``:::MLLOG`` for v2.1).
"""

from __future__ import annotations

from importlib import resources
from typing import Any, Dict, NamedTuple, Optional, Tuple

import jsonschema
import yaml

from mlcc.errors import UsageError
from mlcc.validate import choice

RULES_FILE = "scoring-rules.yaml"

_COUNTS = {
    "type": "object",
    "properties": {
        "runs": {"type": "integer", "minimum": 1, "maximum": 1000},
        "dropped": {"type": "integer", "minimum": 0, "maximum": 100},
        "max_failed": {"type": "integer", "minimum": 0, "maximum": 100},
        "note": {"type": "string"},
    },
    "additionalProperties": False,
}
_SCHEMA = {
    "type": "object",
    "required": ["format", "rounds"],
    "additionalProperties": False,
    "properties": {
        "format": {"const": 1},
        "rounds": {
            "type": "object",
            "minProperties": 1,
            "propertyNames": {"pattern": "^v[0-9]+\\.[0-9]+$"},
            "additionalProperties": {
                "type": "object",
                "required": ["log_formats", "rules", "scaling_json", "default", "benchmarks"],
                "additionalProperties": False,
                "properties": {
                    "log_formats": {"type": "array", "items": {"enum": ["v0.5", "v0.6+", "mllog"]}},
                    "rules": {"type": "string", "pattern": "^github:[^ ]+ @[0-9a-f]{40} "},
                    "scaling_json": {"type": "boolean"},
                    "default": {**_COUNTS, "required": ["dropped", "max_failed"]},
                    "note": {"type": "string"},
                    "benchmarks": {"type": "object", "additionalProperties": _COUNTS},
                },
            },
        },
    },
}


class BenchmarkRule(NamedTuple):
    """How one round scores one benchmark."""

    round: str
    benchmark: str
    runs: Optional[int]  # None: the round names no count for this benchmark
    dropped: int  # of the fastest, and of the slowest
    max_failed: int
    scaling_json: bool
    source: str  # the rules document it comes from

    @property
    def min_runs(self) -> int:
        """Dropping ``dropped`` on each side needs one more run to average."""
        return 2 * self.dropped + 1


class ScoringRules(NamedTuple):
    rounds: Dict[str, Dict[str, Any]]

    def names(self) -> Tuple[str, ...]:
        return tuple(self.rounds)

    def round_of(self, log_format: str, chosen: Optional[str] = None) -> str:
        """The round whose rules score a log of this format.

        Raises:
            UsageError: ``chosen`` is no round of the table, or does not write this format,
                or (without ``chosen``) several rounds write it.
        """
        if chosen is not None:
            found = choice(chosen, self.rounds)  # the rule of --gpu and --flavour too
            if found is None:
                raise UsageError(
                    f"--round {chosen}: no such round in mlcc's scoring rules",
                    hint=f"rounds: {', '.join(self.rounds)}",
                )
            return found
        fitting = [name for name, row in self.rounds.items() if log_format in row["log_formats"]]
        if len(fitting) != 1:
            raise UsageError(
                f"a {log_format} log may be of rounds {', '.join(fitting) or '(none)'}",
                hint="name its round: --round " + "|".join(fitting or self.rounds),
            )
        return fitting[0]

    def rule(self, round_name: str, benchmark: str) -> BenchmarkRule:
        row = self.rounds[round_name]
        counts = {**row["default"], **row["benchmarks"].get(benchmark, {})}
        return BenchmarkRule(
            round=round_name,
            benchmark=benchmark,
            runs=counts.get("runs"),
            dropped=int(counts["dropped"]),
            max_failed=int(counts["max_failed"]),
            scaling_json=bool(row["scaling_json"]),
            source=str(row["rules"]),
        )


def parse_rules(text: str, origin: str = RULES_FILE) -> ScoringRules:
    """The rules of a scoring-rules document.

    Raises:
        UsageError: Not YAML, or not the table's shape (the first problem, with its place).
    """
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise UsageError(f"{origin}: not YAML ({error})") from None
    problem = next(iter(sorted(jsonschema.Draft7Validator(_SCHEMA).iter_errors(document), key=str)), None)
    if problem is not None:
        where = "/".join(str(p) for p in problem.absolute_path) or "(top)"
        raise UsageError(f"{origin}: {where}: {problem.message}")
    return ScoringRules(rounds=dict(document["rounds"]))


_LOADED: Dict[str, ScoringRules] = {}


def scoring_rules() -> ScoringRules:
    """The rules table shipped with mlcc (read once per process)."""
    if "rules" not in _LOADED:
        text = resources.files("mlcc.results").joinpath(RULES_FILE).read_text(encoding="utf-8")
        _LOADED["rules"] = parse_rules(text)
    return _LOADED["rules"]
