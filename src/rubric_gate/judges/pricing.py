"""Model prices: defined in `rubric_gate.llm.pricing` (the model-calling layer)."""

from rubric_gate.llm.pricing import estimate_cost, model_price, price_table

__all__ = ["estimate_cost", "model_price", "price_table"]
