"""The async judging engine: a fixed pool of workers pulling jobs from a queue under an
adaptive concurrency limit, retries, strict parsing, and each verdict written to the store
the moment it arrives (fsynced in batches: a kill -9 loses only the calls in flight)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from rubric_gate.errors import JudgeAuthError, JudgeError
from rubric_gate.judges.pairs import Pair
from rubric_gate.judges.parse import (
    ANSWER_SCHEMA,
    Answer,
    checklist_schema,
    parse_answer,
    parse_checklist,
)
from rubric_gate.judges.progress import ProgressReporter
from rubric_gate.judges.prompt import (
    Mode,
    as_text,
    render_checklist,
    render_per_check,
    shared_prefix,
)
from rubric_gate.judges.stats import JudgeRunStats
from rubric_gate.llm.errors import MalformedReply
from rubric_gate.llm.limiter import AdaptiveLimiter
from rubric_gate.llm.protocols import JudgeRequest, LiveClient, Reply
from rubric_gate.llm.replies import occurs_in
from rubric_gate.llm.retry import CallEvents, RetryPolicy, Unanswered, call_with_retries
from rubric_gate.llm.spec import parse_judge_spec
from rubric_gate.llm.watch import RunWatch
from rubric_gate.verdicts import Usage, Verdict, VerdictStore

PER_CHECK_MAX_TOKENS = 400
SYNC_EVERY_VERDICTS = 32
SYNC_EVERY_SECONDS = 0.1
# When this many replies in a row, for at least EARLY_STOP_CHECKS different check texts (or all
# of the run's), fail to parse the same way before any reply parsed, the model or server cannot
# produce the format: stop instead of asking every pair three times.
EARLY_STOP_REPLIES = 10
EARLY_STOP_CHECKS = 3
EARLY_STOP_NAMED = 5  # pairs the early stop names, then "and N more"
CHECKLIST_BASE_TOKENS = 200
CHECKLIST_TOKENS_PER_CHECK = 250


@dataclass(frozen=True, slots=True)
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
            prompt = render_per_check(first.task, first.item.input, first.item.output, first.check_text)
            return JudgeRequest(prompt, ANSWER_SCHEMA, "check_answer", PER_CHECK_MAX_TOKENS, sampled=first.sample > 0,
                                shared_prefix=shared_prefix(prompt, "per-check"))
        prompt = render_checklist(first.task, first.item.input, first.item.output,
                                  [(label, p.check_text) for label, p in zip(self.labels, self.pairs, strict=True)])
        max_tokens = CHECKLIST_BASE_TOKENS + CHECKLIST_TOKENS_PER_CHECK * len(self.pairs)
        return JudgeRequest(prompt, checklist_schema(list(self.labels)), "checklist_answers", max_tokens,
                            sampled=first.sample > 0, shared_prefix=shared_prefix(prompt, "checklist"))


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


class _JobEvents(CallEvents):
    def __init__(self, engine: _Engine, job: Job) -> None:
        self.engine, self.job = engine, job

    def replied(self, reply: Reply) -> None:
        stats = self.engine.stats
        stats.calls += 1  # a billed call, whether or not its reply parses
        stats.input_tokens += reply.input_tokens
        stats.output_tokens += reply.output_tokens
        stats.cached_tokens += reply.cached_tokens
        stats.cache_write_tokens += reply.cache_write_tokens

    def retrying(self) -> None:
        self.engine.stats.retries += 1
        self.engine.progress.retry()

    def malformed(self, exc: MalformedReply) -> None:
        self.engine.malformed(self.job, exc)


def _split(total: int, parts: int) -> list[int]:
    """Split a call's token count over its verdicts so the per-verdict usage sums right."""
    share, rest = divmod(total, parts)
    return [share + (1 if i < rest else 0) for i in range(parts)]


class _Engine:
    def __init__(
        self, backend: LiveClient, store: VerdictStore, judge: str, prompt: str,
        stats: JudgeRunStats, policy: RetryPolicy, limiter: AdaptiveLimiter, progress: ProgressReporter,
    ) -> None:
        self.backend, self.store, self.judge, self.prompt = backend, store, judge, prompt
        self.stats, self.policy, self.limiter, self.progress = stats, policy, limiter, progress
        self.writer = store.writer() if store.path is not None else None
        self.parsed_any = False
        self.same_failures: tuple[str, int] = ("", 0)
        self.failed_texts: set[str] = set()
        self.failed_names: list[str] = []
        self.texts_needed = EARLY_STOP_CHECKS
        self.requested_model = parse_judge_spec(judge).model
        self.watch = RunWatch(judge, self.requested_model, policy)
        self.tally = AnswerTally()

    def _fail(self, job: Job, outcome: Unanswered) -> None:
        self.stats.failed += len(job.pairs)
        self.stats.causes[outcome.cause] = self.stats.causes.get(outcome.cause, 0) + len(job.pairs)
        self.stats.failures.extend(f"{p.name}: {outcome.reason}" for p in job.pairs)

    def malformed(self, job: Job, exc: MalformedReply) -> None:
        if self.parsed_any:
            return
        reason, count = self.same_failures
        if str(exc) != reason:
            count = 0
            self.failed_texts.clear()
            self.failed_names.clear()
        count += 1
        self.same_failures = (str(exc), count)
        self.failed_texts.update(p.check_text for p in job.pairs)
        self.failed_names.extend(p.name for p in job.pairs if p.name not in self.failed_names)
        if count >= EARLY_STOP_REPLIES and len(self.failed_texts) >= self.texts_needed:
            raise JudgeError(self._early_stop(count, str(exc)))

    def _early_stop(self, count: int, problem: str) -> str:
        """Why the run stops before any reply parsed, in the words of what happened: replies cut
        off at the token cap are the model not finishing, not the format; the pairs they were for
        are named, and the calls still in flight are said to be abandoned (their pairs unanswered)."""
        names = self.failed_names
        shown = ", ".join(names[:EARLY_STOP_NAMED]) + (f" and {len(names) - EARLY_STOP_NAMED} more"
                                                       if len(names) > EARLY_STOP_NAMED else "")
        if problem.startswith("cut off"):
            what = (f"the first {count} replies were all {problem} (the model ran to the token cap without "
                    "finishing its JSON answer)")
        else:
            what = (f"the first {count} replies all failed to parse the same way ({problem}; is the model "
                    "able to produce the JSON answer format?)")
        in_flight = max(0, self.limiter.in_flight)
        left = (f"; {in_flight} call{'s' if in_flight != 1 else ''} in flight abandoned, "
                "their pairs unanswered" if in_flight else "")
        return f"{self.judge}: {what}, for {shown}; stopped early{left}"

    async def run_job(self, job: Job) -> None:
        request: JudgeRequest | None = None

        def send(reask: int, why: str) -> Awaitable[Reply]:
            nonlocal request
            request = job.request.attempt(reask, why)  # rendered now, dropped once answered
            return self.backend.complete(request)

        outcome = await call_with_retries(send, lambda text: _parse(job, text), policy=self.policy,
                                          limiter=self.limiter, events=_JobEvents(self, job), watch=self.watch)
        if isinstance(outcome, Unanswered):
            self._fail(job, outcome)
            return
        self.parsed_any = True
        self._record(job, outcome.value, outcome.reply, request.prompt if request is not None else "")

    def _record(self, job: Job, answers: list[Answer], reply: Reply, prompt: str) -> None:
        at = datetime.now(UTC).isoformat(timespec="seconds")
        n = len(job.pairs)
        served = reply.model if reply.model and reply.model != self.requested_model else None
        verdicts = []
        for pair, answer, tin, tout in zip(job.pairs, answers, _split(reply.input_tokens, n),
                                           _split(reply.output_tokens, n), strict=True):
            quote, unverified = self.tally.quote(answer, as_text(pair.item.output), prompt)
            self.tally.answer(pair, answer)
            verdicts.append(Verdict(
                item=pair.item.id,
                check_text=pair.check_text,
                answer=answer.answer,
                judge=self.judge,
                prompt=self.prompt,
                item_hash=pair.item_hash,
                task_hash=pair.task_hash,
                check=pair.check_id,
                quote=quote,
                unverified_quote=unverified,
                usage=Usage(input_tokens=tin, output_tokens=tout),
                at=at,
                sample=pair.sample or None,  # sample 0 is written exactly as before sampling existed
                served_model=served,
            ))
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


def _ordered(jobs: Sequence[Job], window: int) -> list[Job]:
    """Jobs a window of items at a time (as many items as calls in flight), the window's checks
    round-robin: the first replies cover many checks (so a model that cannot produce the format
    is seen early), calls in flight at once are for different items, and the next check of an
    item goes out after the last one answered, when the provider's prompt cache (Anthropic's
    cache_control, OpenAI's prefix cache, a local server's slot) holds the item's shared part."""
    by_item: dict[tuple[str, str], list[Job]] = {}
    for job in jobs:
        first = job.pairs[0]
        by_item.setdefault((first.item_hash, first.task_hash), []).append(job)
    groups = list(by_item.values())
    ordered: list[Job] = []
    step = max(1, window)
    for start in range(0, len(groups), step):
        chunk = groups[start:start + step]
        for position in range(max(len(g) for g in chunk)):
            ordered.extend(group[position] for group in chunk if position < len(group))
    return ordered


class AnswerTally:
    """What one run's answers say about the judge: quotes that do not occur in the item's output
    (recorded as unverified, never as evidence), those copied from the prompt's own words, and
    answers by word and label: a judge giving one answer to every pair of a set that has both
    labels, or copying the prompt back as its quotes, carries no information."""

    def __init__(self) -> None:
        self.quotes = self.unverified = self.copied = 0
        self.words: dict[str, int] = {}
        self.items: dict[str, set[str]] = {"pass": set(), "fail": set()}
        self.checks: set[str] = set()

    def quote(self, answer: Answer, output: str, prompt: str) -> tuple[str | None, str | None]:
        """(verified quote, unverified quote): at most one of them set."""
        if not answer.quote.strip():
            return None, None
        self.quotes += 1
        if occurs_in(answer.quote, output):
            return answer.quote, None
        self.unverified += 1
        if occurs_in(answer.quote, prompt):  # not the output's words, but the prompt's
            self.copied += 1
        return None, answer.quote

    def answer(self, pair: Pair, answer: Answer) -> None:
        self.words[answer.answer] = self.words.get(answer.answer, 0) + 1
        self.items[pair.item.label].add(pair.item.id)
        self.checks.add(pair.check_text)

    def uninformative(self) -> str | None:
        """Why the judge's answers carry no information about these items, with the figures; or None."""
        answered = sum(self.words.values())
        passing, flawed = len(self.items["pass"]), len(self.items["fail"])
        if len(self.words) == 1 and answered >= 4 and passing and flawed and len(self.checks) >= 2:
            word = next(iter(self.words))
            return (f"answered {word!r} on all {answered} pairs ({len(self.checks)} checks, {passing} passing "
                    f"and {flawed} flawed items)")
        if self.quotes >= 4 and 2 * self.copied >= self.quotes:
            return f"{self.copied} of its {self.quotes} quotes copy the prompt's own words, not the output"
        return None


async def _worker(queue: Iterator[Job], engine: _Engine) -> None:
    for job in queue:  # a shared iterator: each job goes to exactly one worker
        await engine.run_job(job)


async def run_jobs(
    jobs: Sequence[Job],
    backend: LiveClient,
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
    queue = iter(_ordered(jobs, limiter.ceiling))
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
        tally = engine.tally
        stats.quotes, stats.unverified_quotes, stats.copied_quotes = tally.quotes, tally.unverified, tally.copied
        stats.uninformative = tally.uninformative()
        stats.served_models = engine.watch.other_models
        engine.close()
        reporter.close()
        await backend.aclose()
    return stats
