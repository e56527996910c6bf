"""Retry timing and an adaptive concurrency limit (halve on sustained 429s, creep back up)."""

from __future__ import annotations

import asyncio
import math
import random
import time
from dataclasses import dataclass
from types import TracebackType

from rubric_gate.tuning import env_int, env_number

MAX_RETRY_AFTER_S = 120.0


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 6  # per call, for 429/5xx/timeouts/connection errors
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
        backoff = min(self.max_delay, self.base_delay * 2**attempt) * random.uniform(0.5, 1.0)
        if retry_after is not None and math.isfinite(retry_after):
            return min(retry_after, MAX_RETRY_AFTER_S) + random.uniform(0, self.base_delay / 4)
        return backoff


class AdaptiveLimiter:
    """An async semaphore whose size drops by half on rate limiting and grows by one
    after `limit` consecutive successes, never above the configured concurrency."""

    def __init__(self, limit: int, cooldown: float = 2.0) -> None:
        self.ceiling = max(1, limit)
        self.limit = self.ceiling
        self.lowest = self.ceiling
        self.in_flight = 0
        self.cooldown = cooldown
        self._cond = asyncio.Condition()
        self._last_cut = -math.inf
        self._successes = 0

    async def __aenter__(self) -> None:
        async with self._cond:
            await self._cond.wait_for(lambda: self.in_flight < self.limit)
            self.in_flight += 1

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        async with self._cond:
            self.in_flight -= 1
            # Wake only as many waiters as there are free slots, not every waiter: a release
            # then costs O(free slots), whatever the number of callers queued.
            self._cond.notify(max(1, self.limit - self.in_flight))

    def on_rate_limited(self) -> None:
        now = time.monotonic()
        self._successes = 0
        if now - self._last_cut >= self.cooldown and self.limit > 1:
            self.limit = max(1, self.limit // 2)
            self.lowest = min(self.lowest, self.limit)
            self._last_cut = now

    def on_success(self) -> None:
        self._successes += 1
        if self.limit < self.ceiling and self._successes >= self.limit:
            self.limit += 1
            self._successes = 0
