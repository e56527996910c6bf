"""Batch judging: the live judge's requests through OpenAI Batch and Anthropic Message Batches
(half price, separate rate limits), resumable across kills and CI runs through a journal kept
beside the verdict store, each pair in at most one open batch and stored exactly once.

Names load on first use (PEP 562), as in `rubric_gate.judges`: commands that only offer
`--batch` do not import the SDKs until it is used.
"""

from __future__ import annotations

from rubric_gate.lazy import lazy_exports

DEFAULT_POLL_INTERVAL_S = 30.0  # seconds between batch status checks

_EXPORTS = {
    "batch_price": "rubric_gate.batch.cost",
    "estimate_batch_cost": "rubric_gate.batch.cost",
    "BatchJournal": "rubric_gate.batch.journal",
    "journal_path": "rubric_gate.batch.journal",
    "BatchOutcome": "rubric_gate.batch.outcome",
    "BatchLimits": "rubric_gate.batch.requests",
    "judge_in_batches": "rubric_gate.batch.runner",
}

__all__ = sorted([*_EXPORTS, "DEFAULT_POLL_INTERVAL_S"])

__getattr__, __dir__ = lazy_exports("rubric_gate.batch", _EXPORTS, globals())
