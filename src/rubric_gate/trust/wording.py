"""What reviewers read about trust: why a finding needs the override, in the words the comment,
the check run and report.json show. Pure text from values; the rules themselves are in
`trust.differences` (each kind's rule) and `trust.rubric_diff` (each rubric key's)."""

from __future__ import annotations

from rubric_gate.trust.rubric_diff import KeyChange

# A base the gate cannot read vouches for nothing: two PRs that each load can merge cleanly into
# one that does not (a key or an item id written twice), and the next PR would go ungated.
UNREADABLE_BASE = ("{what} does not load at the base ({why}), so the gate cannot tell what this PR changes; "
                   "a writer's override is needed once the PR is reviewed by hand")


def rubric_key_message(diff: KeyChange) -> str | None:
    """What a reviewer reads about a changed rubric key that needs the override; None for a key
    the gate decides or allows (recorded only)."""
    if not diff.needs_override:
        return None
    if diff.key in ("calibration", "verdicts"):
        return f"repoints `{diff.key}` from {diff.before} to {diff.after}"
    if diff.key == "task":
        # The judge reads the task with every check: the gate cannot see what a new task
        # does to the verdicts (one saying "every output is fine" would pass).
        return ("rewords `task`, which the judge reads with every check; recorded and cached verdicts "
                "were judged against the old wording, so the gate cannot tell what the change does")
    if diff.key == "id":
        # The gate pairs files by path; a consumer looks a rubric up by its id. A new id
        # (a swap, or a draft taking this one's) changes which rubric that lookup reads.
        return (f"changes the rubric's `id` from {diff.before} to {diff.after}; whoever loads a rubric "
                "by id would read another rubric than the one the gate compared under this path")
    if diff.key == "judge":
        # Rule J decides a change from one judge to another when both can be called in the run
        # (`rubric.judge_gated`); an added or removed key, or a judge without its API key, cannot be compared.
        return (f"changes `judge` from {diff.before or '(none)'} to {diff.after or '(none)'}; the "
                "rubric's judge produces the verdicts later PRs are gated on (without one they replay "
                "the PR's own), and the gate compares two judges (rule J) only when both are named and "
                "their API keys are set in this run")
    return f"changes `{diff.key}`, which no rule of the gate classifies, so it needs the override"
