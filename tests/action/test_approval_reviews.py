"""Which reviews vouch for a PR's recorded verdicts, read as GitHub lists them, and what an approval
never covers. The PR's author is the adversary: they want a rubric edit the gate holds to pass on
an approval that is not a writer's vouching for this head, or on evidence the approval never saw.

The scenario is `test_approval`'s: the base rubric's check A alone catches R1; the PR rewords A
and records verdicts for the new text (its own evidence, held until a writer approves the head).
End to end through `rubric-gate action`, a real git repository and the fake GitHub, whose reviews
API pages as GitHub's does (`per_page` at most 100, a `Link` header).
"""

from __future__ import annotations

import json

import pytest

from rubric_gate.action.github import approval as reading
from tests.action.harness import (
    CALIBRATION,
    FAILS,
    LABELS,
    REVIEWERS,
    REWORDED,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Result,
    Scenario,
    approve,
    assert_surfaces_inert,
    calibration_jsonl,
    commit_on_main,
    conclusion_of,
    held_changes,
    merge_group,
    merge_pr,
    review_run,
    reword_with_records,
    rubric_yaml,
    sound_rewording,
    verdicts_jsonl,
    words_of,
)


def _not_green(scenario: Scenario, head: str, result: Result) -> None:
    assert result.code == 1 and result.outputs["decision"] == "fail", result.stdout + result.summary
    assert conclusion_of(scenario, head) == "failure", result.stdout
    assert "Traceback" not in result.stdout + result.stderr


# -- reading the reviews as GitHub lists them ------------------------------------------------------

def test_a_change_request_on_a_later_page_of_reviews_withdraws_the_approval(scenario: Scenario) -> None:
    """Anyone may submit COMMENTED reviews, the author too: 150 of them push the writer's later
    change request onto the second page of 100. Every page is read."""
    head = reword_with_records(scenario)
    assert approve(scenario, head).code == 0
    for _ in range(150):
        scenario.fake.review("author", "COMMENTED", head)
    still = review_run(scenario, head, scenario.fake.review("author", "COMMENTED", head))
    assert still.code == 0, still.summary  # a comment leaves the approval standing, on any page
    changes = review_run(scenario, head, scenario.fake.review("maintainer", "CHANGES_REQUESTED", head))
    _not_green(scenario, head, changes)
    assert held_changes(changes) == [("A", "modified")]
    pages = [p for m, p in scenario.fake.requests if p.endswith("/pulls/7/reviews")]
    assert len(pages) >= 2


def test_reviews_past_what_the_run_reads_count_for_nothing(scenario: Scenario,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The reviews list is read oldest first and only so far: what lies past that (a writer's later
    change request) is unknown, so no approval counts rather than the oldest reviews deciding."""
    monkeypatch.setattr(reading, "MAX_REVIEWS", 120)
    head = reword_with_records(scenario)
    assert approve(scenario, head).code == 0
    for _ in range(130):  # the author floods the list with comments
        scenario.fake.review("author", "COMMENTED", head)
    flooded = review_run(scenario, head, scenario.fake.review("maintainer", "CHANGES_REQUESTED", head))
    _not_green(scenario, head, flooded)
    assert "more than 120 reviews" in words_of(flooded), flooded.summary
    # Without a change request, a flooded list still cannot be read to its end: no approval counts.
    scenario.fake.reviews[7] = [r for r in scenario.fake.reviews[7] if r["state"] != "CHANGES_REQUESTED"]
    still = review_run(scenario, head, scenario.fake.review("author", "COMMENTED", head))
    _not_green(scenario, head, still)


# -- whose approval, of what -----------------------------------------------------------------------

def test_an_approval_by_a_writer_whose_access_was_since_removed_counts_for_nothing(scenario: Scenario) -> None:
    head = reword_with_records(scenario)
    assert approve(scenario, head).code == 0 and conclusion_of(scenario, head) == "success"
    scenario.fake.permissions["maintainer"] = "read"  # removed from the team; the review stays listed
    rerun = review_run(scenario, head, scenario.fake.review("author", "COMMENTED", head))
    _not_green(scenario, head, rerun)
    assert "@maintainer approved this head but has read access (write is required)" in words_of(rerun)
    del scenario.fake.permissions["maintainer"]  # no longer a collaborator at all
    gone = review_run(scenario, head, scenario.fake.review("author", "COMMENTED", head))
    _not_green(scenario, head, gone)


def test_a_second_account_with_triage_rights_cannot_vouch_for_the_authors_pr(scenario: Scenario) -> None:
    head = reword_with_records(scenario)
    result = approve(scenario, head, "second")
    _not_green(scenario, head, result)
    assert "@second approved this head but has read access (write is required)" in words_of(result)


def test_an_approval_does_not_follow_a_force_push_to_a_commit_with_the_same_tree(scenario: Scenario) -> None:
    """GitHub ties a review to a commit, not to its tree: the same files under a new commit (an
    amended message, a rebase that changed nothing) are a head nobody approved."""
    head = reword_with_records(scenario)
    assert approve(scenario, head).code == 0
    scenario.git("commit", "-q", "--amend", "-m", "reword A (same tree)")
    same_tree = scenario.git("rev-parse", "HEAD").strip()
    assert same_tree != head and scenario.git("rev-parse", f"{head}^{{tree}}") == \
        scenario.git("rev-parse", f"{same_tree}^{{tree}}")
    pushed = scenario.run(same_tree)
    _not_green(scenario, same_tree, pushed)
    assert held_changes(pushed) == [("A", "modified")]
    assert f"approved <code>{head[:7]}</code>, not this head <code>{same_tree[:7]}</code>" in words_of(pushed)


def test_a_review_run_gates_the_head_its_payload_names_not_the_head_reviewed(scenario: Scenario) -> None:
    """A writer approves the page they read (the old head) after a push: the review run's payload
    carries the PR as it is now, so it gates the new head, which nobody approved."""
    old = reword_with_records(scenario)
    new = scenario.git.commit({"README.md": "pushed while the writer read the old head\n"}, "a push")
    review = scenario.fake.review("maintainer", "APPROVED", old)
    result = review_run(scenario, new, review)
    _not_green(scenario, new, result)
    assert result.report()["head_sha"] == new and conclusion_of(scenario, old) is None


# -- what an approval never covers -------------------------------------------------------------------

def test_an_approval_does_not_excuse_relabeling_the_calibration_set(scenario: Scenario) -> None:
    """It vouches for verdicts the PR records for new check texts; the labels are the gate's ground
    truth, and relabeling R1 (the catch the rewording would lose) stays the override's."""
    scenario.fake.permissions.update(REVIEWERS)
    relabeled = calibration_jsonl({**LABELS, "R1": "pass"})
    head = scenario.git.commit({**sound_rewording(), CALIBRATION: relabeled}, "reword A, relabel R1")
    # Before the approval the comment never offers it as the way through: the relabel needs the label.
    said = words_of(scenario.run(head))
    to_merge = next(line for line in said.splitlines() if line.startswith("**To merge:**"))
    assert "approve" not in to_merge and "`rubric-gate:override` label" in to_merge, to_merge
    assert "have someone with write access review the recorded verdicts" not in said
    assert ("makes them count, but not the findings this comment lists outside the rubric sections (labels, recorded "
            "answers, the merge): those need the `rubric-gate:override` label either way.") in said.replace("\n", " ")
    result = approve(scenario, head)
    _not_green(scenario, head, result)
    blocking = [f for f in result.report()["standard"] if f["blocking"]]
    assert [f["file"] for f in blocking] == [CALIBRATION], result.report()["standard"]


def test_an_approval_does_not_excuse_removing_the_base_record(scenario: Scenario) -> None:
    """Dropping the base's answers for a check it has (B's, say) is a change of the trusted record,
    whoever approves the head."""
    scenario.fake.permissions.update(REVIEWERS)
    files = sound_rewording()
    kept = "".join(line + "\n" for line in files[VERDICTS].splitlines()
                   if json.loads(line)["check_text"] != TEXTS["B"])
    head = scenario.git.commit({**files, VERDICTS: kept}, "reword A, drop B's record")
    result = approve(scenario, head)
    _not_green(scenario, head, result)
    assert any(f["blocking"] and f["file"] == VERDICTS for f in result.report()["standard"]), result.summary


def test_a_merge_queue_group_has_no_reviews_and_holds_what_only_an_approval_excused(scenario: Scenario) -> None:
    """A merge group's head is a commit nobody reviewed: an edit that passed its PR on an approval
    is held in the queue too (fails closed; the override label on the PR is the way through)."""
    head = reword_with_records(scenario)
    assert approve(scenario, head).code == 0
    scenario.git("checkout", "-q", "-b", "queue", scenario.base_sha)
    scenario.git("merge", "-q", "--no-ff", "-m", "Merge pull request #7", head)
    group = scenario.git("rev-parse", "HEAD").strip()
    queued = scenario.run(group, event_name="merge_group", payload=merge_group(scenario, group))
    assert queued.code == 1 and queued.outputs["decision"] == "fail", queued.stdout + queued.summary
    assert conclusion_of(scenario, group) == "failure"


# -- a fork's run ------------------------------------------------------------------------------------

def test_a_forks_review_run_that_cannot_read_permissions_counts_no_approval_and_says_why(
        scenario: Scenario) -> None:
    """A fork's `pull_request_review` run has a read-only token. Where GitHub answers the
    collaborator permission API with 403 for it ("Must have push access to view collaborator
    permission"), nothing vouches for the approver: held, and the summary says which read failed."""
    head = reword_with_records(scenario)
    scenario.fake.permission_forbidden_for_read_only = True
    # Before anyone approves, the comment does not ask for an approval this run cannot verify.
    before = scenario.run(head, fork=True, token="read-only-token")
    assert before.code == 1, before.stdout + before.summary
    said = words_of(before)
    to_merge = next(line for line in said.splitlines() if line.startswith("**To merge:**"))
    assert "approve" not in to_merge and "`rubric-gate:override` label" in to_merge, to_merge
    assert "This run cannot verify an approval" in said and "@author's permission could not be read" in said, said
    result = approve(scenario, head, fork=True, token="read-only-token")
    assert result.code == 1 and result.outputs["decision"] == "fail", result.stdout + result.summary
    said = words_of(result)
    assert "@maintainer's permission could not be read (HTTP 403: Must have push access" in said, said
    assert "this fork's run has a read-only token, so no approval can be verified in it" in said
    assert held_changes(result) == [("A", "modified")]


def test_an_approval_does_not_vouch_for_answers_main_gained_since_for_the_new_text(scenario: Scenario) -> None:
    """The approver reads the PR's head. Answers main has recorded since for the PR's new text (no
    check had it, so no gate weighed them) are not in that head; where they differ from the head's,
    the merge changes a recorded answer of the tip's record, which no approval excuses.

    The PR rewords A to N, whose records honestly catch R1 but not R2 (B still does at the merge
    base: sound, and approved). Since then main deleted B and gained answers for N that claim R2
    (inserted at the top of the file, so git merges both cleanly). Onto the tip, the rewording
    loses R2's only catch: only main's unweighed answers say otherwise."""
    scenario.fake.permissions.update(REVIEWERS)
    honest = verdicts_jsonl(TEXTS) + verdicts_jsonl({"N": REWORDED}, {"R1": {"N"}})
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A=N", "B", "C", "D"], extra={"N": REWORDED}),
                                VERDICTS: honest}, "reword A: N catches R1")
    assert approve(scenario, head).code == 0  # at the merge base B still catches R2
    base = scenario.base_sha
    claims = verdicts_jsonl({"N": REWORDED}, {"R1": {"N"}, "R2": {"N"}})
    commit_on_main(scenario, {VERDICTS: claims + verdicts_jsonl(TEXTS)}, "record answers for a text no check has")
    tip = commit_on_main(scenario, {RUBRIC: rubric_yaml(["A", "C", "D"])}, "delete B (A still catches R2)")
    assert scenario.git("merge-base", head, tip) == base
    merged = approve(scenario, head)
    _not_green(scenario, head, merged)
    blocking = [f for f in merged.report()["standard"] if f["blocking"]]
    assert [f["file"] for f in blocking] == [VERDICTS], merged.report()["standard"]
    assert f"merged onto the base tip <code>{tip[:7]}</code>, changes 1 recorded answer" in words_of(merged)



def test_a_pr_line_that_contradicts_an_unweighed_answer_is_not_what_the_approval_counts_unseen(
        scenario: Scenario) -> None:
    """Answers for the new text landed first (recorded while no check had it: N catches R2, a
    claim). The rewording's PR appends its own answer for that pair (N passes R2), which is what
    the approver reads in the diff. The gate must not count the record's claim while showing the
    approver a PR line that says otherwise: the contradiction fails, approved or not."""
    scenario.fake.permissions.update(REVIEWERS)
    claims = verdicts_jsonl({"N": REWORDED}, {"R1": {"N"}, "R2": {"N"}})
    first = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + claims}, "answers for a text no check has")
    assert scenario.run(first).code == 0
    merge_pr(scenario)
    honest_r2 = json.dumps({"item": "R2", "check_text": REWORDED, "answer": "yes"}) + "\n"
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A=N", "B", "C", "D"], extra={"N": REWORDED}),
                                VERDICTS: verdicts_jsonl(TEXTS) + claims + honest_r2}, "reword A; N passes R2")
    result = approve(scenario, head)
    _not_green(scenario, head, result)
    blocking = [f for f in result.report()["standard"] if f["blocking"]]
    assert [f["file"] for f in blocking] == [VERDICTS] and "changes 1 recorded answer" in blocking[0]["message"]


def test_an_edited_reviews_text_repeats_the_heads_failure_and_says_so(scenario: Scenario) -> None:
    """`pull_request_review` runs for `edited` too where a workflow lists no types: the review's
    state and commit are unchanged, so the head's failure stands (named as what happened)."""
    head = reword_with_records(scenario)
    assert scenario.run(head).code == 1
    review = scenario.fake.review("reader", "APPROVED", head)
    edited = review_run(scenario, head, review, action="edited")
    assert edited.code == 1 and edited.outputs["decision"] == "fail", edited.stdout
    assert "nothing to re-gate: a review's text was edited" in edited.stdout, edited.stdout


def test_the_held_section_keeps_item_ids_and_paths_inert(scenario: Scenario) -> None:
    """Item ids are the calibration set's text and the verdict file's path the rubric's: in the
    held section (which changes, why on each view, which records) they never become a mention,
    a link, an image or HTML, on any surface GitHub renders."""
    hostile = "R1 @octocat <img src=x onerror=alert(1)> [evil](https://evil.test) ![evil](https://evil.test/e.png)"
    labels = {hostile if i == "R1" else i: label for i, label in LABELS.items()}
    fails = {hostile if i == "R1" else i: checks for i, checks in FAILS.items()}
    path = "calibration/@octocat <b>evil</b>.verdicts.jsonl"
    rubric = rubric_yaml(["A", "B", "C", "D"]).replace(VERDICTS, path)
    commit_on_main(scenario, {CALIBRATION: calibration_jsonl(labels), RUBRIC: rubric, VERDICTS: None,
                              path: verdicts_jsonl(TEXTS, fails, labels)}, "hostile ids on main")
    scenario.git("merge", "-q", "--ff-only", "main")
    scenario.fake.permissions.update(REVIEWERS)
    new_fails = {item: checks | ({"N"} if "A" in checks else set()) for item, checks in fails.items()}
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A=N", "B", "C", "D"], extra={"N": REWORDED}).replace(VERDICTS, path),
                                path: verdicts_jsonl(TEXTS, fails, labels)
                                + verdicts_jsonl({"N": REWORDED}, new_fails, labels)}, "reword A")
    held = scenario.run(head)
    _not_green(scenario, head, held)
    assert held_changes(held) == [("A", "modified")]
    assert_surfaces_inert(scenario, held, head, shown="onerror=alert(1)")
    assert "Held until a writer approves" in words_of(held)


def test_answers_for_a_text_no_check_has_change_only_with_the_override(scenario: Scenario) -> None:
    """What an approval of a later rewording would vouch for (answers landed first for its new
    text, weighed by nobody) cannot be changed on main without a writer's override: else main
    could make the new text catch what the approver saw it miss, after the approval, at the base
    tip the rewording is merged onto."""
    honest = verdicts_jsonl(TEXTS) + verdicts_jsonl({"N": REWORDED}, {"R1": {"N"}})
    assert scenario.run(scenario.git.commit({VERDICTS: honest}, "answers for a text no check has")).code == 0
    merge_pr(scenario)
    yes = json.dumps({"item": "R2", "check_text": REWORDED, "answer": "yes"})
    assert yes in honest
    claim = scenario.git.commit({VERDICTS: honest.replace(yes, yes.replace('"yes"', '"no"'))}, "N catches R2")
    result = scenario.run(claim)
    _not_green(scenario, claim, result)
    blocking = [f for f in result.report()["standard"] if f["blocking"]]
    assert [f["file"] for f in blocking] == [VERDICTS] and "changes 1 recorded answer" in blocking[0]["message"]
