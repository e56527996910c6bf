"""`audit --preference-fit`: the figures against a hand computation on a small case, through the
CLI and the fake provider; and the pure functions on cases whose answer is known exactly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rubric_gate.pairs import PreferencePair
from rubric_gate.preference import (
    bradley_terry,
    chosen_shown_first,
    effective_dimensionality,
    weight_entropy,
)
from tests.support.cli import run_cli

JUDGE = "anthropic:claude-haiku-4-5"
N = 8


def pair(i: int) -> dict:
    """Chosen always names apple and rejected never; pear is on both sides or neither (types
    alternate); the rejected response is padded longer in pairs 0-2."""
    pear = i % 2 == 0
    chosen = "apple" + (" pear" if pear else "")
    rejected = "none" + (" pear" if pear else "") + (" and nothing else of note at all" if i < 3 else "")
    prompt = f"Basket {i}: is there apple" + (" or pear?" if pear else "?")
    return {"id": f"q{i}", "prompt": prompt, "chosen": chosen, "rejected": rejected}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(pair(i)) + "\n" for i in range(N)))
    (tmp_path / "cal.jsonl").write_text(json.dumps({"id": "c1", "input": "x", "output": "apple pear",
                                                    "label": "pass"}) + "\n")
    (tmp_path / "fruit.yaml").write_text(
        "id: fruit\nversion: 1\ntask: Say which fruit is in the basket.\ncalibration: cal.jsonl\n"
        "verdicts: verdicts.jsonl\nchecks:\n  - id: apple\n    text: The response mentions apple\n"
        "  - id: pear\n    text: The response mentions pear\n")
    return tmp_path


def test_preference_fit_matches_a_hand_computation(fake, project, monkeypatch, capsys) -> None:
    sides = [chosen_shown_first(PreferencePair(**pair(i))) for i in range(N)]
    assert 2 <= sum(sides) <= N - 2, "both orientations occur, so the regression has two classes"
    args = ("audit", "--rubric", "fruit.yaml", "--judge", JUDGE, "--root", ".", "--preference-fit",
            "--pairs", "pairs.jsonl")
    monkeypatch.chdir(project)
    code, out, err = run_cli(capsys, *args, "--format", "json")
    assert code == 0, err
    fit = json.loads(out)["preference_fit"]
    # With the rubric the judge prefers the response naming more fruit: chosen every time.
    assert fit["pref_acc"] == 1.0
    # Without it, the longer response: rejected in pairs 0-2, so 5 of 8 right.
    assert fit["pref_acc_without"] == 0.625 and fit["pref_acc_gain"] == 0.375
    # apple applies to every prompt, pear to the even ones: mean share of checks 0.75.
    assert [c["applicability"] for c in fit["checks"]] == [1.0, 0.5] and fit["applicability"] == 0.75
    assert [c["chosen_win_share"] for c in fit["checks"]] == [1.0, 0.0]
    # Responses' (apple, pear) patterns are (1,1), (0,1), (1,0), (0,0) equally often: cov(S) is
    # diagonal with equal variances, two eigenvalues alike, exp(log 2) = 2 dimensions.
    assert fit["effective_dimensionality"] == 2.0 and fit["effective_dimensionality_per_check"] == 1.0
    assert fit["mean_abs_correlation"] == 0.0
    # The apple difference alone separates the pairs; pear's difference is always 0, so its
    # weight is 0 and all weight sits on one check: entropy 0.
    assert fit["cv_accuracy"] == 1.0 and fit["weight_entropy"] == 0.0
    assert fit["checks"][1]["weight"] == 0.0 and fit["checks"][0]["weight"] > 0

    calls = fake.received
    monkeypatch.chdir(project)
    code, out, err = run_cli(capsys, *args)
    assert code == 0 and fake.received == calls, "a rerun makes no call"
    assert "pref_acc 100.0% with the rubric, 62.5% without (+37.5 points)" in out
    assert "weight_entropy 0.00" in out, out
    monkeypatch.chdir(project)
    code, out, _ = run_cli(capsys, *args, "--format", "markdown")
    assert code == 0 and "### Preference fit (8 pairs)" in out and "| `pear` | 50.0% |" in out


def test_bad_pairs_line_is_exit_2_before_any_call(fake, project, monkeypatch, capsys) -> None:
    (project / "pairs.jsonl").write_text(json.dumps(pair(0)) + "\n" + '{"id": "x", "prompt": "p"}\n')
    monkeypatch.chdir(project)
    code, _, err = run_cli(capsys, "audit", "--rubric", "fruit.yaml", "--judge", JUDGE,
                           "--root", ".", "--preference-fit", "--pairs", "pairs.jsonl")
    assert code == 2 and "pairs.jsonl:2: missing required key 'chosen'" in err and fake.received == 0
    monkeypatch.chdir(project)
    code, _, err = run_cli(capsys, "audit", "--rubric", "fruit.yaml", "--judge", JUDGE,
                           "--root", ".", "--preference-fit")
    assert code == 2 and "--preference-fit needs --pairs FILE" in err


def test_effective_dimensionality_of_known_matrices() -> None:
    independent = np.array([[1, 0], [0, 1], [1, 1], [0, 0]])
    assert effective_dimensionality(independent) == pytest.approx(2.0)
    copies = np.array([[1, 1], [0, 0], [1, 1], [0, 0]])
    assert effective_dimensionality(copies) == pytest.approx(1.0)
    # Eigenvalues 3:1 (variances 3 and 1, uncorrelated): exp(H(0.75, 0.25)).
    scaled = np.array([[np.sqrt(3), 1], [-np.sqrt(3), -1], [np.sqrt(3), -1], [-np.sqrt(3), 1]])
    h = -(0.75 * np.log(0.75) + 0.25 * np.log(0.25))
    assert effective_dimensionality(scaled) == pytest.approx(np.exp(h))
    assert effective_dimensionality(np.ones((4, 3))) == 0.0


def test_weight_entropy_and_bradley_terry_on_symmetric_checks() -> None:
    assert weight_entropy(np.array([1.0, 1.0, 1.0, 1.0])) == pytest.approx(1.0)
    assert weight_entropy(np.array([2.0, 0.0])) == 0.0
    assert weight_entropy(np.array([3.0, 1.0])) == pytest.approx(
        -(0.75 * np.log(0.75) + 0.25 * np.log(0.25)) / np.log(2))
    assert weight_entropy(np.array([1.0])) is None
    # Two identical informative checks: equal weights, entropy 1; every held-out pair right.
    y = np.array([1, 0] * 6)
    d = np.where(y[:, None] == 1, 1.0, -1.0) * np.ones((12, 2))
    bt = bradley_terry(d, y)
    assert bt.cv_accuracy == 1.0 and bt.folds == 5
    assert bt.weights[0] == pytest.approx(bt.weights[1]) and bt.weight_entropy == pytest.approx(1.0)
    # One side only: nothing to fit, said so rather than guessed.
    assert bradley_terry(d, np.ones(12)).cv_accuracy is None


def test_preference_fit_runs_when_the_structural_audit_is_unanswered(fake, project, monkeypatch, capsys) -> None:
    """The audit and the fit are separate answers: an audit without a valid reply is named (exit
    2, nothing guessed), and the preference fit is still computed and reported."""
    fake.rules = {"how a single check of a grading checklist is written": "nonjson"}
    monkeypatch.chdir(project)
    code, out, err = run_cli(capsys, "audit", "--rubric", "fruit.yaml", "--judge", JUDGE, "--root", ".",
                             "--preference-fit", "--pairs", "pairs.jsonl", "--format", "json")
    report = json.loads(out)
    assert code == 2 and report["unanswered"] == ["apple", "pear"] and report["audits"] == []
    assert report["preference_fit"]["pref_acc"] == 1.0
    assert "2 check(s) not audited (apple, pear): no valid answer, none guessed" in err


def test_a_failed_preference_fit_is_a_notice_beside_the_audit(fake, project, monkeypatch, capsys) -> None:
    fake.rules = {'<response id="A">': "nonjson"}  # every pairwise preference reply is prose
    monkeypatch.chdir(project)
    code, out, _ = run_cli(capsys, "audit", "--rubric", "fruit.yaml", "--judge", JUDGE, "--root", ".",
                             "--preference-fit", "--pairs", "pairs.jsonl", "--format", "json")
    report = json.loads(out)
    assert code == 2 and len(report["audits"]) == 2 and "preference_fit" not in report  # nothing guessed
    assert any(n.startswith("The preference fit did not finish") and "none guessed" in n for n in report["notices"])
    code, out, _ = run_cli(capsys, "audit", "--rubric", "fruit.yaml", "--judge", JUDGE, "--root", ".",
                             "--preference-fit", "--pairs", "pairs.jsonl", "--audit-rule", "--format", "json")
    assert code == 1 and json.loads(out)["passed"] is False  # the audit rule decides (a finding), not the fit
