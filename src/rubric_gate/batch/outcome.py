"""What a batch judging run did, and what it left processing at the provider."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rubric_gate.judges.stats import JudgeRunStats
from rubric_gate.llm.errors import UnansweredError


@dataclass
class BatchOutcome:
    stats: JudgeRunStats  # calls = batch requests answered; cost at batch prices
    submitted: list[str] = field(default_factory=list)  # batch ids this run created
    collected: list[str] = field(default_factory=list)  # batch ids whose results this run stored
    pending: dict[str, int] = field(default_factory=dict)  # still processing: batch id -> pairs
    in_flight_before: int = 0  # pairs already in journaled batches when the run started
    warnings: list[str] = field(default_factory=list)  # e.g. a damaged journal recovered

    @property
    def pending_pairs(self) -> int:
        return sum(self.pending.values())

    @property
    def complete(self) -> bool:
        """Every pair has a verdict or a reported failure; nothing left at the provider."""
        return not self.pending

    @property
    def summary(self) -> str:
        stats = self.stats
        cost = "cost unknown (no price for this model)" if stats.cost_usd is None else f"~${stats.cost_usd:.4f}"
        if stats.dry_run:
            text = (f"{stats.judge}: would send {stats.planned} batch requests ({stats.reused} verdicts "
                    f"reused), estimated {cost} at batch prices")
            if self.in_flight_before:
                text += f"; {self.in_flight_before} pairs already in submitted batches"
            return text
        text = (f"{stats.judge}: {stats.calls} batch requests answered, {stats.reused} verdicts reused, "
                f"{stats.input_tokens} tokens in / {stats.output_tokens} out, {cost} at batch prices, "
                f"{len(self.submitted)} batches submitted, {len(self.collected)} collected")
        if stats.retries:
            text += f", {stats.retries} requests resubmitted"
        if stats.failed:
            text += f", {stats.failed} pairs without a valid answer"
        if self.pending:
            text += (f"; judging {self.pending_pairs} pairs in batch ({len(self.pending)} batches "
                     "processing), re-run to collect")
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.stats.to_dict(),
            "batch": {
                "submitted": list(self.submitted),
                "collected": list(self.collected),
                "pending": dict(self.pending),
                "pending_pairs": self.pending_pairs,
                "complete": self.complete,
            },
            "summary": self.summary,
        }


class BatchUnansweredError(UnansweredError):
    """A batch run ended with pairs that have no valid answer after every resubmission (the
    answered ones are saved); `outcome` is what the run did, `stats` its statistics."""

    def __init__(self, message: str, *, failures: list[str], stats: JudgeRunStats, outcome: BatchOutcome) -> None:
        super().__init__(message, failures=failures, stats=stats)
        self.outcome = outcome
