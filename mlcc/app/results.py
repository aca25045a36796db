"""MLPerf results as use cases: score logs, store runs with the stack they ran on, compare.

The CLI (``mlcc results``) parses flags and prints what these return; a script calls them
directly::

    scored = score_logs(kb, ["logs/"])
    stored = add_results(kb, ["logs/result_0.txt"], StackSource(stack_file="stack.json"))
    compared = compare_results(kb, ResultFilters(benchmarks=("maskrcnn",)))

Collecting from a cluster's pods is :mod:`mlcc.app.results_collect` (it loads the
Kubernetes client, which the other use cases never need).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable, Dict, List, NamedTuple, NoReturn, Optional, Sequence, Tuple

from mlcc import __version__
from mlcc.app.history import open_history
from mlcc.app.images import open_image
from mlcc.errors import UsageError
from mlcc.history import History
from mlcc.image.content import STACK_FILE
from mlcc.kb.model import Benchmark, KnowledgeBase
from mlcc.output import write_tree
from mlcc.report.results import render_results_html
from mlcc.results.compare import BenchmarkComparison, compare_stored
from mlcc.results.parse import LogFile, Run, parse_file
from mlcc.results.reference import published_results
from mlcc.results.rules import scoring_rules
from mlcc.results.score import BenchmarkScore, log_files, score
from mlcc.results.store import Added, Placement, StackInfo, add_runs, stack_info
from mlcc.results.system import described
from mlcc.safeio import UnreadableFile, read_text

MAX_STACK_BYTES = 16 * 1024 * 1024  # a stack.json is tens of KiB


class StackSource(NamedTuple):
    """The stack the runs ran on: an image (read as ``mlcc inspect`` reads it) or a stack.json."""

    image: Optional[str] = None
    stack_file: Optional[str] = None
    tls_verify: bool = True
    arch: Optional[str] = None  # of a multi-arch image
    backend: Optional[str] = None  # whose storage holds a local:REF image


class Scored(NamedTuple):
    scores: List[BenchmarkScore]
    notes: List[str]  # what scoring noticed, then each log's problems
    logs: List[LogFile]


class Stored(NamedTuple):
    added: Added
    stack: StackInfo
    history: History
    notes: List[str]  # the logs' problems


def added_document(stored: Stored) -> Dict[str, Any]:
    """``mlcc results add --json``: the runs stored, those already there, and the notes.

    Args:
        stored: What :func:`add_results` stored.

    Returns:
        ``{"schema": "mlcc-results-add/1", "history", "stack", "stored": [{"file",
        "benchmark", "status", "minutes"}], "already": [{"file", "stack"}], "notes"}``; a
        duration that is not finite is null.
    """

    def minutes(value: Optional[float]) -> Optional[float]:
        return value if value is not None and math.isfinite(value) else None

    return {
        "schema": "mlcc-results-add/1",
        "history": str(stored.history.path),
        "stack": stored.stack.label,
        "stored": [
            {"file": r.file, "benchmark": r.benchmark, "status": r.status, "minutes": minutes(r.minutes)}
            for r in stored.added.stored
        ],
        "already": [{"file": r.file, "stack": other} for r, other in stored.added.already],
        "notes": list(stored.notes),
    }


class ResultFilters(NamedTuple):
    """Which stored results ``mlcc results compare`` shows; empty: all."""

    benchmarks: Tuple[str, ...] = ()  # recipe names (resnet50) or log names (resnet)
    stacks: Tuple[str, ...] = ()  # substrings of the stack's name
    systems: Tuple[str, ...] = ()  # substrings of the system's name


class Compared(NamedTuple):
    """The comparison per benchmark, and the history it was read from."""

    comparisons: List[BenchmarkComparison]
    history: History


def parse_logs(paths: Sequence[str]) -> List[LogFile]:
    """Every result log under ``paths``, parsed (streaming, any size).

    Args:
        paths: Log files and folders (read recursively).

    Returns:
        One parsed log per file, with its runs and problems.

    Raises:
        UsageError: A path does not exist, there are no files, or a file cannot be read.
    """
    files, missing = log_files([Path(p) for p in paths])
    if missing:
        raise UsageError(f"cannot read {'; '.join(missing)}", hint="give result logs or folders of them")
    if not files:
        raise UsageError(f"no files under {', '.join(paths)}", hint="give result logs or folders of them")
    logs = []
    for path in files:
        try:
            logs.append(described(parse_file(path)))
        except OSError as error:
            raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    return logs


def log_problems(logs: Sequence[LogFile]) -> List[str]:
    """What each log and each of its runs got wrong, one line each, naming the file.

    Args:
        logs: Parsed logs.

    Returns:
        ``<file>: <problem>`` lines.
    """
    lines = []
    for log in logs:
        lines += [f"{log.path}: {p}" for p in log.problems]
        for run in log.runs:
            lines += [f"{log.path}: {p}" for p in run.problems]
    return lines


def score_logs(kb: KnowledgeBase, paths: Sequence[str], round_name: Optional[str] = None) -> Scored:
    """The MLPerf score of each benchmark in the logs (``mlcc results score``).

    The score is the mean after dropping the fastest and the slowest run, by the rules of
    the log's round (:mod:`mlcc.results.rules`: runs required, runs dropped, failed runs).

    Args:
        kb: The knowledge base: its round records hold the rules (runs required, dropped, failed).
        paths: Log files and folders.
        round_name: ``--round``: the round whose rules score every log; default: the round
            each log's format, benchmark or folder imply
            (:meth:`mlcc.results.rules.ScoringRules.round_of`).

    Returns:
        The scores per benchmark, submitter and platform, the notes, and the parsed logs.

    Raises:
        UsageError: A path does not exist or cannot be read, no log holds an MLPerf run,
            or the round is not in the rules table.
    """
    logs = parse_logs(paths)
    scores, notes = score(logs, rules=scoring_rules(kb), round_name=round_name)
    if not scores:
        raise UsageError(
            f"no MLPerf runs in {len(logs)} file(s): no :::MLLOG, :::MLL or :::MLPv0.5.0 lines",
            details=notes[:10],
            hint="give the result_N.txt logs a training run wrote",
        )
    return Scored(scores, notes + log_problems(logs), logs)


def load_stack(source: StackSource) -> StackInfo:
    """The stack the runs ran on: of the image (read as ``mlcc inspect`` reads it) or of a file.

    Args:
        source: ``--image REF`` (with its arch, backend and TLS settings) or
            ``--stack stack.json``: exactly one.

    Returns:
        The stack's name, components, image and benchmark.

    Raises:
        UsageError: Neither or both are given, the file cannot be read or is not a stack
            manifest, the image is multi-arch without ``--arch``, or it cannot be read.
        RegistryError: The image's registry could not be reached or refused.
    """
    if bool(source.image) == bool(source.stack_file):
        raise UsageError(
            "give the stack the runs ran on: --image REF or --stack stack.json (one of them)",
            hint="mlcc results add logs/*.txt --image quay.io/me/maskrcnn:TAG",
        )
    if source.stack_file:
        try:
            document = json.loads(read_text(Path(source.stack_file), limit=MAX_STACK_BYTES))
        except UnreadableFile as error:  # a FIFO would block, a huge file fill memory
            raise UsageError(f"--stack {source.stack_file}: cannot read it ({error})") from None
        except RecursionError:
            raise UsageError(f"--stack {source.stack_file}: not JSON (nested too deeply)") from None
        except ValueError as error:
            raise UsageError(f"--stack {source.stack_file}: not JSON ({error})") from None
        return stack_info(document, origin=f"--stack {source.stack_file}")
    image = str(source.image)
    contents = open_image(image, tls_verify=source.tls_verify, arch=source.arch, backend=source.backend)
    if len(contents) != 1:
        raise UsageError(f"{image} is a multi-arch image: pick the arch the runs ran on with --arch")
    content = contents[0]
    return stack_info(
        content.json_file(STACK_FILE),
        image=content.reference,
        image_digest=content.digest,
        labels=content.labels,
        origin=image,
    )


# What each log format's result lines start with (mlcc.results.parse)
LOG_MARKERS = {"v0.6+": ":::MLL", "v0.5": ":::MLPv0.5.0", "mllog": ":::MLLOG"}


def _round_text(round_name: Optional[str]) -> str:
    return f"MLPerf {round_name}" if round_name else "no MLPerf round"


def check_benchmarks(
    kb: KnowledgeBase, runs: Sequence[Run], stack: StackInfo, round_name: Optional[str] = None
) -> List[Run]:
    """Runs of one benchmark and round must not be stored with an image built for another.

    A stack's benchmark id names its round (``maskrcnn-v2.1``); its runs' logs name the
    benchmark as that round's logs do (``maskrcnn``), and each run is of the round
    ``round_name`` or its log's format, benchmark or folder imply. A v2.1 log on the v0.6 stack (or the other
    way round) is refused, naming both rounds.

    Args:
        kb: The knowledge base (the benchmarks' rounds and log names).
        runs: The runs to store.
        stack: The stack they ran on.
        round_name: ``--round``: the runs' round; default: the one their log's format,
            benchmark or folder imply.

    Returns:
        The runs; one whose log never names its benchmark takes the image's.

    Raises:
        UsageError: A run is of another benchmark or another round than the stack's;
            nothing is stored.
    """
    if stack.benchmark is None:
        return list(runs)
    recipe = kb.benchmarks.get(stack.benchmark)
    if recipe is None:  # a stack of a recipe this knowledge base lacks: its name is all there is
        return _check_names(kb, runs, stack)
    log_name = _log_name(recipe)
    names = {log_name, recipe.base_name, recipe.name}
    wrong = [r for r in runs if r.benchmark and r.benchmark not in names]
    if wrong:
        _refuse(wrong, stack, lambda r: f"is a {r.benchmark} run")
    rules = scoring_rules(kb)
    if recipe.round is not None:
        rounds = {
            r.run_id: rules.round_of(r.log_format, round_name, benchmark=r.benchmark, path=r.file)
            for r in runs
        }
        other = [r for r in runs if rounds[r.run_id] != recipe.round]
        if other:
            why = "" if round_name else " (its {} lines say so)"
            _refuse(
                other,
                stack,
                lambda r: (
                    f"is a {r.benchmark or log_name} run of {_round_text(rounds[r.run_id])}"
                    + why.format(LOG_MARKERS.get(r.log_format, r.log_format))
                ),
                f" of {_round_text(recipe.round)}",
                hint=f"store it with the stack of its round (mlcc gen {recipe.base_name} --round"
                f" {rounds[other[0].run_id]} writes one); nothing was stored",
            )
    return [r if r.benchmark else r._replace(benchmark=log_name) for r in runs]


def _log_name(recipe: Benchmark) -> str:
    """The benchmark's name in MLPerf logs (resnet for resnet50)."""
    build = recipe.build
    reference = build.reference if build is not None else None
    return (reference.log_name if reference is not None else None) or recipe.base_name


def _refuse(
    wrong: Sequence[Run],
    stack: StackInfo,
    what: Callable[[Run], str],
    stack_round: str = "",
    hint: str = "give the image the runs ran on; nothing was stored",
) -> NoReturn:
    first = wrong[0]
    raise UsageError(
        f"{first.file} {what(first)}, but the stack was built for {stack.benchmark}{stack_round}",
        details=[f"{r.file}: {what(r)}" for r in wrong[1:10]],
        hint=hint,
    )


def _check_names(kb: KnowledgeBase, runs: Sequence[Run], stack: StackInfo) -> List[Run]:
    names = {ref.log_name: ref.recipe for ref in published_results(kb).values()}
    wrong = [r for r in runs if r.benchmark and names.get(r.benchmark, r.benchmark) != stack.benchmark]
    if wrong:
        _refuse(wrong, stack, lambda r: f"is a {r.benchmark} run")
    return list(runs)


def store_runs(
    kb: KnowledgeBase,
    runs: Sequence[Run],
    stack: StackInfo,
    placement: Placement,
    history_file: Optional[str] = None,
    round_name: Optional[str] = None,
) -> Tuple[Added, History]:
    """Store the runs with their stack in the history.

    Args:
        kb: The knowledge base.
        runs: The runs to store.
        stack: The stack they ran on.
        placement: The system, GPUs and nodes (default: what the logs say).
        history_file: ``--history FILE``, or None for the default database.
        round_name: The MLPerf round of the runs; default: the one their log's format,
            benchmark or folder imply.

    Returns:
        What was added (a run already stored is skipped), and the history.

    Raises:
        UsageError: A run is of another benchmark or round than the stack's, or its
            scaling.json is not a scaling factor.
        HistoryError: The database is locked, damaged, read-only, or not mlcc's.
    """
    checked = check_benchmarks(kb, runs, stack, round_name)
    history = open_history(history_file)
    return add_runs(history, checked, stack, placement, __version__, round_name, scoring_rules(kb)), history


def add_results(
    kb: KnowledgeBase,
    paths: Sequence[str],
    source: StackSource,
    placement: Optional[Placement] = None,
    history_file: Optional[str] = None,
    round_name: Optional[str] = None,
) -> Stored:
    """Store the runs of the logs with the stack they ran on (``mlcc results add``).

    A run is identified by its result lines, so one already stored, from any copy of its
    log, is not stored again.

    Args:
        kb: The knowledge base.
        paths: Log files and folders.
        source: The image or stack.json the runs ran on.
        placement: The system, GPUs and nodes (default: what the logs say).
        history_file: ``--history FILE``, or None for the default database.
        round_name: ``--round``: the MLPerf round of the runs; default: the one their log
            format, benchmark or folder imply.

    Returns:
        What was stored and skipped, the stack, the history, and the logs' problems.

    Raises:
        UsageError: A path cannot be read, no run is in the logs, the stack cannot be read,
            or a run is of another benchmark or round.
        RegistryError: The image's registry could not be reached.
        HistoryError: The database is locked or damaged.
    """
    logs = parse_logs(paths)
    runs = [run for log in logs for run in log.runs]
    if not runs:
        raise UsageError(
            f"no MLPerf runs in {len(logs)} file(s): no :::MLLOG, :::MLL or :::MLPv0.5.0 lines;"
            " nothing stored"
        )
    stack = load_stack(source)
    added, history = store_runs(kb, runs, stack, placement or Placement(), history_file, round_name)
    return Stored(added, stack, history, log_problems(logs))


def compare_results(
    kb: KnowledgeBase, filters: Optional[ResultFilters] = None, history_file: Optional[str] = None
) -> Compared:
    """Per benchmark, the stored stacks side by side with the published reference.

    Args:
        kb: The knowledge base (the reference results).
        filters: Which benchmarks, stacks and systems; default: all.
        history_file: ``--history FILE``, or None for the default database.

    Returns:
        One comparison per benchmark (fastest stack first), and the history.

    Raises:
        HistoryError: The database is locked or damaged.
    """
    filters = filters or ResultFilters()
    history = open_history(history_file)
    compared = compare_stored(
        kb, history, benchmarks=filters.benchmarks, stacks=filters.stacks, systems=filters.systems
    )
    return Compared(compared, history)


def write_results_page(html_file: str, comparisons: Sequence[BenchmarkComparison], title: str) -> None:
    """Write the results view (one plot per benchmark) as one self-contained HTML file.

    Args:
        html_file: The file to write.
        comparisons: What :func:`compare_results` found.
        title: The page's title.

    Raises:
        OutputError: The file cannot be written.
    """
    target = Path(html_file)
    write_tree(
        target.parent, [(target.name, render_results_html(comparisons, title=title))], flag="--html FILE"
    )
