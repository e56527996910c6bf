"""The per-check table of a check report, for every format: one row builder and one set of labels.

Cells hold plain text; user text among them (check ids, a rename's "old -> new") is escaped by
each format (Markdown's `neutralize`/`code_span`, HTML's autoescape, the terminal's `Text`).
"""

from __future__ import annotations

from dataclasses import dataclass

from rubric_gate.results import ChangeRow, CheckReport, CheckRow

# The reliability figures a row can carry, in table order: key, header.
# The paraphrase column is Cohen's kappa (chance-corrected, as rule U reads it): raw agreement
# scores pure noise near 0.9 when "no" is rare.
MEASURED_COLUMNS = (("alpha", "Alpha"), ("flip_rate", "Flip rate"), ("paraphrase_kappa", "Paraphrase kappa"))
FAILS_HEADERS = ("Fails correct", "Fails flawed")
DECIDED_HEADER = "When decided"
DECISION_HEADER = "Decision"
# The decision per change first, in four columns a GitHub comment (~780 px) shows whole; the
# per-check figures follow in a table of their own (`figures_headers`).
CHANGE_HEADERS = ("Check", "Change", DECISION_HEADER, "Why")
SHORT_REASON = 60  # a reason clause longer than this is cut at its first ": " in the Why cell


def catches_header(max_failures: int) -> str:
    """With `max_failures: K` a check's sole catches are the ones that tip an item (pivotal)."""
    return "Pivotal catches" if max_failures else "Unique catches"


def measured_columns(report: CheckReport) -> list[tuple[str, str]]:
    """(key, header) of the reliability columns some check row carries, in a fixed order."""
    keys = {key for summary in (report.head, report.base) for row in summary.checks
            for key in (row.reliability.measured() if row.reliability else {})}
    return [(key, header) for key, header in MEASURED_COLUMNS if key in keys]


def figures_headers(report: CheckReport) -> list[str]:
    """The per-check figures, one row per check: provenance in one cell ("label, frozen")."""
    return ["Check", "Origin", "Credit", "Blame", catches_header(report.head.max_failures), *FAILS_HEADERS,
            *(header for _, header in measured_columns(report)), DECIDED_HEADER]


def origin_cell(row: CheckRow) -> str:
    return row.origin + (", frozen" if row.frozen else "")


@dataclass(frozen=True)
class ChangeLine:
    """One row of the changes table: what changed, the decision, and why in a few words."""
    change: ChangeRow
    check: str  # user text: the check id, "(aggregation)" for a change of aggregation
    kind: str  # "added", "modified (origin)", "renamed", ...
    detail: str  # user text: a rename's or an aggregation's "old -> new", else ""
    decision: str  # "accepted" or "rejected"
    decision_notes: str
    why: str  # plain text; user text in it (item ids) is escaped by each format

    @property
    def rejected(self) -> bool:
        return self.decision == "rejected"


def change_lines(report: CheckReport) -> list[ChangeLine]:
    """One per change, in the gate's order (the order the rejected list and the JSON use)."""
    return [ChangeLine(
        change=c, check=c.check, kind=_change_kind(c), detail=c.detail if c.change in ("renamed", "aggregation") else "",
        decision="accepted" if c.accepted else "rejected", decision_notes=_decision_notes(c),
        why=c.reason if c.accepted else  # one reason: the gate's words
        # A held change is rejected on trusted evidence alone: say so, not that its own records reject it.
        f"held until a writer approves; on trusted evidence: {short_reason(c.reason)}" if report.held(c)
        else short_reason(c.reason),
    ) for c in report.changes]


def short_reason(reason: str) -> str:
    """The reason's gist: each clause cut at its first ": " when long; the full reason (with the
    items) is in the list of rejected changes above the table."""
    clauses = []
    for clause in reason.split("; "):
        head, sep, _ = clause.partition(": ")
        clauses.append(head if sep and len(clause) > SHORT_REASON else clause)
    return "; ".join(dict.fromkeys(clauses))


def check_rows(report: CheckReport) -> list[tuple[CheckRow, ChangeRow | None]]:
    """One row per check of base or head: head order first, then deleted checks (a renamed
    check is one row, under its new id)."""
    by_check = {c.check: c for c in report.changes}
    renamed_away = {c.renamed_from for c in report.changes if c.renamed_from}
    deleted = [r for r in report.base.checks if report.head.row(r.id) is None and r.id not in renamed_away]
    return [(row, by_check.get(row.id)) for row in [*report.head.checks, *deleted]]


@dataclass(frozen=True)
class TableRow:
    check: CheckRow
    change: ChangeRow | None
    change_kind: str  # "added", "modified (origin)", ...; "" when the check is unchanged
    renamed: str  # a rename's "old -> new" (user text), else ""
    decision: str  # "accepted", "rejected" or ""
    decision_notes: str  # " (1/2 judges) ⚠ unstable ⚠ tie": what makes the decision shaky
    decided: str  # the changed check's figures where the gate decided it
    measured: tuple[str, ...]  # one cell per `measured_columns`

    @property
    def rejected(self) -> bool:
        return self.decision == "rejected"


def table_rows(report: CheckReport) -> list[TableRow]:
    columns = measured_columns(report)
    return [TableRow(
        check=row,
        change=change,
        change_kind=_change_kind(change),
        renamed=change.detail if change is not None and change.change == "renamed" else "",
        decision="" if change is None else "accepted" if change.accepted else "rejected",
        decision_notes=_decision_notes(change),
        decided=decided_cell(change),
        measured=tuple(measured_cell(row, key) for key, _ in columns),
    ) for row, change in check_rows(report)]


def _change_kind(change: ChangeRow | None) -> str:
    if change is None:
        return ""
    edited = ", ".join(change.edited)
    return change.change + (f" ({edited})" if edited and edited != "text" else "")


def _decision_notes(change: ChangeRow | None) -> str:
    reliability = change.reliability if change is not None else None
    if change is None or reliability is None:
        return ""
    text = ""
    judges = len(reliability.by_judge)
    dissent = len(reliability.dissenting_judges(change.accepted))
    if dissent:
        text += f" ({judges - dissent}/{judges} judges)"
    if reliability.unstable:
        text += " ⚠ unstable"
    if reliability.tied_items:
        text += " ⚠ tie"
    return text


def share(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def measured_cell(row: CheckRow, key: str) -> str:
    measured = row.reliability.measured() if row.reliability else {}
    if key not in measured:
        return ""
    value = measured[key]
    if key in ("alpha", "paraphrase_kappa"):
        return "n/a" if value is None else f"{value:.2f}"
    return share(value)


def decided_cell(change: ChangeRow | None) -> str:
    """The changed check's figures where the gate decided it (see `DecidedFigures`)."""
    if change is None or change.decided is None:
        return ""
    d = change.decided
    return f"{d.credit:.2f} / {d.blame:.2f} / {d.unique_catches}"


def trust_note(change: ChangeRow) -> str:
    """What makes a decision shaky, for the list of changes: plain text, escaped by the caller."""
    reliability = change.reliability
    if reliability is None:
        return ""
    notes = []
    if reliability.unstable:
        notes.append("rests on unstable verdicts (samples disagree) on " + ", ".join(reliability.unstable_items or ()))
    if reliability.tied_items:
        notes.append("judges tied (counted as no) on " + ", ".join(reliability.tied_items))
    dissent = reliability.dissenting_judges(change.accepted)
    if dissent:
        notes.append("alone, " + ", ".join(dissent) + " would decide otherwise")
    return "; ".join(notes)
