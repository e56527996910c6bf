"""Apply a rubric diff one change at a time, recomputing after each accepted change."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from rubric_gate.gate.diff import Change, diff_rubrics
from rubric_gate.gate.rules import (
    RuleContext,
    Violation,
    attribution_rule,
    provenance_rule,
    rates_rule,
    stability_rule,
)
from rubric_gate.rubric.model import Check, Rubric

# Maps a check's text to its failed-vector over the calibration items.
ColumnLookup = Callable[[str], np.ndarray]


@dataclass(frozen=True)
class GateOptions:
    rates_rule: bool = False  # rule R: reject any change that lowers a calibration rate
    # More rules applied to every change after S, P and R (e.g. the audit rule A).
    extra_rules: tuple[Callable[[RuleContext], Violation | None], ...] = ()
    # rule U (opt-in): reject an added or reworded check whose stability (check text -> share
    # in [0, 1], None if unmeasured) is below `min_stability`
    min_stability: float | None = None
    stability: Callable[[str], float | None] | None = None


@dataclass(frozen=True)
class Decision:
    change: Change
    violations: tuple[Violation, ...] = ()
    context: RuleContext | None = field(default=None, compare=False, repr=False)  # what it was decided on

    @property
    def accepted(self) -> bool:
        return not self.violations

    @property
    def reason(self) -> str:
        if self.accepted:
            return "accepted"
        return "; ".join(v.reason for v in self.violations)  # each reason names its rule in words


@dataclass
class GateResult:
    decisions: list[Decision]
    gated: Rubric  # head with only the accepted changes applied
    checks_after: list[Check] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(d.accepted for d in self.decisions)

    @property
    def rejected(self) -> list[Decision]:
        return [d for d in self.decisions if not d.accepted]


def _matrix(checks: Sequence[Check], column: ColumnLookup, n_items: int) -> np.ndarray:
    if not checks:
        return np.zeros((n_items, 0), dtype=bool)
    return np.column_stack([column(c.text) for c in checks])


def _apply(state: list[Check], change: Change) -> list[Check]:
    if change.kind == "added":
        return [*state, change.head]  # type: ignore[list-item]
    if change.kind == "deleted":
        return [c for c in state if c.id != change.check_id]
    if change.kind == "aggregation":
        return state
    if change.kind == "renamed":
        old_id = change.base.id  # type: ignore[union-attr]
        return [change.head if c.id == old_id else c for c in state]  # type: ignore[misc]
    return [change.head if c.id == change.check_id else c for c in state]  # type: ignore[misc]


def run_gate(
    base: Rubric,
    head: Rubric,
    item_ids: Sequence[str],
    flawed: np.ndarray,
    column: ColumnLookup,
    options: GateOptions = GateOptions(),
) -> GateResult:
    """Decide each change of `head` against `base` on the calibration items.

    Attribution is recomputed after every accepted change, so two redundant checks can each be
    deletable alone but not both. Check edits are judged under the base's aggregation; a new
    aggregation is judged last, on the checks the gate kept.
    """
    flawed = np.asarray(flawed, dtype=bool)
    k = base.max_failures
    state = list(base.checks)
    aggregation = base.aggregation
    decisions: list[Decision] = []
    for change in diff_rubrics(base, head):
        after = _apply(state, change)
        ctx = RuleContext(
            change=change,
            item_ids=tuple(item_ids),
            flawed=flawed,
            before=_matrix(state, column, len(item_ids)),
            after=_matrix(after, column, len(item_ids)),
            before_ids=tuple(c.id for c in state),
            after_ids=tuple(c.id for c in after),
            max_failures=k,
            max_failures_after=head.max_failures if change.kind == "aggregation" else None,
        )
        rules = [provenance_rule, attribution_rule] + ([rates_rule] if options.rates_rule else [])
        rules += options.extra_rules
        if options.min_stability is not None and options.stability is not None:
            rules.append(partial(stability_rule, threshold=options.min_stability, stability=options.stability))
        violations = tuple(v for v in (rule(ctx) for rule in rules) if v is not None)
        decisions.append(Decision(change, violations, ctx))
        if not violations:
            state = after
            if change.kind == "aggregation":
                aggregation = head.aggregation
    return GateResult(decisions, _gated_rubric(base, head, state, aggregation), state)


def _gated_rubric(base: Rubric, head: Rubric, state: list[Check], aggregation: object) -> Rubric:
    """Head's layout with only accepted changes: kept deletions go back after their base neighbour."""
    kept = {c.id: c for c in state}
    ordered = [kept[c.id] for c in head.checks if c.id in kept]
    placed = {c.id for c in ordered}
    for index, check in enumerate(base.checks):
        if check.id in kept and check.id not in placed:
            preceding = [c.id for c in base.checks[:index] if c.id in placed]
            position = next((i + 1 for i, c in enumerate(ordered) if preceding and c.id == preceding[-1]), 0)
            ordered.insert(position, kept[check.id])
            placed.add(check.id)
    return head.model_copy(update={"checks": ordered, "aggregation": aggregation})
