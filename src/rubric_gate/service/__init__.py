"""The gate service `check` and the action share: one validated request, and one function that
judges, audits, gates and repairs an edit (`run_gate_request`); judging statistics."""

from rubric_gate.service.gate import gate_edit
from rubric_gate.service.request import CallBudget, GateRequest, RequestError, check_judging
from rubric_gate.service.run import GateRun, Judged, audit_options, judge_for_gate, run_gate_request
from rubric_gate.service.stats import combined_stats

__all__ = ["CallBudget", "GateRequest", "GateRun", "Judged", "RequestError", "audit_options",
           "check_judging", "combined_stats", "gate_edit", "judge_for_gate", "run_gate_request"]
