"""Audits of a rubric's checks before they are judged: PReMISE's structural properties,
grounding in the task, and (opt-in) the adversarial fool rate; findings stored and reused."""

from rubric_gate.audit.changes import audit_rule, audited_changes, changed_checks
from rubric_gate.audit.model import AuditReport, CheckAudit, Fool, uninformative_notices
from rubric_gate.audit.render import audit_annotations, render_audit_markdown, render_audit_text
from rubric_gate.audit.run import audit_checks
from rubric_gate.audit.store import AuditStore, default_audit_path

__all__ = [
    "AuditReport",
    "AuditStore",
    "CheckAudit",
    "Fool",
    "audit_annotations",
    "audit_checks",
    "audit_rule",
    "audited_changes",
    "changed_checks",
    "default_audit_path",
    "render_audit_markdown",
    "render_audit_text",
    "uninformative_notices",
]
