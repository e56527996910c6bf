"""Several --judge: majority gating, ties, by_judge against single-judge runs, alpha and
kappa against hand computations. Judge B inverts every answer on the "kiwi" check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_gate.verdicts import VerdictStore
from tests.ensemble.conftest import (
    CONTRARY,
    TRUTHFUL,
    TRUTHFUL_TOO,
    check_json,
    run_cli,
    write_base_head,
)
from tests.fakes.llm import FakeLLM

# Base [apple, pear] -> head [apple, kiwi]: kiwi is added, pear deleted. No item mentions kiwi,
# so truthful judges answer no everywhere (blame on every correct item: rejected), judge B yes
# everywhere (no blame: accepted). Pear holds no unique catch (apple fails every flawed item):
# every judge accepts deleting it.
BASE, HEAD = ["apple", "pear"], ["apple", "kiwi"]


def kappa(tp: int, tn: int, fp: int, fn: int) -> float:
    n = tp + tn + fp + fn
    observed = (tp + tn) / n
    expected = ((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp)) / n**2
    return (observed - expected) / (1 - expected)


@pytest.fixture
def contrary_fake(fake: FakeLLM) -> FakeLLM:
    fake.contrary = {"judge-b": {"kiwi"}}
    return fake


def test_three_judges_gate_on_the_majority(contrary_fake: FakeLLM, project: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    write_base_head(project, BASE, HEAD)
    judges = ["--judge", TRUTHFUL, "--judge", f"{CONTRARY},{TRUTHFUL_TOO}"]  # repeat and comma list both work
    code, report = check_json(capsys, *judges)
    assert code == 1 and contrary_fake.received == 3 * 3 * 8  # 3 judges x 3 check texts x 8 items
    changes = {c["check"]: c for c in report["changes"]}
    assert changes["kiwi"]["decision"] == "rejected"
    assert changes["kiwi"]["by_judge"] == {TRUTHFUL: "rejected", CONTRARY: "accepted", TRUTHFUL_TOO: "rejected"}
    assert changes["pear"]["decision"] == "accepted"
    assert set(changes["pear"]["by_judge"].values()) == {"accepted"}
    assert changes["kiwi"]["tied_items"] == []  # 2 of 3 say no: a majority, not a tie
    reliability = report["reliability"]
    assert reliability["judges_agree"] == {"changes": 1, "of": 2, "share": 0.5}
    rows = {r["id"]: r for r in report["head"]["checks"]}
    # kiwi: per item two "no" and one "yes" (o11 = o10 = o01 = 8, o00 = 0; n1 = 16, n0 = 8).
    assert rows["kiwi"]["alpha"] == pytest.approx(1 - (16 / 24) / (2 * 16 * 8 / (24 * 23)), abs=1e-9)
    assert rows["apple"]["alpha"] == pytest.approx(1.0)
    kappas = {tuple(k["judges"]): k["kappa"] for k in reliability["judge_kappa"]}
    # Over apple, pear, kiwi x 8 items: A and B agree on apple and pear and disagree on all of kiwi.
    # A "no": 4 (apple) + 4 (pear) + 8 (kiwi) = 16; B "no": 4 + 4 + 0 = 8; both "no" 8, both "yes" 8.
    assert kappas[(TRUTHFUL, CONTRARY)] == pytest.approx(kappa(tp=8, tn=8, fp=8, fn=0), abs=1e-4)
    assert kappas[(TRUTHFUL, TRUTHFUL_TOO)] == pytest.approx(1.0)
    # A rerun asks nothing.
    check_json(capsys, *judges)
    assert contrary_fake.received == 72


def test_by_judge_matches_single_judge_runs(contrary_fake: FakeLLM, project: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    write_base_head(project, BASE, HEAD)
    _, panel = check_json(capsys, "--judge", TRUTHFUL, "--judge", CONTRARY, "--judge", TRUTHFUL_TOO)
    calls = contrary_fake.received
    for judge in (TRUTHFUL, CONTRARY, TRUTHFUL_TOO):
        _, alone = check_json(capsys, "--judge", judge)
        for combined, single in zip(panel["changes"], alone["changes"], strict=True):
            assert combined["by_judge"][judge] == single["decision"], (judge, combined["check"])
    assert contrary_fake.received == calls  # single-judge runs reuse the panel's verdicts


def test_two_judges_tie_counts_as_no_and_is_flagged(contrary_fake: FakeLLM, project: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    write_base_head(project, BASE, HEAD)
    code, report = check_json(capsys, "--judge", TRUTHFUL, "--judge", CONTRARY)
    kiwi = next(c for c in report["changes"] if c["check"] == "kiwi")
    assert code == 1 and kiwi["decision"] == "rejected"  # every kiwi pair tied: counted as no
    assert kiwi["tied_items"] == ["r1", "r3", "r5", "r7"]  # the correct items its blame rests on
    assert report["reliability"]["tied_changes"] == ["kiwi"]
    rows = {r["id"]: r for r in report["head"]["checks"]}
    assert len(rows["kiwi"]["tied_items"]) == 8
    # Two judges, answers constant and opposite on kiwi: alpha = 1 - Do/De with Do = 1 and
    # De = 2*8*8/(16*15), i.e. -0.875.
    assert rows["kiwi"]["alpha"] == pytest.approx(1 - 1 / (2 * 8 * 8 / (16 * 15)))


def test_alpha_is_null_without_variation(contrary_fake: FakeLLM, project: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    # Both truthful judges say no to kiwi on every item: no variation, alpha undefined.
    write_base_head(project, BASE, HEAD)
    _, report = check_json(capsys, "--judge", TRUTHFUL, "--judge", TRUTHFUL_TOO)
    rows = {r["id"]: r for r in report["head"]["checks"]}
    assert rows["kiwi"]["alpha"] is None and rows["apple"]["alpha"] == pytest.approx(1.0)


def test_judge_command_keeps_each_judge_apart(contrary_fake: FakeLLM, project: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    write_base_head(project, BASE, HEAD)
    code, out, err = run_cli(capsys, "judge", "--rubric", "base.yaml", "--rubric", "rubric.yaml",
                             "--verdicts", "verdicts.jsonl", "--judge", f"{TRUTHFUL},{CONTRARY}", "--samples", "3")
    assert code == 0, err
    assert out.count("72 calls") == 2  # 3 check texts x 8 items x 3 samples, per judge
    code, out, _ = run_cli(capsys, "judge", "--rubric", "base.yaml", "--rubric", "rubric.yaml",
                           "--verdicts", "verdicts.jsonl", "--judge", f"{TRUTHFUL},{CONTRARY}", "--samples", "3")
    assert out.count("0 calls, 72 verdicts reused") == 2 and contrary_fake.received == 144


def test_a_panel_asks_every_judge_even_after_the_first_fails(fake: FakeLLM, project: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The first judge's replies never parse: the other judges are still asked (their verdicts
    saved for the rerun), and the run ends with every judge's failure and totals."""
    from tests.fakes.llm import message_body

    fake.respond = lambda body, anthropic: (200, message_body("Sure!", model=body["model"])) \
        if body["model"] == TRUTHFUL.split(":")[1] else None
    write_base_head(project, ["apple"], ["apple", "kiwi"])
    code, out, _ = run_cli(capsys, "check", "--base", "base.yaml", "--head", "rubric.yaml", "--root", ".",
                             "--judge", TRUTHFUL, "--judge", CONTRARY, "--format", "json")
    data = json.loads(out)
    assert code == 2 and data["decision"] is None and data["error"]["message"].startswith(f"{TRUTHFUL}: ")
    assert {t["judge"] for t in data["totals"]} == {TRUTHFUL, CONTRARY}
    saved = VerdictStore.load(project / "verdicts.jsonl")
    assert {v.judge for v in saved} == {CONTRARY} and len(saved) == 16  # the second judge answered every pair
