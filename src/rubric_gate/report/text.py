"""Terminal rendering of reports with rich tables."""

from __future__ import annotations

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from rubric_gate.comparison import comparison_lines
from rubric_gate.report.markdown import measured_cell, measured_columns, percent, trust_note
from rubric_gate.report.model import CheckReport, RubricSummary
from rubric_gate.report.terminal import strip_controls
from rubric_gate.report.trust import agreement_text, how_sure

SHORT_HEADERS = {"alpha": "alpha", "flip_rate": "flip", "paraphrase_agreement": "para"}


def _text(value: object, style: str = "") -> Text:
    """User text for the terminal: never rich markup, never an escape sequence."""
    return Text(strip_controls(str(value)), style=style)


def _attribution_table(summary: RubricSummary, title: str, decisions: dict[str, tuple[str, str]] | None = None,
                       columns: list[tuple[str, str]] | None = None) -> Table:
    table = Table(title=_text(title), title_justify="left")  # Text: user strings are not rich markup
    for name, justify in (("check", "left"), ("origin", "left"), ("frozen", "left"), ("credit", "right"),
                          ("blame", "right"), ("pivotal" if summary.max_failures else "unique", "right"),
                          ("fails ok", "right"), ("fails bad", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for key, _ in columns or []:
        table.add_column(SHORT_HEADERS[key], justify="right")
    if decisions is not None:
        table.add_column("change")
        table.add_column("decision")
    for row in summary.checks:
        cells = [_text(row.id), row.origin, "yes" if row.frozen else "no", f"{row.credit:.2f}", f"{row.blame:.2f}",
                 str(row.unique_catches), str(row.fails_correct), str(row.fails_flawed)]
        cells += [measured_cell(row.reliability, key) for key, _ in columns or []]
        if decisions is not None:
            change, decision = decisions.get(row.id, ("", ""))
            cells += [_text(change), decision]
        table.add_row(*cells)
    return table


def _rates_lines(summary: RubricSummary) -> Text:
    rates = summary.rates
    lines = [f"correct passed {percent(rates.correct_passed)}", f"flawed caught {percent(rates.flawed_caught)}"]
    if rates.unplanned_caught.total:
        lines.append(f"unplanned caught {percent(rates.unplanned_caught)}")
    if rates.predicted_correct_passed is not None:
        lines.append(f"predicted correct passed {100 * rates.predicted_correct_passed:.1f}%")
    return Text("  ".join(lines))


def render_attribution_text(summary: RubricSummary, console: Console) -> None:
    console.print(_attribution_table(summary, f"{summary.rubric_id} {summary.version} ({summary.display})"))
    console.print(_rates_lines(summary), soft_wrap=True)
    if summary.agreement is not None:
        console.print(Text(agreement_text(summary.agreement)), soft_wrap=True)
        if summary.agreement.note:
            console.print(Text(f"note: {summary.agreement.note}", style="yellow"), soft_wrap=True)
    for a, b, n in summary.joint_catches:
        console.print(_text(f"redundant pair: {a} + {b} jointly hold {n} catch{'es' if n != 1 else ''} (each deletable alone, not both)"))


def render_check_text(report: CheckReport, console: Console) -> None:
    decisions = {c.check: (f"renamed {c.detail}" if c.change == "renamed" else c.change,
                           "accepted" if c.accepted else "REJECTED") for c in report.changes}
    verdict = Text(f"rubric-gate: {report.decision.upper()}", style="bold green" if report.decision == "pass" else "bold red")
    console.print(verdict)
    if report.override:
        console.print(_text(f"warning: the gate failed, but {report.override}", style="yellow"))
    if not report.changes:
        console.print("no check was added, deleted or edited")
    for change in report.changes:
        mark = "accepted" if change.accepted else "REJECTED"
        what = f"renamed {change.detail}" if change.change == "renamed" else f"{change.change:8} {change.check}"
        console.print(_text(f"  {mark:8} {what}: {change.reason}"), soft_wrap=True, highlight=False)
        if trust_note(change):
            console.print(_text(f"           not firm: {trust_note(change)}", style="yellow"), soft_wrap=True, highlight=False)
    for failure in report.run_failures:
        console.print(_text(f"  REJECTED {failure}"), soft_wrap=True, highlight=False)
    for note in report.notes:
        console.print(_text(f"note: {note}", style="yellow"))
    head_ids = {r.id for r in report.head.checks}
    renamed_away = {c.renamed_from for c in report.changes if c.renamed_from}
    deleted = [r for r in report.base.checks if r.id not in head_ids and r.id not in renamed_away]
    head_view = RubricSummary(report.head.rubric_id, report.head.version, report.head.display, report.head.max_failures,
                              [*report.head.checks, *deleted], report.head.rates, report.head.joint_catches)
    columns = measured_columns(report)
    table = _attribution_table(head_view, "per check (head; base for deleted checks)", decisions, columns)
    # Each measured column needs ~8 more characters; rich would otherwise squeeze every column.
    width = console.width
    console.width = max(width, 120 + 8 * len(columns))
    console.print(Group(table))
    console.width = width
    for name, summary in (("base ", report.base), ("head ", report.head), ("gated", report.gated)):
        console.print(Text(f"{name}  ") + _rates_lines(summary), soft_wrap=True)
    for line in comparison_lines(report.comparisons):
        console.print(Text(f"paired: {line}"), soft_wrap=True, highlight=False)
    for clause in how_sure(report):
        console.print(Text(f"how sure: {clause}"), soft_wrap=True, highlight=False)
