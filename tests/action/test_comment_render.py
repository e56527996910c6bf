"""The PR comment as GitHub renders it: parsed with cmark-gfm, its structure asserted."""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.action.harness import (
    CALIBRATION,
    FAILS,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Pulls,
    Scenario,
    both_fail,
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


# -- What a reviewer reads, case by case ---------------------------------------------------------
# Each realistic run's comment (or, where none can be posted, its job summary) as GitHub renders
# it: one verdict heading, the decision per change in a four-column table before any figures, no
# table wider than four columns outside a collapsed block, nothing live from user text. With
# RUBRIC_GATE_COMMENT_DIR set, each body is written there (to look at it rendered).

F_TEXT = "Does the design name an owner for each finding?"  # fails flawed R3 only: no blame
RUN_LINK = "https://github.test/acme/rubrics/actions/runs/42"
OVERRIDE = "rubric-gate:override"


def _look(name: str, body: str, scenario: Scenario, *shas: str) -> gfm.Element:
    out = os.environ.get("RUBRIC_GATE_COMMENT_DIR")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / f"{name}.md").write_text(body, encoding="utf-8")
    root = gfm.parse(body)
    own = tuple(s[:7] for s in (*shas, scenario.base_sha))
    assert not gfm.live_spans(root, allowed_links=(RUN_LINK,), own=own), gfm.live_spans(root, own=own)
    verdicts = [e.text() for e in root.iter("h2")]
    assert len(verdicts) == 1 and re.match(r"(✅|❌|⏳) rubric-gate: (PASS|FAIL|PENDING)$", verdicts[0]), verdicts
    collapsed = [t for d in root.iter("details") for t in d.iter("table")]
    for table in gfm.tables(root):
        if table not in collapsed:
            assert len(gfm.table_header(table)) <= 4, gfm.table_header(table)
    return root


def _changes(root: gfm.Element) -> list[list[str]]:
    """Every changes table's rows, in order: (check, change, decision, why)."""
    return [row for t in gfm.tables(root) if gfm.table_header(t) == ["Check", "Change", "Decision", "Why"]
            for row in gfm.table_rows(t)]


def _first_table_of_each_section(root: gfm.Element) -> list[list[str]]:
    """The header of the first table after each rubric section's h3: the decisions come first."""
    blocks, headers = gfm.top_level(root), []
    for i, block in enumerate(blocks):
        if block.tag == "h3" and block.text().startswith(("❌ ", "✅ ", "⚠️ ")) and "`" not in block.text()[:2]:
            table = next((b for b in blocks[i + 1:] if b.tag in ("table", "h3")), None)
            if table is not None and table.tag == "table":
                headers.append(gfm.table_header(table))
    return headers


def _with_f_verdicts(scenario: Scenario) -> None:
    texts = {**TEXTS, "F": F_TEXT}
    scenario.base_sha = scenario.fake.base_sha = scenario.git.commit(
        {VERDICTS: verdicts_jsonl(texts, {**FAILS, "R3": FAILS["R3"] | {"F"}})}, "verdicts for F")


def test_a_pass_shows_each_accepted_change_and_why(scenario: Scenario) -> None:
    _with_f_verdicts(scenario)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "F"], extra={"F": F_TEXT})}, "add F")
    result = scenario.run(head)
    assert result.code == 0, result.stderr
    root = _look("pass", scenario.fake.marked_comments()[0]["body"], scenario, head)
    assert _changes(root) == [["F", "added", "accepted", "fails no correct item (blame 0.00)"]]
    assert _first_table_of_each_section(root) == [["Check", "Change", "Decision", "Why"]]
    figures = next(t for t in gfm.tables(root) if "When decided" in gfm.table_header(t))
    assert figures in [t for d in root.iter("details") for t in d.iter("table")]  # collapsed, still there
    assert gfm.table_header(figures) == ["Check", "Origin", "Credit", "Blame", "Unique catches", "Fails correct",
                                         "Fails flawed", "When decided"]


def test_a_rejected_deletion_of_a_unique_catch(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    body = scenario.fake.marked_comments()[0]["body"]
    root = _look("deletion", body, scenario, head)
    assert _changes(root) == [["A", "deleted", "rejected", "would lose a unique catch"]]
    (rubric,) = result.report()["rubrics"]
    gfm.assert_report_structure(body, rubric["report"], allowed_links=(RUN_LINK,), own=(head[:7], scenario.base_sha[:7]))
    item = next(li.text() for li in root.iter("li") if li.text().startswith("A (deleted)"))
    assert "it alone catches 1 flawed item (R1)" in item.replace("\u200b", "")
    # A rate's figure and its interval never wrap apart in a narrow comment (no breaking space).
    rates = next(t for t in gfm.tables(root) if gfm.table_header(t)[0] == "Rate")
    figures = [cell for row in gfm.table_rows(rates) for cell in row[1:]]
    assert "66.7%\u00a0(2/3;\u00a021\u201194%)" in figures and not any(" " in cell for cell in figures), figures
    assert not any("-" in cell for cell in figures), figures


def test_a_rejected_addition_with_blame(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "E"])}, "add E")
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    root = _look("addition", scenario.fake.marked_comments()[0]["body"], scenario, head)
    (row,) = _changes(root)
    assert row[:3] == ["E", "added", "rejected"] and row[3].startswith("would add blame 1.00"), row
    assert "@octocat" not in root.text()  # E's text names @octocat: never a mention


def test_an_override_keeps_the_rejection_visible(scenario: Scenario) -> None:
    scenario.fake.label_events = [{"event": "labeled", "actor": {"login": "maintainer"}, "label": {"name": OVERRIDE}}]
    scenario.fake.permissions = {"maintainer": "write"}
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head, labels=(OVERRIDE,))
    assert result.code == 0, result.stderr
    root = _look("override", scenario.fake.marked_comments()[0]["body"], scenario, head)
    assert [kind for kind, _ in gfm.alerts(root)].count("WARNING") == 1  # said once, at the top
    assert [r[2] for r in _changes(root)] == ["rejected"]
    assert any(h.text().startswith("⚠️") for h in root.iter("h3"))


def test_invalid_input_names_the_file_and_has_no_table(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: "id: demo\nchecks: [\n"}, "broken yaml")
    result = scenario.run(head)
    assert result.code == 2, result.stderr
    root = _look("invalid", scenario.fake.marked_comments()[0]["body"], scenario, head)
    assert any(h.text() == f"❌ {RUBRIC}: could not be gated" for h in root.iter("h3"))
    assert not _changes(root) and RUBRIC in root.find_all("pre")[0].text()


def test_a_fork_with_a_read_only_token_says_why_in_the_summary(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head, fork=True, token="read-only-token")
    assert result.code == 1 and not scenario.fake.comments, result.stderr
    root = _look("fork", result.summary, scenario, head)
    assert any("No PR comment was posted" in text for _, text in gfm.alerts(root)), gfm.alerts(root)
    assert _changes(root) == [["A", "deleted", "rejected", "would lose a unique catch"]]


def test_several_rubrics_list_each_then_decide_each_change(scenario: Scenario) -> None:
    _with_f_verdicts(scenario)
    other = "rubrics/other.yaml"
    scenario.base_sha = scenario.fake.base_sha = scenario.git.commit(
        {other: rubric_yaml(["A", "B", "C", "D"]).replace("id: demo", "id: other")}, "a second rubric")
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "F"], extra={"F": F_TEXT}),
                                other: rubric_yaml(["B", "C", "D"]).replace("id: demo", "id: other")}, "both")
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    root = _look("several", scenario.fake.marked_comments()[0]["body"], scenario, head)
    status = [li.text() for li in gfm.top_level(root)[2].iter("li")] if gfm.top_level(root)[2].tag == "ul" else []
    assert status == ["✅ rubrics/demo.yaml: passed", "❌ rubrics/other.yaml: 1 of 1 change rejected"], status
    assert _changes(root) == [["F", "added", "accepted", "fails no correct item (blame 0.00)"],
                              ["A", "deleted", "rejected", "would lose a unique catch"]]
    assert _first_table_of_each_section(root) == [["Check", "Change", "Decision", "Why"]] * 2


def test_a_head_two_prs_share_says_so_in_the_comment(scenario: Scenario) -> None:
    head, pulls = both_fail(scenario)
    result = Pulls(scenario, pulls).run(7)
    assert result.code == 1, result.stderr
    body = scenario.fake.marked_comments()[0]["body"]
    root = _look("same-head", body, scenario, head, pulls[8]["base"])
    assert _changes(root) == [["A", "deleted", "rejected", "would lose a unique catch"]]
    assert "also proposed by" in root.text() or "also proposed by" in result.summary
