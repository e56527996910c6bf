"""What a run says before and after its calls: the dry-run estimate and the listing of calls
left without a valid answer (raised as UnansweredError, never guessed)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NoReturn

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


def raise_unanswered(what: str, failures: Sequence[str], *, stats: Any = None,
                     count: int | None = None, prefix: str = "") -> NoReturn:
    """`{prefix}{count} {what} have no valid answer, none guessed: <listing>`."""
    count = len(failures) if count is None else count
    raise UnansweredError(f"{prefix}{count} {what} have no valid answer, none guessed: {listed(failures)}",
                          failures=list(failures), stats=stats)
