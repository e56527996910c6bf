"""The PR comment's first screen, as GitHub renders it: the decision, the reason and what to do
next (found in the newcomer pass: a rejected PR said nothing of how to get it merged, the
labels finding did not name the label, an override was stated twice, a rubric failing only
when merged onto the base tip was headed ✅ and a rejection the branch already showed was
repeated as a failure of the merge)."""

from __future__ import annotations

import sys
from pathlib import Path

from harness import RUBRIC, Scenario, rubric_yaml
from test_integrity import _on_main

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.support import gfm

LABEL = "rubric-gate:override"


def _body(scenario: Scenario) -> str:
    return scenario.fake.marked_comments()[0]["body"]


def test_a_rejection_the_branch_shows_is_not_repeated_for_the_merge(scenario: Scenario) -> None:
    _on_main(scenario, {"README.md": "main moved on\n"})  # the merge onto the tip is gated too
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    assert scenario.run(head).code == 1
    root = gfm.parse(_body(scenario))
    assert [kind for kind, _ in gfm.alerts(root) if kind == "CAUTION"] == []
    assert _body(scenario).count("it alone catches") == 1


def test_a_rubric_failing_only_when_merged_onto_the_tip_is_headed_as_failing(scenario: Scenario) -> None:
    # D shares its catch of R3 with B and C at the merge base; main has since deleted both.
    _on_main(scenario, {RUBRIC: rubric_yaml(["A", "D"])}, "main: drop B and C")
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C"])}, "delete D")
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    root = gfm.parse(_body(scenario))
    assert next(root.iter("h3")).text().startswith("❌")
    (caution,) = [text for kind, text in gfm.alerts(root) if kind == "CAUTION"]
    assert "merged onto the base branch's tip" in caution and "deleted D is rejected" in caution


def test_an_overridden_pr_says_so_once_and_counts_it(scenario: Scenario) -> None:
    scenario.fake.label_events = [{"event": "labeled", "actor": {"login": "maintainer"}, "label": {"name": LABEL}}]
    scenario.fake.permissions = {"maintainer": "write"}
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head, labels=(LABEL,))
    assert result.code == 0, result.stderr
    body = _body(scenario)
    root = gfm.parse(body)
    assert [kind for kind, _ in gfm.alerts(root)].count("WARNING") == 1, body
    assert body.count("The gate failed, but") == 1
    assert next(root.iter("h3")).text().startswith("⚠️")  # not ✅: the gate failed there
    assert "1 rubric file changed, 0 passed, 0 failed, 1 overridden." in root.text()
    assert "To merge:" not in body and "To pass:" not in body
