"""`judge_missing`: judge every pair the store lacks, from sync code (the CLI and the Action)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from rubric_gate.calibration import CalibrationSet
from rubric_gate.errors import JudgeError
from rubric_gate.judges.pairs import all_pairs, missing_pairs
from rubric_gate.judges.prompt import prompt_version
from rubric_gate.judges.runner import build_jobs, run_jobs
from rubric_gate.judges.stats import JudgeRunStats
from rubric_gate.llm.accounting import (
    OUTPUT_TOKENS_PER_VERDICT,
    carrying,
    estimated_tokens,
    raise_unanswered,
)
from rubric_gate.llm.limiter import refuse_over_budget
from rubric_gate.llm.pricing import estimate_cost
from rubric_gate.llm.spec import live_client, parse_judge_spec
from rubric_gate.llm.sync import run_sync
from rubric_gate.rubric import Rubric
from rubric_gate.verdicts import VerdictStore

__all__ = ["judge_missing"]


def judge_missing(
    rubrics: Sequence[Rubric],
    calibration: CalibrationSet,
    store: VerdictStore,
    judge: str,
    *,
    concurrency: int = 8,
    max_calls: int | None = None,
    dry_run: bool = False,
    mode: Literal["per-check", "checklist"] = "per-check",
    progress: bool | None = None,
    samples: int = 1,
) -> JudgeRunStats:
    """Judge the pairs `store` has no verdict for, appending each verdict as it arrives.

    Raises JudgeAuthError at once on rejected credentials, JudgeError before any call when
    `max_calls` would be exceeded or a key is missing, and UnansweredError (a JudgeError
    carrying the run's stats) after the run, good verdicts saved, naming pairs still without
    a valid answer.
    """
    spec = parse_judge_spec(judge)
    if concurrency < 1:
        raise JudgeError(f"concurrency must be at least 1, got {concurrency}")
    if samples < 1 or samples % 2 == 0:
        raise JudgeError(f"samples must be an odd number (a majority always exists), got {samples}")
    pending = missing_pairs(rubrics, calibration, store, judge, mode=mode, samples=samples)
    stats = JudgeRunStats(judge=judge, dry_run=dry_run)
    stats.reused = samples * len(all_pairs(rubrics, calibration)) - len(pending)
    jobs = build_jobs(pending, mode)
    stats.planned = len(jobs)
    if dry_run:
        est_in = sum(estimated_tokens(job.request.prompt) for job in jobs)
        stats.cost_usd = estimate_cost(spec.model, est_in, OUTPUT_TOKENS_PER_VERDICT * len(pending))
        return stats
    refuse_over_budget(len(jobs), max_calls, who=judge, what="calls", nothing="nothing was judged")
    try:
        if jobs:
            backend = live_client(spec)
            run_sync(run_jobs(jobs, backend, store, judge, prompt_version(mode), stats,
                              concurrency=concurrency, progress=progress))
    except JudgeError as exc:  # rejected credentials, a dead endpoint: the calls made so far still count
        raise carrying(exc, stats) from None
    finally:
        stats.cost_usd = estimate_cost(spec.model, stats.input_tokens, stats.output_tokens, stats.cached_tokens,
                                       stats.cache_write_tokens)
    if stats.failures:
        raise_unanswered("pairs", stats.failures, stats=stats, count=stats.failed,
                         prefix=f"{judge}: ", causes=stats.causes)
    return stats
