"""Apply a rubric diff one change at a time, recomputing after each accepted change."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from rubric_gate.attribution import attribute
from rubric_gate.gate.diff import Change, diff_rubrics
from rubric_gate.gate.facts import DecidedFigures, Trade, accepted_reason, decided_figures, trade
from rubric_gate.gate.rules import (
    RuleContext,
    Violation,
    attribution_rule,
    nonempty_rule,
    provenance_rule,
    rates_rule,
    stability_rule,
)
from rubric_gate.rubric.model import Check, Rubric

# Maps a check's text to its failed-vector over the calibration items.
ColumnLookup = Callable[[str], np.ndarray]


GATES = ("S", "P", "R")  # the rules `--gates` combines; U and A are on with their own options
DEFAULT_GATES = frozenset({"S", "P"})


def parse_gates(spec: str) -> frozenset[str]:
    """'S+P', 'R', 'r+s+p' ... -> the set of letters. Raises ValueError naming a bad letter."""
    letters = [part.strip().upper() for part in spec.split("+")]
    allowed = (*GATES, "U", "A")
    bad = [part for part in letters if part not in allowed]
    if bad or not letters:
        raise ValueError(f"unknown gate {bad[0]!r} in {spec!r}: combine S, P, R (and U, A) with '+', e.g. S+P"
                         if bad else "no gate given")
    return frozenset(letters)


@dataclass(frozen=True)
class GateOptions:
    # Which of the paper's gates decide: S (attribution), P (provenance), R (rates).
    gates: frozenset[str] = DEFAULT_GATES
    rates_rule: bool = False  # rule R on top of `gates` (the `--rates-rule` flag)
    # More rules applied to every change after S, P and R (e.g. the audit rule A).
    extra_rules: tuple[Callable[[RuleContext], Violation | None], ...] = ()
    # rule U (opt-in): reject an added or reworded check whose stability (check text -> share
    # in [0, 1], None if unmeasured) is below `min_stability`
    min_stability: float | None = None
    stability: Callable[[str], float | None] | None = None
    # Fail the run when the head as proposed passes fewer correct calibration items than the
    # base and the exact McNemar p-value of that drop is below this level (off when None).
    reject_correct_drop_at: float | None = None


@dataclass(frozen=True)
class Decision:
    change: Change
    violations: tuple[Violation, ...] = ()
    # What it was decided on, for the report: figures and trade, not the matrices (at 100k items
    # x 64 checks two matrices per decision held 250 MiB over 20 changes).
    decided: DecidedFigures | None = field(default=None, compare=False, repr=False)
    trade: Trade | None = field(default=None, compare=False, repr=False)  # a rejected change's
    max_failures: int = field(default=0, compare=False, repr=False)  # the aggregation it was decided under

    @property
    def accepted(self) -> bool:
        return not self.violations

    @property
    def reason(self) -> str:
        """Why, in the words every report uses: an accepted change's deciding figure, or each
        rule's reason (each names its rule in words)."""
        if self.accepted:
            return accepted_reason(self.change.kind, self.decided, self.max_failures)
        return "; ".join(v.reason for v in self.violations)


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
    """Read-only: one matrix is shared by the decisions taken on the same state. Built as rows
    and transposed (a third of `column_stack`'s CPU)."""
    matrix = (np.zeros((n_items, 0), dtype=bool) if not checks else
              np.ascontiguousarray(np.array([column(c.text) for c in checks], dtype=bool).T))
    matrix.setflags(write=False)
    return matrix


def _apply(state: list[Check], change: Change) -> list[Check]:
    if change.kind == "deleted":
        return [c for c in state if c.id != change.check_id]
    if change.kind == "aggregation":
        return state
    head = change.head
    assert head is not None  # added, renamed and modified checks are in the head rubric
    if change.kind == "added":
        return [*state, head]
    old_id = change.check_id
    if change.kind == "renamed":
        assert change.base is not None
        old_id = change.base.id
    return [head if c.id == old_id else c for c in state]


def decision_order(
    changes: Sequence[Change], base: Rubric, head: Rubric, flawed: np.ndarray, column: ColumnLookup,
    base_matrix: np.ndarray | None = None,
) -> list[Change]:
    """The changes in the canonical order the gate decides them, whatever the files' order.

    Kinds go renames, additions, modifications, deletions, aggregation. Within a kind:
    - additions by decreasing credit, then increasing blame, in the head as proposed (the
      most useful new check is decided first and a redundant or blamed one after it);
    - deletions by decreasing blame, then increasing credit, in the base (the most harmful
      check goes first, so of two redundant checks the one with blame is the one deleted);
    - ties, renames and modifications by check id.
    Both rankings use the base's aggregation, under which check edits are judged.
    `base_matrix`: the base's failure matrix when the caller has built it.
    """
    k = base.max_failures
    n_items = len(flawed)

    def ranking(rubric: Rubric, matrix: np.ndarray | None = None) -> dict[str, tuple[float, float]]:
        if not rubric.checks:
            return {}
        result = attribute(_matrix(rubric.checks, column, n_items) if matrix is None else matrix, flawed, k)
        # rounded so that float noise in 1/|F| sums never breaks a tie the ids should break
        return {c.id: (round(float(result.credit[j]), 9), round(float(result.blame[j]), 9))
                for j, c in enumerate(rubric.checks)}

    by_kind: dict[str, list[Change]] = {}
    for change in changes:
        by_kind.setdefault(change.kind, []).append(change)
    head_rank = ranking(head) if by_kind.get("added") else {}
    base_rank = ranking(base, base_matrix) if by_kind.get("deleted") else {}
    ordered = sorted(by_kind.get("renamed", []), key=lambda c: c.check_id)
    ordered += sorted(by_kind.get("added", []),
                      key=lambda c: (-head_rank[c.check_id][0], head_rank[c.check_id][1], c.check_id))
    ordered += sorted(by_kind.get("modified", []), key=lambda c: c.check_id)
    ordered += sorted(by_kind.get("deleted", []),
                      key=lambda c: (-base_rank[c.check_id][1], base_rank[c.check_id][0], c.check_id))
    return ordered + by_kind.get("aggregation", [])


def run_gate(
    base: Rubric,
    head: Rubric,
    item_ids: Sequence[str],
    flawed: np.ndarray,
    column: ColumnLookup,
    options: GateOptions = GateOptions(),
    *,
    figures: ColumnLookup | None = None,
) -> GateResult:
    """Decide each change of `head` against `base` on the calibration items.

    Attribution is recomputed after every accepted change, so two redundant checks can each be
    deletable alone but not both; `decision_order` fixes the order, so the outcome does not
    depend on where checks sit in either file. Check edits are judged under the base's
    aggregation; a new aggregation is judged last, on the checks the gate kept.
    Decisions are listed in the order they were decided.

    `figures` given: the rules read `column` (e.g. trusted evidence only) while each decision's
    figures and trade are read from `figures` (every record as recorded) in the same state, so
    what the report shows is what the records say, and what it decides is what evidence allows.
    """
    flawed = np.asarray(flawed, dtype=bool)
    k = base.max_failures
    state = list(base.checks)
    aggregation = base.aggregation
    decisions: list[Decision] = []
    ids = tuple(item_ids)
    current = _matrix(state, column, len(ids))  # the state's matrix, shared until a change is accepted
    shown = current if figures is None else _matrix(state, figures, len(ids))  # what its figures read
    current_counts: np.ndarray | None = None  # the rules' matrix's |F| per item, once a decision computed it
    for change in decision_order(diff_rubrics(base, head), base, head, flawed, figures or column, base_matrix=shown):
        after = _apply(state, change)
        after_matrix = current if change.kind == "aggregation" else _matrix(after, column, len(ids))
        ctx = _context(change, ids, flawed, state, after, current, after_matrix, k, head, before_counts=current_counts)
        rules = [nonempty_rule, *_gate_rules(options)]
        rules += options.extra_rules
        if options.min_stability is not None and options.stability is not None:
            rules.append(partial(stability_rule, threshold=options.min_stability, stability=options.stability))
        violations = tuple(v for v in (rule(ctx) for rule in rules) if v is not None)
        shown_after = after_matrix if figures is None else \
            shown if change.kind == "aggregation" else _matrix(after, figures, len(ids))
        seen = ctx if figures is None else _context(change, ids, flawed, state, after, shown, shown_after, k, head)
        decisions.append(Decision(change, violations, decided_figures(seen), trade(seen) if violations else None, k))
        if not violations:
            state, current, shown, current_counts = after, after_matrix, shown_after, ctx.counts_after
            if change.kind == "aggregation":
                aggregation = head.aggregation
        else:
            current_counts = ctx.counts_before
    return GateResult(decisions, gated_rubric(base, head, state, aggregation), state)


def _context(change: Change, ids: tuple[str, ...], flawed: np.ndarray, state: list[Check], after: list[Check],
             before_matrix: np.ndarray, after_matrix: np.ndarray, k: int, head: Rubric, *,
             before_counts: np.ndarray | None = None) -> RuleContext:
    return RuleContext(
        change=change,
        item_ids=ids,
        flawed=flawed,
        before=before_matrix,
        after=after_matrix,
        before_ids=tuple(c.id for c in state),
        after_ids=tuple(c.id for c in after),
        max_failures=k,
        max_failures_after=head.max_failures if change.kind == "aggregation" else None,
        before_counts=before_counts,
    )


def _gate_rules(options: GateOptions) -> list[Callable[[RuleContext], Violation | None]]:
    gates = options.gates | ({"R"} if options.rates_rule else set())
    return [rule for letter, rule in (("P", provenance_rule), ("S", attribution_rule), ("R", rates_rule))
            if letter in gates]


def gated_rubric(base: Rubric, head: Rubric, state: list[Check], aggregation: object) -> Rubric:
    """`head` with the checks of `state` (the accepted changes applied to `base`) in head's layout;
    a check only `state` has (a rejected deletion) goes back after its neighbour in `base`."""
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
