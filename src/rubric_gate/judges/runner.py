"""The async judging engine: a fixed pool of workers pulling jobs from a queue under an
adaptive concurrency limit, retries, strict parsing, and each verdict written to the store
the moment it arrives (fsynced in batches: a kill -9 loses only the calls in flight)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from rubric_gate.errors import JudgeAuthError, JudgeError
from rubric_gate.judges.backend import (
    AuthFailure,
    Backend,
    FatalError,
    JudgeRequest,
    TransientError,
)
from rubric_gate.judges.limits import AdaptiveLimiter, RetryPolicy
from rubric_gate.judges.pairs import Pair
from rubric_gate.judges.parse import (
    ANSWER_SCHEMA,
    CHECKLIST_SCHEMA,
    Answer,
    MalformedReply,
    parse_answer,
    parse_checklist,
)
from rubric_gate.judges.progress import ProgressReporter
from rubric_gate.judges.prompt import Mode, render_checklist, render_per_check
from rubric_gate.judges.stats import JudgeRunStats
from rubric_gate.verdicts import Usage, Verdict, VerdictStore

PER_CHECK_MAX_TOKENS = 400
SYNC_EVERY_VERDICTS = 32
SYNC_EVERY_SECONDS = 0.1
# When this many replies in a row, for at least EARLY_STOP_CHECKS different check texts (or all
# of the run's), fail to parse the same way before any reply parsed, the model or server cannot
# produce the format: stop instead of asking every pair three times.
EARLY_STOP_REPLIES = 10
EARLY_STOP_CHECKS = 3
CHECKLIST_BASE_TOKENS = 200
CHECKLIST_TOKENS_PER_CHECK = 250


@dataclass(frozen=True)
class Job:
    """One provider call: a single pair (per-check) or one item's pending checks (checklist).

    Its prompt is rendered when a worker takes it (and again for a retry), not when the queue is
    built: pending jobs hold their pairs only, so memory stays flat in the number of pairs."""

    pairs: tuple[Pair, ...]
    labels: tuple[str, ...] = ()  # checklist: prompt-local check ids, parallel to `pairs`

    @property
    def request(self) -> JudgeRequest:
        first = self.pairs[0]
        if not self.labels:
            return JudgeRequest(render_per_check(first.task, first.item.input, first.item.output, first.check_text),
                                ANSWER_SCHEMA, "check_answer", PER_CHECK_MAX_TOKENS, sampled=first.sample > 0)
        prompt = render_checklist(first.task, first.item.input, first.item.output,
                                  [(label, p.check_text) for label, p in zip(self.labels, self.pairs, strict=True)])
        max_tokens = CHECKLIST_BASE_TOKENS + CHECKLIST_TOKENS_PER_CHECK * len(self.pairs)
        return JudgeRequest(prompt, CHECKLIST_SCHEMA, "checklist_answers", max_tokens, sampled=first.sample > 0)


def build_jobs(pairs: Sequence[Pair], mode: Mode) -> list[Job]:
    if mode == "per-check":
        return [Job((p,)) for p in pairs]
    groups: dict[tuple[str, str, int], list[Pair]] = {}
    for pair in pairs:
        groups.setdefault((pair.item_hash, pair.task, pair.sample), []).append(pair)
    return [Job(tuple(group), tuple(f"c{i + 1}" for i in range(len(group)))) for group in groups.values()]


def _parse(job: Job, text: str) -> list[Answer]:
    if not job.labels:
        return [parse_answer(text)]
    answers = parse_checklist(text, list(job.labels))
    return [answers[label] for label in job.labels]


def _split(total: int, parts: int) -> list[int]:
    """Split a call's token count over its verdicts so the per-verdict usage sums right."""
    share, rest = divmod(total, parts)
    return [share + (1 if i < rest else 0) for i in range(parts)]


class _Engine:
    def __init__(
        self, backend: Backend, store: VerdictStore, judge: str, prompt: str,
        stats: JudgeRunStats, policy: RetryPolicy, limiter: AdaptiveLimiter, progress: ProgressReporter,
    ) -> None:
        self.backend, self.store, self.judge, self.prompt = backend, store, judge, prompt
        self.stats, self.policy, self.limiter, self.progress = stats, policy, limiter, progress
        self.writer = store.writer() if store.path is not None else None
        self.parsed_any = False
        self.same_failures: tuple[str, int] = ("", 0)
        self.failed_texts: set[str] = set()
        self.texts_needed = EARLY_STOP_CHECKS

    def _fail(self, job: Job, reason: str) -> None:
        self.stats.failed += len(job.pairs)
        self.stats.failures.extend(f"{p.check_id} @ {p.item.id}: {reason}" for p in job.pairs)

    def _malformed(self, job: Job, exc: MalformedReply) -> None:
        if self.parsed_any:
            return
        reason, count = self.same_failures
        if str(exc) != reason:
            count = 0
            self.failed_texts.clear()
        count += 1
        self.same_failures = (str(exc), count)
        self.failed_texts.update(p.check_text for p in job.pairs)
        if count >= EARLY_STOP_REPLIES and len(self.failed_texts) >= self.texts_needed:
            raise JudgeError(f"{self.judge}: the first {count} replies all failed to parse the same way "
                             f"({exc}); stopped early (is the model able to produce the JSON answer format?)")

    async def run_job(self, job: Job) -> None:
        transport_attempt = reasks = 0
        while True:
            try:
                request = job.request  # rendered now, dropped once the call is answered
                async with self.limiter:
                    reply = await self.backend.complete(request)
            except TransientError as exc:
                if exc.rate_limited:
                    self.limiter.on_rate_limited()
                if transport_attempt >= self.policy.max_retries:
                    self._fail(job, f"gave up after {transport_attempt} retries ({exc})")
                    return
                self.stats.retries += 1
                self.progress.retry()
                await asyncio.sleep(self.policy.delay(transport_attempt, exc.retry_after))
                transport_attempt += 1
                continue
            except AuthFailure as exc:
                raise JudgeAuthError(str(exc)) from None
            except FatalError as exc:
                raise JudgeError(str(exc)) from None
            self.limiter.on_success()
            self.stats.calls += 1  # a billed call, whether or not its reply parses
            self.stats.input_tokens += reply.input_tokens
            self.stats.output_tokens += reply.output_tokens
            try:
                answers = _parse(job, reply.text)
            except MalformedReply as exc:
                self._malformed(job, exc)
                if reasks >= self.policy.max_reasks:
                    self._fail(job, f"no valid answer after {reasks + 1} replies ({exc})")
                    return
                reasks += 1
                self.stats.retries += 1
                self.progress.retry()
                continue
            self.parsed_any = True
            self._record(job, answers, reply.input_tokens, reply.output_tokens)
            return

    def _record(self, job: Job, answers: list[Answer], input_tokens: int, output_tokens: int) -> None:
        at = datetime.now(UTC).isoformat(timespec="seconds")
        n = len(job.pairs)
        verdicts = [
            Verdict(
                item=pair.item.id,
                check_text=pair.check_text,
                answer=answer.answer,
                judge=self.judge,
                prompt=self.prompt,
                item_hash=pair.item_hash,
                task_hash=pair.task_hash,
                check=pair.check_id,
                quote=answer.quote or None,
                usage=Usage(input_tokens=tin, output_tokens=tout),
                at=at,
                sample=pair.sample or None,  # sample 0 is written exactly as before sampling existed
            )
            for pair, answer, tin, tout in zip(
                job.pairs, answers, _split(input_tokens, n), _split(output_tokens, n), strict=True
            )
        ]
        if self.writer is None:
            self.store.append(verdicts)
        else:
            # Written through to the OS at once (a killed process loses nothing written);
            # fsynced every few verdicts or 100 ms, and at the end of the run.
            self.writer.write(verdicts)
            if self.writer.unsynced >= SYNC_EVERY_VERDICTS:
                self.sync()
        self.progress.advance(n)

    def sync(self) -> None:
        if self.writer is not None:
            self.writer.sync()

    async def sync_periodically(self) -> None:
        """fsync what was written at most SYNC_EVERY_SECONDS ago, even when no verdict follows."""
        while True:
            await asyncio.sleep(SYNC_EVERY_SECONDS)
            self.sync()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def _interleaved(jobs: Sequence[Job]) -> list[Job]:
    """Jobs round-robin over check texts, so the first replies of a run cover many checks."""
    groups: dict[str, list[Job]] = {}
    for job in jobs:
        groups.setdefault(job.pairs[0].check_text, []).append(job)
    ordered: list[Job] = []
    lists = list(groups.values())
    for position in range(max((len(g) for g in lists), default=0)):
        ordered.extend(group[position] for group in lists if position < len(group))
    return ordered


async def _worker(queue: Iterator[Job], engine: _Engine) -> None:
    for job in queue:  # a shared iterator: each job goes to exactly one worker
        await engine.run_job(job)


async def run_jobs(
    jobs: Sequence[Job],
    backend: Backend,
    store: VerdictStore,
    judge: str,
    prompt: str,
    stats: JudgeRunStats,
    *,
    concurrency: int = 8,
    policy: RetryPolicy | None = None,
    progress: bool | None = None,
) -> JudgeRunStats:
    """Run every job; raise at once on auth or fatal provider errors (cancelling the rest).

    A fixed pool of `concurrency` workers pulls jobs from one queue, so the work per call
    does not grow with the number of jobs waiting (no task per job, no herd of waiters).
    """
    policy = policy or RetryPolicy.from_env()
    limiter = AdaptiveLimiter(concurrency, policy.cooldown)
    total = sum(len(job.pairs) for job in jobs)
    reporter = ProgressReporter(total, f"judging with {judge}", enabled=progress)
    engine = _Engine(backend, store, judge, prompt, stats, policy, limiter, reporter)
    engine.texts_needed = min(EARLY_STOP_CHECKS, len({p.check_text for job in jobs for p in job.pairs}))
    queue = iter(_interleaved(jobs))
    started = time.monotonic()
    syncer = asyncio.create_task(engine.sync_periodically())
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(min(limiter.ceiling, len(jobs))):
                group.create_task(_worker(queue, engine))
    except BaseExceptionGroup as grouped:
        errors = list(grouped.exceptions)
        raise next((e for e in errors if isinstance(e, JudgeAuthError)), errors[0]) from None
    finally:
        syncer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await syncer
        stats.seconds = time.monotonic() - started
        stats.concurrency, stats.lowest_concurrency = limiter.ceiling, limiter.lowest
        engine.close()
        reporter.close()
        await backend.aclose()
    return stats
