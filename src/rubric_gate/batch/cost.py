"""Batch prices: half the live price for both providers (their batch discount), unless
RUBRIC_GATE_BATCH_PRICES (a JSON file or inline JSON `{"model": [input, output]}`, USD per
million tokens) says otherwise for a model."""

from __future__ import annotations

import json
import os
from pathlib import Path

from rubric_gate.errors import JudgeError
from rubric_gate.llm.pricing import model_price

BATCH_DISCOUNT = 0.5
ENV_BATCH_PRICES = "RUBRIC_GATE_BATCH_PRICES"


def _overrides() -> dict[str, tuple[float, float]]:
    text = os.environ.get(ENV_BATCH_PRICES)
    if not text:
        return {}
    try:
        raw = text if text.lstrip().startswith("{") else Path(text).read_text("utf-8")
        return {model: (float(i), float(o)) for model, (i, o) in json.loads(raw).items()}
    except (OSError, ValueError, TypeError) as exc:
        raise JudgeError(f"{ENV_BATCH_PRICES}: expected JSON {{\"model\": [input, output]}}: {exc}") from None


def batch_price(model: str) -> tuple[float, float] | None:
    override = _overrides().get(model)
    if override is not None:
        return override
    live = model_price(model)
    return None if live is None else (live[0] * BATCH_DISCOUNT, live[1] * BATCH_DISCOUNT)


def estimate_batch_cost(model: str, input_tokens: int, output_tokens: int) -> float | None:
    price = batch_price(model)
    if price is None:
        return None
    return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000
