"""Repair suggestions for rejected checks: rewrites from a fixed operator library, each judged
on the calibration set and gated as if it were the PR's change; only accepted ones are shown."""

from rubric_gate.repair.model import (
    ItemExcerpt,
    ProtectedCheck,
    RepairReport,
    RepairSuggestion,
    Unrepaired,
)
from rubric_gate.repair.operators import OPERATORS
from rubric_gate.repair.render import (
    render_repairs_markdown,
    render_repairs_text,
    suggestion_comment_body,
)
from rubric_gate.repair.review import ExistingComment, NewComment, ReviewPlan, plan_review_comments
from rubric_gate.repair.suggest import suggest_repairs
from rubric_gate.repair.yaml_spans import CheckSpan, check_spans

__all__ = [
    "OPERATORS",
    "CheckSpan",
    "ExistingComment",
    "ItemExcerpt",
    "NewComment",
    "ProtectedCheck",
    "RepairReport",
    "RepairSuggestion",
    "ReviewPlan",
    "Unrepaired",
    "check_spans",
    "plan_review_comments",
    "render_repairs_markdown",
    "render_repairs_text",
    "suggest_repairs",
    "suggestion_comment_body",
]
