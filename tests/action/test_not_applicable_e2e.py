"""The action with "n/a" verdicts recorded in the PR: a check that applies to some outputs only."""

from __future__ import annotations

import json

from tests.action.harness import RUBRIC, VERDICTS, Scenario, rubric_yaml

WAF = {"F": "Only when the design has a public endpoint, is it behind a WAF?"}


def test_n_a_verdicts_pass_the_gate_and_reach_the_report(scenario: Scenario) -> None:
    answers = {"R1": "n/a", "R2": "yes", "R3": "no", "R4": "n/a", "R5": "n/a"}
    added = "".join(json.dumps({"item": item, "check_text": WAF["F"], "answer": answer}) + "\n"
                    for item, answer in answers.items())
    base_verdicts = (scenario.git.path / VERDICTS).read_text()
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "F"], extra=WAF),
                                VERDICTS: base_verdicts + added}, "add a check that applies to some designs")
    result = scenario.run(head)
    assert result.code == 0, result.stderr  # n/a on the correct R4 and R5 is no blame
    report = result.report()["rubrics"][0]["report"]
    assert {c["check"]: c["decision"] for c in report["changes"]} == {"F": "accepted"}
    row = next(r for r in report["head"]["checks"] if r["id"] == "F")
    assert (row["not_applicable"], row["coverage"], row["blame"], row["fails_correct"]) == (3, 0.4, 0, 0)
    assert report["head"]["rates"]["correct_passed"] == report["base"]["rates"]["correct_passed"]
    assert {(c["to"], c["rate"]) for c in report["comparisons"]} >= {("head", "correct_passed")}
    assert "rubric-gate: PASS" in scenario.fake.marked_comments()[0]["body"]
