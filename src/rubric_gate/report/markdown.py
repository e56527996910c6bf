"""Markdown report: the per-check table the PR comment and job summary show."""

from __future__ import annotations

import functools
import re
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from rubric_gate.attribution import Rate
from rubric_gate.comparison import comparison_lines
from rubric_gate.report.charts import credit_blame_mermaid
from rubric_gate.report.model import ChangeRow, CheckReport, RubricSummary
from rubric_gate.report.terminal import strip_controls
from rubric_gate.report.trust import agreement_text, how_sure

_ZERO_WIDTH_SPACE = "\u200b"


def _one_line(value: str) -> str:
    # Every use is one line (a table cell, a list item, a quote): a newline would let user text
    # start a heading or list of its own, e.g. a fake "PASS" inside a rubric id.
    return value.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")


def neutralize(text: Any, *, table: bool = True) -> str:
    """Make user text inert in GitHub Markdown prose: no mentions, links, images, HTML, or line
    and table breaks."""
    value = strip_controls(str(text))
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    # "@name" would notify; a zero-width space after "@" keeps it readable but inert.
    value = re.sub(r"@(?=[A-Za-z0-9_-])", "@" + _ZERO_WIDTH_SPACE, value)
    # "#123" and "owner/repo#123" would cross-link other issues' timelines.
    value = re.sub(r"#(?=\d)", "#" + _ZERO_WIDTH_SPACE, value)
    # "[PASS](url)" and "![badge](url)" would render a live link or image; escaped brackets
    # show as typed. Bare URLs and "www." are autolinked: break them the same way as mentions.
    value = re.sub(r"([\[\]!])", r"\\\1", value)
    value = re.sub(r"(?i)(://|\bwww\.)", lambda m: m.group(1)[:-1] + _ZERO_WIDTH_SPACE + m.group(1)[-1], value)
    value = value.replace("`", "'")
    value = _one_line(value)
    if table:
        value = value.replace("|", "\\|")
    return value


def code_span(text: Any, *, table: bool = True) -> str:
    """User text as an inline code span, shown exactly as written (nothing in it renders).

    Inside a code span entities and backslash escapes show literally, so nothing is escaped but
    the pipe in a table cell, which GitHub's table parser consumes before the span is read.
    The fence is one backtick longer than any run inside.
    """
    value = _one_line(strip_controls(str(text)))
    if table:
        value = value.replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") or not value.strip() else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def code_fence(text: str) -> str:
    """A fence for a code block holding `text` exactly: longer than any backtick run in it."""
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    return "`" * (longest + 1)


def percent(rate: Rate) -> str:
    if rate.value is None:
        return "n/a"
    ci = rate.ci95
    interval = f"; {100 * ci[0]:.0f}-{100 * ci[1]:.0f}%" if ci is not None else ""
    return f"{100 * rate.value:.1f}% ({rate.count}/{rate.total}{interval})"


def number(value: float) -> str:
    return f"{value:.2f}"


@functools.cache  # one per process: compiling the templates again for each rubric cost ~40 ms a report
def _environment() -> Environment:
    # Autoescape is off: Markdown is not HTML. All user text passes through `neutralize`.
    env = Environment(
        loader=PackageLoader("rubric_gate.report", "templates"),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["n"] = neutralize
    env.filters["code"] = code_span
    env.globals["code_fence"] = code_fence
    env.filters["pct"] = percent
    env.filters["num"] = number
    env.filters["agreement"] = agreement_text
    env.filters["share"] = share
    env.filters["trust"] = trust_note
    return env


def share(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def _decision_cell(change: ChangeRow) -> str:
    text = "accepted" if change.accepted else "**rejected**"
    by_judge = (change.reliability or {}).get("by_judge")
    if by_judge:
        same = sum((d == "accepted") == change.accepted for d in by_judge.values())
        if same < len(by_judge):
            text += f" ({same}/{len(by_judge)} judges)"
    if change.unstable:
        text += " ⚠ unstable"
    if (change.reliability or {}).get("tied_items"):
        text += " ⚠ tie"
    return text


def trust_note(change: ChangeRow) -> str:
    """What makes a decision shaky, for the list of changes: plain text, neutralised by the caller."""
    extra = change.reliability or {}
    notes = []
    if change.unstable:
        notes.append("rests on unstable verdicts (samples disagree) on " + ", ".join(extra.get("unstable_items", [])))
    if extra.get("tied_items"):
        notes.append("judges tied (counted as no) on " + ", ".join(extra["tied_items"]))
    by_judge = extra.get("by_judge") or {}
    dissent = [j for j, d in by_judge.items() if (d == "accepted") != change.accepted]
    if dissent:
        notes.append("alone, " + ", ".join(dissent) + " would decide otherwise")
    return "; ".join(notes)


def measured_columns(report: CheckReport) -> list[tuple[str, str]]:
    """(key, header) of the reliability columns some check row carries, in a fixed order."""
    keys = {key for summary in (report.head, report.base) for row in summary.checks for key in (row.reliability or {})}
    return [(key, header) for key, header in (("alpha", "Alpha"), ("flip_rate", "Flip rate"),
                                              ("paraphrase_agreement", "Paraphrase agr."))
            if key in keys]


def _table_rows(report: CheckReport) -> list[dict[str, Any]]:
    """One row per check of base or head, head order first, then deleted checks."""
    by_check = {c.check: c for c in report.changes}
    renamed_away = {c.renamed_from for c in report.changes if c.renamed_from}
    rows = []
    for summary, ids in ((report.head, [r.id for r in report.head.checks]),
                         (report.base, [r.id for r in report.base.checks
                                        if report.head.row(r.id) is None and r.id not in renamed_away])):
        for check_id in ids:
            row = summary.row(check_id)
            assert row is not None
            change = by_check.get(check_id)
            rows.append({
                "row": row,
                "change": change.change if change else "",
                "edited": ", ".join(change.edited) if change and change.edited else "",
                "detail": change.detail if change else "",
                "decision": _decision_cell(change) if change else "",
                "measured": [measured_cell(row.reliability, key) for key, _ in measured_columns(report)],
            })
    return rows


def measured_cell(reliability: dict[str, Any] | None, key: str) -> str:
    if not reliability or key not in reliability:
        return ""
    value = reliability[key]
    if key == "alpha":
        return "n/a" if value is None else f"{value:.2f}"
    return share(value)


def _rate_rows(before: RubricSummary, after: RubricSummary, gated: RubricSummary) -> list[dict[str, Any]]:
    names = [("correct_passed", "Correct outputs passed"), ("flawed_caught", "Flawed outputs caught"),
             ("unplanned_caught", "Unplanned flaws caught")]
    rows = []
    for key, label in names:
        b, h, g = (getattr(s.rates, key) for s in (before, after, gated))
        if b.total == 0 and h.total == 0:
            continue
        rows.append({"label": label, "base": b, "head": h, "gated": g})
    return rows


def render_markdown(report: CheckReport, *, heading_level: int = 2) -> str:
    template = _environment().get_template("report.md.j2")
    rows = _table_rows(report)
    return template.render(
        report=report,
        h="#" * heading_level,
        rows=rows,
        mermaid=credit_blame_mermaid([r["row"] for r in rows]),
        rates=_rate_rows(report.base, report.head, report.gated),
        rejected=[c for c in report.changes if not c.accepted],
        how_sure=how_sure(report),
        columns=measured_columns(report),
        shaky=[(c, trust_note(c)) for c in report.changes if c.accepted and trust_note(c)],
        paraphrased=[r for r in report.head.checks if r.reliability and r.reliability.get("paraphrases")],
        comparisons=comparison_lines(report.comparisons),
    )


def render_attribution_markdown(summary: RubricSummary, *, heading_level: int = 2) -> str:
    template = _environment().get_template("attribution.md.j2")
    return template.render(s=summary, h="#" * heading_level)
