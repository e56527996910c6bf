"""Label-taught checks: a model writes a check for each group of flawed items the rubric
misses; only proposals the gate would accept as additions are kept, frozen as `origin: label`."""

from rubric_gate.teach.missed import MissGroup, missed_groups, missed_mask
from rubric_gate.teach.model import Proposal, TeachReport
from rubric_gate.teach.run import new_catch_rule, teach_checks

__all__ = [
    "MissGroup",
    "Proposal",
    "TeachReport",
    "missed_groups",
    "missed_mask",
    "new_catch_rule",
    "teach_checks",
]
