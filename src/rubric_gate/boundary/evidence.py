"""Which of a PR's own verdicts the gate may use, and how: they may reject, never excuse."""

from __future__ import annotations

from rubric_gate.rubric import Rubric, normalize_text
from rubric_gate.verdicts import Verdict


def usable_pr_verdicts(fills: list[Verdict], trusted: Rubric) -> tuple[list[Verdict], list[Verdict]]:
    """The PR's gap-filling verdicts split into those the gate may use (for check texts the
    trusted rubric does not have) and those it may not (for the trusted rubric's own checks:
    a "yes" filled in where the base lost a line would make deleting the check look harmless)."""
    trusted_texts = {c.normalized_text for c in trusted.checks}
    usable = [v for v in fills if normalize_text(v.check_text) not in trusted_texts]
    return usable, [v for v in fills if normalize_text(v.check_text) in trusted_texts]


def catches_withheld(verdicts: list[Verdict]) -> list[Verdict]:
    """The same verdicts with every "no" turned "yes": untrusted evidence as the gate may read it
    when asking whether a catch is shared (a PR's own "no" is no catch; its blame is kept by the
    other reading, the verdicts as recorded)."""
    return [v.model_copy(update={"answer": "yes"}) if v.answer == "no" else v for v in verdicts]
