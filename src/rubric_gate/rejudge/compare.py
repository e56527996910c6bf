"""A judge change measured on the calibration set: the same rubric's verdicts from the old and the
new judge, compared check by check and rate by rate, and rule J applied.

Everything here is computed from the two lookups' verdict columns with the existing statistics
(`attribution.attribute`, `reliability`'s kappa and bootstrap, `comparison.compare_paired`);
nothing is estimated a second way.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from rubric_gate.attribution import attribute, compute_rates, failure_counts, rubric_fails
from rubric_gate.comparison import PairedComparison, compare_paired
from rubric_gate.gate import JUDGE_CHANGE_ALPHA, GateOptions, judge_rule, run_gate
from rubric_gate.reliability import Estimate, bootstrap_interval, cohen_kappa
from rubric_gate.reliability.agreement import kappa_from_counts
from rubric_gate.results import CheckAgreement, DecisionPair, Flips, JudgeChange, UnderJudge
from rubric_gate.rubric import RubricDocument
from rubric_gate.scoring import VerdictLookup


def _ids(lookup: VerdictLookup, mask: np.ndarray) -> tuple[str, ...]:
    return tuple(lookup.item_ids[i] for i in np.flatnonzero(mask))


def kappa_estimate(old: np.ndarray, new: np.ndarray) -> Estimate:
    """Cohen's kappa of two answer vectors with its seeded bootstrap 95% interval (the one
    `reliability` gives every agreement figure); undefined when both are constant on one value."""
    value = cohen_kappa(old, new)
    return Estimate(value, bootstrap_interval(kappa_from_counts, old, new) if value is not None else None)


def rate_comparisons(flawed: np.ndarray, old_fails: np.ndarray, new_fails: np.ndarray) -> list[PairedComparison]:
    """Both rates, old judge -> new judge, paired on the same items (exact McNemar, Newcombe interval)."""
    return [compare_paired(~old_fails[~flawed], ~new_fails[~flawed], source="old judge", target="new judge",
                           rate="correct_passed"),
            compare_paired(old_fails[flawed], new_fails[flawed], source="old judge", target="new judge",
                           rate="flawed_caught")]


def lost_unique_catches(old_failed: np.ndarray, new_failed: np.ndarray, flawed: np.ndarray,
                        max_failures: int) -> np.ndarray:
    """(items, checks): True where check j was pivotal for flawed item i under the old judge (the
    only check failing it; one of exactly k + 1 under max_failures k) and the rubric does not
    catch i under the new judge. A catch that moved to or is now shared with another check is
    not lost: the rubric still catches the item."""
    pivotal = old_failed & (flawed & (failure_counts(old_failed) == max_failures + 1))[:, None]
    missed = flawed & ~rubric_fails(new_failed, max_failures)
    return np.asarray(pivotal & missed[:, None])


def lost_shared_catches(old_failed: np.ndarray, new_failed: np.ndarray, flawed: np.ndarray,
                        max_failures: int) -> np.ndarray:
    """(items,): True for a flawed item the rubric caught under the old judge with more checks
    than it takes (no one of them pivotal) and does not catch under the new one. Every check that
    caught it flipped: as much a loss as a unique catch lost, which a rubric with redundant
    checks would otherwise never report (a judge answering yes to everything loses them all)."""
    shared = flawed & (failure_counts(old_failed) > max_failures + 1)
    return np.asarray(shared & ~rubric_fails(new_failed, max_failures))


def compare_judges(base: RubricDocument, head: RubricDocument, old: VerdictLookup, new: VerdictLookup, *,
                   old_judges: tuple[str, ...], new_judges: tuple[str, ...], options: GateOptions | None = None,
                   alpha: float = JUDGE_CHANGE_ALPHA) -> JudgeChange:
    """The judge change on `base` (the rubric as it stands: the edit is held fixed), and the
    gate's decisions on `base` -> `head` with each judge's verdicts. Both lookups read the same
    calibration items; each must hold a verdict for every pair of both rubrics."""
    rubric = base.rubric
    flawed = np.asarray(old.calibration.flawed, dtype=bool)
    k = rubric.max_failures
    old.require_verdicts(base, head)
    new.require_verdicts(base, head)
    old_failed, new_failed = old.failed_matrix(rubric), new.failed_matrix(rubric)
    old_attr, new_attr = attribute(old_failed, flawed, k), attribute(new_failed, flawed, k)
    lost = lost_unique_catches(old_failed, new_failed, flawed, k)
    checks = []
    for j, check in enumerate(rubric.checks):
        a, b = old_failed[:, j], new_failed[:, j]
        figures = []
        for lookup, attr, failed in ((old, old_attr, a), (new, new_attr, b)):
            figures.append(UnderJudge(float(attr.credit[j]), float(attr.blame[j]), int(attr.unique_catches[j]),
                                      int((failed & ~flawed).sum()), int((failed & flawed).sum()),
                                      lookup.column(check.text).not_applicable_count))
        flips = Flips(_ids(old, ~a & b & ~flawed), _ids(old, ~a & b & flawed),
                      _ids(old, a & ~b & ~flawed), _ids(old, a & ~b & flawed))
        checks.append(CheckAgreement(
            id=check.id, text=check.text,
            agreement=float((a == b).mean()) if len(a) else None,
            kappa=kappa_estimate(a, b), flips=flips, old=figures[0], new=figures[1],
            lost_catches=_ids(old, lost[:, j]),
            blame_added=figures[0].blame == 0 and figures[1].blame > 0,
        ))
    old_fails, new_fails = rubric_fails(old_failed, k), rubric_fails(new_failed, k)
    comparisons = rate_comparisons(flawed, old_fails, new_fails)
    unplanned = old.calibration.unplanned
    change = JudgeChange(
        old_judges=old_judges, new_judges=new_judges, rubric=base.display, version=rubric.version,
        items=len(flawed), max_failures=k, checks=checks,
        old_rates=compute_rates(old_failed, flawed, unplanned, k), new_rates=compute_rates(new_failed, flawed, unplanned, k),
        comparisons=comparisons, decisions=decisions_under_both(base, head, old, new, options), alpha=alpha,
        lost_shared=_ids(old, lost_shared_catches(old_failed, new_failed, flawed, k)),
    )
    change.violations = judge_rule({c.id: c.lost_catches for c in checks if c.lost_catches},
                                   {c.id: c.new.blame for c in checks if c.blame_added}, comparisons, alpha,
                                   lost_shared=change.lost_shared,
                                   rejected_by_new=[(d.check, d.change) for d in change.decisions if d.old and not d.new])
    return change


def decisions_under_both(base: RubricDocument, head: RubricDocument, old: VerdictLookup, new: VerdictLookup,
                         options: GateOptions | None) -> list[DecisionPair]:
    """The gate on `base` -> `head` once with each judge's verdicts, change by change. Rule U
    reads a panel's own stability, which is not a judge's verdict: it is left out of both."""
    options = replace(options or GateOptions(), min_stability=None, stability=None)
    flawed = old.calibration.flawed
    under_old = run_gate(base.rubric, head.rubric, old.item_ids, flawed, old.failed_column, options)
    under_new = run_gate(base.rubric, head.rubric, new.item_ids, flawed, new.failed_column, options)
    by_new = {(d.change.check_id, d.change.kind): d.accepted for d in under_new.decisions}
    return [DecisionPair(d.change.check_id, d.change.kind, d.accepted, by_new[(d.change.check_id, d.change.kind)])
            for d in under_old.decisions]
