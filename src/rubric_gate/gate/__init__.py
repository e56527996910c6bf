"""The gate: accept or reject each edit of a rubric, one change at a time."""

from rubric_gate.gate.diff import AGGREGATION, Change, ChangeKind, diff_rubrics
from rubric_gate.gate.rules import JUDGE_CHANGE_ALPHA, RuleContext, Violation, judge_rule
from rubric_gate.gate.run import (
    DEFAULT_GATES,
    GATES,
    ColumnLookup,
    Decision,
    GateOptions,
    GateResult,
    decision_order,
    gated_rubric,
    parse_gates,
    run_gate,
)

__all__ = [
    "AGGREGATION",
    "DEFAULT_GATES",
    "GATES",
    "JUDGE_CHANGE_ALPHA",
    "Change",
    "ChangeKind",
    "ColumnLookup",
    "Decision",
    "GateOptions",
    "GateResult",
    "RuleContext",
    "Violation",
    "decision_order",
    "diff_rubrics",
    "gated_rubric",
    "judge_rule",
    "parse_gates",
    "run_gate",
]
