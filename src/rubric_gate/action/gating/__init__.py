"""Gating a pull request: its changed rubric files paired and gated one by one through the gate
service, the judge the run may use, changed recorded answers confirmed live, and the findings
on labels and recorded verdicts reviewers read."""
