"""Majority, flip rate, Krippendorff's alpha and pairwise kappa against hand computations."""

from __future__ import annotations

import numpy as np
import pytest

from rubric_gate.reliability import flip_rate, majority, nominal_alpha, pairwise_kappa

N, Y = True, False  # votes are "answered no"


def test_majority_ties_count_as_no_and_splits_are_flagged() -> None:
    vote = majority(np.array([[N, N, Y, Y], [N, Y, Y, N], [N, Y, Y, Y]]))
    assert vote.failed.tolist() == [True, False, False, False]
    assert vote.split.tolist() == [False, True, False, True]
    assert not vote.tie.any()
    tied = majority(np.array([[N, Y], [Y, Y]]))
    assert tied.failed.tolist() == [True, False] and tied.tie.tolist() == [True, False]


def test_flip_rate_is_the_share_of_items_whose_samples_disagree() -> None:
    samples = np.array([[N, Y, Y, N, Y], [Y, Y, Y, N, Y], [N, Y, N, N, Y]])
    assert flip_rate(samples) == pytest.approx(2 / 5)
    assert flip_rate(np.zeros((3, 0), dtype=bool)) is None


def test_alpha_by_hand() -> None:
    # Two judges, five items, one disagreement. Coincidences: o00 = o11 = 4, o01 = o10 = 1,
    # n0 = n1 = 5, n = 10: Do = 2/10, De = 2*5*5/(10*9), alpha = 1 - Do/De = 0.64.
    answers = np.array([[N, Y, Y, N, Y], [N, Y, N, N, Y]])
    assert nominal_alpha(answers) == pytest.approx(1 - (2 / 10) / (50 / 90))
    # Three judges, one always contrary: per item two "no" and one "yes", so o11 = 8, o10 =
    # o01 = 8, o00 = 0 over 8 items; n1 = 16, n0 = 8, n = 24.
    contrary = np.array([[N] * 8, [Y] * 8, [N] * 8])
    assert nominal_alpha(contrary) == pytest.approx(1 - (16 / 24) / (2 * 16 * 8 / (24 * 23)))
    assert nominal_alpha(np.array([[N, Y], [N, Y]])) == pytest.approx(1.0)


def test_alpha_is_none_when_undefined() -> None:
    assert nominal_alpha(np.array([[N, N, N], [N, N, N]])) is None  # no variation at all
    assert nominal_alpha(np.array([[N, Y, N]])) is None  # one judge


def test_pairwise_kappa_names_each_pair_once() -> None:
    a = np.array([N, N, Y, Y])
    b = np.array([N, Y, Y, Y])
    pairs = pairwise_kappa({"a": a, "b": b, "c": a})
    assert [(x, y) for x, y, _ in pairs] == [("a", "b"), ("a", "c"), ("b", "c")]
    # a vs b: po = 3/4, pe = (2*1 + 2*3)/16 = 1/2, kappa = 0.5
    assert pairs[0][2] == pytest.approx(0.5) and pairs[1][2] == pytest.approx(1.0)


def test_an_na_answer_is_an_abstention_that_casts_no_vote() -> None:
    # Per item, two raters: [n/a, no], [n/a, yes], [yes, no], [n/a, n/a], [no, no].
    votes = np.array([[Y, Y, Y, Y, N], [N, Y, N, Y, N]])
    na = np.array([[True, True, False, True, False], [False, False, False, True, False]])
    vote = majority(votes, na)
    assert vote.failed.tolist() == [True, False, True, False, True]  # the one vote cast decides; a tie is no
    assert vote.tie.tolist() == [False, False, True, False, False]  # [n/a, no] is no tie: one vote, no
    assert vote.abstained.tolist() == [False, False, False, True, False]  # nobody voted: n/a, never a fail
    assert vote.split.tolist() == [False, False, True, False, False]
    # Three samples [n/a, n/a, no]: the one vote cast is no (a yes-vote reading would pass it).
    assert majority(np.array([[Y], [Y], [N]]), np.array([[True], [True], [False]])).failed.tolist() == [True]
    # The flip rate reads it the same way: [n/a, no, no] is not a flip, [n/a, yes, no] is.
    samples, abstain = np.array([[Y, Y], [N, Y], [N, N]]), np.array([[True, True], [False, False], [False, False]])
    assert flip_rate(samples, abstain) == 0.5


def test_a_panel_reads_na_as_an_abstention_at_both_levels() -> None:
    from rubric_gate.ensemble import Votes

    # Two judges, three samples, four items. Judge 0 answers n/a throughout on item 0; judge 1 no.
    failed = np.zeros((2, 3, 4), dtype=bool)
    na = np.zeros((2, 3, 4), dtype=bool)
    na[0, :, 0] = True
    failed[1, :, 0] = True
    na[:, :, 1] = True  # item 1: every answer n/a
    failed[0, :2, 2], na[0, 2, 2] = True, True  # item 2: judge 0 [no, no, n/a]; judge 1 yes: a tie
    failed[0, 0, 3], na[0, 1:, 3] = True, True  # item 3: judge 0 [no, n/a, n/a] -> no; judge 1 yes: a tie
    votes = Votes(failed, np.zeros_like(failed), na)
    assert votes.per_judge_not_applicable.tolist() == [[True, True, False, False], [False, True, False, False]]
    assert votes.panel.failed.tolist() == [True, False, True, True]
    assert votes.tied.tolist() == [False, False, True, True]
    assert votes.panel.abstained.tolist() == [False, True, False, False]
    assert not votes.unstable.any()  # no judge's votes went both ways
    # Alpha leaves the abstentions out: on items 2 and 3 the judges disagree, item 0 has one vote.
    assert nominal_alpha(votes.per_judge, votes.per_judge_not_applicable) == nominal_alpha(
        np.array([[N, N], [Y, Y]]))
