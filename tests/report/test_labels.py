"""Labels in every format: versions, which items were scored, undefined intervals."""

from __future__ import annotations

import io
from dataclasses import replace

import numpy as np
from rich.console import Console

from rubric_gate.attribution import Rate, Rates
from rubric_gate.reliability import Estimate, label_agreement
from rubric_gate.report import (
    CheckRow,
    RubricSummary,
    render_attribution_markdown,
    render_attribution_text,
)
from rubric_gate.report.trust import estimate_text


def _summary(split: str = "calibration") -> RubricSummary:
    fails = np.array([True, False])
    agreement = label_agreement(fails, fails)
    rows = [CheckRow("a", "text", "hand", False, 1.0, 0.0, 1, 0, 1)]
    return RubricSummary("r", "7", "r.yaml", 0, rows, Rates(Rate(1, 1), Rate(1, 1), Rate(0, 0), None), [],
                         agreement, split)


def test_a_degenerate_interval_reads_undefined() -> None:
    assert estimate_text(Estimate(1.0, None)) == "1.00 (interval undefined)"
    assert estimate_text(Estimate(0.5, None), percent=True) == "50% (interval undefined)"
    assert estimate_text(Estimate(0.5, (0.25, 0.75))) == "0.50 (0.25 to 0.75)"
    assert estimate_text(Estimate(None, None)) == "n/a"


def test_evaluation_items_are_called_evaluation_items() -> None:
    summary = _summary("evaluation")
    out = io.StringIO()
    render_attribution_text(summary, Console(file=out, width=200))
    text = out.getvalue()
    assert "version 7" in text and "on evaluation items" in text
    assert "calibration items" not in text
    assert "flawed evaluation items" in text  # the small-set note
    markdown = render_attribution_markdown(summary)
    assert "version 7" in markdown and "evaluation items" in markdown and "calibration items" not in markdown
    assert "calibration items" in render_attribution_markdown(replace(summary, split="calibration"))
