"""What a judging run did: calls, reuse, tokens, cost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class JudgeRunStats:
    judge: str
    calls: int = 0  # provider calls that returned a valid answer
    reused: int = 0  # pairs already in the store
    failed: int = 0  # pairs left without a valid answer
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None  # None when the model's price is unknown
    retries: int = 0  # transport retries plus re-asks after malformed replies
    planned: int = 0  # calls the run needed (or, with dry_run, would make)
    dry_run: bool = False
    seconds: float = 0.0
    concurrency: int = 0  # configured limit
    lowest_concurrency: int = 0  # after rate-limit cuts
    failures: list[str] = field(default_factory=list)  # "check-id @ item-id: reason"

    @property
    def summary(self) -> str:
        cost = "cost unknown (no price for this model)" if self.cost_usd is None else f"~${self.cost_usd:.4f}"
        if self.dry_run:
            return f"{self.judge}: would make {self.planned} calls ({self.reused} verdicts reused), estimated {cost}"
        text = (
            f"{self.judge}: {self.calls} calls, {self.reused} verdicts reused, "
            f"{self.input_tokens} tokens in / {self.output_tokens} out, {cost}"
        )
        if self.retries:
            text += f", {self.retries} retries"
        if self.lowest_concurrency and self.lowest_concurrency < self.concurrency:
            text += f", concurrency lowered to {self.lowest_concurrency} by rate limits"
        if self.failed:
            text += f", {self.failed} pairs without a valid answer"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "calls": self.calls,
            "reused": self.reused,
            "failed": self.failed,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
            "retries": self.retries,
            "planned": self.planned,
            "dry_run": self.dry_run,
            "seconds": round(self.seconds, 3),
            "concurrency": self.concurrency,
            "lowest_concurrency": self.lowest_concurrency,
            "failures": list(self.failures),
            "summary": self.summary,
        }
