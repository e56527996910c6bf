"""The gate service `check` and the action share: gate an edit on a verdict lookup, judging stats."""

from rubric_gate.service.gate import Untrusted, gate_edit
from rubric_gate.service.stats import combined_stats

__all__ = ["Untrusted", "combined_stats", "gate_edit"]
