"""Batch judging: the live judge's requests through OpenAI Batch and Anthropic Message Batches
(half price, separate rate limits), resumable across kills and CI runs through a journal kept
beside the verdict store, each pair in at most one open batch and stored exactly once."""

from rubric_gate.batch.cost import batch_price, estimate_batch_cost
from rubric_gate.batch.journal import BatchJournal, journal_path
from rubric_gate.batch.outcome import BatchOutcome
from rubric_gate.batch.requests import BatchLimits
from rubric_gate.batch.runner import DEFAULT_POLL_INTERVAL_S, judge_in_batches

__all__ = [
    "DEFAULT_POLL_INTERVAL_S",
    "BatchJournal",
    "BatchLimits",
    "BatchOutcome",
    "batch_price",
    "estimate_batch_cost",
    "journal_path",
    "judge_in_batches",
]
