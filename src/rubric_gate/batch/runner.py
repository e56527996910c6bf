"""`judge_in_batches`: judge every pair the store lacks through the provider's batch API.

Each round polls the journaled batches still open (collecting those that ended), then submits
what has no verdict and is in no open batch, then waits `poll_interval` - until nothing is open,
or until `wait_seconds` have passed (0: submit, collect what has ended, and return at once).
Pairs that come back without a valid answer are resubmitted, at most `resubmits` times per run;
what is still unanswered is reported and raised as a JudgeError. Nothing is ever guessed.
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal, TextIO

from rubric_gate.batch.collect import collect_batch
from rubric_gate.batch.cost import estimate_batch_cost
from rubric_gate.batch.defaults import DEFAULT_POLL_INTERVAL_S
from rubric_gate.batch.journal import BatchJournal, JournaledBatch, journal_path
from rubric_gate.batch.keys import contains, key_digest, union
from rubric_gate.batch.outcome import BatchOutcome, BatchUnansweredError
from rubric_gate.batch.pending import PairGrid, PairKey, PendingPairs
from rubric_gate.batch.submit import submit_batches
from rubric_gate.calibration import CalibrationSet
from rubric_gate.errors import JudgeError
from rubric_gate.judges.prompt import as_text, prompt_version
from rubric_gate.judges.stats import JudgeRunStats
from rubric_gate.llm.accounting import CHARS_PER_TOKEN, OUTPUT_TOKENS_PER_VERDICT, listed
from rubric_gate.llm.protocols import BatchClient
from rubric_gate.llm.spec import JudgeSpec, batch_client, parse_judge_spec
from rubric_gate.rubric import Rubric
from rubric_gate.verdicts import VerdictStore

DEFAULT_RESUBMITS = 2
ENV_RESUBMITS = "RUBRIC_GATE_BATCH_RESUBMITS"


def _resubmits() -> int:
    text = os.environ.get(ENV_RESUBMITS, str(DEFAULT_RESUBMITS))
    try:
        return max(0, int(text))
    except ValueError:
        raise JudgeError(f"{ENV_RESUBMITS}: expected a whole number, got {text!r}") from None


def _submitted_id(batch: JournaledBatch) -> str:
    assert batch.batch_id is not None  # a batch stays open only once the provider has it
    return batch.batch_id


class _Run:
    def __init__(self, rubrics: Sequence[Rubric], calibration: CalibrationSet, store: VerdictStore,
                 judge: str, mode: Literal["per-check", "checklist"], journal: BatchJournal,
                 progress: TextIO | None) -> None:
        self.store, self.judge, self.mode = store, judge, mode
        self.grid = PairGrid(rubrics, calibration)
        self.outputs = {item.content_hash: as_text(item.output) for item in calibration.items}
        self.prompt = prompt_version(mode)
        self.journal = journal
        self.progress = progress
        self.started = time.monotonic()
        self.open: list[JournaledBatch] = journal.open_batches(judge, self.prompt)
        self.tries: Counter[tuple[str, str, str]] = Counter()  # failed answers per pair, this run
        self.reasons: dict[tuple[str, str, str], str] = {}
        self.resubmits = _resubmits()

    def say(self, text: str) -> None:
        if self.progress is not None:
            print(text, file=self.progress, flush=True)

    def in_flight(self) -> int:
        return len(union(b.keys for b in self.open))

    def missing(self) -> PendingPairs:
        return PendingPairs(self.grid, self.store, self.judge, self.mode)

    def to_submit(self) -> PendingPairs:
        """The missing pairs in no open batch and not out of retries."""
        busy = union(b.keys for b in self.open)
        if not len(busy) and not self.tries:
            return self.missing()

        def skip(key: PairKey) -> bool:
            return contains(busy, key_digest(key)) or self.tries[key] > self.resubmits

        return PendingPairs(self.grid, self.store, self.judge, self.mode, skip)

    def on_failure(self, key: tuple[str, str, str], reason: str) -> None:
        self.tries[key] += 1
        self.reasons[key] = reason

    def adopt_orphans(self, client: BatchClient) -> None:
        """Intents journaled without a batch id (a kill mid-submit): find the batch or drop it."""
        known = self.journal.known_batch_ids()
        for batch in [b for b in self.open if b.batch_id is None]:
            found = client.find(batch.local, batch.created_after, batch.requests, known)
            if found is None:
                self.journal.abandoned(batch.local)
                self.open.remove(batch)
                self.say(f"batch intent {batch.local} was never submitted; its pairs will be submitted again")
            else:
                self.journal.submitted(batch.local, found)
                batch.batch_id = found
                known.add(found)

    def poll(self, client: BatchClient, stats: JudgeRunStats, outcome: BatchOutcome) -> None:
        for batch in list(self.open):
            assert batch.batch_id is not None
            state = client.retrieve(batch.batch_id)
            elapsed = time.monotonic() - self.started
            self.say(f"batch {batch.batch_id} ({batch.requests} requests): {state.progress}; "
                     f"{state.status}, {elapsed:.0f}s elapsed")
            if not state.ended:
                continue
            collect_batch(batch, state, client, self.journal, self.store, stats, self.on_failure, self.outputs)
            self.open.remove(batch)
            outcome.collected.append(batch.batch_id)


def judge_in_batches(
    rubrics: Sequence[Rubric],
    calibration: CalibrationSet,
    store: VerdictStore,
    judge: str,
    *,
    mode: Literal["per-check", "checklist"] = "per-check",
    max_calls: int | None = None,
    dry_run: bool = False,
    wait_seconds: float | None = None,
    poll_interval: float = DEFAULT_POLL_INTERVAL_S,
    progress: bool | None = None,
    journal: Path | None = None,
    client_factory: Callable[[JudgeSpec], BatchClient] = batch_client,
) -> BatchOutcome:
    """Judge the pairs `store` lacks through `judge`'s batch API, resumably.

    `wait_seconds`: None waits until every batch has ended; 0 submits and returns (`--no-wait`);
    otherwise returns after about that long with `outcome.pending` naming what still processes.
    The journal (default: the verdict file's name plus `.batches`) must be kept between runs
    for a later run to collect instead of resubmitting. Raises JudgeError before anything is
    submitted when `max_calls` would be exceeded or a key is missing, and after the run (good
    verdicts saved) naming pairs still without a valid answer.
    """
    spec = parse_judge_spec(judge)
    if poll_interval <= 0:
        raise JudgeError(f"poll interval must be positive, got {poll_interval}")
    if journal is not None:
        journal_file = journal
    elif store.path is not None:
        journal_file = journal_path(Path(store.path))
    else:
        raise JudgeError("batch judging needs a verdict file (the batch journal is kept beside it)")
    book = BatchJournal(journal_file)
    run = _Run(rubrics, calibration, store, judge, mode, book,
               None if progress is False else sys.stderr)
    stats = JudgeRunStats(judge=judge, dry_run=dry_run)
    outcome = BatchOutcome(stats, in_flight_before=run.in_flight(), warnings=list(book.warnings))
    for warning in book.warnings:
        run.say(f"warning: {warning}")
    pending = run.to_submit()
    stats.reused = len(run.grid) - pending.count_missing
    needed = pending.requests()
    if dry_run:
        stats.planned = needed
        est_in = sum(len(job.request.prompt) // CHARS_PER_TOKEN for job in pending.jobs())
        stats.cost_usd = estimate_batch_cost(spec.model, est_in,
                                             OUTPUT_TOKENS_PER_VERDICT * len(pending))
        return outcome
    if max_calls is not None and needed > max_calls:
        raise JudgeError(f"{judge}: {needed} batch requests needed, above --max-calls {max_calls}; "
                         "nothing was submitted")
    if not pending and not run.open:
        stats.cost_usd = estimate_batch_cost(spec.model, 0, 0)
        return outcome  # nothing to do: no client, no request, no key needed

    client = client_factory(spec)
    deadline = None if wait_seconds is None else run.started + max(0.0, wait_seconds)
    store_name = Path(store.path).name if store.path is not None else journal_file.name
    try:
        run.adopt_orphans(client)
        changed = True
        while True:
            collected = len(outcome.collected)
            run.poll(client, stats, outcome)
            changed = changed or len(outcome.collected) > collected
            # Only a collected batch can leave pairs to (re)submit: skip the scan otherwise.
            fresh = run.to_submit() if changed else None
            changed = False
            if fresh:
                if run.tries:
                    stats.retries += sum(1 for p in fresh.pairs() if run.tries[p.key])
                for batch in submit_batches(fresh.jobs(), client, book, judge, run.prompt, store_name):
                    assert batch.batch_id is not None  # submitted: the provider gave it an id
                    run.open.append(batch)
                    outcome.submitted.append(batch.batch_id)
                    stats.planned += batch.requests
                    run.say(f"submitted batch {batch.batch_id}: {batch.requests} requests, "
                            f"{len(batch.keys)} pairs")
            if not run.open:
                break
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                break
            time.sleep(poll_interval if deadline is None else min(poll_interval, max(0.0, deadline - now)))
        if not run.open:
            book.remove_if_idle()
    finally:
        client.close()
        book.close()
        stats.seconds = time.monotonic() - run.started
    outcome.pending = {_submitted_id(b): len(b.keys) for b in run.open}
    stats.cost_usd = estimate_batch_cost(spec.model, stats.input_tokens, stats.output_tokens)
    busy = union(b.keys for b in run.open)
    unanswered = [p for p in run.missing().pairs()
                  if run.tries[p.key] > run.resubmits and not contains(busy, key_digest(p.key))] if run.tries else []
    stats.failed = len(unanswered)
    stats.failures = [run.reasons.get(p.key, f"{p.check_id} @ {p.item.id}: no answer") for p in unanswered]
    if unanswered:
        raise BatchUnansweredError(f"{judge}: {len(unanswered)} pairs have no valid answer after "
                                   f"{run.resubmits} resubmissions, none guessed: {listed(stats.failures)}",
                                   failures=stats.failures, stats=stats, outcome=outcome)
    return outcome
