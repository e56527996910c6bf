"""Collecting an ended batch: each result is routed to its pairs by custom_id (never by order),
parsed strictly like a live reply, and appended to the verdict store; what has no valid answer
is returned for resubmission. Pairs already stored (a collection cut short by a kill) are not
appended twice."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from rubric_gate.batch.journal import BatchJournal, JournaledBatch
from rubric_gate.batch.keys import PairRecord, binds, pair_key, record_task_hash
from rubric_gate.judges.parse import Answer, parse_answer, parse_checklist
from rubric_gate.judges.stats import JudgeRunStats
from rubric_gate.llm.errors import MalformedReply
from rubric_gate.llm.protocols import BatchClient, BatchState
from rubric_gate.llm.replies import excerpt, occurs_in
from rubric_gate.llm.retry import reply_problem
from rubric_gate.verdicts import Usage, Verdict, VerdictStore

APPEND_CHUNK = 1000  # verdicts per store append: bounded memory, few file opens


def _answers(text: str, count: int) -> list[Answer]:
    if count == 1:
        return [parse_answer(text)]
    labels = [f"c{i + 1}" for i in range(count)]  # as the checklist prompt numbered them
    answers = parse_checklist(text, labels)
    return [answers[label] for label in labels]


def _split(total: int, parts: int) -> list[int]:
    share, rest = divmod(total, parts)
    return [share + (1 if i < rest else 0) for i in range(parts)]


class _Verdicts:
    """Answers waiting to be stored, appended a chunk at a time: the pairs the store already
    holds (a collection cut short by a kill) are dropped by one lookup per check text."""

    def __init__(self, batch: JournaledBatch, store: VerdictStore, outputs: dict[str, str],
                 stats: JudgeRunStats) -> None:
        self.batch, self.store, self.outputs, self.stats = batch, store, outputs, stats
        self.waiting: list[tuple[PairRecord, Answer, int, int]] = []
        self.appended = 0
        self.at = datetime.now(UTC).isoformat(timespec="seconds")

    def add(self, record: PairRecord, answer: Answer, tokens_in: int, tokens_out: int) -> None:
        self.waiting.append((record, answer, tokens_in, tokens_out))
        if len(self.waiting) >= APPEND_CHUNK:
            self.flush()

    def flush(self) -> None:
        batch, store, waiting = self.batch, self.store, self.waiting
        self.waiting = []
        by_text: dict[tuple[str, str | None], list[int]] = {}
        for index, (record, *_) in enumerate(waiting):
            by_text.setdefault((record[3], record_task_hash(record)), []).append(index)
        stored = [False] * len(waiting)
        for (text, task), indexes in by_text.items():
            rows = store.rows_for_keys(text, [waiting[i][0][0] for i in indexes], [waiting[i][0][1] for i in indexes],
                                       judge=batch.judge, prompt=batch.prompt, task=task)
            for index, row in zip(indexes, rows.tolist(), strict=True):
                stored[index] = row >= 0
        verdicts, keys = [], set()
        for (record, answer, tokens_in, tokens_out), known in zip(waiting, stored, strict=True):
            item_id, item_hash, check_id, check_text = record[:4]
            key = pair_key(record)
            if known or key in keys:
                continue
            keys.add(key)
            quote, unverified = self.quote(answer.quote, item_hash)
            verdicts.append(Verdict(
                item=item_id, check_text=check_text, answer=answer.answer,
                judge=batch.judge, prompt=batch.prompt, item_hash=item_hash, task_hash=record_task_hash(record),
                check=check_id, quote=quote, unverified_quote=unverified,
                usage=Usage(input_tokens=tokens_in, output_tokens=tokens_out), at=self.at, batch=batch.batch_id,
            ))
        store.append(verdicts, keep=False)
        self.appended += len(verdicts)

    def quote(self, quote: str, item_hash: str | None) -> tuple[str | None, str | None]:
        """(verified, unverified): a quote is evidence only when it occurs in the item's output."""
        if not quote.strip():
            return None, None
        self.stats.quotes += 1
        output = self.outputs.get(item_hash or "")
        if output is not None and occurs_in(quote, output):
            return quote, None
        self.stats.unverified_quotes += 1
        return None, quote


def collect_batch(
    batch: JournaledBatch, state: BatchState, client: BatchClient, journal: BatchJournal,
    store: VerdictStore, stats: JudgeRunStats, on_failure: Callable[[tuple[str, str, str], str], None],
    outputs: dict[str, str] | None = None,
) -> int:
    """Store the batch's verdicts; report each pair without one to `on_failure(key, reason)`.
    Returns the number of verdicts appended. Results stream: per request, only its journal
    offset is held; its pairs are read back when its result arrives. `outputs` (item content
    hash -> output text) checks each quote; one not found is kept as unverified."""
    assert batch.batch_id is not None

    def fail(records: list[PairRecord], reason: str) -> None:
        for record in records:
            on_failure(pair_key(record), f"{record[2]} @ {record[0]}: {reason}")

    pending = _Verdicts(batch, store, outputs or {}, stats)
    with journal.request_index(batch.local) as requests:
        for result in client.results(batch.batch_id):
            records = requests.take(result.custom_id)
            if records is None:
                continue  # not ours, or repeated: never guessed onto a pair
            if not binds(result.custom_id, batch.judge, batch.prompt, records):
                # The journal names other pairs than the request was made for: judged again.
                fail(records, "the journal's pairs for this request are not the ones it was sent for")
                continue
            if result.reply is None:
                fail(records, result.error or "no answer")
                continue
            reply = result.reply
            stats.calls += 1
            stats.input_tokens += reply.input_tokens
            stats.output_tokens += reply.output_tokens
            stats.cached_tokens += reply.cached_tokens
            stats.cache_write_tokens += reply.cache_write_tokens
            try:
                answers = _answers(reply.text, len(records))
            except MalformedReply as exc:
                fail(records, f"malformed reply ({reply_problem(reply, exc)}; it began {excerpt(reply.text)})")
                continue
            n = len(records)
            for record, answer, tokens_in, tokens_out in zip(records, answers, _split(reply.input_tokens, n),
                                                             _split(reply.output_tokens, n), strict=True):
                pending.add(record, answer, tokens_in, tokens_out)
        pending.flush()
        missing_reason = f"no result (batch {state.status}{': ' + state.detail if state.detail else ''})"
        for records in requests.remaining():
            fail(records, missing_reason)
    journal.closed(batch.local, batch.batch_id)
    return pending.appended
