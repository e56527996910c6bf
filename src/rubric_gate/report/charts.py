"""Chart geometry for the HTML report (pure: numbers in, coordinates out) and the Mermaid chart
for the PR comment. The templates only draw what these functions measured."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from rubric_gate.attribution import Rate
from rubric_gate.results import CheckRow, RubricSummary

LABEL_CHARS = 28  # longer check ids are cut in the chart (the full id is in the tooltip and table)
CHAR_WIDTH = 7.2
BAR_HEIGHT = 10
ROW_GAP = 10
PLOT_WIDTH = 260
MERMAID_MAX_CHECKS = 40

METRICS = (("credit", "catch credit"), ("blame", "false-fail blame"), ("unique", "unique catches"))


@dataclass(frozen=True)
class Bar:
    metric: str  # credit | blame | unique: the CSS class
    y: float
    width: float
    value: str


@dataclass(frozen=True)
class ChartRow:
    check_id: str
    label: str
    y: float  # baseline of the label
    bars: tuple[Bar, ...]


@dataclass(frozen=True)
class AttributionChart:
    version: str  # base | head | gated
    title: str
    width: float
    height: float
    plot_x: float
    plot_width: float
    rows: tuple[ChartRow, ...]
    scale_max: float


def _label(check_id: str) -> str:
    return check_id if len(check_id) <= LABEL_CHARS else check_id[: LABEL_CHARS - 1] + "…"


def nice_max(value: float) -> float:
    """A round axis end at or above `value` (1, 2, 5 times a power of ten)."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 5, 10):
        if value <= step * power:
            return float(step * power)
    return float(10 * power)


def shared_scale(summaries: list[RubricSummary]) -> float:
    """One scale for every version's chart, so bars compare across base, head and gated."""
    values = [max(r.credit, r.blame, r.unique_catches) for s in summaries for r in s.checks]
    return nice_max(max(values, default=0.0))


def attribution_chart(summary: RubricSummary, version: str, title: str, scale_max: float) -> AttributionChart:
    label_width = min(LABEL_CHARS, max((len(r.id) for r in summary.checks), default=4)) * CHAR_WIDTH + 12
    row_height = len(METRICS) * BAR_HEIGHT + ROW_GAP
    rows = []
    top = 8.0
    for index, row in enumerate(summary.checks):
        y0 = top + index * row_height
        values = (row.credit, row.blame, float(row.unique_catches))
        texts = (f"{row.credit:.2f}", f"{row.blame:.2f}", str(row.unique_catches))
        bars = tuple(
            Bar(metric, y0 + k * BAR_HEIGHT, PLOT_WIDTH * value / scale_max, text)
            for k, ((metric, _), value, text) in enumerate(zip(METRICS, values, texts, strict=True))
        )
        rows.append(ChartRow(row.id, _label(row.id), y0 + 1.5 * BAR_HEIGHT + 4, bars))
    height = top + len(rows) * row_height + 24
    return AttributionChart(version, title, label_width + PLOT_WIDTH + 48, height, label_width, PLOT_WIDTH, tuple(rows), scale_max)


@dataclass(frozen=True)
class Interval:
    version: str
    y: float
    x: float | None  # the rate's point; None when there are no items
    low: float | None
    high: float | None
    text: str


@dataclass(frozen=True)
class RateGroup:
    label: str
    y: float
    intervals: tuple[Interval, ...]


@dataclass(frozen=True)
class RatesChart:
    width: float
    height: float
    plot_x: float
    plot_width: float
    groups: tuple[RateGroup, ...]
    ticks: tuple[tuple[float, str], ...]


RATE_NAMES = (("correct_passed", "Correct outputs passed"), ("flawed_caught", "Flawed outputs caught"),
              ("unplanned_caught", "Unplanned flaws caught"))


def _rate_text(rate: Rate) -> str:
    if rate.value is None:
        return "n/a"
    ci = rate.ci95
    interval = f" [{100 * ci[0]:.0f}-{100 * ci[1]:.0f}%]" if ci is not None else ""
    return f"{100 * rate.value:.1f}% ({rate.count}/{rate.total}){interval}"


def rates_chart(versions: list[tuple[str, RubricSummary]]) -> RatesChart:
    """Each rate per version as a point with its 95% (Wilson) interval as a whisker."""
    plot_x, plot_width, line = 170.0, 300.0, 14.0
    groups = []
    y = 10.0
    for key, label in RATE_NAMES:
        rates = [(name, getattr(s.rates, key)) for name, s in versions]
        if all(r.total == 0 for _, r in rates):
            continue
        intervals = []
        group_y = y + line * 0.8  # the rate's name on a line of its own, above its versions
        y += line * 0.6
        for name, rate in rates:
            y += line
            ci = rate.ci95
            intervals.append(Interval(
                name, y,
                None if rate.value is None else plot_x + plot_width * rate.value,
                None if ci is None else plot_x + plot_width * ci[0],
                None if ci is None else plot_x + plot_width * ci[1],
                _rate_text(rate),
            ))
        groups.append(RateGroup(label, group_y, tuple(intervals)))
        y += line * 0.8
    ticks = tuple((plot_x + plot_width * t / 100, f"{t}%") for t in (0, 25, 50, 75, 100))
    return RatesChart(plot_x + plot_width + 190, y + 30, plot_x, plot_width, tuple(groups), ticks)


# -- Mermaid (GitHub renders ```mermaid blocks in comments) -----------------------------------

_MERMAID_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def mermaid_label(text: str) -> str:
    """A check id as a Mermaid axis label: only id characters survive (no quotes, brackets,
    newlines, directives or link syntax can reach the diagram), cut to a readable length."""
    safe = _MERMAID_UNSAFE.sub("_", text)
    if len(safe) > LABEL_CHARS:  # keep both ends: ids often share a prefix
        safe = safe[: LABEL_CHARS - 10] + ".." + safe[-8:]
    return safe or "_"


def mermaid_labels(ids: list[str]) -> list[str]:
    """Distinct labels, one per check: a cut or sanitised label that repeats an earlier one gets
    its row number, so no bar hides another."""
    labels: list[str] = []
    seen: set[str] = set()
    for index, check_id in enumerate(ids, 1):
        label = mermaid_label(check_id)
        if label in seen:
            label = f"{label[: LABEL_CHARS - 4]}_{index}"
        while label in seen:
            label += "_"
        seen.add(label)
        labels.append(label)
    return labels


def credit_blame_mermaid(rows: list[CheckRow]) -> str | None:
    """Horizontal bars of credit, with blame as a line, one row per check; None above 40
    checks or with none. Horizontal, so labels of any count stay readable."""
    if not rows or len(rows) > MERMAID_MAX_CHECKS:
        return None
    labels = ", ".join(f'"{label}"' for label in mermaid_labels([r.id for r in rows]))
    top = nice_max(max(max(r.credit, r.blame) for r in rows))
    credit = ", ".join(f"{r.credit:.2f}" for r in rows)
    blame = ", ".join(f"{r.blame:.2f}" for r in rows)
    return (
        "xychart-beta horizontal\n"
        '    title "Catch credit (bars) vs false-fail blame (line) per check"\n'
        f"    x-axis [{labels}]\n"
        f'    y-axis "Shapley share" 0 --> {top:g}\n'
        f"    bar [{credit}]\n"
        f"    line [{blame}]\n"
    )
