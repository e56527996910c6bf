"""The one retry loop every model call goes through: transient errors (429/529/5xx, timeouts,
connection errors) are retried with exponential backoff, at least as long as the server's
`retry-after` asks (capped), a bounded number of times; back pressure (429/529) also lowers
the concurrency; a reply that does not parse is asked again a few times. What is still
unanswered comes back as `Unanswered`, never as a guess."""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from rubric_gate.errors import JudgeAuthError, JudgeError
from rubric_gate.llm.errors import AuthFailure, FatalError, MalformedReply, TransientError
from rubric_gate.llm.limiter import AdaptiveLimiter
from rubric_gate.llm.protocols import Reply
from rubric_gate.tuning import env_int, env_number

T = TypeVar("T")
MAX_RETRY_AFTER_S = 120.0  # a server asking for longer gets this: the retries stay bounded
DEFAULT_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 6  # per call, for 429/529/5xx/timeouts/connection errors
    max_reasks: int = 2  # per call, after a reply that does not parse
    base_delay: float = 1.0
    max_delay: float = 60.0
    cooldown: float = 2.0  # at most one concurrency cut per window: one burst of 429s is one signal

    @classmethod
    def from_env(cls) -> RetryPolicy:
        base = env_number("RUBRIC_GATE_RETRY_BASE", cls.base_delay)
        return cls(
            max_retries=env_int("RUBRIC_GATE_MAX_RETRIES", cls.max_retries),
            max_reasks=env_int("RUBRIC_GATE_MAX_REASKS", cls.max_reasks),
            base_delay=base,
            max_delay=max(base, env_number("RUBRIC_GATE_RETRY_MAX", cls.max_delay)),
            cooldown=env_number("RUBRIC_GATE_RATE_COOLDOWN", 2 * base if base < 1 else cls.cooldown),
        )

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Exponential backoff with jitter; a server's retry-after is a floor, not a suggestion."""
        backoff = min(self.max_delay, self.base_delay * 2.0**attempt) * random.uniform(0.5, 1.0)
        if retry_after is not None and math.isfinite(retry_after):
            return min(retry_after, MAX_RETRY_AFTER_S) + random.uniform(0, self.base_delay / 4)
        return backoff


def request_timeout() -> float:
    """Seconds one HTTP request may take (RUBRIC_GATE_JUDGE_TIMEOUT)."""
    return env_number("RUBRIC_GATE_JUDGE_TIMEOUT", DEFAULT_TIMEOUT_S, minimum=0.001)


@dataclass(frozen=True)
class Answered(Generic[T]):
    value: T
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class Unanswered:
    reason: str  # "gave up after 6 retries (HTTP 429)", "no valid answer after 3 replies (...)"


class CallEvents:
    """What a caller counts while a call is retried; every hook is optional."""

    def replied(self, reply: Reply) -> None:
        """A billed reply arrived (whether or not it parses)."""

    def retrying(self) -> None:
        """A transport retry or a re-ask is about to happen."""

    def malformed(self, exc: MalformedReply) -> None:
        """A reply did not parse; may raise to stop the whole run."""


async def call_with_retries(
    send: Callable[[], Awaitable[Reply]],
    parse: Callable[[str], T],
    *,
    policy: RetryPolicy,
    limiter: AdaptiveLimiter,
    events: CallEvents | None = None,
) -> Answered[T] | Unanswered:
    """Send (`send()` builds and sends one attempt) until a reply parses or the bounds
    are reached. Rejected credentials raise JudgeAuthError and other provider refusals JudgeError
    at once: they stop the run, the caller's task group cancels the rest."""
    events = events or CallEvents()
    transport = reasks = 0
    while True:
        try:
            async with limiter:
                reply = await send()
        except TransientError as exc:
            if exc.rate_limited:
                limiter.on_rate_limited()
            if transport >= policy.max_retries:
                return Unanswered(f"gave up after {transport} retries ({exc})")
            events.retrying()
            await asyncio.sleep(policy.delay(transport, exc.retry_after))
            transport += 1
            continue
        except AuthFailure as exc:
            raise JudgeAuthError(str(exc)) from None
        except FatalError as exc:
            raise JudgeError(str(exc)) from None
        limiter.on_success()
        events.replied(reply)
        try:
            value = parse(reply.text)
        except MalformedReply as exc:
            events.malformed(exc)
            if reasks >= policy.max_reasks:
                return Unanswered(f"no valid answer after {reasks + 1} replies ({exc})")
            reasks += 1
            events.retrying()
            continue
        return Answered(value, reply.input_tokens, reply.output_tokens)
