"""What deleting a whole rubric would lose: its frozen checks and its unique catches."""

from __future__ import annotations

from rubric_gate.report.model import RubricSummary
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
    return reasons
