"""`check --suggest-repairs --repair-objective vfr`: a rewrite the gate accepts is kept only if
its fool rate on the evaluation split goes down while inter-judge alpha drops by at most
--delta; the acceptance rule, the Pareto frontier and the structural budget as pure logic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_gate.cli.main import main
from rubric_gate.repair import OPERATORS
from rubric_gate.repair.objective import Robustness, agreement, pareto_frontier, vfr_accepts
from rubric_gate.repair.parse import over_budget, parse_repairs
from tests.audit.conftest import write_rubric
from tests.discover import conftest as discover

fake = discover.fake  # the discover-aware provider, over the directory's audit one
JUDGE = "anthropic:claude-haiku-4-5"
OTHER = "openai:gpt-4o"
FRESH = "The output mentions kiwi"
PLUM = "The output mentions plum"
CANDIDATES = [
    {"operator": "drop_unstated", "checks": [PLUM], "why": "plum is what the task names"},
    {"operator": "split_atomic", "checks": ["The output names pear", "The output names plum"], "why": "one each"},
]
ITEMS = [("c1", "apple, pear, plum.", "pass", None), ("c2", "pear and apple and plum and kiwi", "pass", None),
         ("f1", "pear plum kiwi", "fail", None), ("f2", "apple plum kiwi", "fail", None),
         ("f3", "apple pear kiwi", "fail", None),
         ("d1", "apple pear plum here", "pass", "evaluation"), ("d2", "apple pear only", "fail", "evaluation")]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    base = [("apple", "The output mentions apple"), ("pear", "The output mentions pear")]
    write_rubric(tmp_path / "base.yaml", base)
    write_rubric(tmp_path / "rubric.yaml", [*base, ("fresh", FRESH)])
    (tmp_path / "cal.jsonl").write_text("".join(
        json.dumps({"id": i, "input": f"basket {i}", "output": out, "label": label,
                    **({"split": split} if split else {})}) + "\n" for i, out, label, split in ITEMS))
    return tmp_path


def check(monkeypatch, root: Path, capsys, *args: str) -> tuple[int, dict, str]:
    monkeypatch.chdir(root)
    code = main(["check", "--base", "base.yaml", "--head", "rubric.yaml", "--root", ".", "--judge", JUDGE,
                 "--suggest-repairs", "--format", "json", "--repair-objective", "vfr", "--attacker", JUDGE,
                 "--verifier", OTHER, "--audit-judge", JUDGE, "--audit-judge", OTHER, "--attacks", "2", *args])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else {}), err


def test_vfr_keeps_only_rewrites_that_fool_less(fake, project, monkeypatch, capsys) -> None:
    fake.repairs = {FRESH: CANDIDATES}
    fake.attacks = {PLUM: "genuine plum"}  # the verifier finds these attacks do meet the check
    code, report, err = check(monkeypatch, project, capsys)
    assert code == 1, err
    shown = report["repairs"]["suggestions"]
    # Both rewrites pass the gate; the split one still fools the judge on its pear part.
    assert [(s["operator"], [c["text"] for c in s["checks"]]) for s in shown] == [("drop_unstated", [PLUM])]
    assert shown[0]["dev"] == {"before": {"alpha": 1.0, "vfr": 1.0, "fools": 2, "attacks": 2},
                               "after": {"alpha": 1.0, "vfr": 0.0, "fools": 0, "attacks": 2}}
    # The failure packet: the original's fools reached the repair model.
    repair_prompt = next(b["messages"][0]["content"] for b in fake.bodies if "<failed_correct>" in b["messages"][0]["content"])
    fooled = repair_prompt.split("<fooled_by>")[1].split("</fooled_by>")[0]
    assert '<output>\nkiwi\n</output>' in fooled  # the attack output that fooled the judge
    false_accepts = repair_prompt.split("<false_accepts>")[1].split("</false_accepts>")[0]
    assert [f'id="{i}"' in false_accepts for i in ("f1", "f2", "f3")] == [True, True, True]
    assert "<unstable>" not in repair_prompt  # the two judges agree on every dev item
    calls = fake.received
    code, again, _ = check(monkeypatch, project, capsys)
    assert fake.received == calls, "a rerun makes no call"
    assert again["repairs"]["suggestions"] == shown


def test_vfr_rejects_a_rewrite_that_costs_agreement(fake, project, monkeypatch, capsys) -> None:
    fake.repairs = {FRESH: CANDIDATES[:1]}
    fake.attacks = {PLUM: "genuine plum"}
    fake.contrary = {"gpt-4o": {"plum"}}  # the second judge answers plum the other way: alpha collapses
    code, report, err = check(monkeypatch, project, capsys)
    assert code == 1, err
    assert report["repairs"]["suggestions"] == []
    [reason] = [u["reason"] for u in report["repairs"]["unrepaired"] if u["check"] == "fresh"]
    assert reason.startswith("no rewrite the gate accepts passes the vfr objective (alpha")


def test_vfr_needs_its_models_and_a_dev_split(fake, project, monkeypatch, capsys) -> None:
    fake.repairs = {FRESH: CANDIDATES}
    monkeypatch.chdir(project)
    code = main(["check", "--base", "base.yaml", "--head", "rubric.yaml", "--root", ".", "--judge", JUDGE,
                 "--suggest-repairs", "--repair-objective", "vfr"])
    assert code == 2 and "--repair-objective vfr needs --attacker" in capsys.readouterr().err
    lines = [line for line in (project / "cal.jsonl").read_text().splitlines() if "evaluation" not in line]
    (project / "cal.jsonl").write_text("\n".join(lines) + "\n")
    code, _, err = check(monkeypatch, project, capsys)
    assert code == 2 and "no items in the evaluation split" in err


def test_acceptance_rule_and_pareto_frontier() -> None:
    before = Robustness(0.80, 0.50)
    assert vfr_accepts(before, Robustness(0.78, 0.40), 0.03) == (True, "")
    assert not vfr_accepts(before, Robustness(0.76, 0.40), 0.03)[0]  # alpha drop 0.04 > delta
    assert not vfr_accepts(before, Robustness(0.90, 0.50), 0.03)[0]  # fool rate not lower
    assert not vfr_accepts(before, Robustness(None, 0.10), 0.03)[0]  # alpha unmeasured: never
    a, b, c = Robustness(0.9, 0.3), Robustness(0.8, 0.1), Robustness(0.8, 0.3)  # c is dominated by a
    assert pareto_frontier([("a", a), ("b", b), ("c", c)]) == ["a", "b"]
    assert agreement([[True, False], [True, False]]) == 1.0 and agreement([[True, False]]) is None
    assert agreement([[True, False, True, False], [False, True, False, True]]) < 0


def test_operator_library_and_structural_budget() -> None:
    assert {"do_not_reward", "non_compensation", "applicability_condition", "do_not_penalise"} <= set(OPERATORS)
    assert over_budget("The output names plum.") is None
    assert "words" in over_budget(" ".join(["word"] * 151))
    three = "It names plum. Do not answer yes merely because a. Do not reward b. Do not penalise c."
    assert "anti-gaming" in over_budget(three)
    assert "applicability" in over_budget("Only when x, only if y, it names plum.")
    reply = json.dumps({"candidates": [{"operator": "do_not_reward", "checks": [three], "why": "x"},
                                       {"operator": "non_compensation", "checks": ["It names plum, however good "
                                                                                   "the rest is."], "why": "y"}]})
    assert [c.operator for c in parse_repairs(reply, "It names plum.", 3)] == ["non_compensation"]
