"""What deleting a whole rubric would lose: its frozen checks and its catches."""

from __future__ import annotations

from rubric_gate.results import RubricSummary
from rubric_gate.rubric import Rubric


def deletion_losses(rubric: Rubric, summary: RubricSummary | None) -> list[str]:
    """Reasons the deletion must not pass without an override (empty when nothing is lost).

    `summary` is the rubric scored on its calibration set; None when it could not be scored,
    in which case only the frozen checks (read from the YAML) count.
    """
    reasons = []
    frozen = [c.id for c in rubric.checks if c.is_frozen]
    if frozen:
        reasons.append(f"it holds {len(frozen)} frozen check(s) derived from labels ({', '.join(frozen[:10])})")
    if summary is not None:
        unique = [(r.id, r.unique_catches) for r in summary.checks if r.unique_catches]
        if unique:
            total = sum(n for _, n in unique)
            reasons.append(f"its checks hold {total} unique catch(es) no other check makes ("
                           + ", ".join(f"{cid}: {n}" for cid, n in unique[:10]) + ")")
        caught = summary.rates.flawed_caught
        if caught.count and not unique:
            # Checks that overlap hold no unique catch, yet the rubric's catches all go with it
            # (deleted one check at a time, the last one would be refused).
            reasons.append(f"its checks together catch {caught.count} of {caught.total} flawed items, "
                           "and every one of those catches goes with the rubric")
    return reasons
