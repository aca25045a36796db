"""The results view of the HTML report: one plot per benchmark, time to train by stack.

Each plot is inline SVG (no scripts, nothing fetched): a row per stack with a dot per run
(hollow when the run missed the target or did not finish, drawn at the right edge), a bar
for the MLPerf score, and the published reference time as a dashed vertical line. Every
text from a log, an image or the history is escaped for HTML.
"""

from __future__ import annotations

import html
import math
from typing import Any, List, Optional, Sequence, Tuple

import mlcc
from mlcc.report.templating import environment
from mlcc.results.compare import (
    BenchmarkComparison,
    StackScore,
    compare_stored,
    ratio_text,
    reference_label,
    vs_reference,
)
from mlcc.results.reference import PublishedResult
from mlcc.results.score import SUCCESS

WIDTH = 860
LABEL = 330  # room for the stack names on the left
RIGHT = 40
ROW = 34
TOP = 30
BOTTOM = 40
COLORS = {"score": "#1565c0", "run": "#2e7d32", "missed": "#c62828", "reference": "#6a1b9a"}


def _nice_step(span: float) -> float:
    raw = span / 6.0
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * power:
            return float(factor * power)
    return float(10 * power)


def _axis_max(comparison: BenchmarkComparison) -> float:
    values = [m for s in comparison.stacks for m in s.times]
    values += [s.reference.minutes for s in comparison.stacks if s.reference]
    if comparison.reference:
        values.append(comparison.reference.minutes)
    top = max(values, default=1.0) * 1.08
    step = _nice_step(top)
    return math.ceil(top / step) * step


def _fmt(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _short(text: str, limit: int = 44) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plot_svg(comparison: BenchmarkComparison) -> str:
    """One benchmark's plot; deterministic for the same input."""
    stacks = comparison.stacks
    height = TOP + ROW * max(len(stacks), 1) + BOTTOM
    top = _axis_max(comparison)
    span = WIDTH - LABEL - RIGHT

    def x(minutes: float) -> float:
        return LABEL + span * min(minutes, top) / top

    e = html.escape
    parts: List[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" role="img" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" data-benchmark="{e(comparison.benchmark)}">',
        f"<title>{e(comparison.benchmark)}: time to train by stack (minutes)</title>",
        f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#ffffff"/>',
    ]
    step = _nice_step(top)
    tick = 0.0
    axis_y = TOP + ROW * max(len(stacks), 1)
    while tick <= top + 1e-9:
        tx = x(tick)
        parts.append(f'<line x1="{tx:.1f}" y1="{TOP - 6}" x2="{tx:.1f}" y2="{axis_y}" stroke="#e3e7eb"/>')
        parts.append(
            f'<text x="{tx:.1f}" y="{axis_y + 16}" font-size="11" text-anchor="middle" fill="#5b6570">'
            f"{_fmt(tick)}</text>"
        )
        tick += step
    parts.append(
        f'<text x="{LABEL + span / 2:.1f}" y="{axis_y + 32}" font-size="12" text-anchor="middle" '
        f'fill="#1d2329">time to train (minutes)</text>'
    )
    for index, stack in enumerate(stacks):
        parts.extend(_row(stack, TOP + ROW * index, x, top, comparison.reference))
    if comparison.reference:
        ref = comparison.reference
        rx = x(ref.minutes)
        label = f"reference {_fmt(ref.minutes)} min: {ref.system}"
        parts.append(
            f'<line class="reference" x1="{rx:.1f}" y1="{TOP - 10}" x2="{rx:.1f}" y2="{axis_y}" '
            f'stroke="{COLORS["reference"]}" stroke-width="3" stroke-dasharray="7 4">'
            f"<title>{e(label)}</title></line>"
        )
        anchor = "end" if rx > LABEL + span * 0.6 else "start"
        shift = -4 if anchor == "end" else 4
        parts.append(
            f'<text x="{rx + shift:.1f}" y="{TOP - 14}" font-size="11" text-anchor="{anchor}" '
            f'fill="{COLORS["reference"]}">{e(_short(label, 70))}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts)


def _row(stack: StackScore, y0: int, x: Any, top: float, heading: Optional[PublishedResult]) -> List[str]:
    """One stack's row; a stack measured against another reference than the plot's dashed
    line (its round's on its GPU) has that reference drawn across its own row."""
    e = html.escape
    middle = y0 + ROW / 2
    score = stack.score_minutes
    where = " ".join(p for p in (stack.round, (stack.gpu or "").upper()) if p)
    label = _short(f"{where} · {stack.stack}" if where else stack.stack)
    score_attr = "" if score is None else f"{score:.4f}"
    parts = [
        f'<g class="stack" data-stack="{e(stack.stack)}" data-round="{e(stack.round or "")}" '
        f'data-score="{score_attr}">',
        f"<title>{e(stack.stack)}: {_score_text(stack)}</title>",
        f'<text x="{LABEL - 8}" y="{middle + 4:.1f}" font-size="11" text-anchor="end" fill="#1d2329">'
        f"{e(label)}</text>",
    ]
    if score is not None:
        parts.append(
            f'<rect class="score" x="{LABEL}" y="{middle - 7:.1f}" width="{x(score) - LABEL:.1f}" '
            f'height="14" fill="{COLORS["score"]}" fill-opacity="0.35"/>'
        )
        parts.append(
            f'<line x1="{x(score):.1f}" y1="{middle - 10:.1f}" x2="{x(score):.1f}" y2="{middle + 10:.1f}" '
            f'stroke="{COLORS["score"]}" stroke-width="3"/>'
        )
    own = stack.reference
    if own is not None and own != heading:
        rx = x(own.minutes)
        title = f"{reference_label(own)} reference {_fmt(own.minutes)} min: {own.system}"
        parts.append(
            f'<line class="row-reference" x1="{rx:.1f}" y1="{y0 + 2}" x2="{rx:.1f}" y2="{y0 + ROW - 2}" '
            f'stroke="{COLORS["reference"]}" stroke-width="3" stroke-dasharray="4 3">'
            f"<title>{e(title)}</title></line>"
        )
    for result in stack.results:
        ok = result.status == SUCCESS and result.minutes is not None
        at = x(result.minutes) if ok and result.minutes is not None else x(top)
        color = COLORS["run"] if ok else COLORS["missed"]
        fill = color if ok else "#ffffff"
        parts.append(
            f'<circle class="run" cx="{at:.1f}" cy="{middle:.1f}" r="5" fill="{fill}" stroke="{color}" '
            f'stroke-width="2" data-status="{e(result.status)}"><title>{e(result.file)}: '
            f"{e(result.status)}{'' if not ok else f', {result.minutes:.2f} min'}</title></circle>"
        )
    parts.append("</g>")
    return parts


def _score_text(stack: StackScore) -> str:
    if stack.score_minutes is None:
        return f"no score ({stack.runs} run(s))"
    return f"{stack.score_minutes:.2f} min over {stack.runs} run(s), {stack.state}"


def spread_text(stack: StackScore) -> str:
    spread = stack.spread_percent
    times = stack.times
    if spread is None or not times:
        return "-"
    return f"{times[0]:.2f} .. {times[-1]:.2f} ({spread:.1f} %)"


def _render(name: str, comparisons: Sequence[BenchmarkComparison], title: str) -> str:
    sections: List[Tuple[BenchmarkComparison, str]] = [(c, plot_svg(c)) for c in comparisons]
    template = environment().get_template(name)
    return str(
        template.render(
            title=title,
            sections=sections,
            version=mlcc.__version__,
            escape=html.escape,
            spread=spread_text,
            ratio=_ratio,
            ratio_reference=_ratio_reference,
        )
    )


def render_results_html(comparisons: Sequence[BenchmarkComparison], *, title: str) -> str:
    """A self-contained page: per benchmark a table of the stacks and their plot."""
    return _render("results.html.j2", comparisons, title)


def render_results_section(comparisons: Sequence[BenchmarkComparison]) -> str:
    """The same sections as one fragment, for the matrix report's page."""
    return _render("results_section.html.j2", comparisons, "")


def _ratio(stack: StackScore, comparison: BenchmarkComparison) -> str:
    return ratio_text(stack, comparison.reference)


def _ratio_reference(stack: StackScore, comparison: BenchmarkComparison) -> str:
    """Which reference the ratio is to, when it is not the one the heading names."""
    reference = stack.reference or comparison.reference
    if reference is None or reference == comparison.reference or vs_reference(stack) is None:
        return ""
    return f"vs {reference_label(reference)} {reference.minutes:.2f} min"


def results_view(kb: Any, history: Any) -> str:
    """The results sections for the matrix report: empty when the history holds no runs."""
    comparisons = compare_stored(kb, history)
    return render_results_section(comparisons) if comparisons else ""
