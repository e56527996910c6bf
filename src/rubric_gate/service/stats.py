"""Judging statistics of one run, one judge or a panel, as reports show them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rubric_gate.judges import JudgeRunStats


def combined_stats(runs: Sequence[JudgeRunStats]) -> dict[str, Any]:
    """One judge: its statistics as before. Several: totals, each run, and one summary line."""
    if len(runs) == 1:
        return runs[0].to_dict()
    per_judge = [run.to_dict() for run in runs]
    costs = _known_costs(runs)
    return {
        "judges": per_judge,
        "calls": sum(run.calls for run in runs),
        "reused": sum(run.reused for run in runs),
        "failed": sum(run.failed for run in runs),
        "input_tokens": sum(run.input_tokens for run in runs),
        "output_tokens": sum(run.output_tokens for run in runs),
        "cost_usd": None if costs is None else round(sum(costs), 6),
        "summary": _summary(runs, costs),
    }


def _known_costs(runs: Sequence[JudgeRunStats]) -> list[float] | None:
    """Each run's cost, or None when any run's cost is unknown (a partial sum would mislead)."""
    costs = [run.cost_usd for run in runs]
    return [c for c in costs if c is not None] if all(c is not None for c in costs) else None


def _summary(runs: Sequence[JudgeRunStats], costs: list[float] | None) -> str:
    cost = "cost unknown" if costs is None else f"~${sum(costs):.4f}"
    text = (f"{len(runs)} judges ({', '.join(run.judge for run in runs)}): {sum(r.calls for r in runs)} calls, "
            f"{sum(r.reused for r in runs)} verdicts reused, {sum(r.input_tokens for r in runs)} tokens in / "
            f"{sum(r.output_tokens for r in runs)} out, {cost}")
    failed = sum(r.failed for r in runs)
    return text + (f", {failed} pairs without a valid answer" if failed else "")
