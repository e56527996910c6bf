"""A PR's check-level changes applied onto the base tip: what will land, gated where it lands.

The PR is diffed against its merge base; main may have moved since (deleted the other check
catching an item, say). Applying the same changes to the tip's rubric gives the rubric the
merge produces, to gate against the tip.
"""

from __future__ import annotations

from rubric_gate.rubric import Rubric


def apply_check_changes(merge_base: Rubric, head: Rubric, tip: Rubric) -> Rubric:
    """`tip` with what the PR changed since `merge_base`: checks deleted, edited and added (by id),
    and each other key the PR changed. What main changed and the PR did not stays main's."""
    before = {c.id: c for c in merge_base.checks}
    after = {c.id: c for c in head.checks}
    deleted = set(before) - set(after)
    edited = {cid for cid in set(before) & set(after) if before[cid] != after[cid]}
    checks = [after[c.id] if c.id in edited else c for c in tip.checks if c.id not in deleted]
    present = {c.id for c in checks}
    # Added checks, and edited ones main has since deleted (the merge brings them back).
    checks += [c for c in head.checks if (c.id not in before or c.id in edited) and c.id not in present]
    keys = {name: getattr(head, name) for name in Rubric.model_fields
            if name != "checks" and getattr(head, name) != getattr(merge_base, name)}
    return tip.model_copy(update={**keys, "checks": checks})


def check_conflicts(merge_base: Rubric, head: Rubric, tip: Rubric) -> list[str]:
    """Check ids the PR and main have each changed since the merge base, in different ways: an id
    both added with other texts, or a check both edited differently. Applying the PR's changes
    would keep one version silently (the file git merges may even hold the id twice), so each is
    reported for a rebase instead."""
    before = {c.id: c for c in merge_base.checks}
    on_tip = {c.id: c for c in tip.checks}
    out = []
    for check in head.checks:
        theirs, ours_before = on_tip.get(check.id), before.get(check.id)
        if theirs is None or theirs == check:
            continue
        if ours_before is None:
            out.append(f"check `{check.id}` is added by this PR and, with other text, by the base branch since")
        elif ours_before != check and ours_before != theirs:
            out.append(f"check `{check.id}` is edited by this PR and, differently, by the base branch since")
    return out


def landing_differences(reviewed: Rubric, merged: Rubric) -> list[str]:
    """How the rubric a merge writes differs from the one the gate reviewed, one phrase each
    (empty: the same rubric). Checks are compared by id, in any order (a reorder is allowed);
    every other key as it is."""
    before = {c.id: c for c in reviewed.checks}
    after = {c.id: c for c in merged.checks}
    out = [f"drops check `{cid}`" for cid in before if cid not in after]
    out += [f"adds check `{cid}`" for cid in after if cid not in before]
    out += [f"changes check `{cid}`" for cid in before if cid in after and before[cid] != after[cid]]
    if len(merged.checks) != len(after):
        out.append("holds a check id twice")
    out += [f"changes `{name}`" for name in Rubric.model_fields
            if name != "checks" and getattr(reviewed, name) != getattr(merged, name)]
    return out
