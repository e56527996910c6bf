"""The PR comment's first screen, as GitHub renders it: the decision, the reason and what to do
next. A rejected PR says how to get it merged, the labels finding names the label, an override
is stated once, a rubric failing only when merged onto the base tip is headed as failing, and a
rejection the branch already shows is not repeated as a failure of the merge."""

from __future__ import annotations

from tests.action.harness import (
    CALIBRATION,
    FAILS,
    LABELS,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Scenario,
    calibration_jsonl,
    commit_on_main,
    rubric_yaml,
    verdicts_jsonl,
)
from tests.support import gfm

LABEL = "rubric-gate:override"


def _paragraph(root: gfm.Element, start: str) -> gfm.Element:
    return next(p for p in root.iter("p") if p.text().startswith(start))


def _body(scenario: Scenario) -> str:
    return scenario.fake.marked_comments()[0]["body"]


def test_a_rejected_pr_says_how_to_merge_naming_the_label(scenario: Scenario) -> None:
    commit_on_main(scenario, {"README.md": "main moved on\n"})  # the merge onto the tip is gated too
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    root = gfm.parse(_body(scenario))
    blocks = gfm.top_level(root)
    merge = _paragraph(root, "To merge:")
    assert blocks.index(merge) < blocks.index(next(root.iter("h3")))  # before the first section
    assert [c.text() for c in merge.iter("code")] == [LABEL] and "write access" in merge.text()
    fix = _paragraph(root, "To pass:")
    assert "gated rubric" in fix.text()


def test_a_rejection_the_branch_shows_is_not_repeated_for_the_merge(scenario: Scenario) -> None:
    commit_on_main(scenario, {"README.md": "main moved on\n"})  # the merge onto the tip is gated too
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    assert scenario.run(head).code == 1
    root = gfm.parse(_body(scenario))
    assert [kind for kind, _ in gfm.alerts(root) if kind == "CAUTION"] == []
    assert _body(scenario).count("it alone catches") == 1


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


def test_a_label_change_names_the_label_it_needs(scenario: Scenario) -> None:
    head = scenario.git.commit({CALIBRATION: calibration_jsonl({**LABELS, "R4": "fail"})}, "relabel R4")
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    root = gfm.parse(_body(scenario))
    need = _paragraph(root, "1 finding under")
    assert need.text().endswith(f"needs the {LABEL} label.") and [c.text() for c in need.iter("code")] == [LABEL]
    assert f"needs the {LABEL} label from someone with write access" in root.text()


def test_several_rubrics_are_listed_before_their_sections(scenario: Scenario) -> None:
    extra = rubric_yaml(["A", "B", "C", "D"]).replace("id: demo", "id: extra")
    scenario.base_sha = scenario.fake.base_sha = scenario.git.commit({"rubrics/extra.yaml": extra}, "extra")
    scenario.git("branch", "-f", "main")
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"]),
                                "rubrics/extra.yaml": extra.replace("- id: D\n  text: " + TEXTS["D"] + "\n", "")},
                               "delete A in demo, D in extra")
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    root = gfm.parse(_body(scenario))
    blocks = gfm.top_level(root)
    listing = next(b for b in blocks if b.tag == "ul")
    assert blocks.index(listing) < blocks.index(next(root.iter("h3")))
    assert sorted(li.text() for li in listing.find_all("li")) == [
        "✅ rubrics/extra.yaml: passed", "❌ rubrics/demo.yaml: 1 of 1 change rejected"]


def test_a_rubric_failing_only_when_merged_onto_the_tip_is_headed_as_failing(scenario: Scenario) -> None:
    # D shares its catch of R3 with B and C at the merge base; main has since deleted both.
    commit_on_main(scenario, {RUBRIC: rubric_yaml(["A", "D"])}, "main: drop B and C")
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C"])}, "delete D")
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    root = gfm.parse(_body(scenario))
    assert next(root.iter("h3")).text().startswith("❌")
    (caution,) = [text for kind, text in gfm.alerts(root) if kind == "CAUTION"]
    assert "merged onto the base branch's tip" in caution and "deleted D is rejected" in caution
    assert "To merge:" in root.text()


def test_a_changed_recorded_answer_without_a_judge_says_how_it_could_pass(scenario: Scenario) -> None:
    # With no judge configured the finding says how the answer could pass, not "the configured judge".

    head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS, {**FAILS, "R4": set()})}, "flip D on R4")
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    (finding,) = [f for f in result.report()["standard"] if f["blocking"]]
    assert "configured judge" not in finding["message"]
    assert "with the `judge` input set, the action re-judges each changed pair" in finding["message"]


def test_a_rubric_that_cannot_be_gated_is_not_offered_the_override(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "F"],
                                                    extra={"F": "Is F, with no verdict, met?"})}, "add F")
    result = scenario.run(head)
    assert result.code == 2, result.stderr
    merge = _paragraph(gfm.parse(_body(scenario)), "To merge:")
    assert "could not be gated needs a fix" in merge.text() and "apply the" not in merge.text()
