"""Batch judging: the live judge's requests through OpenAI Batch and Anthropic Message Batches
(half price, separate rate limits), resumable across kills and CI runs through a journal kept
beside the verdict store, each pair in at most one open batch and stored exactly once.

Names load on first use (PEP 562), as in `rubric_gate.judges`: commands that only offer
`--batch` do not import the SDKs until it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubric_gate.batch.defaults import DEFAULT_POLL_INTERVAL_S as DEFAULT_POLL_INTERVAL_S
from rubric_gate.lazy import lazy_exports

if TYPE_CHECKING:  # the same names for the type checker (a test keeps the two equal)
    from rubric_gate.batch.cost import batch_price as batch_price
    from rubric_gate.batch.cost import estimate_batch_cost as estimate_batch_cost
    from rubric_gate.batch.journal import BatchJournal as BatchJournal
    from rubric_gate.batch.journal import journal_path as journal_path
    from rubric_gate.batch.outcome import BatchOutcome as BatchOutcome
    from rubric_gate.batch.runner import judge_in_batches as judge_in_batches


_EXPORTS = {
    "batch_price": "rubric_gate.batch.cost",
    "estimate_batch_cost": "rubric_gate.batch.cost",
    "BatchJournal": "rubric_gate.batch.journal",
    "journal_path": "rubric_gate.batch.journal",
    "BatchOutcome": "rubric_gate.batch.outcome",
    "judge_in_batches": "rubric_gate.batch.runner",
}

__all__ = sorted([*_EXPORTS, "DEFAULT_POLL_INTERVAL_S"])

__getattr__, __dir__ = lazy_exports("rubric_gate.batch", _EXPORTS, globals())
