"""The trust boundary: what the base branch vouches for against what a PR proposes.

Pure functions over loaded data (the action reads the files). Trusted: the base branch's
rubrics, labels and recorded verdicts (at the merge base and at the base tip) and verdicts the
configured judge produced. Proposed: everything the PR supplies, which may reject a change and
never excuse one.
"""

from rubric_gate.boundary.evidence import (
           Evidence,
           catches_withheld,
           split_evidence,
           unweighed_record,
           usable_pr_verdicts,
)
from rubric_gate.boundary.merge import apply_check_changes, check_conflicts, landing_differences
from rubric_gate.boundary.rubric_diff import KeyChange, classify_rubric_changes

__all__ = ["Evidence", "KeyChange", "apply_check_changes", "catches_withheld", "check_conflicts", "classify_rubric_changes", "landing_differences",
           "split_evidence", "unweighed_record", "usable_pr_verdicts"]
