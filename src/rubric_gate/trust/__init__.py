"""Trust: what the base branch vouches for against what a pull request proposes, and the rule for
every difference between the two. Untrusted input can only make the gate stricter.

Pure functions over loaded data, no I/O (the action reads the snapshots and GitHub facts and
hands them in). Trusted: the base branch's rubrics, labels and recorded verdicts (at the merge
base and at the base tip) and verdicts the configured judge produced. Proposed: everything the
PR supplies, which may reject a change and never excuse one.

- `differences`: one `Rule` (gate, allowed, override; unclassified needs the override) and one
  table, `RULES`: every kind of difference, rubric key, calibration item field and verdict field.
- `evidence`: which verdicts may count as evidence (a PR's own may reject, never excuse).
- `labels`, `answers`: what a PR does to the labels and to the recorded answers each lookup reads.
- `deletion`: what deleting a rubric loses. `merge`: a PR's check changes onto the base tip.
- `record`: what a branch does to the base's labels and record that needs the override, in words
  (`check` says so where it trusts the working tree). `approval`: when a writer's approval of the
  head makes a PR's own recorded verdicts count.
- `wording`: what reviewers read about why a finding needs the override.
"""

from rubric_gate.trust.answers import (
    ChangedAnswer,
    Confirms,
    FullKey,
    JudgedKey,
    RemovedAnswer,
    changed_answers,
    confirmation_keys,
    confirmed_at,
    filled_answers,
    merged_record,
    removed_answers,
)
from rubric_gate.trust.deletion import deletion_losses
from rubric_gate.trust.differences import RULES, Difference, Kind, Rule, rule_of
from rubric_gate.trust.evidence import (
    Evidence,
    Untrusted,
    catches_withheld,
    split_evidence,
    split_pr_verdicts,
    unweighed_record,
    usable_pr_verdicts,
)
from rubric_gate.trust.labels import LabelDiff, diff_labels
from rubric_gate.trust.merge import apply_check_changes, check_conflicts, landing_differences
from rubric_gate.trust.record import record_changes
from rubric_gate.trust.rubric_diff import KeyChange, classify_rubric_changes

__all__ = ["RULES", "ChangedAnswer", "Confirms", "Difference", "Evidence", "FullKey", "JudgedKey", "KeyChange", "Kind",
           "LabelDiff", "RemovedAnswer", "Rule", "Untrusted", "apply_check_changes", "catches_withheld", "changed_answers",
           "check_conflicts", "classify_rubric_changes", "confirmation_keys", "confirmed_at", "deletion_losses",
           "diff_labels", "filled_answers", "landing_differences", "merged_record",
           "record_changes", "removed_answers", "rule_of", "split_evidence", "split_pr_verdicts", "unweighed_record",
           "usable_pr_verdicts"]
