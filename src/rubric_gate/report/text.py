"""Terminal rendering of reports with rich tables."""

from __future__ import annotations

from dataclasses import dataclass

from rich import box
from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from rubric_gate.comparison import comparison_lines
from rubric_gate.report.markdown import gated_label, percent, trade_text
from rubric_gate.report.table import (
    FAILS_HEADERS,
    catches_header,
    check_rows,
    measured_cell,
    measured_columns,
    trust_note,
)
from rubric_gate.report.terminal import strip_controls
from rubric_gate.report.trust import agreement_text, how_sure
from rubric_gate.results import ChangeRow, CheckReport, CheckRow, JudgeChange, RubricSummary

SHORT_HEADERS = {"alpha": "alpha", "flip_rate": "flip", "paraphrase_kappa": "para"}  # para: paraphrase kappa


def _text(value: object, style: str = "") -> Text:
    """User text for the terminal: never rich markup, never an escape sequence."""
    return Text(strip_controls(str(value)), style=style)


NUMBER_HEADERS = ("Credit", "Blame", "Unique catches", *FAILS_HEADERS)
MIN_DECISION = 8  # "REJECTED"; the change kind folds under it
MIN_ID = 12  # a check id folds only when even the narrowest table does not fit it whole
# What a narrow terminal gives up first, in order (a group goes together): the ids, the
# figures the gate decides on (credit, blame, unique catches) and the decision always stay.
NARROW_DROPS = (("Frozen",), ("Origin",), FAILS_HEADERS, ("measured",))


def _word_width(header: str) -> int:
    return max(len(word) for word in header.split())


@dataclass
class _Layout:
    """Which columns a width holds, and what a reader is told about the ones it does not."""
    shown: set[str]
    hidden: list[str]  # headers dropped for the width, in table order
    width_needed: int  # the terminal width at which every column shows
    ids_fit: bool


def _layout(widths: dict[str, int], width: int | None) -> _Layout:
    """`widths`: each column's natural width (the ids', the headers' longest word, 8 for the decision)."""
    def needed(names: set[str]) -> int:
        return sum(widths[n] for n in names) + len(names) - 1  # one space between columns

    shown = set(widths)
    full = needed(shown)
    for group in NARROW_DROPS:
        if width is None or needed(shown) <= width:
            break
        shown -= {n for n in widths if n in group or (group == ("measured",) and n.startswith("measured:"))}
    hidden = [n for n in widths if n not in shown and n != "Frozen"]
    return _Layout(shown, hidden, full, width is None or needed(shown) <= width)


def _attribution_table(summary: RubricSummary, title: str, decisions: dict[str, tuple[str, str]] | None = None,
                       columns: list[tuple[str, str]] | None = None,
                       width: int | None = None) -> tuple[Table, list[str], list[str]]:
    """The per-check table, the frozen checks' ids when it is printed without its Frozen column,
    and the other columns it leaves out. In a narrow terminal the ids keep their width (an id is
    what a reader looks up, so it never folds while a column can go) and the columns go in the
    order of `NARROW_DROPS`: the frozen ones are listed under the table, the rest named there."""
    columns = columns or []
    headers = list(NUMBER_HEADERS)
    headers[2] = catches_header(summary.max_failures)
    widths = {"Check": max([len("Check"), *(len(r.id) for r in summary.checks)]),
              "Origin": max([len("Origin"), *(len(r.origin) for r in summary.checks)]), "Frozen": len("Frozen")}
    widths.update({name: _word_width(name) for name in headers})
    widths.update({f"measured:{key}": 5 for key, _ in columns})
    if decisions is not None:
        widths["Decision"] = MIN_DECISION
    layout = _layout(widths, width)
    shown = layout.shown
    used = sum(widths[n] for n in shown) + len(shown) - 1
    # No vertical rules and one space between columns; headers wrap onto a second line.
    table = Table(title=_text(title), title_justify="left", box=box.SIMPLE_HEAD, padding=0, show_edge=False,
                  collapse_padding=True)  # Text title: user strings are not rich markup
    if layout.ids_fit:
        table.add_column("Check", overflow="fold", min_width=widths["Check"], ratio=4)
    else:  # the ids fold into what the other columns leave, so the decision is never cut
        ids = max(MIN_ID if width is None else min(MIN_ID, width - (used - widths["Check"])), 4)
        table.add_column("Check", overflow="fold", width=ids)
        used += ids - widths["Check"]
    for name in ("Origin", "Frozen"):
        if name in shown:
            table.add_column(name, width=widths[name])
    for name in headers:
        if name in shown:
            table.add_column(name, justify="right", width=_word_width(name))
    for key, _ in columns:
        if f"measured:{key}" in shown:
            table.add_column(SHORT_HEADERS[key], justify="right", width=5)
    if decisions is not None:
        # "REJECTED added" folds in two when the terminal is narrow: the decision, not the id.
        spare = None if width is None else width - used + MIN_DECISION
        table.add_column("Decision", overflow="fold", min_width=MIN_DECISION, ratio=1,
                         max_width=max(MIN_DECISION, spare) if spare is not None else None)
    for row in summary.checks:
        cells: list[RenderableType] = [_text(row.id)]
        if "Origin" in shown:
            cells.append(row.origin)
        if "Frozen" in shown:
            cells.append("yes" if row.frozen else "no")
        figures = dict(zip(headers, [f"{row.credit:.2f}", f"{row.blame:.2f}", str(row.unique_catches),
                                     str(row.fails_correct), str(row.fails_flawed)], strict=True))
        cells += [figures[name] for name in headers if name in shown]
        cells += [measured_cell(row, key) for key, _ in columns if f"measured:{key}" in shown]
        if decisions is not None:
            change, verdict = decisions.get(row.id, ("", ""))
            cells.append(_text(f"{verdict} {change}".strip()))
        table.add_row(*cells)
    frozen = [] if "Frozen" in shown else [row.id for row in summary.checks if row.frozen]
    hidden = [SHORT_HEADERS[n.split(":", 1)[1]] if n.startswith("measured:") else n for n in layout.hidden]
    if hidden:
        hidden = [f"{', '.join(hidden)} (every column shows from {layout.width_needed} columns, or with "
                  "--format markdown or json)"]
    return table, frozen, hidden


def _print_table(console: Console, table: tuple[Table, list[str], list[str]]) -> None:
    grid, frozen, hidden = table
    console.print(grid)
    if frozen:
        _hanging(console, "frozen: ", ", ".join(frozen) + " (cannot be deleted, reworded or unfrozen)")
    for line in hidden:
        _hanging(console, "not shown: ", line)


def _rate_rows(summaries: list[RubricSummary]) -> list[tuple[str, list[str]]]:
    rates = [s.rates for s in summaries]
    rows = [("correct passed", [percent(r.correct_passed) for r in rates]),
            ("flawed caught", [percent(r.flawed_caught) for r in rates])]
    if any(r.unplanned_caught.total for r in rates):
        rows.append(("unplanned caught", [percent(r.unplanned_caught) for r in rates]))
    if any(r.predicted_correct_passed is not None for r in rates):
        rows.append(("predicted correct passed", ["" if r.predicted_correct_passed is None
                                                  else f"{100 * r.predicted_correct_passed:.1f}%" for r in rates]))
    return rows


def _two_lines(cell: str) -> str:
    """"90.9% (20/22; 72-97%)" -> the rate and its counts over "CI 72-97%" (a narrow terminal)."""
    head, sep, interval = cell.partition("; ")
    return f"{head})\nCI {interval.removesuffix(')')}" if sep else cell


def _rates_table(named: list[tuple[str, RubricSummary]], width: int | None) -> Table:
    """One row per rate, one column per rubric. Where a figure with its interval does not fit on
    one line, the interval goes on a line of its own under it (never a break inside a figure)."""
    rows = _rate_rows([summary for _, summary in named])
    labels = max(len(label) for label, _ in rows)
    gaps = len(named)  # one space before each figure column

    def widest(table_rows: list[tuple[str, list[str]]]) -> int:
        return max(len(line) for _, values in table_rows for cell in values for line in cell.splitlines())
    natural = labels + sum(max(widest(rows), len(name)) for name, _ in named) + gaps
    cells, label_width = widest(rows), None
    if width is not None and natural > width:  # fixed widths: the names wrap, figures never split
        if width - len(named) * cells - gaps < len("predicted"):
            rows = [(label, [_two_lines(cell) for cell in values]) for label, values in rows]
            cells = widest(rows)
        label_width = max(len("predicted"), min(labels, width - len(named) * cells - gaps))
    table = Table(box=box.SIMPLE_HEAD, padding=0, show_edge=False, collapse_padding=True)
    table.add_column("Rate", width=label_width)
    for name, _ in named:
        # Narrow, a name breaks before its parenthesis ("base" over "(version 3)"), not inside it.
        shown = name.replace(" (", "\n(", 1) if label_width is not None else name
        table.add_column(_text(shown), justify="right", width=cells if label_width is not None else None)
    for label, values in rows:
        table.add_row(label, *values)
    return table


def render_attribution_text(summary: RubricSummary, console: Console) -> None:
    title = f"{summary.rubric_id}, version {summary.version} ({summary.display}), on {summary.items_name}"
    _print_table(console, _attribution_table(summary, title, width=console.width))
    for label, (cell,) in _rate_rows([summary]):
        _hanging(console, f"{label}: ", cell)
    if summary.agreement is not None:
        _hanging(console, "agreement: ", agreement_text(summary.agreement).removeprefix("agreement "))
        if summary.agreement_note:
            _hanging(console, "note: ", summary.agreement_note, style="yellow")
    for a, b, n in summary.joint_catches:
        _hanging(console, "redundant pair: ", f"{a} + {b} jointly hold {n} catch{'es' if n != 1 else ''} (each "
                 "deletable alone, not both)")


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
        _hanging(console, f"  {mark:8} ", f"{what}: {change.reason}")  # the reason the JSON and the comment give
        if trade_text(change):
            _hanging(console, "           if accepted: ", trade_text(change).removeprefix("accepting it would "))
        if trust_note(change):
            _hanging(console, "           not firm: ", trust_note(change), style="yellow")
    for failure in report.run_failures:
        console.print(_text(f"  REJECTED {failure}"), highlight=False)
    if report.decision == "fail":
        _hanging(console, "to pass: ", "undo the rejected changes, or rework them so they no longer lose or fail the "
                 "items their reasons name; the gated rubric (this revision with only the accepted changes) is in "
                 "--format markdown, json or html")
    for note in report.notes:
        _hanging(console, "note: ", note, style="yellow")
    head_view = RubricSummary(report.head.rubric_id, report.head.version, report.head.display, report.head.max_failures,
                              [row for row, _ in check_rows(report)], report.head.rates, report.head.joint_catches)
    columns = measured_columns(report)
    _print_table(console, _attribution_table(head_view, "per check (head as proposed; base for deleted checks)",
                                             decisions, columns, console.width))
    if any(_decided_elsewhere(row, change) for row, change in check_rows(report)):
        _hanging(console, "note: ", "a reason's figures are the check's in the rubric the gate decided it in (the "
                 "base plus the changes accepted before it), so they can differ from this table's")
    console.print(_rates_table([(f"base (version {report.base.version})", report.base),
                                (f"head as proposed (version {report.head.version})", report.head),
                                (f"gated ({gated_label(report)})", report.gated)], console.width))
    for line in comparison_lines(report.comparisons):
        _hanging(console, "paired: ", line)
    if report.judge_change is not None:
        render_judge_change_text(report.judge_change, console)
    for clause in how_sure(report):
        _hanging(console, "how sure: ", clause)


def render_judge_change_text(change: JudgeChange, console: Console) -> None:
    """A judge change (rule J) on a terminal: the verdict, its reasons, one table, the rates paired."""
    from rubric_gate.report import judge_change as parts

    console.print(Text(f"judge change (rule J): {'PASS' if change.passed else 'FAIL'}",
                       style="bold green" if change.passed else "bold red"))
    _hanging(console, "  compared: ", f"{change.old_label} → {change.new_label} on {change.rubric} version "
             f"{change.version}, {change.items} calibration items")
    if change.violations:  # each reason is listed above, with the run's other failures
        _hanging(console, "  rejected: ", f"{len(change.violations)} reason{'s' if len(change.violations) != 1 else ''} "
                 "above (rule J)")
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), show_edge=False, collapse_padding=True,
                  title=_text("per check, old judge → new judge"), title_justify="left")
    table.add_column("Check", overflow="fold")
    for header in (*parts.TEXT_HEADERS, parts.catches_header(change, markdown=False)):
        table.add_column(header, justify="right", no_wrap=True)  # a figure is never split
    for row in change.checks:
        table.add_row(_text(row.id), *parts.terminal_cells(row))
    console.print(table)
    for line in comparison_lines(change.comparisons):
        _hanging(console, "paired: ", line)
    _hanging(console, "decisions: ", parts.decisions_sentence(change))
    if change.judging:
        _hanging(console, "compared only: ", str(change.judging.get("summary", "")))
    for d in change.decisions:
        if d.old != d.new:
            _hanging(console, "  differs: ", f"{d.change} {d.check}: {'accepted' if d.old else 'rejected'} with the "
                     f"old judge, {'accepted' if d.new else 'rejected'} with the new")
