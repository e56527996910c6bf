"""`--judge` (repeatable) and `--samples` shared by `judge` and `check`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from rubric_gate.judges import JudgeRunStats


def _odd(ctx: click.Context, param: click.Parameter, value: int) -> int:
    if value < 1 or value % 2 == 0:
        raise click.BadParameter(f"must be an odd number >= 1 (a majority always exists), got {value}")
    return value


samples_option = click.option(
    "--samples", type=int, default=1, show_default=True, callback=_odd,
    help="Ask each (check, item) pair N times (odd); the gate uses the majority answer.")


def unique_judges(judges: Sequence[str]) -> list[str]:
    """`--judge a --judge a,b` -> [a, b]: repeats and comma lists both work (the action passes a list)."""
    out: list[str] = []
    for value in judges:
        for spec in value.split(","):
            spec = spec.strip()
            if spec and spec not in out:
                out.append(spec)
    return out


def combined_stats(runs: Sequence[JudgeRunStats]) -> dict[str, Any]:
    """One judge: its statistics as before. Several: totals, each run, and one summary line."""
    if len(runs) == 1:
        return runs[0].to_dict()
    per_judge = [run.to_dict() for run in runs]
    costs = [run.cost_usd for run in runs]
    return {
        "judges": per_judge,
        "calls": sum(run.calls for run in runs),
        "reused": sum(run.reused for run in runs),
        "failed": sum(run.failed for run in runs),
        "input_tokens": sum(run.input_tokens for run in runs),
        "output_tokens": sum(run.output_tokens for run in runs),
        "cost_usd": None if any(c is None for c in costs) else round(sum(costs), 6),  # type: ignore[arg-type]
        "summary": _summary(runs, costs),
    }


def _summary(runs: Sequence[JudgeRunStats], costs: list[float | None]) -> str:
    cost = "cost unknown" if any(c is None for c in costs) else f"~${sum(costs):.4f}"  # type: ignore[misc]
    text = (f"{len(runs)} judges ({', '.join(run.judge for run in runs)}): {sum(r.calls for r in runs)} calls, "
            f"{sum(r.reused for r in runs)} verdicts reused, {sum(r.input_tokens for r in runs)} tokens in / "
            f"{sum(r.output_tokens for r in runs)} out, {cost}")
    failed = sum(r.failed for r in runs)
    return text + (f", {failed} pairs without a valid answer" if failed else "")
