"""Evidence as the gate reads it: what the PR supplies may reject a change, never excuse one. End to
end through `rubric-gate action` against the fake GitHub with a real git repository.

Two boundaries: the guard compares the answers each lookup reads at the base and at the head (a
copy of an earlier line, a reordering or a removal moves the winning line without adding one the
base lacks); and a recorded verdict vouches for a check only once a check with its text is in the
rubric (answers recorded for a text no check has are weighed, as the PR's own, by the PR that adds
such a check). Each route is written as the hostile PR would take it; the legitimate flows the
rules keep working are tested beside them.
"""

from __future__ import annotations

from tests.action.harness import (
    CALIBRATION,
    JUDGE,
    LABELS,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Scenario,
    calibration_jsonl,
    commit_on_main,
    content_hash_of,
    judged_by,
    merge_pr,
    not_both_green,
    rubric_yaml,
    run_gated,
    truthful_judge,
    verdict_line,
    verdicts_jsonl,
)

X = {"X": "Is key rotation automated?"}


def _record_on_main(scenario: Scenario, text: str) -> str:
    """The base branch's verdict file becomes `text`; the PR branch starts there."""
    main = commit_on_main(scenario, {VERDICTS: text}, "main re-records verdicts")
    scenario.git("reset", "-q", "--hard", main)
    return main


# -- the winning line moves without a line the base lacks ------------------------------------------

# B re-recorded "yes" on R2 (the later line wins), and B also catches R1: A's catch of R2 is its
# only unique one, so deleting A is refused.
RE_RECORDED = verdicts_jsonl(TEXTS) + verdict_line("B", "R1", "no") + verdict_line("B", "R2", "yes")
FLIPPED = f"{TEXTS['B']} on R2: yes -> no"


def test_a_copy_of_an_earlier_line_that_flips_the_record_is_a_changed_answer(scenario: Scenario) -> None:
    """PR 1 appends an exact copy of the earlier `B/R2: no` line: no line the base lacks, yet the
    record now reads "no" there. Merged, A's catch of R2 looks shared and PR 2 deletes A."""
    _record_on_main(scenario, RE_RECORDED)
    first = scenario.git.commit({VERDICTS: RE_RECORDED + verdict_line("B", "R2", "no")}, "PR 1: a copy of a line")
    one = run_gated(scenario, first)
    assert one.code == 1 and FLIPPED in one.stdout, one.stdout
    merge_pr(scenario)
    two = run_gated(scenario, scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "PR 2: delete A"))
    not_both_green(one, two)


def test_reordering_the_lines_of_a_pair_is_a_changed_answer(scenario: Scenario) -> None:
    """The last line wins: moving B's later "yes" on R2 above its "no" flips the record."""
    _record_on_main(scenario, RE_RECORDED)
    lines = RE_RECORDED.splitlines(keepends=True)
    late_yes = lines.pop()  # B/R2 "yes", re-recorded last
    early_no = lines.index(verdict_line("B", "R2", "no"))
    lines.insert(early_no, late_yes)
    result = run_gated(scenario, scenario.git.commit({VERDICTS: "".join(lines)}, "reorder"))
    assert result.code == 1 and FLIPPED in result.stdout, result.stdout


def test_removing_the_later_line_of_a_re_recorded_pair_is_a_changed_answer(scenario: Scenario) -> None:
    _record_on_main(scenario, RE_RECORDED)
    result = run_gated(scenario, scenario.git.commit({VERDICTS: RE_RECORDED.removesuffix(verdict_line("B", "R2", "yes"))},
                                                 "drop the re-recording"))
    assert result.code == 1 and FLIPPED in result.stdout, result.stdout


def test_moving_lines_without_changing_any_answer_is_allowed(scenario: Scenario) -> None:
    """Sorting the file differently, where no pair has two lines, changes nothing the gate reads."""
    lines = verdicts_jsonl(TEXTS).splitlines(keepends=True)
    result = run_gated(scenario, scenario.git.commit({VERDICTS: "".join(reversed(lines))}, "reorder the file"))
    assert result.code == 0, result.stdout + result.stderr


def test_a_stale_line_appended_over_an_answer_removes_it(scenario: Scenario) -> None:
    """A line for (B, R1) recorded for other content (its `item_hash` is another item's) wins the
    item's lookup and is stale there: the record has no answer for B on R1 any more. That gap is
    lost evidence, however it was made (the next PR could fill it)."""
    stale = verdict_line("B", "R1", "yes", item_hash=content_hash_of("R5"))
    result = run_gated(scenario, scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + stale}, "a stale line"))
    assert result.code == 1 and "removes 1 recorded verdict" in result.stdout, result.stdout


# -- answers recorded for a check text no rubric has --------------------------------------------

def _lies() -> str:
    """X "no" on R1 (A's unique catch) and "yes" elsewhere: X would share A's catch."""
    return "".join(verdict_line(X["X"], i, "no" if i == "R1" else "yes") for i in LABELS)


def test_answers_recorded_for_no_check_do_not_excuse_a_deletion_once_merged(scenario: Scenario) -> None:
    """Replay (no judge anywhere): PR 1 records answers for a text no check has, which nothing
    weighs; PR 2 adds X and deletes A, whose catch X's recorded "no" shares."""
    first = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + _lies()}, "PR 1: answers for no check")
    one = run_gated(scenario, first)
    merge_pr(scenario)
    two = run_gated(scenario, scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D", "X"], extra=X)},
                                              "PR 2: add X, delete A"))
    assert two.code == 1 and "Held until a writer approves" in two.summary, two.stdout
    held = two.report()["rubrics"][0]["report"]["withheld"]["held"]
    assert [(h["check"], h["change"]) for h in held] == [("A", "deleted")]
    not_both_green(one, two)


def test_answers_recorded_for_no_check_are_weighed_by_the_judge_when_the_check_arrives(scenario: Scenario) -> None:
    """A judged repository: the judge answers X itself when PR 2 adds it, and the recorded answers
    it disagrees with fail there (merged, they would be the record a run without the judge reads)."""
    inputs = judged_by(scenario)
    one = run_gated(scenario, scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + _lies()}, "PR 1"), **inputs)
    merge_pr(scenario)
    two = run_gated(scenario, scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=X)},
                                              "PR 2: add X"), **inputs)
    assert two.code == 1 and "disagree with the configured judge" in two.summary, two.stdout
    not_both_green(one, two)


# -- the legitimate flows these rules keep ------------------------------------------------------

def _truthful_x() -> str:
    """X answers like A (it catches R1 and R2, and no correct item): evidence a reviewer can trust."""
    return "".join(verdict_line(X["X"], i, "no" if i in ("R1", "R2") else "yes") for i in LABELS)


def test_verdicts_recorded_first_then_the_check_then_the_deletion_each_pass(scenario: Scenario) -> None:
    """Replay: record X's verdicts (PR 1), add X on them (PR 2: used as recorded, may reject), and
    once X is in the rubric its record vouches for it: deleting A (PR 3) passes, its catches shared."""
    one = run_gated(scenario, scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + _truthful_x()}, "PR 1"))
    assert one.code == 0, one.stdout + one.stderr
    merge_pr(scenario)
    two = run_gated(scenario, scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=X)}, "PR 2"))
    assert two.code == 0 and "recorded before any check had their text" in two.summary, two.stdout + two.stderr
    merge_pr(scenario)
    three = run_gated(scenario, scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D", "X"], extra=X)}, "PR 3"))
    assert three.code == 0, three.stdout + three.stderr


def test_a_check_added_on_verdicts_recorded_earlier_may_be_rejected_by_them(scenario: Scenario) -> None:
    """The recorded answers still count against the check: X's recorded "no" on a correct item is blame."""
    blamed = "".join(verdict_line(X["X"], i, "no" if i == "R4" else "yes") for i in LABELS)
    run_gated(scenario, scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + blamed}, "PR 1"))
    merge_pr(scenario)
    two = run_gated(scenario, scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=X)}, "PR 2"))
    assert two.code == 1, two.stdout


def test_verdicts_recorded_first_then_the_check_with_the_judge_agreeing_pass(scenario: Scenario) -> None:
    judge_x = {**X}

    def judge(prompt: str) -> str:
        if judge_x["X"] in prompt:
            return "no" if any(f"review {i}" in prompt for i in ("R1", "R2")) else "yes"

        return truthful_judge(prompt)

    inputs = judged_by(scenario, judge)
    one = run_gated(scenario, scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + _truthful_x()}, "PR 1"), **inputs)
    assert one.code == 0, one.stdout + one.stderr
    merge_pr(scenario)
    two = run_gated(scenario, scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=X)}, "PR 2"),
                **inputs)
    assert two.code == 0, two.stdout + two.stderr


def test_a_fork_deleting_a_check_whose_catches_are_shared_on_the_record_passes(scenario: Scenario) -> None:
    """A fork contributor without secrets, a judge configured: deleting C (R3 is caught by B and D
    too, on the base's record) is gated on that record and passes."""
    result = run_gated(scenario, scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "D"])}, "delete C"),
                   fork=True, judge=JUDGE)
    assert result.code == 0, result.stdout + result.stderr


# -- the record as the merge leaves it ------------------------------------------------------------

def test_a_copy_appended_behind_an_answer_main_re_recorded_since_is_a_changed_answer(scenario: Scenario) -> None:
    """At the merge base B says "no" on R2 (and on R1): A's catches are shared. Main then records B
    "yes" on R2, inserting the line after the old one (A's catch of R2 is unique on main). PR 1,
    from the merge base, appends a copy of B's "no": against the merge base nothing changed. Git
    merges both cleanly and the copy wins: main's record says "no" again, and PR 2 deletes A. The
    guard also compares the tip's record with the merged one (`trust.merged_record`)."""
    at_merge_base = verdicts_jsonl(TEXTS) + verdict_line("B", "R1", "no")
    _record_on_main(scenario, at_merge_base)
    merge_base = scenario.git("rev-parse", "HEAD")
    lines = at_merge_base.splitlines(keepends=True)
    lines.insert(lines.index(verdict_line("B", "R2", "no")) + 1, verdict_line("B", "R2", "yes"))
    commit_on_main(scenario, {VERDICTS: "".join(lines)}, "main re-records B on R2")
    scenario.git("reset", "-q", "--hard", merge_base)
    one = run_gated(scenario, scenario.git.commit({VERDICTS: at_merge_base + verdict_line("B", "R2", "no")}, "PR 1"))
    scenario.git("checkout", "-q", "main")
    scenario.git("merge", "-q", "--no-ff", "-m", "Merge PR 1", "pr")
    tip = scenario.git("rev-parse", "HEAD")
    scenario.base_sha = scenario.fake.base_sha = tip
    scenario.git("checkout", "-q", "-B", "pr", tip)
    two = run_gated(scenario, scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "PR 2: delete A"))
    assert one.code == 1 and "merged onto the base tip" in one.stdout and FLIPPED in one.stdout, one.stdout
    not_both_green(one, two)


def test_a_pr_editing_lines_of_a_file_main_changed_since_is_asked_to_rebase(scenario: Scenario) -> None:
    """Where the PR does more than append, the merged record is unknown until it is rebased."""
    commit_on_main(scenario, {VERDICTS: verdicts_jsonl(TEXTS) + verdict_line("C", "R5", "yes")}, "main re-records C on R5")
    lines = verdicts_jsonl(TEXTS).splitlines(keepends=True)
    result = run_gated(scenario, scenario.git.commit({VERDICTS: "".join(reversed(lines))}, "reorder (no answer changes)"))
    assert result.code == 1 and "rebase the PR" in result.stdout, result.stdout


def test_a_pr_appending_verdicts_to_a_file_main_appended_to_since_is_compared_on_the_tip(scenario: Scenario) -> None:
    """The legitimate case: main records answers for one check, the PR for a new check; merged,
    no answer of the tip's record changes."""
    commit_on_main(scenario, {VERDICTS: verdicts_jsonl(TEXTS) + verdict_line("C", "R5", "yes")}, "main re-records C on R5")
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=X),
                                VERDICTS: verdicts_jsonl(TEXTS) + _truthful_x()}, "add X with its verdicts")
    result = run_gated(scenario, head)
    assert result.code == 0, result.stdout + result.stderr


# -- items the PR adds ---------------------------------------------------------------------------

def test_items_added_with_their_verdicts_count_for_the_next_pr(scenario: Scenario) -> None:
    """Added items are allowed, and their verdicts are not weighed in their own PR (the gate reads
    the base's labels). Merged, they are evidence like any other, and all they can do to a later
    change is reject it (a catch more, a blame more): here D's catch of R6, which no other check
    makes, keeps D from being deleted."""

    r6 = "".join(verdict_line(c, "R6", "no" if c == "D" else "yes") for c in ("A", "B", "C", "D", "E"))
    one = run_gated(scenario, scenario.git.commit({CALIBRATION: calibration_jsonl({**LABELS, "R6": "fail"}),
                                               VERDICTS: verdicts_jsonl(TEXTS) + r6}, "PR 1: label R6"))
    assert one.code == 0, one.stdout + one.stderr
    merge_pr(scenario)
    two = run_gated(scenario, scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C"])}, "PR 2: delete D"))
    assert two.code == 1 and "unique" in two.summary, two.stdout + two.summary


# -- a new rubric is scored as the merge leaves it -------------------------------------------------

def test_a_new_rubric_is_scored_on_the_labels_main_changed_since_the_pr_branched(scenario: Scenario) -> None:
    """The PR (behind main) adds a rubric on the shared calibration set; main has since added a
    flawed item R6, with verdicts for A-D. Merged, the new rubric reads six items: it is scored on
    them, not on the five its branch has (and its one check that misses R6 is shown missing it)."""

    labels = {**LABELS, "R6": "fail"}
    fails = {"R1": {"A"}, "R2": {"A", "B"}, "R3": {"B", "C", "D"}, "R4": {"D"}, "R5": {"E"}, "R6": {"B"}}
    commit_on_main(scenario, {CALIBRATION: calibration_jsonl(labels), VERDICTS: verdicts_jsonl(TEXTS, fails, labels)},
             "main labels R6")
    new = rubric_yaml(["A", "C"]).replace("id: demo", "id: fresh")
    result = run_gated(scenario, scenario.git.commit({"rubrics/fresh.yaml": new}, "add a rubric of A and C"))
    (rubric,) = result.report()["rubrics"]
    caught = rubric["attribution"]["rates"]["flawed_caught"]
    assert (caught["count"], caught["total"]) == (3, 4), caught  # on its branch's labels: 3 of 3
