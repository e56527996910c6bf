"""Agreement statistics against hand computations."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rubric_gate.cli.main import main
from rubric_gate.reliability import (
    balanced_accuracy,
    bootstrap_interval,
    cohen_kappa,
    label_agreement,
    mcc,
    wilson_interval,
)
from rubric_gate.reliability.agreement import _percentiles, _resampled, kappa_from_counts

# predicted (rubric fails) vs truth (flawed): tp=2, fp=1, fn=1, tn=4
PREDICTED = np.array([1, 1, 0, 0, 1, 0, 0, 0], dtype=bool)
TRUTH = np.array([1, 0, 0, 0, 1, 1, 0, 0], dtype=bool)


def test_kappa_mcc_balanced_accuracy_by_hand() -> None:
    observed = 6 / 8
    expected = (3 * 3 + 5 * 5) / 64  # both raters say "yes" 3 of 8 times
    assert cohen_kappa(PREDICTED, TRUTH) == pytest.approx((observed - expected) / (1 - expected))
    assert mcc(PREDICTED, TRUTH) == pytest.approx((2 * 4 - 1 * 1) / math.sqrt(3 * 3 * 5 * 5))
    assert balanced_accuracy(PREDICTED, TRUTH) == pytest.approx((2 / 3 + 4 / 5) / 2)


def test_undefined_cases_are_none() -> None:
    constant = np.zeros(6, dtype=bool)
    assert cohen_kappa(constant, constant) is None  # no variation: expected agreement 1
    assert mcc(constant, TRUTH[:6]) is None
    assert balanced_accuracy(PREDICTED[:4], np.zeros(4, dtype=bool)) is None
    assert cohen_kappa(~constant, constant) == 0.0  # complete disagreement, nothing by chance


def test_perfect_and_inverted_agreement() -> None:
    assert cohen_kappa(TRUTH, TRUTH) == pytest.approx(1.0)
    assert mcc(~TRUTH, TRUTH) == pytest.approx(-1.0)
    assert balanced_accuracy(~TRUTH, TRUTH) == pytest.approx(0.0)


def test_vectorised_counts_match_scalar() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.random((50, 20)) < 0.5, rng.random((50, 20)) < 0.4
    vector = kappa_from_counts((a & b).sum(1), (~a & ~b).sum(1), (a & ~b).sum(1), (~a & b).sum(1))
    for row in range(50):
        scalar = cohen_kappa(a[row], b[row])
        assert (scalar is None and np.isnan(vector[row])) or vector[row] == pytest.approx(scalar)


def test_bootstrap_is_seeded_and_brackets_the_value() -> None:
    predicted = np.tile(PREDICTED, 5)
    truth = np.tile(TRUTH, 5)
    first = bootstrap_interval(kappa_from_counts, predicted, truth)
    assert first == bootstrap_interval(kappa_from_counts, predicted, truth)
    assert first is not None and first[0] < cohen_kappa(predicted, truth) < first[1]  # type: ignore[operator]
    narrower = bootstrap_interval(kappa_from_counts, np.tile(PREDICTED, 50), np.tile(TRUTH, 50))
    assert narrower is not None and narrower[1] - narrower[0] < first[1] - first[0]


def test_label_agreement_notes_small_sets() -> None:
    small = label_agreement(PREDICTED, TRUTH)
    assert small.small_set and "only 5 correct and 3 flawed" in (small.note or "")
    big = label_agreement(np.tile(PREDICTED, 12), np.tile(TRUTH, 12))  # 60 correct, 36 flawed
    assert not big.small_set and big.note is None
    data = big.to_dict()
    assert data["cohen_kappa"]["value"] == pytest.approx(0.4667, abs=1e-4)
    assert data["cohen_kappa"]["ci95"][0] < 0.4667 < data["cohen_kappa"]["ci95"][1]


def test_wilson_interval_by_hand() -> None:
    # 20/22: the example, 72-97%.
    low, high = wilson_interval(20, 22)  # type: ignore[misc]
    assert round(100 * low) == 72 and round(100 * high) == 97
    assert wilson_interval(0, 0) is None


@pytest.mark.integration
def test_bundled_example_reports_agreement_with_the_labels(capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    code = main(["attribute", "rubrics/cloud-security-review.yaml", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    # 20 of 22 correct passed, 23 of 24 flawed caught: tp 23, fn 1, fp 2, tn 20.
    tp, fn, fp, tn = 23, 1, 2, 20
    n = tp + fn + fp + tn
    expected_kappa = ((tp + tn) / n - ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / n**2) / (
        1 - ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / n**2)
    agreement = data["agreement"]
    assert agreement["cohen_kappa"]["value"] == pytest.approx(expected_kappa, abs=1e-4)
    assert agreement["mcc"]["value"] == pytest.approx((tp * tn - fp * fn) / math.sqrt(
        (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)), abs=1e-4)
    assert agreement["balanced_accuracy"]["value"] == pytest.approx((tp / 24 + tn / 22) / 2, abs=1e-4)
    low, high = agreement["cohen_kappa"]["ci95"]
    assert low < expected_kappa < high <= 1
    assert agreement["correct"] == 22 and agreement["flawed"] == 24 and "fewer than 30" in agreement["note"]


def test_count_bootstrap_matches_resampling_items() -> None:
    """Drawing the confusion counts (multinomial) is the item bootstrap: same interval, within noise."""
    from rubric_gate.reliability.agreement import bootstrap_interval, kappa_from_counts

    rng = np.random.default_rng(7)
    truth = rng.random(300) < 0.4
    predicted = np.where(rng.random(300) < 0.85, truth, ~truth)
    draws = rng.integers(0, 300, size=(4000, 300))
    p, t = predicted[draws], truth[draws]
    by_items = kappa_from_counts((p & t).sum(1), (~p & ~t).sum(1), (p & ~t).sum(1), (~p & t).sum(1))
    low, high = np.percentile(by_items, [2.5, 97.5])
    ours = bootstrap_interval(kappa_from_counts, predicted, truth, resamples=4000)
    assert ours is not None
    assert abs(ours[0] - low) < 0.02 and abs(ours[1] - high) < 0.02


def test_paraphrase_kappa_sees_the_noise_raw_agreement_hides() -> None:
    # The case: "no" is rare (1 in 20) in both, and the paraphrase's "no" falls elsewhere.
    from rubric_gate.reliability import paraphrase_agreement, paraphrase_kappa

    original = np.zeros(20, dtype=bool)
    original[0] = True
    noise = np.zeros(20, dtype=bool)
    noise[5] = True
    assert paraphrase_agreement(original, noise[None, :]) == 0.9
    assert paraphrase_kappa(original, noise[None, :]) == pytest.approx(-0.0526, abs=1e-3)
    assert paraphrase_kappa(original, np.stack([original, noise])) == pytest.approx((1 - 0.0526) / 2, abs=1e-3)
    assert paraphrase_kappa(np.zeros(4, dtype=bool), np.zeros((1, 4), dtype=bool)) is None  # undefined


def test_paraphrase_phi_is_premises_spearman_rho_on_yes_no_answers() -> None:
    from scipy.stats import spearmanr

    from rubric_gate.reliability import paraphrase_phi

    rng = np.random.default_rng(5)
    original = rng.random(60) < 0.3
    rewordings = np.stack([original ^ (rng.random(60) < 0.1), rng.random(60) < 0.3])
    rho = np.mean([spearmanr(original, r).statistic for r in rewordings])
    assert paraphrase_phi(original, rewordings) == pytest.approx(rho)
    assert paraphrase_phi(original, np.zeros((1, 60), dtype=bool)) is None  # a constant rewording: undefined


def test_a_degenerate_bootstrap_interval_is_undefined() -> None:
    from rubric_gate.reliability import label_agreement
    from rubric_gate.report.trust import agreement_text

    # One correct item passed, one flawed item caught: every resample gives balanced accuracy 1.
    agreement = label_agreement(np.array([False, True]), np.array([False, True]))
    assert agreement.balanced_accuracy.value == 1.0 and agreement.balanced_accuracy.ci95 is None
    assert agreement.to_dict()["balanced_accuracy"]["ci95"] is None
    assert "balanced accuracy 100% (interval undefined)" in agreement_text(agreement)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=500),
       st.lists(st.floats(0, 100), min_size=1, max_size=3))
def test_the_interval_percentiles_are_numpys_to_the_last_bit(values: list[float], percents: list[float]) -> None:
    """Computed as `np.percentile` computes them (its linear method), without its `np.unique`
    (numpy 2 imports numpy.ma for that: a tenth of the work of a rerun of `check`)."""
    array = np.array(values)
    assert _percentiles(array, tuple(percents)) == tuple(np.percentile(array, percents).tolist())


def test_the_three_statistics_share_one_bootstrap_draw() -> None:
    predicted, truth = np.array([True, False, True, True, False] * 8), np.array([True, False, False, True, True] * 8)
    label_agreement(predicted, truth)
    before = _resampled.cache_info().hits
    label_agreement(predicted, truth)
    assert _resampled.cache_info().hits == before + 3
