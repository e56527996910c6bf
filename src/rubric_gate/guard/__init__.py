"""What a pull request may not change without an override: the labels, the recorded verdicts,
and rubrics that still do work. Pure functions over loaded data; the action supplies the facts."""

from rubric_gate.guard.deletion import deletion_losses
from rubric_gate.guard.labels import LabelDiff, diff_labels
from rubric_gate.guard.verdicts import (
    Confirms,
    FullKey,
    JudgedKey,
    changed_answers,
    confirmation_keys,
    confirmed_at,
    filled_answers,
    merged_record,
    removed_answers,
)

__all__ = ["Confirms", "FullKey", "JudgedKey", "LabelDiff", "changed_answers", "confirmation_keys", "confirmed_at", "deletion_losses", "diff_labels", "filled_answers", "merged_record", "removed_answers"]
