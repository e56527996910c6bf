"""What a run says before and after its calls: the dry-run estimate and the listing of calls
left without a valid answer (raised as UnansweredError, never guessed)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NoReturn, TypeVar

from rubric_gate.llm.errors import UnansweredError

# Rough sizes for --dry-run estimates: ~4 characters per token; a short JSON reply per verdict.
CHARS_PER_TOKEN = 4
OUTPUT_TOKENS_PER_VERDICT = 40
MAX_LISTED_FAILURES = 10


def estimated_tokens(prompt: str) -> int:
    return len(prompt) // CHARS_PER_TOKEN


def listed(failures: Sequence[str], total: int | None = None) -> str:
    """The first MAX_LISTED_FAILURES failures, then how many more (`total`: all of them)."""
    total = len(failures) if total is None else total
    text = "; ".join(failures[:MAX_LISTED_FAILURES])
    if total > MAX_LISTED_FAILURES:
        text += f" (+{total - MAX_LISTED_FAILURES} more)"
    return text


def by_cause(causes: dict[str, int]) -> str:
    """`3 cut off, 1 timeout`: calls or pairs without a valid answer counted by cause, largest first."""
    return ", ".join(f"{n} {cause}" for cause, n in sorted(causes.items(), key=lambda kv: (-kv[1], kv[0])))


def raise_unanswered(what: str, failures: Sequence[str], *, stats: Any = None,
                     count: int | None = None, prefix: str = "", causes: dict[str, int] | None = None) -> NoReturn:
    """`{prefix}{count} {what} have no valid answer, none guessed ({causes}): <listing>`."""
    count = len(failures) if count is None else count
    why = f" ({by_cause(causes)})" if causes else ""
    raise UnansweredError(f"{prefix}{count} {what} have no valid answer, none guessed{why}: {listed(failures)}",
                          failures=list(failures), stats=stats)


E = TypeVar("E", bound=BaseException)


def carrying(exc: E, stats: Any) -> E:
    """`exc` with the statistics of the run it ended (calls, tokens, retries, cost so far), so
    the command still prints its totals: one statistics object or a list of them. Statistics
    already attached (by a step further in) are kept."""
    if getattr(exc, "stats", None) is None:
        exc.stats = stats  # type: ignore[attr-defined]
    return exc


def with_earlier(exc: E, earlier: Sequence[Any]) -> E:
    """`exc` carrying the statistics of the steps that ran before the one that failed, too."""
    later = run_totals(exc)
    exc.stats = [*(s for s in earlier if not any(s is t for t in later)), *later]  # type: ignore[attr-defined]
    return exc


def run_totals(exc: BaseException) -> list[Any]:
    """The statistics objects an error carries (each with `summary` and `to_dict()`), flattened."""
    stats = getattr(exc, "stats", None)
    if stats is None:
        return []
    found = list(stats) if isinstance(stats, (list, tuple)) else [stats]
    return [s for s in found if hasattr(s, "summary") and hasattr(s, "to_dict")]
