"""Terminal rendering of reports with rich tables."""

from __future__ import annotations

from rich import box
from rich.console import Console, JustifyMethod, RenderableType
from rich.table import Table
from rich.text import Text

from rubric_gate.comparison import comparison_lines
from rubric_gate.report.markdown import (
    check_rows,
    gated_label,
    measured_cell,
    measured_columns,
    percent,
    trade_text,
    trust_note,
)
from rubric_gate.report.model import ChangeRow, CheckReport, CheckRow, RubricSummary
from rubric_gate.report.terminal import strip_controls
from rubric_gate.report.trust import agreement_text, how_sure

SHORT_HEADERS = {"alpha": "alpha", "flip_rate": "flip", "paraphrase_agreement": "para"}


def _text(value: object, style: str = "") -> Text:
    """User text for the terminal: never rich markup, never an escape sequence."""
    return Text(strip_controls(str(value)), style=style)


def _attribution_table(summary: RubricSummary, title: str, decisions: dict[str, tuple[str, str]] | None = None,
                       columns: list[tuple[str, str]] | None = None, width: int | None = None) -> Table:
    # No vertical rules and one space between columns: ten columns fit 80 characters, headers
    # wrap onto a second line, and a long check id folds rather than being cut.
    table = Table(title=_text(title), title_justify="left", box=box.SIMPLE_HEAD, padding=0, show_edge=False,
                  collapse_padding=True)  # Text title: user strings are not rich markup
    table.add_column("Check", overflow="fold", min_width=12, ratio=4)
    measures: tuple[tuple[str, JustifyMethod], ...] = (("Origin", "left"), ("Frozen", "left"), ("Credit", "right"), ("Blame", "right"),
                          ("Pivotal catches" if summary.max_failures else "Unique catches", "right"), ("Fails correct", "right"), ("Fails flawed", "right"))
    for name, justify in measures:
        table.add_column(name, justify=justify, width=_word_width(name))
    for key, _ in columns or []:
        table.add_column(SHORT_HEADERS[key], justify="right", width=5)
    if decisions is not None:
        # "REJECTED added" folds in two; when the table must shrink, the decision folds before the
        # check ids do (rich shrinks the widest column first): an id is what a reader looks up.
        table.add_column("Decision", overflow="fold", min_width=8, ratio=1,
                         max_width=_decision_width(summary, decisions, columns or [], width))
    for row in summary.checks:
        cells: list[RenderableType] = [_text(row.id), row.origin, "yes" if row.frozen else "no", f"{row.credit:.2f}", f"{row.blame:.2f}",
                 str(row.unique_catches), str(row.fails_correct), str(row.fails_flawed)]
        cells += [measured_cell(row.reliability, key) for key, _ in columns or []]
        if decisions is not None:
            change, decision = decisions.get(row.id, ("", ""))
            cells.append(_text(f"{decision} {change}".strip()))
        table.add_row(*cells)
    return table


def _decision_width(summary: RubricSummary, decisions: dict[str, tuple[str, str]],
                    columns: list[tuple[str, str]], width: int | None) -> int | None:
    fixed = 44 + 5 * len(columns) + 8 + len(columns)  # the fixed-width columns and one space between each
    ids = max((len(row.id) for row in summary.checks), default=0)
    cells = max((len(f"{d} {c}".strip()) for c, d in decisions.values()), default=0)
    if width is None or fixed + ids + cells <= width:
        return None
    return 8


def _word_width(header: str) -> int:
    return max(len(word) for word in header.split())


def _rates_lines(summary: RubricSummary) -> Text:
    rates = summary.rates
    lines = [f"correct passed {percent(rates.correct_passed)}", f"flawed caught {percent(rates.flawed_caught)}"]
    if rates.unplanned_caught.total:
        lines.append(f"unplanned caught {percent(rates.unplanned_caught)}")
    if rates.predicted_correct_passed is not None:
        lines.append(f"predicted correct passed {100 * rates.predicted_correct_passed:.1f}%")
    return Text("  ".join(lines))


def render_attribution_text(summary: RubricSummary, console: Console) -> None:
    title = f"{summary.rubric_id}, version {summary.version} ({summary.display}), on {summary.items_name}"
    console.print(_attribution_table(summary, title))
    console.print(_rates_lines(summary))
    if summary.agreement is not None:
        console.print(Text(agreement_text(summary.agreement)))
        if summary.agreement_note:
            console.print(_text(f"note: {summary.agreement_note}", style="yellow"))
    for a, b, n in summary.joint_catches:
        console.print(_text(f"redundant pair: {a} + {b} jointly hold {n} catch{'es' if n != 1 else ''} (each deletable alone, not both)"))


def _hanging(console: Console, prefix: str, body: str, style: str = "") -> None:
    """One line that, when the terminal wraps it, continues under its body rather than at column 0."""
    grid = Table.grid()
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row(_text(prefix, style), _text(body, style))
    console.print(grid, highlight=False)


def _decided_elsewhere(row: CheckRow, change: ChangeRow | None) -> bool:
    """Whether a change's reason cites figures other than its table row (the Markdown's "When decided")."""
    d = change.decided if change is not None else None
    return d is not None and (round(d.credit, 2), round(d.blame, 2), d.unique_catches) != (
        round(row.credit, 2), round(row.blame, 2), row.unique_catches)


def versions_text_plain(report: CheckReport) -> str:
    base, head = report.base.version, report.head.version
    return f"version {base} → {head}" if base != head else f"version {base} (unchanged)"


def render_check_text(report: CheckReport, console: Console) -> None:
    decisions = {c.check: (f"renamed {c.detail}" if c.change == "renamed" else c.change,
                           "accepted" if c.accepted else "REJECTED") for c in report.changes}
    verdict = Text(f"rubric-gate: {report.decision.upper()}", style="bold green" if report.decision == "pass" else "bold red")
    verdict.append(_text(f" — {report.head.rubric_id}, {versions_text_plain(report)}"))
    console.print(verdict)
    if report.override:
        console.print(_text(f"warning: the gate failed, but {report.override}", style="yellow"))
    if not report.changes:
        console.print("no check was added, deleted or edited")
    for change in report.changes:
        mark = "accepted" if change.accepted else "REJECTED"
        what = f"renamed {change.detail}" if change.change == "renamed" else f"{change.change:8} {change.check}"
        _hanging(console, f"  {mark:8} ", what + ("" if change.accepted else f": {change.reason}"))
        if trade_text(change):
            _hanging(console, "           if accepted: ", trade_text(change).removeprefix("accepting it would "))
        if trust_note(change):
            _hanging(console, "           not firm: ", trust_note(change), style="yellow")
    for failure in report.run_failures:
        console.print(_text(f"  REJECTED {failure}"), highlight=False)
    for note in report.notes:
        _hanging(console, "note: ", note, style="yellow")
    head_view = RubricSummary(report.head.rubric_id, report.head.version, report.head.display, report.head.max_failures,
                              [row for row, _ in check_rows(report)], report.head.rates, report.head.joint_catches)
    columns = measured_columns(report)
    table = _attribution_table(head_view, "per check (head as proposed; base for deleted checks)", decisions, columns,
                               console.width)
    console.print(table)
    if any(_decided_elsewhere(row, change) for row, change in check_rows(report)):
        console.print(_text("a reason's figures are the check's in the rubric the gate decided it in (the base plus "
                            "the changes accepted before it), so they can differ from this table's"), highlight=False)
    for name, summary in ((f"base (version {report.base.version})", report.base),
                          (f"head as proposed (version {report.head.version})", report.head),
                          (f"gated ({gated_label(report)})", report.gated)):
        console.print(_text(f"{name}: ") + _rates_lines(summary))
    for line in comparison_lines(report.comparisons):
        _hanging(console, "paired: ", line)
    for clause in how_sure(report):
        _hanging(console, "how sure: ", clause)
