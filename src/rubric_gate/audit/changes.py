"""Audit the checks a PR adds or rewords, and the optional gate rule built on the findings."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rubric_gate.audit.model import AuditReport, uninformative_notices
from rubric_gate.audit.run import audit_checks
from rubric_gate.audit.store import AuditStore
from rubric_gate.gate import RuleContext, Violation, diff_rubrics
from rubric_gate.rubric import Check, RubricDocument


def changed_checks(base: RubricDocument, head: RubricDocument) -> list[Check]:
    """Head's added and reworded checks, in head order: what a PR asks the judge to apply anew."""
    changed = {c.check_id for c in diff_rubrics(base.rubric, head.rubric) if c.kind == "added" or c.reworded}
    return [c for c in head.rubric.checks if c.id in changed]


def audited_changes(base: RubricDocument, head: RubricDocument, judges: Sequence[str], store: AuditStore,
                    *, concurrency: int = 8) -> AuditReport:
    audits, usage = audit_checks(head.rubric.task, changed_checks(base, head), judges, store,
                                 check_lines=head.check_lines, concurrency=concurrency)
    return AuditReport(head.rubric.id, head.display, audits, usage, notices=uninformative_notices(usage))


def audit_rule(report: AuditReport) -> Callable[[RuleContext], Violation | None]:
    """Rule A (opt-in): reject an added or reworded check that is ungrounded or fails a property."""

    def rule(ctx: RuleContext) -> Violation | None:
        change = ctx.change
        if change.head is None or not (change.kind == "added" or change.reworded):
            return None
        audit = report.audit(change.check_id)
        if audit is None or audit.text != change.head.text or audit.passed:
            return None
        return Violation("A", "audit: " + "; ".join(audit.findings()))

    return rule
