"""`judge_missing`: judge every pair the store lacks, from sync code (the CLI and the Action)."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine, Sequence
from typing import Any, Literal, TypeVar

from rubric_gate.calibration import CalibrationSet
from rubric_gate.errors import JudgeError
from rubric_gate.judges.backend import make_backend
from rubric_gate.judges.pairs import all_pairs, missing_pairs
from rubric_gate.judges.pricing import estimate_cost
from rubric_gate.judges.prompt import prompt_version
from rubric_gate.judges.runner import build_jobs, run_jobs
from rubric_gate.judges.spec import parse_judge_spec
from rubric_gate.judges.stats import JudgeRunStats
from rubric_gate.rubric import Rubric
from rubric_gate.verdicts import VerdictStore

T = TypeVar("T")
# Rough sizes for --dry-run estimates: ~4 characters per token; a short JSON reply per verdict.
CHARS_PER_TOKEN = 4
OUTPUT_TOKENS_PER_VERDICT = 40
MAX_LISTED_FAILURES = 10


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """asyncio.run, or in a helper thread when the caller already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


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
    `max_calls` would be exceeded or a key is missing, and JudgeError after the run (good
    verdicts saved) naming pairs still without a valid answer.
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
        est_in = sum(len(job.request.prompt) // CHARS_PER_TOKEN for job in jobs)
        stats.cost_usd = estimate_cost(spec.model, est_in, OUTPUT_TOKENS_PER_VERDICT * len(pending))
        return stats
    if max_calls is not None and len(jobs) > max_calls:
        raise JudgeError(f"{judge}: {len(jobs)} calls needed, above --max-calls {max_calls}; nothing was judged")
    if jobs:
        backend = make_backend(spec)
        run_sync(run_jobs(jobs, backend, store, judge, prompt_version(mode), stats,
                          concurrency=concurrency, progress=progress))
    stats.cost_usd = estimate_cost(spec.model, stats.input_tokens, stats.output_tokens)
    if stats.failures:
        listed = "; ".join(stats.failures[:MAX_LISTED_FAILURES])
        more = f" (+{len(stats.failures) - MAX_LISTED_FAILURES} more)" if len(stats.failures) > MAX_LISTED_FAILURES else ""
        error = JudgeError(f"{judge}: {stats.failed} pairs have no valid answer, none guessed: {listed}{more}")
        error.stats = stats  # type: ignore[attr-defined]
        raise error
    return stats
