"""One head, several open PRs: the `rubric-gate` check run belongs
to the commit, and branch protection reads the latest run of that name on it. A pass means every
open PR with the head passes, or carries the override on that head, when the pass is posted.

End to end through `rubric-gate action`, a real git repository, and the fake GitHub changing its
open PRs between two calls of one run (the race) or between runs (the override).
"""

from __future__ import annotations

from rubric_gate.action.github.checks import CheckRecord
from tests.action.harness import (
    OVERRIDE,
    RUBRIC,
    Pulls,
    Scenario,
    both_fail,
    rubric_yaml,
    run_gated,
)


def _checks(scenario: Scenario, head: str) -> list[dict]:
    """The head's `rubric-gate` check runs, oldest first."""
    return sorted((r for r in scenario.fake.check_runs.values() if r["head_sha"] == head and r["name"] == "rubric-gate"),
                  key=lambda r: r["id"])


def _latest(scenario: Scenario, head: str) -> dict:
    return _checks(scenario, head)[-1]


def _another_runs_red(scenario: Scenario, head: str, record: CheckRecord) -> None:
    """A red `rubric-gate` check run another PR's run posts on the head, with its record."""
    rid = scenario.fake.new_id()
    scenario.fake.check_runs[rid] = {
        "id": rid, "name": "rubric-gate", "head_sha": head, "status": "completed", "conclusion": "failure",
        "url": f"{scenario.fake.url}/repos/{scenario.fake.repo}/check-runs/{rid}",
        "external_id": record.external_id(), "app": {"slug": "github-actions"},
        "output": {"title": "rubric-gate: fail", "summary": "", "annotations": []}}


def _main_moved_past_staging(scenario: Scenario) -> tuple[str, str]:
    """`staging` stays at the base commit; `main` deleted A since (with its own review). A head on
    top of main passes into main, and proposed into staging, it deletes A there."""
    staging = scenario.base_sha
    scenario.git("branch", "staging", staging)
    scenario.git("checkout", "-q", "main")
    scenario.base_sha = scenario.fake.base_sha = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])},
                                                                     "delete A (reviewed)")
    scenario.git("checkout", "-q", "-B", "pr", scenario.base_sha)
    head = scenario.git.commit({"README.md": "tweak\n"}, "a harmless change")
    return head, staging


def _into_staging(staging: str, head: str) -> dict[int, dict[str, str]]:
    return {8: {"base": staging, "head": head, "base_ref": "staging"}}


# -- the race: a PR opened while a run gates -------------------------------------------------------

def test_a_pr_opened_after_the_runs_listing_is_gated_before_a_pass_is_posted(scenario: Scenario) -> None:
    """Run A (#7 into main) lists the open PRs with its head, then #8 proposes the head into
    staging, where it deletes A. A lists again before posting a pass: no green ever lands."""
    head, staging = _main_moved_past_staging(scenario)

    def open_pr_8(method: str, path: str) -> None:
        if method == "GET" and path.endswith("/pulls") and not scenario.fake.other_pulls:
            scenario.fake.other_pulls = _into_staging(staging, head)

    scenario.fake.after_request = open_pr_8
    result = run_gated(scenario, head)
    assert result.code == 1 and result.outputs["decision"] == "fail", result.stdout + result.summary
    assert "also proposed by" in result.summary and "rejected deleted A" in result.summary
    assert [r["conclusion"] for r in _checks(scenario, head)] == ["failure"]  # never green, not even briefly


def test_a_red_posted_by_a_newer_run_is_not_overwritten_by_an_older_runs_pass(scenario: Scenario) -> None:
    """Run A (#7) lists the open PRs and gates. Meanwhile #8 is opened into staging and its run B
    posts red. Then A posts its pass, the latest run on the commit: A reads its facts again after
    posting, gates #8 and posts red again, so the commit's check is red as B left it."""
    head, staging = _main_moved_past_staging(scenario)

    def pr_8_and_its_red(method: str, path: str) -> None:
        if method == "POST" and path.endswith("/check-runs") and not scenario.fake.other_pulls:
            scenario.fake.other_pulls = _into_staging(staging, head)
            _another_runs_red(scenario, head, CheckRecord(staging, 8))  # run B's result, as it posts it

    scenario.fake.before_request = pr_8_and_its_red
    result = run_gated(scenario, head)
    conclusions = [r["conclusion"] for r in _checks(scenario, head)]
    assert conclusions == ["failure", "success", "failure"], conclusions  # B's red, A's pass, A's correction
    assert result.code == 1 and result.outputs["decision"] == "fail", result.stdout + result.summary
    assert "also proposed by" in result.summary and "rejected deleted A" in _latest(scenario, head)["output"]["summary"]


def test_open_prs_that_keep_changing_post_no_pass(scenario: Scenario) -> None:
    """Each listing finds another PR with the head (each passes into its base): after a few
    rounds the run stops re-gating and posts no pass rather than one as of a listing it never saw settle."""
    head, _ = _main_moved_past_staging(scenario)
    branches = {}
    for n in range(10, 16):
        scenario.git("checkout", "-q", "-b", f"release-{n}", scenario.base_sha)
        branches[n] = scenario.git.commit({f"notes-{n}.txt": "x\n"}, f"release {n}")
    scenario.git("checkout", "-q", "pr")

    def another_pr(method: str, path: str) -> None:
        if method == "GET" and path.endswith("/pulls"):
            n = 10 + len(scenario.fake.other_pulls)
            scenario.fake.other_pulls[n] = {"base": branches[n], "head": head, "base_ref": f"release-{n}"}

    scenario.fake.after_request = another_pr
    result = run_gated(scenario, head)
    assert result.code == 1 and "kept changing" in result.summary, result.stdout + result.summary
    assert [r["conclusion"] for r in _checks(scenario, head)] == ["failure"]


def test_without_changes_a_pass_lists_the_open_prs_twice_and_posts_once(scenario: Scenario) -> None:
    head, _ = _main_moved_past_staging(scenario)
    result = run_gated(scenario, head)
    assert result.code == 0 and [r["conclusion"] for r in _checks(scenario, head)] == ["success"]
    listings = [p for m, p in scenario.fake.requests if m == "GET" and p.endswith("/pulls")]
    assert len(listings) == 3  # gathered, re-read before the post, and after it


def test_a_pass_that_cannot_be_read_again_after_it_was_posted_is_posted_as_a_failure(scenario: Scenario) -> None:
    head, _ = _main_moved_past_staging(scenario)
    original = scenario.fake.handle

    def refuse_the_third_listing(method, path, token, body):
        if method == "GET" and path.endswith("/pulls") and sum(p.endswith("/pulls") for _, p in scenario.fake.requests) == 2:
            scenario.fake.requests.append((method, path))
            return 403, {"message": "Resource not accessible by integration"}
        return original(method, path, token, body)

    scenario.fake.handle = refuse_the_third_listing  # type: ignore[method-assign]
    result = run_gated(scenario, head)
    assert result.code == 2 and result.outputs["decision"] == "fail", result.stdout + result.summary
    assert [r["conclusion"] for r in _checks(scenario, head)] == ["success", "failure"]
    assert "could not be read again" in result.summary


def test_an_override_on_each_pr_with_the_head_turns_its_check_green(scenario: Scenario) -> None:
    head, pulls = both_fail(scenario)
    prs = Pulls(scenario, pulls)
    prs.label(7)
    first = prs.run(7, labels=(OVERRIDE,))
    # #7's override covers #7 only: #8 lands the same commit into staging, where nobody overrode it.
    assert first.code == 1 and _latest(scenario, head)["conclusion"] == "failure", first.stdout + first.summary
    assert "also proposed by" in first.summary and "override it there too" in first.summary
    prs.label(8)
    second = prs.run(8, labels=(OVERRIDE,))
    assert second.code == 0 and second.outputs["decision"] == "pass", second.stdout + second.summary
    latest = _latest(scenario, head)
    assert latest["conclusion"] == "success" and latest["output"]["title"] == "rubric-gate: pass (overridden)"
    assert "its override covers it there" in second.summary and "maintainer, who has write access" in second.summary
    # A title edit on #7 re-gates it (the head's last result was gated into staging) and keeps the
    # pass: #7's override, granted by its `labeled` run on this head, holds while its label is on.
    edited = prs.run(7, action="edited", payload={"changes": {"title": {"from": "x"}}})
    assert edited.code == 0 and _latest(scenario, head)["conclusion"] == "success", edited.stdout + edited.summary
    # The label comes off #7: its `unlabeled` run posts red, which #8's override does not cover.
    prs.label(7, "unlabeled")
    removed = prs.run(7, labels=(OVERRIDE,), action="unlabeled")
    assert removed.code == 1 and _latest(scenario, head)["conclusion"] == "failure", removed.stdout
    # ... and #8's next run does not bring it back.
    again = prs.run(8, action="reopened")
    assert again.code == 1 and _latest(scenario, head)["conclusion"] == "failure", again.stdout + again.summary


def test_an_override_a_reader_applied_on_the_other_pr_does_not_count(scenario: Scenario) -> None:
    head, pulls = both_fail(scenario)
    prs = Pulls(scenario, pulls)
    prs.label(8, who="mallory")
    assert prs.run(8, labels=(OVERRIDE,)).code == 1
    prs.label(7)
    result = prs.run(7, labels=(OVERRIDE,))
    assert result.code == 1 and _latest(scenario, head)["conclusion"] == "failure", result.stdout + result.summary
    assert "Its override label does not count" in result.summary


def test_a_label_on_the_other_pr_that_no_workflow_run_attests_does_not_count(scenario: Scenario) -> None:
    """The label is on #8 (applied by a writer), but GitHub created no run of this workflow for
    that event, so which head it was applied on is unknown: not honoured."""
    head, pulls = both_fail(scenario)
    prs = Pulls(scenario, pulls)
    prs.label(8)
    prs.label(7)
    result = prs.run(7, labels=(OVERRIDE,))
    assert result.code == 1 and _latest(scenario, head)["conclusion"] == "failure", result.stdout + result.summary
    assert "no run of this workflow" in result.summary


def test_a_label_on_the_other_pr_applied_on_an_older_head_does_not_count(scenario: Scenario) -> None:
    """#8's label was applied (and its `labeled` run created) on an older head; the head moved on."""
    head, pulls = both_fail(scenario)
    prs = Pulls(scenario, pulls)
    prs.label(8)
    scenario.fake.record_workflow_run(head_sha=pulls[8]["base"], actor="maintainer", number=8, head_branch="pr-8")
    prs.label(7)
    result = prs.run(7, labels=(OVERRIDE,))
    assert result.code == 1 and _latest(scenario, head)["conclusion"] == "failure", result.stdout + result.summary
    assert "applied before its head" in result.summary


def test_an_override_removed_from_the_other_pr_while_the_run_gates_posts_no_pass(scenario: Scenario) -> None:
    head, pulls = both_fail(scenario)
    prs = Pulls(scenario, pulls)
    prs.label(8)
    assert prs.run(8, labels=(OVERRIDE,)).code == 1  # #8's grant recorded (#7 not overridden yet)
    prs.label(7)

    def unlabel_8(method: str, path: str) -> None:  # right after this run read who labeled #8
        if method == "GET" and path.endswith("/issues/8/events") and prs.events[8][-1]["event"] == "labeled":
            prs.label(8, "unlabeled")

    scenario.fake.after_request = unlabel_8
    result = prs.run(7, labels=(OVERRIDE,))
    assert result.code == 1 and [r["conclusion"] for r in _checks(scenario, head)][-1] == "failure", result.summary
    assert all(r["conclusion"] == "failure" for r in _checks(scenario, head)), _checks(scenario, head)


def test_two_overlapping_labeled_runs_that_each_miss_the_others_label_end_green(scenario: Scenario) -> None:
    """The maintainer labels #7, then #8, seconds apart: the two `labeled` runs overlap. #7's run
    reads #8's label before GitHub created #8's `labeled` run (or before the label was on), so
    it posts red; meanwhile #8's run posts red too. #7's run reads #8's label again after
    posting its red, finds it attested by #8's workflow run, and posts the pass last."""
    head, pulls = both_fail(scenario)
    prs = Pulls(scenario, pulls)
    prs.label(7)
    prs.label(8)

    def pr_8s_run_is_created_and_posts_red(method: str, path: str) -> None:
        if method == "POST" and path.endswith("/check-runs") and not _checks(scenario, head):
            scenario.fake.record_workflow_run(head_sha=head, actor="maintainer", number=8, head_branch="pr-8")
            _another_runs_red(scenario, head, CheckRecord(pulls[8]["base"], 8))  # its red, as it posts it

    scenario.fake.before_request = pr_8s_run_is_created_and_posts_red
    result = prs.run(7, labels=(OVERRIDE,))
    assert [r["conclusion"] for r in _checks(scenario, head)] == ["failure", "failure", "success"]
    assert result.code == 0 and result.outputs["decision"] == "pass", result.stdout + result.summary
    assert _latest(scenario, head)["output"]["title"] == "rubric-gate: pass (overridden)"
