"""Estimated cost from a price table (USD per million tokens), overridable by the user.

Prices change: the table covers common models as published when it was written; set
RUBRIC_GATE_PRICES to a JSON file or inline JSON `{"model": [input, output]}` (or
`[input, output, cached input]`) to override or add models. Unknown models get no estimate
rather than a wrong one.

Prompt caching: input tokens read from a provider's cache are priced at the model's cached
input price (Anthropic: a tenth of the input price; OpenAI: per model, from its price list);
tokens written to Anthropic's cache cost 1.25 times the input price (the 5-minute cache). A
model added without a cached price pays the full input price for cached tokens: an estimate
errs high, never low.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from rubric_gate.errors import JudgeError

# model -> (input, output) or (input, output, cached input), USD per 1M tokens
PRICES: dict[str, tuple[float, ...]] = {
    "claude-opus-4-6": (5.0, 25.0),
    "claude-sonnet-4-6": (3.0, 15.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "claude-3-haiku": (0.25, 1.25),
    "gpt-5": (1.25, 10.0, 0.125),
    "gpt-5-mini": (0.25, 2.0, 0.025),
    "gpt-5-nano": (0.05, 0.4, 0.005),
    "gpt-4.1": (2.0, 8.0, 0.5),
    "gpt-4.1-mini": (0.4, 1.6, 0.1),
    "gpt-4.1-nano": (0.1, 0.4, 0.025),
    "gpt-4o": (2.5, 10.0, 1.25),
    "gpt-4o-mini": (0.15, 0.6, 0.075),
    "o3": (2.0, 8.0, 0.5),
    "o4-mini": (1.1, 4.4, 0.275),
}
CLAUDE_CACHE_READ = 0.1  # Anthropic: a cache read costs a tenth of the input price, every model
CACHE_WRITE = 1.25  # Anthropic: writing the 5-minute cache costs 1.25 times the input price

# Dated snapshots and aliases price like their base model.
_SUFFIX = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2}|-latest)$")


def _prices(model: str, values: object) -> tuple[float, ...]:
    if not isinstance(values, (list, tuple)) or len(values) not in (2, 3):
        raise TypeError(f"{model}: expected [input, output] or [input, output, cached input]")
    return tuple(float(v) for v in values)


def price_table() -> dict[str, tuple[float, ...]]:
    table = dict(PRICES)
    override = os.environ.get("RUBRIC_GATE_PRICES")
    if not override:
        return table
    try:
        text = override if override.lstrip().startswith("{") else Path(override).read_text("utf-8")
        for model, values in json.loads(text).items():
            table[model] = _prices(model, values)
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise JudgeError("RUBRIC_GATE_PRICES: expected JSON {\"model\": [input, output]} or "
                         f"{{\"model\": [input, output, cached input]}}: {exc}") from None
    return table


def _entry(model: str) -> tuple[float, ...] | None:
    table = price_table()
    return table.get(model) or table.get(_SUFFIX.sub("", model))


def model_price(model: str) -> tuple[float, float] | None:
    """(input, output) USD per 1M tokens, or None for a model with no price."""
    entry = _entry(model)
    return None if entry is None else (entry[0], entry[1])


def cached_price(model: str) -> float | None:
    """USD per 1M input tokens read from the prompt cache."""
    entry = _entry(model)
    if entry is None:
        return None
    if len(entry) > 2:
        return entry[2]
    return entry[0] * CLAUDE_CACHE_READ if model.startswith("claude") else entry[0]


def estimate_cost(model: str, input_tokens: int, output_tokens: int, cached_tokens: int = 0,
                  cache_write_tokens: int = 0) -> float | None:
    """`input_tokens` counts every prompt token; `cached_tokens` of them were read from the
    prompt cache and `cache_write_tokens` written to it."""
    entry = _entry(model)
    if entry is None:
        return None
    cached = cached_price(model) or 0.0
    fresh = max(0, input_tokens - cached_tokens - cache_write_tokens)
    return (fresh * entry[0] + cached_tokens * cached + cache_write_tokens * entry[0] * CACHE_WRITE
            + output_tokens * entry[1]) / 1_000_000
