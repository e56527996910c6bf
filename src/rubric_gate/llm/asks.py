"""Questions that are not (check, item) verdicts: audits, repairs, teaching, discovery,
preferences, embeddings, paraphrases. Each `Ask` is one stored call; `run_asks` sends them
through the shared retry loop and limiter; what has no valid answer is listed, never guessed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rubric_gate.errors import JudgeAuthError, JudgeError
from rubric_gate.llm.accounting import by_cause, carrying, estimated_tokens, raise_unanswered
from rubric_gate.llm.limiter import AdaptiveLimiter, refuse_over_budget
from rubric_gate.llm.pricing import estimate_cost
from rubric_gate.llm.protocols import JudgeRequest, LiveClient, Reply
from rubric_gate.llm.retry import CallEvents, RetryPolicy, Unanswered, call_with_retries
from rubric_gate.llm.spec import live_client, parse_judge_spec
from rubric_gate.llm.sync import run_sync
from rubric_gate.llm.watch import RunWatch


@dataclass(frozen=True)
class Ask:
    """One call: `parse` turns the reply text into a result or raises MalformedReply."""

    label: str  # for failure messages, e.g. "structure of k3"
    request: JudgeRequest
    parse: Callable[[str], Any]
    done: Callable[[Any, int, int], None]  # (result, input tokens, output tokens): stores it
    # Another call on the same client than a completion (e.g. embeddings): client -> Reply.
    # It raises the neutral errors, so retries and failures work as for completions.
    send: Callable[[Any], Awaitable[Reply]] | None = None


@dataclass
class CallStats:
    """Calls one model made for one role (audit, repair, teach, ...): the cost line."""

    model: str
    role: str = "audit"
    calls: int = 0
    reused: int = 0
    input_tokens: int = 0  # every prompt token, cached ones included
    output_tokens: int = 0
    retries: int = 0
    failures: list[str] = field(default_factory=list)
    cached_tokens: int = 0  # prompt tokens read from the provider's cache
    cache_write_tokens: int = 0  # prompt tokens written to it
    causes: dict[str, int] = field(default_factory=dict)  # calls without a valid answer, by cause
    served_models: list[str] = field(default_factory=list)  # models that answered other than `model`'s
    uninformative: str = ""  # why the answers carry no information, with the figures ("" when they may)

    @property
    def cost_usd(self) -> float | None:
        return estimate_cost(parse_judge_spec(self.model).model, self.input_tokens, self.output_tokens,
                             self.cached_tokens, self.cache_write_tokens)

    @property
    def summary(self) -> str:
        cost = self.cost_usd
        price = "cost unknown (no price for this model)" if cost is None else f"~${cost:.4f}"
        cached = f" ({self.cached_tokens} cached)" if self.cached_tokens else ""
        text = (f"{self.role} {self.model}: {self.calls} calls, {self.reused} reused, "
                f"{self.input_tokens} tokens in{cached} / {self.output_tokens} out, {price}")
        if self.retries:
            text += f", {self.retries} retries"
        if self.failures:
            why = f" ({by_cause(self.causes)})" if self.causes else ""  # never an empty "()"
            text += f", {len(self.failures)} without a valid answer{why}"
        if self.uninformative:
            text += f"; its answers carry no information: {self.uninformative}"
        return text

    def to_dict(self) -> dict[str, Any]:
        cost = self.cost_usd
        return {
            "model": self.model, "role": self.role, "calls": self.calls, "reused": self.reused,
            "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
            "cached_tokens": self.cached_tokens, "cache_write_tokens": self.cache_write_tokens,
            "cost_usd": None if cost is None else round(cost, 6), "retries": self.retries,
            "failures": list(self.failures), "failure_causes": dict(self.causes),
            "served_models": list(self.served_models), "uninformative": self.uninformative or None,
            "summary": self.summary,
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
        into.cached_tokens += stats.cached_tokens
        into.cache_write_tokens += stats.cache_write_tokens
        into.retries += stats.retries
        into.failures.extend(stats.failures)
        into.uninformative = into.uninformative or stats.uninformative
        for cause, n in stats.causes.items():
            into.causes[cause] = into.causes.get(cause, 0) + n
        into.served_models.extend(m for m in stats.served_models if m not in into.served_models)
    return list(merged.values())


class _Counted(CallEvents):
    def __init__(self, stats: CallStats) -> None:
        self.stats = stats

    def replied(self, reply: Reply) -> None:
        self.stats.calls += 1
        self.stats.input_tokens += reply.input_tokens
        self.stats.output_tokens += reply.output_tokens
        self.stats.cached_tokens += reply.cached_tokens
        self.stats.cache_write_tokens += reply.cache_write_tokens

    def retrying(self) -> None:
        self.stats.retries += 1


async def _run_one(ask: Ask, client: LiveClient, limiter: AdaptiveLimiter, policy: RetryPolicy,
                   stats: CallStats, watch: RunWatch) -> None:
    def send(reask: int, why: str) -> Awaitable[Reply]:
        return ask.send(client) if ask.send is not None else client.complete(ask.request.attempt(reask, why))

    outcome = await call_with_retries(send, ask.parse, policy=policy, limiter=limiter, events=_Counted(stats),
                                      watch=watch)
    if isinstance(outcome, Unanswered):
        stats.failures.append(f"{ask.label}: {outcome.reason}")
        stats.causes[outcome.cause] = stats.causes.get(outcome.cause, 0) + 1
        return
    ask.done(outcome.value, outcome.input_tokens, outcome.output_tokens)


async def _run_all(asks: Sequence[Ask], model: str, stats: CallStats, concurrency: int) -> None:
    spec = parse_judge_spec(model)
    client = live_client(spec)
    policy = RetryPolicy.from_env()
    limiter = AdaptiveLimiter(concurrency, policy.cooldown)
    watch = RunWatch(model, spec.model, policy)
    try:
        async with asyncio.TaskGroup() as group:
            for ask in asks:
                group.create_task(_run_one(ask, client, limiter, policy, stats, watch))
    except BaseExceptionGroup as grouped:
        errors = list(grouped.exceptions)
        raise next((e for e in errors if isinstance(e, JudgeAuthError)), errors[0]) from None
    finally:
        stats.served_models.extend(m for m in watch.other_models if m not in stats.served_models)
        await client.aclose()


def planned_cost(asks: Sequence[Ask], model: str) -> float | None:
    """Rough cost of `asks` for a dry run: ~4 characters a token in, half the token cap out."""
    tokens_in = sum(estimated_tokens(a.request.prompt) for a in asks)
    tokens_out = sum(a.request.max_tokens // 2 for a in asks)
    return estimate_cost(parse_judge_spec(model).model, tokens_in, tokens_out)


def run_asks(asks: Sequence[Ask], model: str, stats: CallStats, *, concurrency: int = 8,
             max_calls: int | None = None) -> None:
    """Make every call (none when `asks` is empty, so no key is needed for a fully cached run).

    With `max_calls`, refuse before the first call when more are needed.
    """
    if not asks:
        return
    refuse_over_budget(len(asks), max_calls, who=model, what=f"{stats.role} calls", nothing="nothing was asked")
    try:
        run_sync(_run_all(asks, model, stats, concurrency))
    except JudgeError as exc:  # a refusal, a dead endpoint: the calls made so far still count
        raise carrying(exc, stats) from None


def raise_failures(stats: Sequence[CallStats]) -> None:
    """After a run whose good results are saved: refuse to report what has no valid answer."""
    failures = [f"{s.model}: {f}" for s in stats for f in s.failures]
    if not failures:
        return
    roles = list(dict.fromkeys(s.role for s in stats if s.failures))
    causes: dict[str, int] = {}
    for s in stats:
        for cause, n in s.causes.items():
            causes[cause] = causes.get(cause, 0) + n
    raise_unanswered(f"{roles[0] if len(roles) == 1 else 'model'} calls", failures, stats=list(stats), causes=causes)
