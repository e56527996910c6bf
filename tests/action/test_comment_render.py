"""The PR comment as GitHub renders it: parsed with cmark-gfm, its structure asserted."""

from __future__ import annotations

from tests.action.harness import (
    CALIBRATION,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Scenario,
    calibration_jsonl,
    rubric_yaml,
    verdicts_jsonl,
)
from tests.support import gfm

HOSTILE_ITEMS = ["GH-1", "a5c3785ed8d6a35868bc169f07e40e889087fd2e", "$\\color{green}PASS$",
                 "\u202eR5", "\\[Approve\\](/org/settings)", "@octocat", "www.evil.example"]


def test_comment_renders_one_item_per_rejected_change_and_no_live_user_text(scenario: Scenario) -> None:
    # Correct items named by hostile ids; E and F each answer no on one of them (both rejected).
    labels = {"R1": "fail", "R2": "fail", "R3": "fail", "R4": "pass", **{i: "pass" for i in HOSTILE_ITEMS}}
    fails = {"R1": {"A"}, "R2": {"A", "B"}, "R3": {"B", "C", "D"}, "R4": {"D"},
             **{i: {"E", "F"} for i in HOSTILE_ITEMS}}
    texts = {**TEXTS, "F": "The output satisfies requirement F."}
    base = scenario.git.commit({CALIBRATION: calibration_jsonl(labels), VERDICTS: verdicts_jsonl(texts, fails, labels)})
    scenario.base_sha = scenario.fake.base_sha = base
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A=A2", "B", "C", "E", "F"], extra=texts)}, "drift")
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    body = scenario.fake.marked_comments()[0]["body"]
    (rubric,) = result.report()["rubrics"]
    run_link = "https://github.test/acme/rubrics/actions/runs/42"
    root = gfm.assert_report_structure(body, rubric["report"], allowed_links=(run_link,),
                                       own=(base[:7], head[:7], scenario.base_sha[:7]))
    rejected = [c for c in rubric["report"]["changes"] if c["decision"] == "rejected"]
    assert len(rejected) >= 3  # A reworded (loses R1), D deleted (R4 ... ), E and F added with blame
    headings = [e.text() for e in gfm.top_level(root) if e.tag in ("h2", "h3")]
    assert headings[0].startswith("❌ rubric-gate: FAIL") and sum("FAIL" in h for h in headings) == 1
    shown = root.text().replace("\u200b", "")
    assert "\\[Approve\\](/org/settings)" in shown and "GH-1" in shown  # shown as written, inert


