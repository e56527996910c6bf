"""How much is asked at once and in all: an adaptive concurrency limit (halve on back pressure,
creep back up) and the call budget (`--max-calls`, the action's `max_judge_calls`)."""

from __future__ import annotations

import asyncio
import math
import time
from types import TracebackType

from rubric_gate.errors import JudgeError


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


def refuse_over_budget(needed: int, max_calls: int | None, *, who: str, what: str, nothing: str) -> None:
    """Before the first call: refuse a run that needs more calls than `max_calls` allows.

    `what` names the calls ("calls", "audit calls", "batch requests"), `nothing` what did not
    happen ("nothing was judged"), so every caller says it the same way.
    """
    if max_calls is not None and needed > max_calls:
        raise JudgeError(f"{who}: {needed} {what} needed, above --max-calls {max_calls}; {nothing}")
