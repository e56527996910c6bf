"""Labels are the standard every rubric is gated on: a PR that relabels, removes, rewrites or holds out a
labeled item (however it is spelled) needs the override, and labels main added since the PR branched
are guarded too. End to end through `rubric-gate action` against the fake GitHub.
"""

from __future__ import annotations

import json

import pytest

from rubric_gate.calibration.model import item_content_hash
from tests.action.harness import (
    CALIBRATION,
    DELETE_A,
    FAILS,
    LABELS,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Scenario,
    calibration_jsonl,
    commit_on_main,
    jsonl_of_items,
    judged_by,
    keyed_line,
    labeled_item_line,
    labeled_items,
    marked_comment_body,
    merge_into_main,
    merge_pr,
    not_both_green,
    rejected_run,
    rubric_yaml,
    run_gated,
    truthful_judge,
    two_prs,
    verdict_line,
    verdicts_jsonl,
)

# -- labels are the standard --------------------------------------------------------------------

def test_swapping_two_items_outputs_under_their_labels_is_a_relabel(scenario: Scenario) -> None:
    """R1 (fail) gets R4's correct output and R4 (pass) gets R1's flawed one: each label now
    grades content the labeler never saw, with every label line unchanged."""
    items = labeled_items()
    items[0]["output"], items[3]["output"] = items[3]["output"], items[0]["output"]
    head = scenario.git.commit({CALIBRATION: jsonl_of_items(items)}, "swap the outputs of R1 and R4")
    result = scenario.run(head)
    assert result.code == 1, result.stdout + result.stderr
    body = marked_comment_body(scenario)
    assert "❌ `calibration/demo.jsonl`" in body and "changed the input or output of 2" in body
    assert "R1 (fail), R4 (pass)" in body


def test_moving_items_out_of_the_calibration_split_is_a_removal(scenario: Scenario) -> None:
    items = labeled_items()
    for item in items[:2]:
        item["split"] = "evaluation"  # the gate decides on the calibration split only
    items.append({"id": "R6", "input": "design R6", "output": "review R6", "label": "pass", "split": "evaluation"})
    head = scenario.git.commit({CALIBRATION: jsonl_of_items(items)}, "hold out R1 and R2")
    result = scenario.run(head)
    assert result.code == 1, result.stdout + result.stderr
    found = result.differences()
    assert (found["labels.held_out"]["count"], found["labels.held_out"]["rule"]) == (2, "override")
    assert (found["labels.added"]["count"], found["labels.added"]["rule"]) == (1, "allowed")
    body = marked_comment_body(scenario)  # both shown, with the items they are about
    assert found["labels.held_out"]["message"] in body and "R1 (fail), R2 (fail)" in body and "R6 (pass)" in body


def test_a_calibration_path_written_with_dot_slash_is_the_same_file(scenario: Scenario) -> None:
    dotted = rubric_yaml(["A", "B", "C", "D"]).replace(f"calibration: {CALIBRATION}", f"calibration: ./{CALIBRATION}")
    # Writing the same path another way is no repointing.
    head = scenario.git.commit({RUBRIC: dotted}, "same file, written with ./")
    result = scenario.run(head)
    assert result.code == 0, result.stdout + result.stderr
    assert result.report()["standard"] == []

    # And a relabel of the file it names is seen.
    main = commit_on_main(scenario, {RUBRIC: dotted}, "main writes ./")
    scenario.git("reset", "-q", "--hard", main)
    head = scenario.git.commit({CALIBRATION: calibration_jsonl({**LABELS, "R4": "fail"})}, "relabel R4")
    result = scenario.run(head)
    assert result.code == 1, result.stdout + result.stderr
    assert "R4 (pass -&gt; fail)" in marked_comment_body(scenario)


def test_moving_a_calibration_set_and_repointing_the_rubric_says_what_happened(scenario: Scenario) -> None:
    scenario.git("mv", CALIBRATION, "calibration/moved.jsonl")
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace(CALIBRATION, "calibration/moved.jsonl")},
                               "move the calibration set")
    result = scenario.run(head)
    assert result.code == 1, result.stdout + result.stderr
    body = marked_comment_body(scenario)
    assert "1 rubric file changed, 1 passed, 0 failed." in body  # the labels fail it, not the rubric:
    assert '2 findings under "Labels and recorded verdicts" need the `rubric-gate:override` label.' in body
    assert "still name the old path" not in body  # this PR repointed it
    found = result.differences()
    assert found["calibration.moved"]["needs_override"] and found["rubric.calibration"]["needs_override"]
    assert "calibration/moved.jsonl" in found["calibration.moved"]["message"] and "repoints 'calibration'" in body


def test_labels_a_rubric_on_main_started_using_after_the_pr_branched_are_guarded(scenario: Scenario) -> None:
    """Gated against the merge base, where no rubric used `calibration/spare.jsonl` yet; main has since
    added one that does. Relabeling it would change that rubric's standard the moment this merges."""
    main = commit_on_main(scenario, {"calibration/spare.jsonl": calibration_jsonl()}, "spare labels, unused")
    scenario.git("reset", "-q", "--hard", main)
    head = scenario.git.commit({"calibration/spare.jsonl": calibration_jsonl({**LABELS, "R4": "fail"})}, "relabel R4")
    spare = rubric_yaml(["A", "B"]).replace("id: demo", "id: spare").replace(CALIBRATION, "calibration/spare.jsonl")
    commit_on_main(scenario, {"rubrics/spare.yaml": spare}, "main starts using the spare labels")
    result = scenario.run(head)
    assert result.code == 1, result.stdout + result.stderr
    body = marked_comment_body(scenario)
    assert "R4 (pass -&gt; fail)" in body and "`rubrics/spare.yaml`" in body


# -- labels --------------------------------------------------------------------------------------

def test_an_item_renamed_to_a_confusable_id_is_a_removal(scenario: Scenario) -> None:
    cal = calibration_jsonl().replace('"id": "R1"', '"id": "R\u0031\u200b"')
    head = scenario.git.commit({CALIBRATION: cal}, "R1 -> R1+ZWSP")
    result = run_gated(scenario, head)
    assert result.code == 1, result.stdout + result.stderr


def test_an_item_moved_into_calibration_from_held_out_with_a_new_label_is_a_relabel(scenario: Scenario) -> None:
    held = json.dumps({"id": "H1", "input": "design H1", "output": "review H1", "label": "fail",
                       "split": "evaluation"}) + "\n"
    main = commit_on_main(scenario, {CALIBRATION: calibration_jsonl() + held}, "a held-out item")
    scenario.git("reset", "-q", "--hard", main)
    moved = json.dumps({"id": "H1", "input": "design H1", "output": "review H1", "label": "pass"}) + "\n"
    head = scenario.git.commit({CALIBRATION: calibration_jsonl() + moved}, "H1 into calibration, as pass")
    result = run_gated(scenario, head)
    assert result.code == 1, result.stdout + result.stderr


# -- labels: whitespace, unicode, duplicates --------------------------------------------------------

def _item(item: str, label: str, **extra: object) -> str:
    return json.dumps({"id": item, "input": f"design {item}", "output": f"review {item}", "label": label, **extra}) + "\n"


def test_an_item_whose_content_differs_only_in_whitespace_is_a_rewrite(scenario: Scenario) -> None:
    from tests.action.harness import CALIBRATION, calibration_jsonl

    cal = calibration_jsonl().replace('"review R1"', '"review R1 "')
    head = scenario.git.commit({CALIBRATION: cal}, "trailing space in R1")
    assert run_gated(scenario, head).code == 1


def test_an_item_moved_to_the_evaluation_split_and_a_check_deleted(scenario: Scenario) -> None:
    from tests.action.harness import CALIBRATION, calibration_jsonl

    cal = calibration_jsonl().replace('"label": "fail"}', '"label": "fail", "split": "evaluation"}', 1)
    head = scenario.git.commit({CALIBRATION: cal, RUBRIC: rubric_yaml(["B", "C", "D"])}, "hold R1 out; delete A")
    assert run_gated(scenario, head).code == 1


def test_an_unplanned_flaw_mark_and_a_deletion_in_the_next_pr(scenario: Scenario) -> None:
    from tests.action.harness import CALIBRATION, calibration_jsonl

    cal = calibration_jsonl().replace('"label": "fail"}', '"label": "fail", "flaw": "unplanned"}', 1)
    one, two = two_prs(scenario, {CALIBRATION: cal}, {RUBRIC: rubric_yaml(["B", "C", "D"])})
    not_both_green(one, two)


def test_a_deleted_rubric_that_catches_nothing_takes_no_shared_labels_with_it(scenario: Scenario) -> None:
    """helper.yaml (only E, which catches nothing) shares demo's labels; deleting it does not
    make relabeling them free."""
    from tests.action.harness import CALIBRATION, calibration_jsonl

    helper = rubric_yaml(["E"]).replace("id: demo", "id: helper").replace(
        f"calibration: {CALIBRATION}", "calibration: ./calibration//demo.jsonl")
    main = commit_on_main(scenario, {"rubrics/helper.yaml": helper}, "a helper rubric")
    scenario.git("reset", "-q", "--hard", main)
    head = scenario.git.commit({"rubrics/helper.yaml": None, CALIBRATION: calibration_jsonl({**LABELS, "R1": "pass"})},
                               "delete helper; relabel R1")
    assert run_gated(scenario, head).code == 1


def test_creating_the_labels_of_a_rubric_that_has_none_needs_the_override(scenario: Scenario) -> None:
    """demo.yaml names a calibration set main does not have (it does not load: it vouches for
    nothing). A PR that only creates that set, labeled as it likes, makes it load; the next PR
    is gated on those labels (here: nothing flawed, so deleting any check is free)."""
    from tests.action.harness import CALIBRATION, calibration_jsonl

    main = commit_on_main(scenario, {CALIBRATION: None}, "labels to come")
    scenario.git("reset", "-q", "--hard", main)
    lenient = calibration_jsonl({item: "pass" for item in ("R4", "R5")}) + _item("R1", "pass").replace(
        '"review R1"', '"review R1."')
    one, two = two_prs(scenario, {CALIBRATION: lenient}, {RUBRIC: rubric_yaml(["C", "D"])})
    not_both_green(one, two)


class TestCalibrationIdentity:
    """Which items are the same item: ids, content, spellings, fields no rule names."""

    def test_an_item_id_renamed_to_its_fullwidth_spelling(self, scenario: Scenario) -> None:
        cal = calibration_jsonl().replace('"id": "R1"', '"id": "\uff321"')
        head = scenario.git.commit({CALIBRATION: cal}, "R1 -> fullwidth R1")
        rejected_run(scenario, head)

    def test_an_item_id_renamed_to_its_nfd_spelling_then_a_deletion(self, scenario: Scenario) -> None:
        labels = {**LABELS, "R\u00e9": "fail"}
        fails = {**FAILS, "R\u00e9": {"A"}}
        commit_on_main(scenario, {CALIBRATION: calibration_jsonl(labels), VERDICTS: verdicts_jsonl(TEXTS, fails, labels)},
                 "Ré, caught by A alone")
        scenario.git("reset", "-q", "--hard", scenario.base_sha)
        cal = calibration_jsonl(labels).replace('"id": "R\\u00e9"', '"id": "Re\\u0301"')
        assert cal != calibration_jsonl(labels)
        head = scenario.git.commit({CALIBRATION: cal, **DELETE_A}, "Ré in NFD; delete A")
        rejected_run(scenario, head)

    def test_the_same_content_under_a_new_id_with_the_other_label(self, scenario: Scenario) -> None:
        head = scenario.git.commit({CALIBRATION: calibration_jsonl() + labeled_item_line("R1b", "pass", content="R1")},
                                   "R1's content again, as pass")
        rejected_run(scenario, head, code=2)  # the new set does not load: bad input, no override covers it

    @pytest.mark.parametrize("split", ["Calibration", "calibration ", "calibratio\u0578"],
                             ids=["case", "trailing-space", "armenian-n"])
    def test_a_split_that_only_looks_like_calibration_then_a_deletion(self, scenario: Scenario, split: str) -> None:
        """R1 is A's unique catch. PR 1 marks it with a split that reads like `calibration`; if
        that leaves the calibration split unnoticed, PR 2 deletes A on labels without R1."""
        cal = calibration_jsonl().replace('"label": "fail"}', f'"label": "fail", "split": {json.dumps(split)}}}', 1)
        head = scenario.git.commit({CALIBRATION: cal}, "PR 1: R1's split")
        one = run_gated(scenario, head)
        merge_pr(scenario)
        second = scenario.git.commit(DELETE_A, "PR 2: delete A")
        two = run_gated(scenario, second)
        # `split` is an enum: PR 1's set does not load (bad input), and so the base of PR 2.
        assert (one.code, two.code) == (2, 2), one.stdout + two.stdout

    def test_a_meta_field_changed_on_a_caught_item_then_a_deletion(self, scenario: Scenario) -> None:
        cal = calibration_jsonl().replace('"label": "fail"}', '"label": "fail", "meta": {"note": "x"}}', 1)
        commit_on_main(scenario, {CALIBRATION: cal}, "R1 has meta")
        scenario.git("reset", "-q", "--hard", scenario.base_sha)
        edited = cal.replace('{"note": "x"}', '{"note": "x", "label": "pass", "split": "evaluation"}')
        head = scenario.git.commit({CALIBRATION: edited, **DELETE_A}, "meta that names a label; delete A")
        rejected_run(scenario, head)

    def test_a_label_spelled_in_upper_case(self, scenario: Scenario) -> None:
        cal = calibration_jsonl().replace('"label": "fail"}', '"label": "FAIL"}', 1)
        head = scenario.git.commit({CALIBRATION: cal, **DELETE_A}, "FAIL")
        rejected_run(scenario, head, code=2)  # the new set does not load: bad input, no override covers it

    def test_an_item_id_with_a_trailing_space(self, scenario: Scenario) -> None:
        cal = calibration_jsonl().replace('"id": "R1"', '"id": "R1 "')
        head = scenario.git.commit({CALIBRATION: cal}, "'R1 '")
        rejected_run(scenario, head)


# -- calibration files: line spellings ----------------------------------------------------------

class TestCalibrationLines:
    def test_crlf_with_a_relabel(self, scenario: Scenario) -> None:
        cal = calibration_jsonl({**LABELS, "R1": "pass"}).replace("\n", "\r\n")
        head = scenario.git.commit({CALIBRATION: cal}, "CRLF; R1 pass")
        rejected_run(scenario, head)

    def test_a_bom_and_a_relabel(self, scenario: Scenario) -> None:
        cal = "\ufeff" + calibration_jsonl({**LABELS, "R1": "pass"})
        head = scenario.git.commit({CALIBRATION: cal}, "BOM; R1 pass")
        rejected_run(scenario, head)

    def test_an_escaped_duplicate_label_key(self, scenario: Scenario) -> None:
        cal = calibration_jsonl().replace('"label": "fail"}', '"label": "fail", "l\\u0061bel": "pass"}', 1)
        head = scenario.git.commit({CALIBRATION: cal}, "label twice, escaped")
        rejected_run(scenario, head, code=2)  # a set that does not load is bad input

    def test_an_item_id_given_as_a_number(self, scenario: Scenario) -> None:
        cal = calibration_jsonl().replace('"id": "R1"', '"id": 1')
        head = scenario.git.commit({CALIBRATION: cal}, "R1 -> 1")
        rejected_run(scenario, head, code=2)  # a set that does not load is bad input

    def test_a_blank_line_and_a_comment_line(self, scenario: Scenario) -> None:
        cal = calibration_jsonl().replace(labeled_item_line("R1", "fail"), "\n// R1 removed\n", 1)
        head = scenario.git.commit({CALIBRATION: cal, **DELETE_A}, "R1 commented out; delete A")
        rejected_run(scenario, head, code=2)  # a set that does not load is bad input


# -- items the base branch added since the PR branched ------------------------------------------

class TestItemsMainAddedSince:
    """A PR is reviewed against its merge base, which does not have the items main labeled since;
    once merged, what it records for them is the record of the tip's items. The rule: answers are
    compared as the lookups read them: where main changed the verdict file too, the tip's record
    with the merged one (a PR that does more than append is asked to rebase); a line carrying an
    item's new content hash is stale on the merge base's item, so its answer there is lost."""

    def _main_adds_r6(self, scenario: Scenario) -> None:
        labels = {**LABELS, "R6": "fail"}
        fails = {**FAILS, "R6": {"B"}}  # B's one unique catch
        commit_on_main(scenario, {CALIBRATION: calibration_jsonl(labels), VERDICTS: verdicts_jsonl(TEXTS, fails, labels)},
                 "main labels R6, which only B catches")

    @staticmethod
    def _judge(prompt: str) -> str:
        if "review R6" in prompt:
            return "no" if TEXTS["B"] in prompt else "yes"
        return truthful_judge(prompt)

    def _two_prs(self, scenario: Scenario, record: str | None, **inputs: str):
        first = scenario.git.commit({VERDICTS: record} if record else {"README.md": "x\n"}, "PR 1: an answer for R6")
        one = run_gated(scenario, first, **inputs)
        merge_into_main(scenario, "pr")  # raises on a conflict: git merges it cleanly
        scenario.git("checkout", "-q", "-B", "pr2", "main")
        second = scenario.git.commit({RUBRIC: rubric_yaml(["A", "C", "D"])}, "PR 2: delete B")
        return one, run_gated(scenario, second, **inputs)

    def test_without_the_answer_deleting_b_is_rejected(self, scenario: Scenario) -> None:
        self._main_adds_r6(scenario)
        one, two = self._two_prs(scenario, None, **judged_by(scenario, self._judge))
        assert (one.code, two.code) == (0, 1), one.stdout + two.stdout

    def test_a_keyed_answer_for_an_item_main_labeled_since(self, scenario: Scenario) -> None:
        self._main_adds_r6(scenario)
        inputs = judged_by(scenario, self._judge)
        line = keyed_line("B", "R6", "yes")
        one, two = self._two_prs(scenario, line + (scenario.git.path / VERDICTS).read_text(), **inputs)
        assert one.code == 1 or two.code == 1, one.stdout + two.stdout

    def test_a_keyless_answer_after_the_line_main_wrote(self, scenario: Scenario) -> None:
        self._main_adds_r6(scenario)
        record = (scenario.git.path / VERDICTS).read_text()
        after = json.dumps({"item": "R1", "check_text": TEXTS["C"], "answer": "yes"}) + "\n"
        one, two = self._two_prs(scenario, record.replace(after, after + verdict_line("B", "R6", "yes")))
        assert one.code == 1 or two.code == 1, one.stdout + two.stdout

    def test_an_answer_for_the_content_main_rewrote_an_item_to(self, scenario: Scenario) -> None:
        """main rewrote R1's output since (overridden on main). PR 1 appends (B, R1) "no" carrying the
        new content's hash: on the merge base's R1 it is stale (another content), on the tip's R1 it
        is the answer. PR 2 deletes A, whose catch of R1 B now shares."""

        cal = calibration_jsonl().replace('"review R1"', '"review R1, rewritten"')
        commit_on_main(scenario, {CALIBRATION: cal}, "main rewrites R1 (overridden)")
        line = verdict_line("B", "R1", "no", item_hash=item_content_hash("design R1", "review R1, rewritten"))
        from tests.action.harness import merge_into_main

        first = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + line}, "PR 1: an answer for the new R1")
        one = run_gated(scenario, first)
        merge_into_main(scenario, "pr")
        scenario.git("checkout", "-q", "-B", "pr2", "main")
        two = run_gated(scenario, scenario.git.commit(DELETE_A, "PR 2: delete A"))
        assert one.code == 1 or two.code == 1, one.stdout + two.stdout
