"""Submitting: cut the pending jobs into batches and, per batch, journal the intent and its
requests (synced), submit, then journal the batch id. Jobs arrive one at a time and each
prompt is rendered as its request line is written: nothing is held per request but its key's
8-byte digest; the batch's lines go to a temporary file beside the journal, removed after
submission."""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path

from rubric_gate.batch.journal import BatchJournal, JournaledBatch
from rubric_gate.batch.keys import PairRecord, request_digest
from rubric_gate.batch.requests import BatchCutter
from rubric_gate.errors import JudgeAuthError
from rubric_gate.judges.pairs import Pair
from rubric_gate.judges.runner import Job
from rubric_gate.llm.protocols import BatchClient

TOOL = "rubric-gate"


def pair_record(pair: Pair) -> PairRecord:
    return pair.item.id, pair.item_hash, pair.check_id, pair.check_text, pair.task_hash


def submit_batches(
    jobs: Iterable[Job], client: BatchClient, journal: BatchJournal,
    judge: str, prompt: str, store_name: str,
) -> list[JournaledBatch]:
    submitted: list[JournaledBatch] = []
    cutter = BatchCutter(jobs, client.limits, client.request_line,
                         bind=lambda job: request_digest(judge, prompt, [pair_record(p) for p in job.pairs]))
    while (batch := cutter.next_batch()) is not None:
        local, lines = batch
        journal.open_batch(local, client.provider, judge, prompt)
        entry = JournaledBatch(local, client.provider, judge, prompt, 0.0)
        with tempfile.NamedTemporaryFile("wb", dir=journal.path.parent, prefix=".rubric-gate-",
                                         suffix=".jsonl", delete=False) as handle:
            requests_file = Path(handle.name)
            for line in lines:
                handle.write(line.data)
                records = [pair_record(p) for p in line.job.pairs]
                journal.add_request(local, line.custom_id, records)
                entry.requests += 1
                entry.keys.update(p.key for p in line.job.pairs)
        try:
            journal.sync()  # the intent is on disk before the provider can know the batch
            metadata = {"tool": TOOL, "store": store_name[-500:], "judge": judge[:500]}
            try:
                entry.batch_id = client.submit(local, requests_file, metadata)
            except JudgeAuthError:
                journal.abandoned(local)  # rejected outright: no batch exists
                raise
        finally:
            requests_file.unlink(missing_ok=True)
        journal.submitted(local, entry.batch_id)
        submitted.append(entry)
    return submitted
