"""Paired comparison of two rates on the same items: McNemar's exact test and Newcombe's interval."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from rubric_gate.comparison import (
    compare_paired,
    compare_rubrics,
    comparison_lines,
    mcnemar_exact_p,
    paired_difference_interval,
    significant_correct_drop,
)


def test_newcombe_interval_matches_the_published_worked_example() -> None:
    # Fagerland, Lydersen & Laake, "Statistical Analysis of Contingency Tables", ch. 8: complete
    # response before (rows) and after (columns) consolidation therapy, 59 / 6 / 16 / 80.
    # Their difference is before - after = -0.0621 (95% CI -0.1186 to -0.0046); ours is after - before.
    low, high = paired_difference_interval(both=59, from_only=6, to_only=16, neither=80)
    assert (round(low, 4), round(high, 4)) == (0.0046, 0.1186)


def test_hand_worked_mcnemar_p_values() -> None:
    assert mcnemar_exact_p(0, 0) == 1.0  # nothing discordant: no evidence of a change
    assert mcnemar_exact_p(0, 5) == pytest.approx(2 / 32)  # all five discordant items one way
    assert mcnemar_exact_p(0, 6) == pytest.approx(2 / 64)
    assert mcnemar_exact_p(3, 3) == 1.0


def test_a_head_that_fails_six_correct_outputs_is_a_significant_drop() -> None:
    base = np.zeros(10, dtype=bool)  # fails nothing
    head = np.array([True] * 6 + [False] * 4)  # fails six correct items
    flawed = np.zeros(10, dtype=bool)
    comparisons = compare_rubrics(flawed, base, {"head": head})
    correct = next(c for c in comparisons if c.rate == "correct_passed")
    assert correct.to_dict() == {
        "from": "base", "to": "head", "rate": "correct_passed", "from_count": [10, 10], "to_count": [4, 10],
        "delta": -0.6, "ci95": correct.to_dict()["ci95"], "discordant": [0, 6], "p_value": 0.03125,
    }
    low, high = correct.ci95
    assert low < -0.6 < high < 0
    flawed_rate = next(c for c in comparisons if c.rate == "flawed_caught")
    assert flawed_rate.to_dict()["from_count"] == [0, 0] and flawed_rate.delta is None
    assert flawed_rate.ci95 is None and flawed_rate.p_value is None
    assert "p = 0.031" in significant_correct_drop(comparisons, 0.05)
    assert significant_correct_drop(comparisons, 0.01) is None
    (line,) = comparison_lines(comparisons)  # the rate with no items is left out
    assert line == (f"Correct passed, base 10/10 → head 4/10 (-60.0 pts, 95% CI {100 * low:+.1f} to "
                    f"{100 * high:+.1f}; 0 gained, 6 lost; p = 0.031)")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=60))
def test_p_value_is_the_exact_binomial_test_and_the_interval_contains_the_difference(pairs) -> None:
    before = np.array([a for a, _ in pairs])
    after = np.array([b for _, b in pairs])
    c = compare_paired(before, after, source="base", target="head", rate="correct_passed")
    gained, lost = int((after & ~before).sum()), int((before & ~after).sum())
    assert (c.gained, c.lost) == (gained, lost)
    expected = binomtest(gained, gained + lost, 0.5).pvalue if gained + lost else 1.0
    assert c.p_value == pytest.approx(expected, abs=1e-12)
    assert c.delta == pytest.approx(after.mean() - before.mean())
    low, high = c.ci95
    assert -1 <= low <= c.delta + 1e-12 and c.delta - 1e-12 <= high <= 1
    # Swapping the two rubrics mirrors the interval.
    mirrored = compare_paired(after, before, source="base", target="head", rate="correct_passed")
    assert mirrored.ci95 == pytest.approx((-high, -low))
    if gained == lost == 0:
        assert c.p_value == 1.0


def test_json_keeps_a_tiny_p_value_at_full_precision() -> None:
    """40 items lost, none gained: p = 2 / 2**40 ~ 1.8e-12, which six decimals would print as 0."""
    c = compare_paired(np.ones(40, dtype=bool), np.zeros(40, dtype=bool), source="base", target="head",
                       rate="correct_passed")
    p = c.to_dict()["p_value"]
    assert p == pytest.approx(2 / 2**40, rel=1e-9) and p > 0
