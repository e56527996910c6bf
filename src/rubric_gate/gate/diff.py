"""Diff two rubric versions by check id."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from rubric_gate.rubric.model import Check, Rubric

ChangeKind = Literal["added", "deleted", "modified", "renamed", "aggregation"]
AGGREGATION = "(aggregation)"  # the check id reported for a change of aggregation


@dataclass(frozen=True)
class Change:
    check_id: str
    kind: ChangeKind
    base: Check | None
    head: Check | None
    edited: tuple[str, ...] = ()  # for "modified": which of text, origin, frozen, source changed
    detail: str = ""  # for "aggregation" and "renamed": old -> new

    @property
    def reworded(self) -> bool:
        return "text" in self.edited


def _identity(check: Check) -> tuple[object, ...]:
    """Everything but the id: two checks alike in all of it are the same check."""
    return (check.normalized_text, check.origin, check.is_frozen, json.dumps(check.source, sort_keys=True, default=str))


def pure_renames(base: Rubric, head: Rubric) -> dict[str, str]:
    """Base id -> head id for checks whose id alone changed (text, origin, frozen, source equal).

    Pairs are taken in id order (head ids, then base ids), never file order; a base check
    matches at most one head check.
    """
    base_ids = {c.id for c in base.checks}
    head_ids = {c.id for c in head.checks}
    gone: dict[tuple[object, ...], list[Check]] = {}
    for check in sorted(base.checks, key=lambda c: c.id):
        if check.id not in head_ids:
            gone.setdefault(_identity(check), []).append(check)
    renames: dict[str, str] = {}
    for check in sorted(head.checks, key=lambda c: c.id):
        candidates = gone.get(_identity(check)) if check.id not in base_ids else None
        if candidates:
            renames[candidates.pop(0).id] = check.id
    return renames


def diff_rubrics(base: Rubric, head: Rubric) -> list[Change]:
    """Changes grouped in the order the gate applies them: renames, additions, modifications,
    deletions, then a change of aggregation.

    A pure id rename is not an addition plus a deletion: nothing about the check changed.
    Additions go first so a PR that replaces a check by a new one is judged with the new one
    present. Within a kind this lists head order (base order for deletions); the gate then
    sorts each kind canonically (`gate.run.decision_order`), so file order never decides.
    """
    renames = pure_renames(base, head)
    renamed_to = set(renames.values())
    base_by_id = {c.id: c for c in base.checks}
    head_by_id = {c.id: c for c in head.checks}
    renamed = [Change(new, "renamed", base_by_id[old], head_by_id[new], detail=f"{old} -> {new}")
               for old, new in renames.items()]
    base_checks = {c.id: c for c in base.checks}
    head_checks = {c.id: c for c in head.checks}
    added = [Change(c.id, "added", None, c) for c in head.checks
             if c.id not in base_checks and c.id not in renamed_to]
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
    deleted = [Change(c.id, "deleted", c, None) for c in base.checks
               if c.id not in head_checks and c.id not in renames]
    changes = [*renamed, *added, *modified, *deleted]
    if base.aggregation != head.aggregation:
        # Last: the new rule is judged on the checks the gate kept.
        changes.append(Change(AGGREGATION, "aggregation", None, None,
                              detail=f"{describe_aggregation(base)} -> {describe_aggregation(head)}"))
    return changes


def describe_aggregation(rubric: Rubric) -> str:
    k = rubric.max_failures
    return "all-pass" if rubric.aggregation == "all-pass" else f"max_failures {k}"
