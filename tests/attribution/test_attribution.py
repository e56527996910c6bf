"""Attribution: closed form against enumerated Shapley values, the paper's worked example, rates."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from rubric_gate.attribution import (
    attribute,
    compute_rates,
    failure_counts,
    joint_catches,
    predicted_pass_rate,
    shapley_by_enumeration,
)

# The paper's Table 1: four checks A-D on five outputs.
PAPER_FAILED = np.array(
    [
        [1, 0, 0, 0],  # R1 flawed: A
        [1, 1, 0, 0],  # R2 flawed: A, B
        [0, 1, 1, 1],  # R3 flawed: B, C, D
        [0, 0, 0, 1],  # R4 correct: D
        [0, 0, 0, 0],  # R5 correct: none
    ],
    dtype=bool,
)
PAPER_FLAWED = np.array([True, True, True, False, False])


def test_paper_four_check_example() -> None:
    result = attribute(PAPER_FAILED, PAPER_FLAWED)
    assert result.credit == pytest.approx([1.5, 5 / 6, 1 / 3, 1 / 3])
    assert [round(c, 2) for c in result.credit] == [1.5, 0.83, 0.33, 0.33]
    assert result.blame == pytest.approx([0, 0, 0, 1])
    assert result.unique_catches.tolist() == [1, 0, 0, 0]
    # Efficiency: credit sums to flawed items caught, blame to correct items failed.
    assert result.credit.sum() == pytest.approx(3)
    assert result.blame.sum() == pytest.approx(1)


def test_paper_example_matches_enumeration() -> None:
    credit, blame = shapley_by_enumeration(PAPER_FAILED, PAPER_FLAWED)
    result = attribute(PAPER_FAILED, PAPER_FLAWED)
    assert result.credit == pytest.approx(credit)
    assert result.blame == pytest.approx(blame)


def _cases(max_checks: int = 6):
    return st.integers(1, max_checks).flatmap(
        lambda n_checks: st.integers(1, 12).flatmap(
            lambda n_items: st.tuples(
                arrays(bool, (n_items, n_checks)),
                arrays(bool, (n_items,)),
                st.integers(0, n_checks),
            )
        )
    )


@settings(max_examples=150, deadline=None)
@given(_cases())
def test_closed_form_equals_enumerated_shapley(case) -> None:
    failed, flawed, k = case
    credit, blame = shapley_by_enumeration(failed, flawed, k)
    result = attribute(failed, flawed, k)
    np.testing.assert_allclose(result.credit, credit, atol=1e-9)
    np.testing.assert_allclose(result.blame, blame, atol=1e-9)


def _caught_without(failed: np.ndarray, removed: set[int], k: int) -> np.ndarray:
    keep = [c for c in range(failed.shape[1]) if c not in removed]
    return failed[:, keep].sum(axis=1) > k


@settings(max_examples=150, deadline=None)
@given(_cases())
def test_unique_catches_are_catches_lost_by_deleting_that_check(case) -> None:
    failed, flawed, k = case
    result = attribute(failed, flawed, k)
    caught = failed.sum(axis=1) > k
    for check in range(failed.shape[1]):
        lost = flawed & caught & ~_caught_without(failed, {check}, k)
        assert result.unique_catches[check] == lost.sum()


@settings(max_examples=100, deadline=None)
@given(_cases())
def test_joint_catches_are_lost_only_when_both_checks_go(case) -> None:
    failed, flawed, k = case
    pairs = {jc.checks: jc.catches for jc in joint_catches(failed, flawed, k)}
    caught = failed.sum(axis=1) > k
    for a, b in itertools.combinations(range(failed.shape[1]), 2):
        lost_pair = flawed & caught & ~_caught_without(failed, {a, b}, k)
        lost_alone = flawed & caught & (~_caught_without(failed, {a}, k) | ~_caught_without(failed, {b}, k))
        assert pairs.get((a, b), 0) == int((lost_pair & ~lost_alone).sum())


def test_max_failures_gives_shares_only_above_k() -> None:
    result = attribute(PAPER_FAILED, PAPER_FLAWED, max_failures=1)
    # R1 (|F| = 1) is no longer caught; R2 is pivotal for A and B; R3 shares 1/3 each.
    assert result.credit == pytest.approx([0.5, 0.5 + 1 / 3, 1 / 3, 1 / 3])
    assert result.blame == pytest.approx([0, 0, 0, 0])
    assert result.unique_catches.tolist() == [1, 1, 0, 0]


def test_rates_report_counts_and_unplanned() -> None:
    unplanned = np.array([False, False, True, False, False])
    rates = compute_rates(PAPER_FAILED, PAPER_FLAWED, unplanned)
    assert (rates.correct_passed.count, rates.correct_passed.total) == (1, 2)
    assert (rates.flawed_caught.count, rates.flawed_caught.total) == (3, 3)
    assert (rates.unplanned_caught.count, rates.unplanned_caught.total) == (1, 1)
    # Correct items: D fails one of two, the others none: predicted 1 * 1 * 1 * 0.5.
    assert rates.predicted_correct_passed == pytest.approx(0.5)


@settings(max_examples=60, deadline=None)
@given(arrays(float, (5,), elements=st.floats(0, 1)), st.integers(0, 5))
def test_predicted_pass_rate_is_poisson_binomial(fail_p, k) -> None:
    # Build a correct-item table whose per-check fail rates are exactly fail_p on a grid of 1000 items.
    n = 1000
    counts = np.round(fail_p * n).astype(int)
    table = np.zeros((n, len(fail_p)), dtype=bool)
    for j, c in enumerate(counts):
        table[:c, j] = True
    p = counts / n
    expected = 0.0
    for pattern in itertools.product([0, 1], repeat=len(p)):
        if sum(pattern) <= k:
            expected += float(np.prod([pj if bit else 1 - pj for pj, bit in zip(p, pattern, strict=True)]))
    assert predicted_pass_rate(table, k) == pytest.approx(expected)


def test_bad_shapes_are_rejected() -> None:
    with pytest.raises(ValueError, match="2-D"):
        attribute(np.zeros(3, bool), np.zeros(3, bool))
    with pytest.raises(ValueError, match="one entry per item"):
        attribute(np.zeros((3, 2), bool), np.zeros(2, bool))
    with pytest.raises(ValueError, match="max_failures"):
        attribute(np.zeros((3, 2), bool), np.zeros(3, bool), -1)


def test_wilson_interval_matches_hand_computation():
    from rubric_gate.reliability import wilson_interval

    # 20/22: p = .909, z = 1.96 -> centre .8798, half .1265 (by hand from the Wilson formula)
    low, high = wilson_interval(20, 22)
    assert round(low, 3) == 0.722 and round(high, 3) == 0.975
    assert wilson_interval(0, 10)[0] == 0.0
    assert wilson_interval(10, 10)[1] == 1.0
    assert wilson_interval(0, 0) is None


@pytest.mark.parametrize("checks", [0, 1, 255, 256, 65535, 65536])
def test_failure_counts_are_exact_whatever_the_number_of_checks(checks: int) -> None:
    # counted in the narrowest type that holds the number of checks: a row failing every check
    # is the largest count, and a strided view counts as its copy does
    failed = np.zeros((3, checks), dtype=bool)
    failed[0] = True
    failed[1, ::2] = True
    counts = failure_counts(failed)
    assert counts.dtype == np.int64
    assert counts.tolist() == [checks, (checks + 1) // 2, 0]
    assert failure_counts(failed[:, ::2]).tolist() == failed[:, ::2].sum(axis=1).tolist()


@pytest.mark.parametrize("k", [0, 2])
def test_group_sums_taken_apart_or_at_once_give_the_same_attribution(k: int, monkeypatch) -> None:
    # Many (flawed, |F|) groups: each check's density differs, so |F| spreads over 0..150.
    from rubric_gate.attribution import shapley

    rng = np.random.default_rng(7)
    failed = rng.random((400, 150)) < np.linspace(0.0, 0.9, 400)[:, None]
    flawed = rng.random(400) < 0.5
    counts = failed.sum(axis=1)
    expected_credit = sum(failed[i] / counts[i] for i in range(400) if flawed[i] and counts[i] > k)
    at_once = attribute(failed, flawed, k)  # more groups than are summed apart: one reduceat
    monkeypatch.setattr(shapley, "GROUPS_SUMMED_APART", 10**9)
    apart = attribute(failed, flawed, k)
    assert len({(bool(f), int(c)) for f, c in zip(flawed, counts, strict=True) if c > k}) > 64
    for result in (apart, at_once):
        np.testing.assert_allclose(result.credit, expected_credit, atol=1e-9)
    assert apart.credit.tolist() == at_once.credit.tolist() and apart.blame.tolist() == at_once.blame.tolist()
    assert apart.unique_catches.tolist() == at_once.unique_catches.tolist()
