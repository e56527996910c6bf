"""The gate's rules, each a pure function of the rubric state before and after one change.

S (attribution): never delete a check holding a unique catch, never add one with blame,
  never reword a check so a catch is lost or a correct item newly fails.
P (provenance): a frozen check is never deleted, reworded or unfrozen.
R (rates, opt-in): no change may lower either calibration rate.
U (stability, opt-in): an added or reworded check must answer the same under paraphrase and
  repeated sampling at least a given share of the time.
J (judge change): when the judge a rubric is graded by changes, the new judge may not lose a
  unique catch (a flawed item one check alone caught under the old judge that the rubric no
  longer catches) or a shared one (a flawed item several checks caught that none catches now),
  add blame to a check that had none, reject an edit of the same PR the old judge accepts (the
  rubric lands graded by the new one), or lower either rate with an exact McNemar p below the
  level (`judge_rule`; the figures come from `rubric_gate.rejudge`).
Whatever gates are chosen, the last check is never deleted (`nonempty_rule`, reported as S):
the gated rubric must stay a rubric.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from rubric_gate.attribution import Attribution, attribute, failure_counts
from rubric_gate.comparison import PairedComparison
from rubric_gate.gate.diff import Change


@dataclass(frozen=True)
class RuleContext:
    """Everything a rule may look at: the failure matrices before and after the change, and
    what is derived from them (computed once, on first use, whichever rules ask)."""

    change: Change
    item_ids: tuple[str, ...]
    flawed: np.ndarray
    before: np.ndarray  # items x checks of the current state
    after: np.ndarray  # items x checks with the change applied
    before_ids: tuple[str, ...]
    after_ids: tuple[str, ...]
    max_failures: int
    max_failures_after: int | None = None  # differs from max_failures only for an aggregation change
    # `failure_counts(before)` when the caller has it (decisions on one state share its matrix)
    before_counts: np.ndarray | None = field(default=None, compare=False, repr=False)

    @property
    def k_after(self) -> int:
        return self.max_failures if self.max_failures_after is None else self.max_failures_after

    @cached_property
    def counts_before(self) -> np.ndarray:
        """|F| per item in the state before the change."""
        return failure_counts(self.before) if self.before_counts is None else self.before_counts

    @cached_property
    def counts_after(self) -> np.ndarray:
        """|F| per item with the change applied."""
        return self.counts_before if self.after is self.before else failure_counts(self.after)

    @property
    def fails_before(self) -> np.ndarray:
        """Per item: the rubric fails it before the change (under `max_failures`)."""
        return self.counts_before > self.max_failures

    @property
    def fails_after(self) -> np.ndarray:
        """Per item: the rubric fails it with the change applied (under `k_after`)."""
        return self.counts_after > self.k_after

    @cached_property
    def attribution_before(self) -> Attribution:
        return attribute(self.before, self.flawed, self.max_failures, counts=self.counts_before)

    @cached_property
    def attribution_after(self) -> Attribution:
        """Under `max_failures`: check edits are judged under the base's aggregation."""
        return attribute(self.after, self.flawed, self.max_failures, counts=self.counts_after)

    def items(self, mask: np.ndarray, limit: int = 5) -> str:
        ids = [self.item_ids[i] for i in np.flatnonzero(mask)]
        shown = ", ".join(ids[:limit])
        return shown + (f", +{len(ids) - limit} more" if len(ids) > limit else "")


@dataclass(frozen=True)
class Violation:
    rule: str  # "S", "P", "R", "U", "A" or "J"
    reason: str


def provenance_rule(ctx: RuleContext) -> Violation | None:
    change = ctx.change
    if change.base is None or not change.base.is_frozen or change.kind == "renamed":
        return None
    origin = change.base.origin.value
    frozen = "frozen: derived from labels" if origin == "label" else f"frozen (origin: {origin})"
    if change.kind == "deleted":
        return Violation("P", f"{frozen}, so it cannot be deleted")
    if change.reworded:
        return Violation("P", f"{frozen}, so it cannot be reworded")
    if change.head is not None and not change.head.is_frozen:
        return Violation("P", f"{frozen}, so it cannot be unfrozen")
    return None


def aggregation_rule(ctx: RuleContext) -> Violation | None:
    """A new aggregation may neither let a caught flawed item pass nor fail a passing correct one."""
    fails_before, fails_after = ctx.fails_before, ctx.fails_after
    lost = ctx.flawed & fails_before & ~fails_after
    newly_failed = ~ctx.flawed & ~fails_before & fails_after
    reasons = []
    if lost.any():
        reasons.append(f"{ctx.change.detail} stops catching {ctx.items(lost)}")
    if newly_failed.any():
        reasons.append(f"{ctx.change.detail} newly fails correct items {ctx.items(newly_failed)}")
    return Violation("S", "; ".join(reasons)) if reasons else None


def nonempty_rule(ctx: RuleContext) -> Violation | None:
    """Always on: reached when every addition was rejected and every deletion allowed."""
    if ctx.change.kind == "deleted" and not ctx.after_ids:
        return Violation("S", "would leave no check: a rubric needs at least one")
    return None


def deletion_rule(ctx: RuleContext) -> Violation | None:
    if not ctx.after_ids:
        return None  # nonempty_rule's case
    column = ctx.before_ids.index(ctx.change.check_id)
    unique = ctx.attribution_before.unique_catches[column]
    if not unique:
        return None
    pivotal = ctx.flawed & ctx.before[:, column] & (ctx.counts_before == ctx.max_failures + 1)
    plural = "s" if unique != 1 else ""
    if ctx.max_failures == 0:
        return Violation("S", f"would lose a unique catch: it alone catches {unique} flawed item{plural} "
                              f"({ctx.items(pivotal)})")
    # Under max_failures k the catch is shared by k + 1 checks, each of them pivotal for it.
    return Violation("S", f"would lose a pivotal catch: {unique} flawed item{plural} failed by exactly "
                          f"{ctx.max_failures + 1} checks, this one included ({ctx.items(pivotal)})")


def addition_rule(ctx: RuleContext) -> Violation | None:
    column = ctx.after_ids.index(ctx.change.check_id)
    blame = ctx.attribution_after.blame[column]
    if blame <= 0:
        return None
    failed_correct = ~ctx.flawed & ctx.after[:, column]
    n = int(failed_correct.sum())
    return Violation(
        "S", f"would add blame {blame:.2f}: it answers no on {n} correct item{'s' if n != 1 else ''} "
             f"({ctx.items(failed_correct)})"
    )


def rewording_rule(ctx: RuleContext) -> Violation | None:
    old = ctx.before[:, ctx.before_ids.index(ctx.change.check_id)]
    new = ctx.after[:, ctx.after_ids.index(ctx.change.check_id)]
    caught_before = ctx.counts_before > ctx.max_failures
    caught_after = ctx.counts_after > ctx.max_failures
    lost = ctx.flawed & old & caught_before & ~caught_after
    newly_failed = ~ctx.flawed & new & ~old
    reasons = []
    if lost.any():
        reasons.append(f"rewording would lose catches of {ctx.items(lost)}")
    if newly_failed.any():
        reasons.append(f"the new text would fail correct items the old text passed ({ctx.items(newly_failed)})")
    return Violation("S", "; ".join(reasons)) if reasons else None


def attribution_rule(ctx: RuleContext) -> Violation | None:
    """Rule S, by kind of change."""
    kind = ctx.change.kind
    if kind == "renamed":
        return None  # the same check under a new id: nothing to judge
    if kind == "aggregation":
        return aggregation_rule(ctx)
    if kind == "deleted":
        return deletion_rule(ctx)
    if kind == "added":
        return addition_rule(ctx)
    return rewording_rule(ctx) if ctx.change.reworded else None


def rates_rule(ctx: RuleContext) -> Violation | None:
    fails_before, fails_after = ctx.fails_before, ctx.fails_after
    correct = ~ctx.flawed
    passed_before, passed_after = int((correct & ~fails_before).sum()), int((correct & ~fails_after).sum())
    caught_before, caught_after = int((ctx.flawed & fails_before).sum()), int((ctx.flawed & fails_after).sum())
    reasons = []
    if passed_after < passed_before:
        reasons.append(f"would lower a rate: correct passed drops {passed_before} -> {passed_after} of {int(correct.sum())}")
    if caught_after < caught_before:
        reasons.append(f"would lower a rate: flawed caught drops {caught_before} -> {caught_after} of {int(ctx.flawed.sum())}")
    return Violation("R", "; ".join(reasons)) if reasons else None


def stability_rule(ctx: RuleContext, *, threshold: float, stability: Callable[[str], float | None]) -> Violation | None:
    change = ctx.change
    if change.head is None or not (change.kind == "added" or change.reworded):
        return None
    value = stability(change.head.text)
    if value is None or value >= threshold:
        return None
    return Violation("U", f"stability {value:.2f} is below --min-stability {threshold:.2f} "
                          "(the lower of the mean paraphrase kappa and 1 - flip rate)")


JUDGE_CHANGE_ALPHA = 0.05  # rule J's default level for a paired drop in a rate
RATE_NAMES = {"correct_passed": "correct passed", "flawed_caught": "flawed caught"}


def _listed(items: Sequence[str]) -> str:
    return ", ".join(items[:5]) + (f", +{len(items) - 5} more" if len(items) > 5 else "")


def judge_rule(lost_catches: Mapping[str, Sequence[str]], added_blame: Mapping[str, float],
               rates: Sequence[PairedComparison], alpha: float = JUDGE_CHANGE_ALPHA, *,
               lost_shared: Sequence[str] = (), rejected_by_new: Sequence[tuple[str, str]] = ()) -> list[Violation]:
    """Rule J on a judge change, one violation per finding (an empty list: the change passes).

    `lost_catches`: check id -> flawed items only it caught under the old judge (pivotal ones
    under max_failures k) that the rubric no longer catches under the new one; `lost_shared`:
    the flawed items the rubric caught under the old judge with more checks than that and no
    longer catches (a judge that answers yes to everything loses these where no catch was
    unique); `added_blame`: check id -> its blame under the new judge, for checks that had none
    under the old; `rejected_by_new`: (check id, change) of the PR's edits the gate accepts with
    the old judge's verdicts and rejects with the new judge's (the rubric lands graded by the
    new one, so the edit must hold under it); `rates`: each rate, old judge -> new judge, paired
    on the same items.
    """
    violations = []
    for check, items in lost_catches.items():
        if items:
            plural = "es" if len(items) != 1 else ""
            violations.append(Violation("J", f"{check}: the new judge loses {len(items)} unique catch{plural} "
                                             f"({_listed(items)}): the rubric no longer catches what only it caught"))
    if lost_shared:
        plural = "s" if len(lost_shared) != 1 else ""
        violations.append(Violation("J", f"the new judge no longer catches {len(lost_shared)} flawed item{plural} the "
                                         f"rubric caught with more than one check ({_listed(lost_shared)})"))
    for check, blame in added_blame.items():
        if blame > 0:
            violations.append(Violation("J", f"{check}: the new judge adds blame {blame:.2f} to a check that "
                                             "had none"))
    for check, kind in rejected_by_new:
        violations.append(Violation("J", f"{check} ({kind}): accepted with the old judge's verdicts but rejected with "
                                         "the new judge's, which the rubric is graded by once this merges"))
    for c in rates:
        if c.delta is not None and c.delta < 0 and c.p_value is not None and c.p_value < alpha:
            violations.append(Violation("J", f"the new judge lowers {RATE_NAMES.get(c.rate, c.rate)} "
                                             f"{c.from_count}/{c.total} -> {c.to_count}/{c.total} "
                                             f"(exact McNemar p = {c.p_value:.2g} < {alpha:g})"))
    return violations
