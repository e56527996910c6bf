"""The gate: accept or reject each edit of a rubric, one change at a time."""

from rubric_gate.gate.diff import AGGREGATION, Change, ChangeKind, diff_rubrics
from rubric_gate.gate.rules import RuleContext, Violation
from rubric_gate.gate.run import ColumnLookup, Decision, GateOptions, GateResult, run_gate

__all__ = [
    "AGGREGATION",
    "Change",
    "ChangeKind",
    "ColumnLookup",
    "Decision",
    "GateOptions",
    "GateResult",
    "RuleContext",
    "Violation",
    "diff_rubrics",
    "run_gate",
]
