"""Estimated cost from a price table (USD per million tokens), overridable by the user.

Prices change: the table covers common models as published when it was written; set
RUBRIC_GATE_PRICES to a JSON file or inline JSON `{"model": [input, output]}` to override
or add models. Unknown models get no estimate rather than a wrong one.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from rubric_gate.errors import JudgeError

# model -> (input, output) USD per 1M tokens
PRICES: dict[str, tuple[float, float]] = {
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
    "gpt-5": (1.25, 10.0),
    "gpt-5-mini": (0.25, 2.0),
    "gpt-5-nano": (0.05, 0.4),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4.1-mini": (0.4, 1.6),
    "gpt-4.1-nano": (0.1, 0.4),
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "o3": (2.0, 8.0),
    "o4-mini": (1.1, 4.4),
}

# Dated snapshots and aliases price like their base model.
_SUFFIX = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2}|-latest)$")


def price_table() -> dict[str, tuple[float, float]]:
    table = dict(PRICES)
    override = os.environ.get("RUBRIC_GATE_PRICES")
    if not override:
        return table
    try:
        text = override if override.lstrip().startswith("{") else Path(override).read_text("utf-8")
        for model, (input_price, output_price) in json.loads(text).items():
            table[model] = (float(input_price), float(output_price))
    except (OSError, ValueError, TypeError) as exc:
        raise JudgeError(f"RUBRIC_GATE_PRICES: expected JSON {{\"model\": [input, output]}}: {exc}") from None
    return table


def model_price(model: str) -> tuple[float, float] | None:
    table = price_table()
    return table.get(model) or table.get(_SUFFIX.sub("", model))


def estimate_cost(model: str, input_tokens: int, output_tokens: int) -> float | None:
    price = model_price(model)
    if price is None:
        return None
    return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000
