"""Collecting an ended batch: each result is routed to its pairs by custom_id (never by order),
parsed strictly like a live reply, and appended to the verdict store; what has no valid answer
is returned for resubmission. Pairs already stored (a collection cut short by a kill) are not
appended twice."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from rubric_gate.batch.client import BatchClient, BatchState
from rubric_gate.batch.journal import (
    BatchJournal,
    JournaledBatch,
    PairRecord,
    pair_key,
    record_task_hash,
)
from rubric_gate.judges.parse import Answer, MalformedReply, parse_answer, parse_checklist
from rubric_gate.judges.stats import JudgeRunStats
from rubric_gate.verdicts import Usage, Verdict, VerdictStore

APPEND_CHUNK = 1000  # verdicts per store append: bounded memory, few file opens


@dataclass(frozen=True)
class _ItemRef:
    """What `VerdictStore.find` reads of an item in keyed mode, from the journal."""

    id: str
    content_hash: str


def _answers(text: str, count: int) -> list[Answer]:
    if count == 1:
        return [parse_answer(text)]
    labels = [f"c{i + 1}" for i in range(count)]  # as the checklist prompt numbered them
    answers = parse_checklist(text, labels)
    return [answers[label] for label in labels]


def _split(total: int, parts: int) -> list[int]:
    share, rest = divmod(total, parts)
    return [share + (1 if i < rest else 0) for i in range(parts)]


def collect_batch(
    batch: JournaledBatch, state: BatchState, client: BatchClient, journal: BatchJournal,
    store: VerdictStore, stats: JudgeRunStats, on_failure: Callable[[tuple[str, str, str], str], None],
) -> int:
    """Store the batch's verdicts; report each pair without one to `on_failure(key, reason)`.
    Returns the number of verdicts appended."""
    assert batch.batch_id is not None
    requests = journal.requests_of(batch.local)
    seen: set[str] = set()
    buffer: list[Verdict] = []
    appended = 0
    at = datetime.now(UTC).isoformat(timespec="seconds")

    def fail(records: list[PairRecord], reason: str) -> None:
        for record in records:
            on_failure(pair_key(record), f"{record[2]} @ {record[0]}: {reason}")

    for result in client.results(batch.batch_id):
        records = requests.get(result.custom_id)
        if records is None or result.custom_id in seen:
            continue  # not ours, or repeated: never guessed onto a pair
        seen.add(result.custom_id)
        if result.reply is None:
            fail(records, result.error or "no answer")
            continue
        reply = result.reply
        stats.calls += 1
        stats.input_tokens += reply.input_tokens
        stats.output_tokens += reply.output_tokens
        try:
            answers = _answers(reply.text, len(records))
        except MalformedReply as exc:
            fail(records, f"malformed reply ({exc})")
            continue
        n = len(records)
        for record, answer, tin, tout in zip(records, answers, _split(reply.input_tokens, n),
                                             _split(reply.output_tokens, n), strict=True):
            item_id, item_hash, check_id, check_text = record[:4]
            task = record_task_hash(record)
            if store.find(check_text, _ItemRef(item_id, item_hash), judge=batch.judge,
                          prompt=batch.prompt, task=task) is not None:
                continue
            buffer.append(Verdict(
                item=item_id, check_text=check_text, answer=answer.answer,
                judge=batch.judge, prompt=batch.prompt, item_hash=item_hash, task_hash=task, check=check_id,
                quote=answer.quote or None, usage=Usage(input_tokens=tin, output_tokens=tout),
                at=at, batch=batch.batch_id,
            ))
        if len(buffer) >= APPEND_CHUNK:
            store.append(buffer)
            appended += len(buffer)
            buffer = []
    if buffer:
        store.append(buffer)
        appended += len(buffer)
    missing_reason = f"no result (batch {state.status}{': ' + state.detail if state.detail else ''})"
    for custom_id, records in requests.items():
        if custom_id not in seen:
            fail(records, missing_reason)
    journal.closed(batch.local, batch.batch_id)
    return appended
