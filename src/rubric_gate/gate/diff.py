"""Diff two rubric versions by check id."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rubric_gate.rubric.model import Check, Rubric

ChangeKind = Literal["added", "deleted", "modified", "aggregation"]
AGGREGATION = "(aggregation)"  # the check id reported for a change of aggregation


@dataclass(frozen=True)
class Change:
    check_id: str
    kind: ChangeKind
    base: Check | None
    head: Check | None
    edited: tuple[str, ...] = ()  # for "modified": which of text, origin, frozen, source changed
    detail: str = ""  # for "aggregation": old -> new

    @property
    def reworded(self) -> bool:
        return "text" in self.edited


def diff_rubrics(base: Rubric, head: Rubric) -> list[Change]:
    """Changes in the order the gate applies them: additions, modifications, deletions, then
    a change of aggregation.

    Additions go first so a PR that replaces a check by a new one is judged with the new one
    present; within a kind, head order (base order for deletions) keeps it deterministic.
    """
    base_checks = {c.id: c for c in base.checks}
    head_checks = {c.id: c for c in head.checks}
    added = [Change(c.id, "added", None, c) for c in head.checks if c.id not in base_checks]
    modified = []
    for check in head.checks:
        old = base_checks.get(check.id)
        if old is None:
            continue
        edited = tuple(
            name
            for name, changed in (
                ("text", old.normalized_text != check.normalized_text),
                ("origin", old.origin != check.origin),
                ("frozen", old.is_frozen != check.is_frozen),
                ("source", old.source != check.source),
            )
            if changed
        )
        if edited:
            modified.append(Change(check.id, "modified", old, check, edited))
    deleted = [Change(c.id, "deleted", c, None) for c in base.checks if c.id not in head_checks]
    changes = [*added, *modified, *deleted]
    if base.aggregation != head.aggregation:
        # Last: the new rule is judged on the checks the gate kept.
        changes.append(Change(AGGREGATION, "aggregation", None, None,
                              detail=f"{describe_aggregation(base)} -> {describe_aggregation(head)}"))
    return changes


def describe_aggregation(rubric: Rubric) -> str:
    k = rubric.max_failures
    return "all-pass" if rubric.aggregation == "all-pass" else f"max_failures {k}"
