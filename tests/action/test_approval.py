"""A reviewer's approval vouches for a PR's recorded verdicts: the gate's rules are unchanged,
only which evidence counts.

The scenario: the base rubric's check A alone catches R1 (with B, R2). The PR rewords A and
records verdicts for the new text that answer "no" on R1 and R2, as A did: a sound rewording on
its records. Those verdicts are the PR's own, so before approval the gate withholds their catches
and holds the rewording (it would lose R1's catch on trusted evidence); once someone with write
access approves that head, the records count and it passes. End to end through `rubric-gate
action`, a real git repository and the fake GitHub (whose reviews API answers as GitHub's does).
"""

from __future__ import annotations

import json

from tests.action.harness import (
    CALIBRATION,
    DELETE_A,
    FAILS,
    LABELS,
    OVERRIDE,
    REVIEWERS,
    REWORDED,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Pulls,
    Scenario,
    apply_label,
    approve,
    calibration_jsonl,
    conclusion_of,
    held_changes,
    merge_pr,
    review_run,
    reword_with_records,
    rubric_yaml,
    verdicts_jsonl,
    words_of,
)
from tests.support import gfm
from tests.support.cli import rubric_gate
from tests.support.recompute import figures


def _sha(sha: str) -> str:
    return f"<code>{sha[:7]}</code>"  # a commit id in the comment's prose is code, never a live reference


# -- the team's flow -----------------------------------------------------------------------------

def test_a_sound_rewording_is_held_until_a_writer_approves_its_head_and_held_again_after_a_push(
        scenario: Scenario) -> None:
    head = reword_with_records(scenario)
    held = scenario.run(head, action="opened")
    assert held.code == 1 and conclusion_of(scenario, head) == "failure", held.stdout + held.summary
    assert held_changes(held) == [("A", "modified")]
    said = words_of(held)
    # The reasons name the evidence: which change, why on each view, which records, what makes them count.
    assert "`A` (modified), held: on trusted evidence, rewording would lose catches of R1" in said
    assert "on this PR's own records it is accepted (credit 1.50, blame 0.00)" in said
    assert "5 recorded verdicts in `calibration/demo.verdicts.jsonl` answering `A`" in said
    assert "On these records, this edit passes the gate." in said
    assert "held until a writer approves; on trusted evidence: rewording would lose catches of R1" in said  # the table
    assert f"approving this head (`{head[:7]}`)" in said and "`rubric-gate:override` label" in said
    page = gfm.parse_html((held.workspace / ".rubric-gate" / "report.html").read_text()).text()
    assert "Held until a writer approves: 1 change above is rejected only because" in page  # the HTML report too
    assert "A (modified), held: on trusted evidence, rewording would lose catches of R1" in page

    read_only = approve(scenario, head, "reader")
    assert read_only.code == 1 and conclusion_of(scenario, head) == "failure", read_only.summary
    assert "@reader approved this head but has read access (write is required)" in words_of(read_only)

    approved = approve(scenario, head, "maintainer")
    assert approved.code == 0 and approved.outputs["decision"] == "pass", approved.stdout + approved.summary
    assert conclusion_of(scenario, head) == "success" and held_changes(approved) == []
    assert f"approved at this head {_sha(head)} by @maintainer (write access)" in words_of(approved)
    assert "No change was held" not in words_of(approved) and "Held until" not in words_of(approved)

    pushed = scenario.git.commit({"README.md": "a note\n"}, "a push after the approval")
    again = scenario.run(pushed)
    assert again.code == 1 and conclusion_of(scenario, pushed) == "failure", again.summary
    assert held_changes(again) == [("A", "modified")]
    assert f"@maintainer approved {_sha(head)}, not this head {_sha(pushed)}" in words_of(again)

    # The writer approves again, but on the older head (a review on the commit they read).
    older = approve(scenario, pushed, "maintainer", on=head)
    assert older.code == 1 and conclusion_of(scenario, pushed) == "failure", older.summary


def test_the_comments_figures_are_recomputable_from_the_records_it_names(scenario: Scenario) -> None:
    head = reword_with_records(scenario)
    held = scenario.run(head)
    comment = scenario.fake.marked_comments()[0]["body"]
    rubric, verdicts = scenario.git("show", f"{head}:{RUBRIC}"), scenario.git("show", f"{head}:{VERDICTS}") + "\n"
    calibration = scenario.git("show", f"{head}:{CALIBRATION}") + "\n"
    records = figures(rubric + "\n", calibration, verdicts)
    root = gfm.parse(comment)
    per_check = next(t for t in gfm.tables(root) if gfm.table_header(t)[:3] == ["Check", "Origin", "Credit"])
    for row in gfm.table_rows(per_check):
        check = row[0].strip("`")
        assert float(row[2]) == round(records.credit[check], 2), row
        assert float(row[3]) == round(records.blame[check], 2), row
        assert (int(row[4]), int(row[5]), int(row[6])) == (records.unique[check], records.fails_correct[check],
                                                           records.fails_flawed[check]), row
    rates = next(t for t in gfm.tables(root) if gfm.table_header(t)[0] == "Rate")
    rows = {r[0]: r for r in gfm.table_rows(rates)}
    passed, correct = records.correct_passed
    caught, flawed = records.flawed_caught
    assert f"({passed}/{correct};" in rows["Correct outputs passed"][2]  # head as proposed, on all its records
    assert f"({caught}/{flawed};" in rows["Flawed outputs caught"][2]
    # The held section's counts: the verdicts it names, and the catches it withholds.
    withheld = held.report()["rubrics"][0]["report"]["withheld"]
    added = [json.loads(line) for line in verdicts.splitlines() if json.loads(line)["check_text"] == REWORDED]
    assert withheld["verdicts"] == len(added) == 5
    flawed_items = {i for i, label in LABELS.items() if label == "fail"}
    assert withheld["catches_withheld"] == sum(v["answer"] == "no" and v["item"] in flawed_items for v in added) == 2
    # On trusted evidence (those catches withheld), A's new text catches nothing: R1 is lost.
    trusted = figures(rubric + "\n", calibration, verdicts, withheld={(REWORDED, i) for i in flawed_items})
    assert trusted.flawed_caught == (2, 3) and records.flawed_caught == (3, 3)
    assert calibration == calibration_jsonl()


# -- what an approval is -------------------------------------------------------------------------

def test_a_dismissed_approval_holds_it_again(scenario: Scenario) -> None:
    head = reword_with_records(scenario)
    review = scenario.fake.review("maintainer", "APPROVED", head)
    assert review_run(scenario, head, review).code == 0
    scenario.fake.dismiss(review)
    dismissed = review_run(scenario, head, review, action="dismissed")
    assert dismissed.code == 1 and conclusion_of(scenario, head) == "failure", dismissed.summary
    assert held_changes(dismissed) == [("A", "modified")]


def test_changes_requested_after_an_approval_supersede_it_and_a_comment_does_not(scenario: Scenario) -> None:
    head = reword_with_records(scenario)
    assert approve(scenario, head).code == 0
    commented = review_run(scenario, head, scenario.fake.review("maintainer", "COMMENTED", head))
    assert commented.code == 0, commented.summary
    changes = review_run(scenario, head, scenario.fake.review("maintainer", "CHANGES_REQUESTED", head))
    assert changes.code == 1 and held_changes(changes) == [("A", "modified")], changes.summary


def test_the_authors_own_approval_and_an_apps_count_for_nothing(scenario: Scenario) -> None:
    head = reword_with_records(scenario)
    own = approve(scenario, head, "author")
    assert own.code == 1 and "@author is the PR's author" in words_of(own), own.summary
    app = review_run(scenario, head, scenario.fake.review("github-actions[bot]", "APPROVED", head, bot=True))
    assert app.code == 1 and "is an app, not a person" in words_of(app), app.summary


def test_a_triager_counts_as_read_and_an_admin_as_write(scenario: Scenario) -> None:
    head = reword_with_records(scenario)
    assert approve(scenario, head, "triager").code == 1
    assert approve(scenario, head, "admin").code == 0


def test_a_re_run_reads_the_reviews_as_they_are_when_it_runs(scenario: Scenario) -> None:
    """A re-run replays its first attempt's payload; the reviews are read from the API."""
    head = reword_with_records(scenario)
    first = json.loads(scenario.event(head, action="opened").read_text())
    assert scenario.run(head, payload=first).code == 1
    review = scenario.fake.review("maintainer", "APPROVED", head)  # its own run was cancelled
    rerun = scenario.run(head, payload=first, env_extra={"GITHUB_RUN_ATTEMPT": "2"})
    assert rerun.code == 0 and conclusion_of(scenario, head) == "success", rerun.summary
    scenario.fake.dismiss(review)
    again = scenario.run(head, payload=first, env_extra={"GITHUB_RUN_ATTEMPT": "3"})
    assert again.code == 1 and conclusion_of(scenario, head) == "failure", again.summary


def test_reviews_that_cannot_be_read_vouch_for_nothing(scenario: Scenario) -> None:
    head = reword_with_records(scenario)
    scenario.fake.reviews_forbidden = True
    result = approve(scenario, head)
    assert result.code == 1 and held_changes(result) == [("A", "modified")], result.summary
    assert "the PR's reviews could not be read (HTTP 403" in words_of(result)
    assert "Traceback" not in result.stdout + result.stderr


def test_a_fork_prs_approval_counts_though_its_run_has_a_read_only_token(scenario: Scenario) -> None:
    head = reword_with_records(scenario)
    held = scenario.run(head, fork=True, token="read-only-token")
    assert held.code == 1 and held.outputs["decision"] == "fail", held.summary
    approved = approve(scenario, head, fork=True, token="read-only-token")
    assert approved.code == 0 and approved.outputs["decision"] == "pass", approved.stdout + approved.summary


def test_with_a_judge_that_cannot_run_an_approval_vouches_for_the_records(scenario: Scenario) -> None:
    """A fork's run has no secrets: the configured judge cannot re-check the PR's verdicts. They
    do not stand in for it, unless a writer approved this head."""
    head = reword_with_records(scenario)
    held = scenario.run(head, fork=True, token="read-only-token", judge="anthropic:claude-sonnet-4-6")
    assert held.code == 1 and "the configured judge could not run" in words_of(held), held.summary
    approved = approve(scenario, head, fork=True, token="read-only-token", judge="anthropic:claude-sonnet-4-6")
    assert approved.code == 0, approved.stdout + approved.summary


def test_trust_pr_verdicts_false_still_requires_a_judge_after_an_approval(scenario: Scenario) -> None:
    head = reword_with_records(scenario)
    result = approve(scenario, head, trust_pr_verdicts="false")
    assert result.code == 1 and "'trust_pr_verdicts' is false (an approval does not change that)" in words_of(result), \
        result.summary


def test_an_approval_does_not_excuse_a_changed_recorded_answer(scenario: Scenario) -> None:
    """It vouches for the verdicts the PR records for text no trusted check has; changing what the
    base recorded for a check it has is a change of the record itself (the override's)."""
    scenario.fake.permissions.update(REVIEWERS)
    lines = verdicts_jsonl(TEXTS).replace('"check_text": "Is public network exposure justified?", "answer": "no"',
                                          '"check_text": "Is public network exposure justified?", "answer": "yes"')
    head = scenario.git.commit({VERDICTS: lines}, "C passes R3 now")
    result = approve(scenario, head)
    assert result.code == 1 and "changes 1 recorded answer" in words_of(result), result.summary


def test_an_approval_withdrawn_while_the_run_gates_posts_no_pass(scenario: Scenario) -> None:
    """The approval is read again before a pass is posted: dismissed in between, the run fails."""
    head = reword_with_records(scenario)
    review = scenario.fake.review("maintainer", "APPROVED", head)
    seen: list[str] = []

    def dismissed_after_the_first_read(method: str, path: str) -> None:
        if path.endswith("/reviews"):
            if seen:  # the gate read it approved; the reading before the post finds it dismissed
                scenario.fake.dismiss(review)
            seen.append(path)

    scenario.fake.before_request = dismissed_after_the_first_read
    result = review_run(scenario, head, review)
    assert result.code == 1 and conclusion_of(scenario, head) == "failure", result.stdout + result.summary
    assert len(seen) >= 2 and "no longer holds" in words_of(result)


# -- beside the rest of the gate ---------------------------------------------------------------

def _one_head_into_main_and_staging(scenario: Scenario) -> tuple[str, Pulls]:
    """#7 proposes the rewording into main, #8 the same head into staging."""
    main = scenario.base_sha
    scenario.git("checkout", "-q", "-b", "staging", main)
    staging = scenario.git.commit({"notes.txt": "staging\n"}, "staging")
    scenario.git("checkout", "-q", "pr")
    head = reword_with_records(scenario)
    prs = Pulls(scenario, {7: {"base": main, "head": head, "base_ref": "main"},
                           8: {"base": staging, "head": head, "base_ref": "staging"}})
    scenario.fake.permissions.update(REVIEWERS)
    return head, prs


def test_an_approval_covers_its_own_pr_not_another_with_the_same_head(scenario: Scenario) -> None:
    """The check belongs to the commit: #8 proposes the same head into staging, where nobody has
    approved it, so the run for #7 fails there until #8 is approved too."""
    head, prs = _one_head_into_main_and_staging(scenario)
    scenario.fake.review("maintainer", "APPROVED", head, number=7)
    one = prs.run(7, event_name="pull_request_review", action="submitted", sender="maintainer")
    assert one.code == 1 and conclusion_of(scenario, head) == "failure", one.stdout + one.summary
    assert "#8" in words_of(one)
    scenario.fake.review("maintainer", "APPROVED", head, number=8)
    both = prs.run(8, event_name="pull_request_review", action="submitted", sender="maintainer")
    assert both.code == 0 and conclusion_of(scenario, head) == "success", both.stdout + both.summary

def test_another_prs_approval_withdrawn_while_this_run_gates_posts_no_pass(scenario: Scenario) -> None:
    """#7 and #8 propose one head into two bases; each passes on its own writer's approval. The
    check belongs to the commit, so #7's pass relies on #8's approval too: dismissed after #7's run
    gated #8 and before it posts, the pass no longer holds (else its late post could land after
    #8's own red run and leave the commit green for #8)."""
    head, prs = _one_head_into_main_and_staging(scenario)
    scenario.fake.review("maintainer", "APPROVED", head, number=7)
    other = scenario.fake.review("maintainer", "APPROVED", head, number=8)
    assert prs.run(7, event_name="pull_request_review", action="submitted", sender="maintainer").code == 0
    seen: list[str] = []

    def dismissed_once_8_was_gated(method: str, path: str) -> None:
        if seen and other["state"] == "APPROVED":  # the request after #8's reviews were read approved
            scenario.fake.dismiss(other)
        if path.endswith("/pulls/8/reviews"):
            seen.append(path)

    scenario.fake.before_request = dismissed_once_8_was_gated
    result = prs.run(7, event_name="pull_request_review", action="submitted", sender="maintainer")
    assert result.code == 1 and conclusion_of(scenario, head) == "failure", result.stdout + result.summary
    assert len(seen) >= 2 and "#8" in words_of(result), seen


def test_the_override_label_still_counts_in_a_review_run(scenario: Scenario) -> None:
    """A review run reads the label's head from the workflow run of its `labeled` event, a
    `pull_request` run, as any other run does."""
    head = scenario.git.commit(DELETE_A, "delete A")  # rejected whatever the reviews say
    apply_label(scenario, "labeled")
    scenario.fake.record_workflow_run(head_sha=head, actor="maintainer")  # the labeled run, cancelled
    commented = review_run(scenario, head, scenario.fake.review("reviewer", "COMMENTED", head),
                            labels=(OVERRIDE,))
    assert commented.code == 0 and conclusion_of(scenario, head) == "success", commented.stdout + commented.summary
    assert "@maintainer, who has write access" in words_of(commented)


def test_preview_prints_the_held_section_the_comment_has(scenario: Scenario) -> None:
    head = reword_with_records(scenario)
    scenario.run(head)
    posted = scenario.fake.marked_comments()[0]["body"]
    proc = rubric_gate(scenario.git.path, "preview", "--base", "main", "--head", "pr")
    code, out, err = proc.returncode, proc.stdout, proc.stderr
    assert code == 1, err
    held = next(p for p in out.split("\n\n") if p.startswith("**Held until a writer approves:**"))
    assert held in posted
    assert "no approval is read" in err.replace("\n", " ")


def test_check_and_preview_agree_or_check_says_why_not(scenario: Scenario) -> None:
    """`check` trusts the working tree (its author's); on a git base it says that preview and the
    action hold the edit until a writer approves, and preview does hold it."""
    reword_with_records(scenario)
    check = rubric_gate(scenario.git.path, "check", "--base", f"main:{RUBRIC}", "--head", RUBRIC)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "preview and the action decide FAIL here, not PASS, until someone with write access approves" \
        in check.stderr
    preview = rubric_gate(scenario.git.path, "preview", "--base", "main")
    assert preview.returncode == 1 and "Held until a writer approves" in preview.stdout


def test_verdicts_landed_first_in_their_own_pr_count_once_the_rewording_is_approved(scenario: Scenario) -> None:
    """The notes' other way: land the new text's verdicts first, then reword. Recorded while no
    check had the text, no gate weighed them: the rewording's PR is where they are weighed, as its
    own, and where a writer's approval vouches for them."""
    scenario.fake.permissions.update(REVIEWERS)
    fails = {item: checks | ({"N"} if "A" in checks else set()) for item, checks in FAILS.items()}
    first = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + verdicts_jsonl({"N": REWORDED}, fails)}, "verdicts first")
    assert scenario.run(first).code == 0  # answers for a text no check has: recorded, weighed by nobody yet
    merge_pr(scenario)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A=N", "B", "C", "D"], extra={"N": REWORDED})}, "then reword A")
    held = scenario.run(head)
    assert held.code == 1 and held_changes(held) == [("A", "modified")], held.summary
    assert "recorded before any check had their text" in words_of(held)
    assert approve(scenario, head).code == 0
