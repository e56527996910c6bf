"""The one retry loop every model call goes through: transient errors (429/529/5xx, timeouts,
connection errors) are retried with exponential backoff, at least as long as the server's
`retry-after` asks (capped), a bounded number of times; back pressure (429/529) also lowers
the concurrency; a reply that does not parse is asked again a few times. What is still
unanswered comes back as `Unanswered` (with its cause), never as a guess. Timeouts lower the
concurrency like 429s (a local server with few slots queues requests past the timeout);
a re-ask changes the request; a run's `RunWatch` stops it at a dead endpoint."""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from rubric_gate.errors import JudgeAuthError, JudgeError
from rubric_gate.llm.errors import AuthFailure, FatalError, MalformedReply, TransientError
from rubric_gate.llm.limiter import AdaptiveLimiter
from rubric_gate.llm.protocols import CUT_OFF, STOPPED, Reply
from rubric_gate.llm.replies import excerpt
from rubric_gate.tuning import env_int, env_number


class RunWatch(Protocol):
    """What the retry loop tells a run's watch (`llm.watch.RunWatch`, which imports this module's
    policy): a reply came, or a connection failed."""

    def replied(self, served_model: str) -> None: ...

    def failed_to_connect(self, exc: TransientError) -> None: ...


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
    # A dead endpoint: this many connection failures in a row (no reply in between), the first
    # at least `unreachable_window` seconds ago, stop the run with one line naming the URL.
    max_unreachable: int = 8
    unreachable_window: float = 10.0

    @classmethod
    def from_env(cls) -> RetryPolicy:
        base = env_number("RUBRIC_GATE_RETRY_BASE", cls.base_delay)
        return cls(
            max_retries=env_int("RUBRIC_GATE_MAX_RETRIES", cls.max_retries),
            max_reasks=env_int("RUBRIC_GATE_MAX_REASKS", cls.max_reasks),
            base_delay=base,
            max_delay=max(base, env_number("RUBRIC_GATE_RETRY_MAX", cls.max_delay)),
            cooldown=env_number("RUBRIC_GATE_RATE_COOLDOWN", 2 * base if base < 1 else cls.cooldown),
            max_unreachable=env_int("RUBRIC_GATE_MAX_CONNECTION_FAILURES", cls.max_unreachable, minimum=1),
            unreachable_window=10 * base,
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
    reply: Reply  # the reply that parsed: its tokens, its served model

    @property
    def input_tokens(self) -> int:
        return self.reply.input_tokens

    @property
    def output_tokens(self) -> int:
        return self.reply.output_tokens


# Why a call has no valid answer, by cause (a run's failures are counted by these).
CUT_OFF_CAUSE = "cut off"
INVALID = "invalid"
TIMEOUT = "timeout"
CONNECTION = "connection"
RATE_LIMITED = "rate limited"
SERVER_ERROR = "server error"


@dataclass(frozen=True)
class Unanswered:
    reason: str  # "gave up after 6 retries (HTTP 429)", "no valid answer after 3 replies (...)"
    cause: str = INVALID  # CUT_OFF_CAUSE, INVALID, TIMEOUT, CONNECTION, RATE_LIMITED or SERVER_ERROR


class CallEvents:
    """What a caller counts while a call is retried; every hook is optional."""

    def replied(self, reply: Reply) -> None:
        """A billed reply arrived (whether or not it parses)."""

    def retrying(self) -> None:
        """A transport retry or a re-ask is about to happen."""

    def malformed(self, exc: MalformedReply) -> None:
        """A reply did not parse; may raise to stop the whole run."""


def reply_problem(reply: Reply, exc: MalformedReply) -> str:
    """Why a reply that did not parse is unusable: a reply cut off at the token cap says so
    (its JSON is unfinished, not malformed), a provider's refusal or filter names itself."""
    if reply.finish == CUT_OFF:
        return f"cut off at {reply.output_tokens} tokens" if reply.output_tokens else "cut off at the token cap"
    if reply.finish not in (STOPPED, ""):
        return f"stopped by the provider ({excerpt(reply.finish, 40)}): {exc}"
    return str(exc)


def _transport_cause(exc: TransientError) -> str:
    if exc.timed_out:
        return TIMEOUT
    if exc.unreachable:
        return CONNECTION
    return RATE_LIMITED if exc.rate_limited else SERVER_ERROR


async def call_with_retries(
    send: Callable[[int, str], Awaitable[Reply]],
    parse: Callable[[str], T],
    *,
    policy: RetryPolicy,
    limiter: AdaptiveLimiter,
    events: CallEvents | None = None,
    watch: RunWatch | None = None,
) -> Answered[T] | Unanswered:
    """Send until a reply parses or the bounds are reached. `send(reask, why)` builds and sends
    one attempt: `reask` 0 the first ask, n the n-th re-ask after a reply that did not parse
    (`why`), which must differ from the last (JudgeRequest.attempt: a temperature step, a seed,
    a reminder of the format); transport retries resend the same request. Rejected credentials
    raise JudgeAuthError, other provider refusals JudgeError and a dead endpoint (`watch`)
    EndpointUnreachable at once: they stop the run, the caller's task group cancels the rest."""
    events = events or CallEvents()
    transport = reasks = 0
    why = ""
    while True:
        try:
            async with limiter:
                reply = await send(reasks, why)
        except TransientError as exc:
            if exc.back_pressure:  # 429/529, or no reply in time: the server wants less at once
                limiter.on_rate_limited()
            if watch is not None:
                watch.failed_to_connect(exc)
            if transport >= policy.max_retries:
                return Unanswered(f"gave up after {transport} retries ({exc})", _transport_cause(exc))
            events.retrying()
            await asyncio.sleep(policy.delay(transport, exc.retry_after))
            transport += 1
            continue
        except AuthFailure as exc:
            raise JudgeAuthError(str(exc)) from None
        except FatalError as exc:
            raise JudgeError(str(exc)) from None
        limiter.on_success()
        if watch is not None:
            watch.replied(reply.model)
        events.replied(reply)
        try:
            value = parse(reply.text)
        except MalformedReply as exc:
            problem = reply_problem(reply, exc)
            events.malformed(MalformedReply(problem))
            if reasks >= policy.max_reasks:
                cause = CUT_OFF_CAUSE if reply.finish == CUT_OFF else INVALID
                return Unanswered(f"no valid answer after {reasks + 1} replies ({problem}; the last began "
                                  f"{excerpt(reply.text)})", cause)
            reasks += 1
            why = exc.hint if exc.hint and reply.finish in (STOPPED, "") else problem
            events.retrying()
            continue
        return Answered(value, reply)
