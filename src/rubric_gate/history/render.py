"""A rubric's history as a terminal table or a self-contained HTML page with an inline SVG chart."""

from __future__ import annotations

from html import escape
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from rubric_gate.history.replay import History, RevisionReport
from rubric_gate.report.terminal import strip_controls

RATE_NAMES = {"correct_passed": "correct passed", "flawed_caught": "flawed caught"}
COLORS = {"correct_passed": "#1a7f37", "flawed_caught": "#cf222e"}


def _plain(value: object) -> Text:
    return Text(strip_controls(str(value)))


def _rate_cell(rate: dict[str, Any] | None) -> str:
    if rate is None or rate["rate"] is None:
        return "n/a"
    ci = rate["ci95"]
    band = f" [{100 * ci[0]:.0f}-{100 * ci[1]:.0f}]" if ci else ""
    return f"{100 * rate['rate']:.0f}%{band}"


def paper_cell(rates: dict[str, Any] | None) -> str:
    """The paper's cell (its Tables 2-3): correct passed / flawed caught / unplanned caught, in %
    ("-" for a rate with no items, e.g. no unplanned flaw among them)."""
    if rates is None:
        return "n/a"
    values = [rates.get(name) for name in ("correct_passed", "flawed_caught", "unplanned_caught")]
    return " / ".join("-" if not v or v["rate"] is None else f"{100 * v['rate']:.1f}" for v in values)


def _changes_text(report: RevisionReport, previous: RevisionReport | None) -> str:
    if report.error:
        return f"not scored: {report.error}"
    parts = []
    if previous is None:
        parts.append("first revision")
    elif previous.revision.path != report.revision.path:
        parts.append(f"file renamed from {previous.revision.path}")
    if report.missing:
        parts.append("no verdicts for " + ", ".join(sorted(report.missing)))
    for change in report.changes:
        what = change["detail"] if change["change"] in ("renamed", "aggregation") else change["check"]
        decision = f": {change['decision']}" if "decision" in change else ""
        parts.append(f"{change['change']} {what}{decision}")
    return "; ".join(parts) or "no check changed"


def _pairs(history: History) -> list[tuple[RevisionReport, RevisionReport | None]]:
    return [(r, history.revisions[i - 1] if i else None) for i, r in enumerate(history.revisions)]


def render_history_text(history: History, console: Console) -> None:
    if history.chain == "gated":
        _render_chain_text(history, console)
        return
    count = len(history.revisions)
    table = Table(title=_plain(f"{history.path}: {count} revision{'s' * (count != 1)}, gates {history.gates}"),
                  title_justify="left")
    table.add_column("commit")
    table.add_column("ver")
    for split in history.splits:
        prefix = "" if split == "calibration" else "eval "
        table.add_column(f"{prefix}correct", justify="right")
        table.add_column(f"{prefix}flawed", justify="right")
    table.add_column("gate")
    for report in history.revisions:
        cells: list[Any] = [report.revision.commit[:8],
                            _plain("" if report.rubric is None else report.rubric.version)]
        for split in history.splits:
            rates = report.rates.get(split)
            cells += [_rate_cell(rates.get(name) if rates else None) for name in RATE_NAMES]
        cells.append(report.gate or "-")
        table.add_row(*cells)
    console.print(table)
    console.print(Text("correct: correct outputs passed; flawed: flawed outputs caught; [low-high]: 95% "
                       "Wilson interval; rates on the current labels"))  # wrapped on a terminal, whole in a pipe
    _print_changes(history, console)


def _render_chain_text(history: History, console: Console) -> None:
    """`--chain gated`: per split, each round's committed revision and the rubric the gate kept, in
    the paper's cells; then what the gate decided in each round."""
    for split in history.splits:
        table = Table(title=_plain(f"{history.path}: gated chain, gates {history.gates}, {split} split"),
                      title_justify="left")
        for name, justify in (("round", "right"), ("commit", "left"), ("ver", "left"), ("committed", "right"),
                              ("gated", "right"), ("gate", "left")):
            table.add_column(name, justify=justify)  # type: ignore[arg-type]
        for number, report in enumerate(history.revisions):
            table.add_row(str(number), report.revision.commit[:8],
                          _plain("" if report.rubric is None else report.rubric.version),
                          paper_cell(report.rates.get(split)), paper_cell(report.gated_rates.get(split)),
                          report.gate or "-")
        console.print(table)
    console.print(Text("cells: correct passed / flawed caught / unplanned caught (%); committed: the revision as "
                       "committed; gated: what the gate kept when each round's edits are applied to the round "
                       "before's; rates on the current labels"), soft_wrap=True)
    _print_changes(history, console)


def _hanging(text: str, width: int) -> str:
    """`text` wrapped at words to `width` with its continuation lines under the text after the
    commit column (a pipe's console is unbounded: the line stays whole, for grep)."""
    if len(text) < width:
        return text
    import textwrap

    return textwrap.fill(text, width=max(width - 1, 40), subsequent_indent=" " * 9, break_long_words=False,
                         break_on_hyphens=False)


def _print_changes(history: History, console: Console) -> None:
    for report, previous in _pairs(history):
        line = f"{report.revision.commit[:8]} {_changes_text(report, previous)}"
        console.print(_plain(_hanging(line, console.width)), soft_wrap=True, highlight=False)
        for change in report.changes:
            if change.get("decision") == "rejected":
                line = f"         {change['check']}: {change['reason']}"
                console.print(_plain(_hanging(line, console.width)), soft_wrap=True, highlight=False)


def _chart(history: History, split: str, width: int = 720, height: int = 280) -> str:
    left, right, top, bottom = 48, 40, 16, 40
    points = [(i, r) for i, r in enumerate(history.revisions) if split in r.rates]
    n = max(len(history.revisions) - 1, 1)

    def x(i: int) -> float:
        return left + (width - left - right) * i / n

    def y(value: float) -> float:
        return top + (height - top - bottom) * (1 - value)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="correct passed and flawed caught over revisions ({escape(split)} split)">']
    for tick in (0, 0.25, 0.5, 0.75, 1):
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end" font-size="11">{100 * tick:.0f}%</text>')
    for i, report in enumerate(history.revisions):
        label = escape(report.revision.commit[:7])
        parts.append(f'<text x="{x(i):.1f}" y="{height - bottom + 16}" text-anchor="middle" font-size="11" '
                     f'font-family="monospace">{label}</text>')
        if report.gate == "fail" and split == "calibration":  # the gate decides on the calibration split
            parts.append(f'<text x="{x(i):.1f}" y="{height - bottom + 30}" text-anchor="middle" font-size="10" '
                         f'fill="#cf222e">gate fail</text>')
    for offset, (name, color) in zip((-4, 4), COLORS.items(), strict=True):
        # the two rates' interval bars side by side, so overlapping intervals stay readable
        coords = [(x(i) + offset, r.rates[split][name]) for i, r in points if r.rates[split][name]["rate"] is not None]
        for cx, rate in coords:
            if rate["ci95"]:
                parts.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(rate["ci95"][0]):.1f}" '
                             f'y2="{y(rate["ci95"][1]):.1f}" stroke="{color}" stroke-opacity="0.35" stroke-width="6"/>')
        if len(coords) > 1:
            path = " ".join(f"{cx:.1f},{y(rate['rate']):.1f}" for cx, rate in coords)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for cx, rate in coords:
            parts.append(f'<circle cx="{cx:.1f}" cy="{y(rate["rate"]):.1f}" r="4" fill="{color}">'
                         f'<title>{escape(RATE_NAMES[name])}: {rate["count"]}/{rate["total"]}</title></circle>')
    parts.append("</svg>")
    return "".join(parts)


def render_history_html(history: History) -> str:
    legend = " ".join(f'<span style="color:{COLORS[n]}">&#9632; {escape(label)}</span>' for n, label in RATE_NAMES.items())
    charts = "".join(f"<h2>{escape(split.capitalize())} split</h2>{_chart(history, split)}" for split in history.splits)
    rows = []
    for report, previous in _pairs(history):
        cells = [f"<td><code>{escape(report.revision.commit[:8])}</code></td>",
                 f"<td>{escape(report.revision.date[:10])}</td>",
                 f"<td>{escape('' if report.rubric is None else str(report.rubric.version))}</td>"]
        for split in history.splits:
            rates = report.rates.get(split)
            cells += [f"<td>{escape(_rate_cell(rates.get(n) if rates else None))}</td>" for n in RATE_NAMES]
            if history.chain == "gated":
                cells.append(f"<td>{escape(paper_cell(report.gated_rates.get(split)))}</td>")
        cells += [f"<td>{escape(report.gate or '-')}</td>", f"<td>{escape(_changes_text(report, previous))}</td>"]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    gated = ["gated: correct / flawed / unplanned %"] if history.chain == "gated" else []
    heads = "".join(f"<th>{escape(label)}{'' if s == 'calibration' else ' (eval)'}</th>"
                    for s in history.splits for label in [*RATE_NAMES.values(), *gated])
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>rubric-gate history: {escape(history.path)}</title>
<style>body{{font-family:system-ui,sans-serif;margin:24px;color:#1f2328}}table{{border-collapse:collapse}}
td,th{{border:1px solid #d0d7de;padding:4px 8px;font-size:13px;text-align:left}}td:not(:last-child){{white-space:nowrap}}</style></head>
<body><h1>History of <code>{escape(history.path)}</code></h1>
<p>Both rates at every git revision, scored on today's labels; the bars are 95% Wilson intervals.
Gates: {escape(history.gates)}; chain: {escape(history.chain)}. {legend}</p>
{charts}
<table><tr><th>commit</th><th>date</th><th>version</th>{heads}<th>gate</th><th>changes</th></tr>
{"".join(rows)}</table></body></html>
"""
