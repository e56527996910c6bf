"""Run audit requests through the judge backends: bounded concurrency, retries, strict parsing.

The verdict runner is built around (check, item) pairs; audits ask other questions (about a
check, not an output), so they get this small generic loop over the same backend interface.
A reply that does not parse is asked again a few times and then recorded as a failure: never
guessed into a finding.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rubric_gate.errors import JudgeAuthError, JudgeError
from rubric_gate.judges.backend import (
    AuthFailure,
    FatalError,
    JudgeRequest,
    TransientError,
    make_backend,
)
from rubric_gate.judges.limits import AdaptiveLimiter, RetryPolicy
from rubric_gate.judges.parse import MalformedReply
from rubric_gate.judges.pricing import estimate_cost
from rubric_gate.judges.spec import parse_judge_spec

MAX_LISTED_FAILURES = 10


@dataclass(frozen=True)
class Ask:
    """One call: `parse` turns the reply text into a result or raises MalformedReply."""

    label: str  # for failure messages, e.g. "structure of k3"
    request: JudgeRequest
    parse: Callable[[str], Any]
    done: Callable[[Any, int, int], None]  # (result, input tokens, output tokens): stores it
    # Another call on the same backend than a completion (e.g. embeddings): backend -> Reply.
    # It raises the backend's neutral errors, so retries and failures work as for completions.
    send: Callable[[Any], Awaitable[Any]] | None = None


@dataclass
class CallStats:
    """Calls one model made for audits or repairs: the cost line."""

    model: str
    role: str = "audit"
    calls: int = 0
    reused: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    retries: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def cost_usd(self) -> float | None:
        return estimate_cost(parse_judge_spec(self.model).model, self.input_tokens, self.output_tokens)

    @property
    def summary(self) -> str:
        cost = self.cost_usd
        price = "cost unknown (no price for this model)" if cost is None else f"~${cost:.4f}"
        text = (f"{self.role} {self.model}: {self.calls} calls, {self.reused} reused, "
                f"{self.input_tokens} tokens in / {self.output_tokens} out, {price}")
        if self.failures:
            text += f", {len(self.failures)} without a valid answer"
        return text

    def to_dict(self) -> dict[str, Any]:
        cost = self.cost_usd
        return {
            "model": self.model, "role": self.role, "calls": self.calls, "reused": self.reused,
            "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
            "cost_usd": None if cost is None else round(cost, 6), "retries": self.retries,
            "failures": list(self.failures), "summary": self.summary,
        }


def merged_stats(usage: Sequence[CallStats]) -> list[CallStats]:
    """One CallStats per (model, role), in order of first appearance: a cost line per model and job."""
    merged: dict[tuple[str, str], CallStats] = {}
    for stats in usage:
        into = merged.setdefault((stats.model, stats.role), CallStats(stats.model, stats.role))
        into.calls += stats.calls
        into.reused += stats.reused
        into.input_tokens += stats.input_tokens
        into.output_tokens += stats.output_tokens
        into.retries += stats.retries
        into.failures.extend(stats.failures)
    return list(merged.values())


async def _run_one(ask: Ask, backend: Any, limiter: AdaptiveLimiter, policy: RetryPolicy, stats: CallStats) -> None:
    transport = reasks = 0
    while True:
        try:
            async with limiter:
                reply = await (ask.send(backend) if ask.send is not None else backend.complete(ask.request))
        except TransientError as exc:
            if exc.rate_limited:
                limiter.on_rate_limited()
            if transport >= policy.max_retries:
                stats.failures.append(f"{ask.label}: gave up after {transport} retries ({exc})")
                return
            stats.retries += 1
            await asyncio.sleep(policy.delay(transport, exc.retry_after))
            transport += 1
            continue
        except AuthFailure as exc:
            raise JudgeAuthError(str(exc)) from None
        except FatalError as exc:
            raise JudgeError(str(exc)) from None
        limiter.on_success()
        stats.calls += 1
        stats.input_tokens += reply.input_tokens
        stats.output_tokens += reply.output_tokens
        try:
            result = ask.parse(reply.text)
        except MalformedReply as exc:
            if reasks >= policy.max_reasks:
                stats.failures.append(f"{ask.label}: no valid answer after {reasks + 1} replies ({exc})")
                return
            reasks += 1
            stats.retries += 1
            continue
        ask.done(result, reply.input_tokens, reply.output_tokens)
        return


async def _run_all(asks: Sequence[Ask], model: str, stats: CallStats, concurrency: int) -> None:
    backend = make_backend(parse_judge_spec(model))
    policy = RetryPolicy.from_env()
    limiter = AdaptiveLimiter(concurrency, policy.cooldown)
    try:
        async with asyncio.TaskGroup() as group:
            for ask in asks:
                group.create_task(_run_one(ask, backend, limiter, policy, stats))
    except BaseExceptionGroup as grouped:
        errors = list(grouped.exceptions)
        raise next((e for e in errors if isinstance(e, JudgeAuthError)), errors[0]) from None
    finally:
        await backend.aclose()


def planned_cost(asks: Sequence[Ask], model: str) -> float | None:
    """Rough cost of `asks` for a dry run: ~4 characters a token in, half the token cap out."""
    from rubric_gate.judges.api import CHARS_PER_TOKEN

    tokens_in = sum(len(a.request.prompt) // CHARS_PER_TOKEN for a in asks)
    tokens_out = sum(a.request.max_tokens // 2 for a in asks)
    return estimate_cost(parse_judge_spec(model).model, tokens_in, tokens_out)


def run_asks(asks: Sequence[Ask], model: str, stats: CallStats, *, concurrency: int = 8,
             max_calls: int | None = None) -> None:
    """Make every call (none when `asks` is empty, so no key is needed for a fully cached run).

    With `max_calls`, refuse before the first call when more are needed.
    """
    if not asks:
        return
    if max_calls is not None and len(asks) > max_calls:
        raise JudgeError(f"{model}: {len(asks)} {stats.role} calls needed, above --max-calls {max_calls}; "
                         "nothing was asked")
    from rubric_gate.judges.api import run_sync

    run_sync(_run_all(asks, model, stats, concurrency))


def raise_failures(stats: Sequence[CallStats]) -> None:
    """After a run whose good results are saved: refuse to report what has no valid answer."""
    failures = [f"{s.model}: {f}" for s in stats for f in s.failures]
    if not failures:
        return
    listed = "; ".join(failures[:MAX_LISTED_FAILURES])
    more = f" (+{len(failures) - MAX_LISTED_FAILURES} more)" if len(failures) > MAX_LISTED_FAILURES else ""
    raise JudgeError(f"{len(failures)} audit calls have no valid answer, none guessed: {listed}{more}")
