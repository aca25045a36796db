"""The MLPerf Training scoring rules per round, read from the round records (recipes/rounds/).

The rules are data, not constants: each round's record cites the training_rules.adoc commit
its counts come from, and a new round is a new record. A log's round is the one ``--round``
names or, without it, the one round that both writes the log's format (``:::MLL`` for v0.6,
``:::MLLOG`` from v0.7) and holds its benchmark (llama31_8b: v5.1 alone); where several do
(retinanet: v5.0 and v5.1), the round the log's path names (``training_results_v5.1/...``,
``mlperf-v2.1/...``), else none: the caller is told to name it.
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import TYPE_CHECKING, Dict, List, NamedTuple, Optional, Tuple

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

    def round_of(
        self,
        log_format: str,
        chosen: Optional[str] = None,
        *,
        benchmark: Optional[str] = None,
        path: Optional[str] = None,
    ) -> str:
        """The round whose rules score a log of this format (see the module's docstring).

        Args:
            log_format: The log's format (``mllog``, ``v0.6+``, ``v0.5``).
            chosen: ``--round``: it decides.
            benchmark: The benchmark the log names: of the rounds writing the format, the
                ones that hold it.
            path: The log's path, as given: a folder named for a round (``..._v5.1``,
                ``v5.1``) decides between the rounds that hold the benchmark.

        Returns:
            The round's name.

        Raises:
            UsageError: ``chosen`` is no round of the records, or (without ``chosen``) no
                round writes this format, or several do and neither the benchmark nor the
                path tells which.
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
        holding = [name for name in fitting if benchmark in dict(self.rounds[name].benchmarks)]
        candidates = holding or fitting
        if len(candidates) == 1:
            return candidates[0]
        named = [name for name in _rounds_named(path) if name in candidates]
        if named:
            return named[-1]  # the innermost folder naming a round
        what = f"a {benchmark} log" if holding else f"a {log_format} log"
        raise UsageError(
            f"{what} may be of rounds {', '.join(candidates) or '(none)'}: its lines do not say which",
            hint="name its round: --round "
            + "|".join(candidates or self.rounds)
            + " (or keep the logs under a folder named for it, e.g. training_results_"
            + (candidates or list(self.rounds))[-1]
            + "/)",
        )

    def model(self, round_name: str, benchmark: str) -> Optional[str]:
        """The model the round's rules name for the benchmark (``SSD (RetinaNet)``), or None
        where the round or its record does not say."""
        row = self.rounds.get(round_name)
        return row.counts(benchmark).model if row is not None else None

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


# A folder named for a round: v5.1, mlperf-v2.1, training_results_v5.1 (not v5.10, not 2v5.1)
_ROUND_FOLDER = re.compile(r"(?:^|[^0-9A-Za-z.])(v[0-9]+\.[0-9]+)$")


def _rounds_named(path: Optional[str]) -> List[str]:
    """The rounds the folders of ``path`` are named for, outermost first."""
    if path is None:
        return []
    found = (_ROUND_FOLDER.search(part) for part in PurePath(path).parent.parts)
    return [match.group(1) for match in found if match is not None]


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
