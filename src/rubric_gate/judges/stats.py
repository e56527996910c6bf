"""What a judging run did: calls, reuse, tokens, cost, and what its answers are worth."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from rubric_gate.llm.accounting import by_cause


@dataclass
class JudgeRunStats:
    judge: str
    calls: int = 0  # provider calls that returned a valid answer
    reused: int = 0  # pairs already in the store
    failed: int = 0  # pairs left without a valid answer
    input_tokens: int = 0  # every prompt token, cached ones included
    output_tokens: int = 0
    cost_usd: float | None = None  # None when the model's price is unknown
    retries: int = 0  # transport retries plus re-asks after malformed replies
    planned: int = 0  # calls the run needed (or, with dry_run, would make)
    dry_run: bool = False
    seconds: float = 0.0
    concurrency: int = 0  # configured limit
    lowest_concurrency: int = 0  # after rate-limit and timeout cuts
    failures: list[str] = field(default_factory=list)  # "check-id @ item-id: reason"
    cached_tokens: int = 0  # prompt tokens read from the provider's cache
    cache_write_tokens: int = 0  # prompt tokens written to it
    causes: dict[str, int] = field(default_factory=dict)  # pairs without a valid answer, by cause
    quotes: int = 0  # non-empty supporting quotes in this run's answers
    unverified_quotes: int = 0  # of those, not found in the item's output (recorded as unverified)
    copied_quotes: int = 0  # of those, copied from the prompt's own words
    uninformative: str | None = None  # why this run's answers carry no information, with the figures
    served_models: list[str] = field(default_factory=list)  # models that answered, other than the one asked for

    @classmethod
    def combined(cls, runs: Sequence[JudgeRunStats], judge: str) -> JudgeRunStats:
        """One judge's runs as one: counts and tokens summed, failures and causes kept, the lowest
        concurrency reached; a cost is unknown if any run's is."""
        total = cls(judge=judge)
        for run in runs:
            for f in fields(cls):
                mine, theirs = getattr(total, f.name), getattr(run, f.name)
                if isinstance(mine, bool) or f.name in ("judge", "cost_usd", "uninformative"):
                    continue
                if f.name == "lowest_concurrency":
                    total.lowest_concurrency = min(x for x in (mine, theirs) if x) if mine or theirs else 0
                elif isinstance(mine, list):
                    mine.extend(x for x in theirs if f.name != "served_models" or x not in mine)
                elif isinstance(mine, dict):
                    for key, n in theirs.items():
                        mine[key] = mine.get(key, 0) + n
                elif f.name == "concurrency":
                    total.concurrency = max(mine, theirs)
                else:
                    setattr(total, f.name, mine + theirs)
            total.uninformative = total.uninformative or run.uninformative
        costs = [run.cost_usd for run in runs]
        total.cost_usd = None if any(c is None for c in costs) else float(sum(c for c in costs if c is not None))
        return total

    @property
    def summary(self) -> str:
        cost = "cost unknown (no price for this model)" if self.cost_usd is None else f"~${self.cost_usd:.4f}"
        if self.dry_run:
            return f"{self.judge}: would make {self.planned} calls ({self.reused} verdicts reused), estimated {cost}"
        cached = f" ({self.cached_tokens} cached)" if self.cached_tokens else ""
        text = (
            f"{self.judge}: {self.calls} calls, {self.reused} verdicts reused, "
            f"{self.input_tokens} tokens in{cached} / {self.output_tokens} out, {cost}"
        )
        if self.retries:
            text += f", {self.retries} retries"
        if self.lowest_concurrency and self.lowest_concurrency < self.concurrency:
            text += f", concurrency lowered to {self.lowest_concurrency} by rate limits or timeouts"
        if self.failed:
            text += f", {self.failed} pairs without a valid answer ({by_cause(self.causes)})"
        if self.unverified_quotes:
            text += (f", {self.unverified_quotes} of {self.quotes} quotes not found in the output "
                     "(kept as unverified, not as evidence)")
        if self.uninformative:
            text += f"; its answers carry no information: {self.uninformative}"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "calls": self.calls,
            "reused": self.reused,
            "failed": self.failed,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_tokens": self.cached_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
            "retries": self.retries,
            "planned": self.planned,
            "dry_run": self.dry_run,
            "seconds": round(self.seconds, 3),
            "concurrency": self.concurrency,
            "lowest_concurrency": self.lowest_concurrency,
            "failures": list(self.failures),
            "failure_causes": dict(self.causes),
            "quotes": self.quotes,
            "unverified_quotes": self.unverified_quotes,
            "copied_quotes": self.copied_quotes,
            "uninformative": self.uninformative,
            "served_models": list(self.served_models),
            "summary": self.summary,
        }
