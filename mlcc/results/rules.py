"""The MLPerf Training scoring rules per round, read from the round records (recipes/rounds/).

The rules are data, not constants: each round's record cites the training_rules.adoc commit
its counts come from, and a new round is a new record. A log's round is the one ``--round``
names or, without it, the one round whose logs write the log's format (``:::MLL`` for
v0.6, ``:::MLLOG`` for v2.1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, NamedTuple, Optional, Tuple

from mlcc.errors import UsageError
from mlcc.kb import load
from mlcc.validate import choice

if TYPE_CHECKING:
    from mlcc.kb.model import KnowledgeBase, RoundScoring


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
    """Each round's scoring, by round name, oldest first."""

    rounds: Dict[str, RoundScoring]

    def names(self) -> Tuple[str, ...]:
        return tuple(self.rounds)

    def round_of(self, log_format: str, chosen: Optional[str] = None) -> str:
        """The round whose rules score a log of this format.

        Raises:
            UsageError: ``chosen`` is no round of the records, or (without ``chosen``) no
                round or several rounds write this format.
        """
        if chosen is not None:
            found = choice(chosen, self.rounds)  # the rule of --gpu and --flavour too
            if found is None:
                raise UsageError(
                    f"--round {chosen}: no such round in mlcc's scoring rules",
                    hint=f"rounds: {', '.join(self.rounds)} (recipes/rounds/)",
                )
            return found
        fitting = [name for name, row in self.rounds.items() if log_format in row.log_formats]
        if len(fitting) != 1:
            raise UsageError(
                f"a {log_format} log may be of rounds {', '.join(fitting) or '(none)'}",
                hint="name its round: --round " + "|".join(fitting or self.rounds),
            )
        return fitting[0]

    def rule(self, round_name: str, benchmark: str) -> BenchmarkRule:
        row = self.rounds[round_name]
        counts = row.counts(benchmark)
        assert counts.dropped is not None and counts.max_failed is not None  # the schema requires them
        return BenchmarkRule(
            round=round_name,
            benchmark=benchmark,
            runs=counts.runs,
            dropped=counts.dropped,
            max_failed=counts.max_failed,
            scaling_json=row.scaling_json,
            source=row.rules,
        )


def rules_of(kb: KnowledgeBase) -> ScoringRules:
    """The scoring rules of every round ``kb`` records."""
    return ScoringRules(rounds={r.name: r.scoring for r in kb.round_records})


def scoring_rules(kb: Optional[KnowledgeBase] = None) -> ScoringRules:
    """The scoring rules of the knowledge base's rounds (``kb``, else the one
    :func:`mlcc.kb.load` finds).

    Raises:
        RecipeError: A recipe, a round record among them, does not validate.
        UsageError: No recipes folder is found.
    """
    return rules_of(kb if kb is not None else load())
