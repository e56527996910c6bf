"""Which events gate and what a re-run decides: every pull-request action that can change what merges
is gated, a label or title event repeats the head's last result only where it still stands, and a
head shared by several PRs is green only when every one of them passes.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest
import yaml

from tests.action.harness import (
    CALIBRATION,
    DELETE_A,
    FAILS,
    OVERRIDE,
    ROOT,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Scenario,
    apply_label,
    branch_from,
    calibration_jsonl,
    commit_on_main,
    conclusion_of,
    latest_check_run,
    merge_group,
    rejected_run,
    rubric_yaml,
    run_gated,
    run_in_process,
    verdicts_jsonl,
)

# -- a base branch rewritten under the PR -------------------------------------------------------

def test_a_base_branch_with_no_common_history_says_so(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "drop A")
    scenario.git("checkout", "-q", "--orphan", "rewritten")
    scenario.git("rm", "-rqf", "--cached", ".")
    rewritten = scenario.git.commit({"README.md": "history rewritten\n", RUBRIC: rubric_yaml(["A", "B", "C", "D"]),
                                     CALIBRATION: calibration_jsonl(), VERDICTS: verdicts_jsonl(TEXTS)}, "force-push")
    scenario.git("checkout", "-q", "-f", "pr")
    scenario.base_sha = scenario.fake.base_sha = rewritten
    result = scenario.run(head)
    assert result.code == 2 and "Traceback" not in result.stderr
    assert "shares no history with its base" in result.stderr and "rebase" in result.stderr

    shallow = scenario.tmp / "shallow"  # the same through the compare API
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "pr", scenario.git.path.as_uri(), str(shallow)],
                   check=True, capture_output=True)
    result = scenario.run(head, workspace=shallow)
    assert result.code == 2 and "cannot find the merge base" in result.stderr and "rebase" in result.stderr


@pytest.mark.parametrize("field", ["base", "head"])
def test_event_shas_must_be_commit_shas(scenario: Scenario, field: str) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    event = scenario.event(head)
    payload = json.loads(event.read_text())
    payload["pull_request"][field]["sha"] = f"--output={scenario.tmp / 'written'}"
    event.write_text(json.dumps(payload))
    code, _, stderr = run_in_process(scenario.env(event, scenario.git.path), scenario.git.path)
    assert code == 2 and "is not a commit sha" in stderr and "Traceback" not in stderr
    assert not (scenario.tmp / "written").exists() and not scenario.fake.writes()


def test_a_deleted_fork_and_odd_payloads_fail_cleanly(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    event = scenario.event(head)
    payload = json.loads(event.read_text())
    payload["pull_request"]["head"]["repo"] = None  # the fork was deleted
    event.write_text(json.dumps(payload))
    env = scenario.env(event, scenario.git.path)
    code, _, stderr = run_in_process(env, scenario.git.path)
    assert code == 1 and "Traceback" not in stderr
    del payload["pull_request"]["base"]["sha"]
    event.write_text(json.dumps(payload))
    code, _, stderr = run_in_process(env, scenario.git.path)
    assert code == 2 and "lacks a field" in stderr and "Traceback" not in stderr


# -- the check is per commit: every base the commit is proposed into --------------------------

def test_a_second_pr_with_the_same_head_into_another_base_does_not_turn_the_check_green(scenario: Scenario) -> None:
    lenient = branch_from(scenario, "staging", "main", {RUBRIC: rubric_yaml(["B", "C", "D"])}, "staging: no A")
    head = scenario.git.commit({"README.md": "tweak\n"}, "a harmless change on top of staging")
    into_main = run_gated(scenario, head)
    assert into_main.code == 1, into_main.stdout + into_main.stderr
    # The same branch, proposed as PR #8 into `staging`: its diff there is the README.
    main_sha = scenario.base_sha
    scenario.fake.other_pulls = {7: {"base": main_sha, "head": head}}
    scenario.fake.pr_number, scenario.base_sha, scenario.fake.base_sha = 8, lenient, lenient
    into_staging = run_gated(scenario, head)
    scenario.fake.other_pulls = {8: {"base": lenient, "head": head, "base_ref": "staging"}}
    scenario.fake.pr_number, scenario.base_sha, scenario.fake.base_sha = 7, main_sha, main_sha
    # PR #8's own diff passes; the commit it shares with PR #7 does not, and the job says so too.
    assert into_staging.code == 1 and into_staging.outputs["decision"] == "fail", into_staging.stdout
    assert "also proposed by" in into_staging.summary and "rejected deleted A" in into_staging.summary
    runs = [r for r in scenario.fake.check_runs.values() if r["head_sha"] == head and r["name"] == "rubric-gate"]
    latest = max(runs, key=lambda r: r["id"])
    assert latest["conclusion"] == "failure", runs  # what branch protection on main reads for PR #7
    # ... and a title edit on PR #7 repeats the head's last result as the job's status.
    edited = run_gated(scenario, head, action="edited", payload={"changes": {"title": {"from": "x"}}})
    assert edited.code != 0, edited.stdout


def test_a_second_pr_with_the_same_head_into_a_base_where_it_passes_keeps_the_check_green(scenario: Scenario) -> None:
    """The other PR is gated against its own base: a head that passes into both stays green."""
    head = scenario.git.commit({"README.md": "tweak\n"}, "a harmless change")
    scenario.fake.other_pulls = {9: {"base": branch_from(scenario, "staging", "main", {"notes.txt": "x\n"}, "staging"),
                                     "head": head}}
    scenario.git("checkout", "-q", head)
    result = run_gated(scenario, head)
    assert result.code == 0 and result.outputs["decision"] == "pass", result.stdout + result.summary
    assert "also proposed" not in result.summary


def test_the_open_pulls_cannot_be_listed_fails_closed(scenario: Scenario) -> None:
    head = scenario.git.commit({"README.md": "tweak\n"}, "a harmless change")
    original = scenario.fake.handle

    def refuse_listing(method, path, token, body):
        if method == "GET" and path.endswith("/pulls"):
            scenario.fake.requests.append((method, path))
            return 403, {"message": "Resource not accessible by integration"}
        return original(method, path, token, body)

    scenario.fake.handle = refuse_listing  # type: ignore[method-assign]
    result = run_gated(scenario, head)
    assert result.code == 2 and "cannot list the open pull requests" in result.stdout + result.stderr


# -- a shallow checkout: the PR's file list is the PR's now, not the event's -------------------------

def test_a_re_run_of_an_older_head_in_a_shallow_checkout_gates_that_heads_changes(scenario: Scenario) -> None:
    import subprocess

    from tests.action.harness import run_in_process

    older = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    event = scenario.event(older)  # the payload of the older head's run
    newer = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"]), "README.md": "x\n"}, "restore A")
    workspace = scenario.tmp / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "pr", scenario.git.path.as_uri(),
                    str(workspace)], check=True, capture_output=True)
    scenario.fake.head_sha = newer  # the PR's head now
    code, stdout, stderr = run_in_process(scenario.env(event, workspace), workspace)
    runs = [r for r in scenario.fake.check_runs.values() if r["head_sha"] == older]
    assert code != 0 and all(r["conclusion"] != "success" for r in runs), stdout + stderr


# -- other events --------------------------------------------------------------------------------

def test_a_pull_request_target_run_gates_the_pr(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    assert run_gated(scenario, head, event_name="pull_request_target").code == 1


@pytest.mark.parametrize("event", ["workflow_dispatch", "issue_comment", "schedule", "check_suite", "push"])
def test_an_ungated_event_posts_no_green_check_and_says_skipped(scenario: Scenario, event: str) -> None:
    """No gate ran: the step's `decision` output is `skipped`, never a `pass` a downstream step
    would read as the gate's (a push warms the verdict cache; without a judge it judges nothing)."""
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = run_gated(scenario, head, event_name=event, env_extra={"GITHUB_SHA": head, "GITHUB_REF": "refs/heads/main"})
    assert not [r for r in scenario.fake.check_runs.values() if r["conclusion"] == "success"], result.stdout
    assert not [s for s in scenario.fake.statuses if s.get("state") == "success"]
    assert result.code == 0 and result.outputs["decision"] == "skipped", result.stdout + result.stderr
    assert result.outputs["report"] == "" and result.outputs["comment"] == ""


# -- a standing result stands only for the base it was gated against -------------------------------

def test_a_retarget_whose_run_is_cancelled_does_not_keep_the_green_of_the_old_base(scenario: Scenario) -> None:
    """Green as a PR into `staging` (which deleted A); retargeted to `main`, whose `edited` run
    the author's title edit right after cancels. The title edit changes nothing the gate
    decides, but the head's last result was gated against another base."""
    main_sha = scenario.base_sha
    scenario.git("checkout", "-q", "-b", "staging", "main")
    staging = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "staging: no A")
    scenario.git("checkout", "-q", "-B", "pr", staging)
    head = scenario.git.commit({"README.md": "tweak\n"}, "a harmless change on top of staging")
    scenario.base_sha = scenario.fake.base_sha = staging
    assert run_gated(scenario, head).code == 0  # into staging, nothing of demo changes
    scenario.base_sha = scenario.fake.base_sha = main_sha  # retargeted; that run is cancelled
    edited = run_gated(scenario, head, action="edited", payload={"changes": {"title": {"from": "x"}}})
    latest = max((r for r in scenario.fake.check_runs.values() if r["head_sha"] == head), key=lambda r: r["id"])
    assert edited.code != 0 and latest["conclusion"] != "success", edited.stdout + str(latest["conclusion"])


# -- force-pushes and re-runs ------------------------------------------------------------------------

def test_a_re_run_of_a_head_force_pushed_away_gates_that_head(scenario: Scenario) -> None:
    bad = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    event = scenario.event(bad)
    assert run_gated(scenario, bad).code == 1
    scenario.git("reset", "-q", "--hard", scenario.base_sha)
    good = scenario.git.commit({"README.md": "harmless\n"}, "force-pushed: a harmless head")
    assert run_gated(scenario, good).code == 0
    scenario.fake.head_sha = good
    result = scenario.run(bad, payload=json.loads(event.read_text()))  # the old run, re-run
    runs = [r for r in scenario.fake.check_runs.values() if r["head_sha"] == bad]
    assert result.code != 0 and all(r["conclusion"] != "success" for r in runs), result.stdout + result.stderr


# -- two PRs racing ---------------------------------------------------------------------------------

def test_two_racing_prs_the_second_title_edit_after_the_first_merged_re_gates(scenario: Scenario) -> None:
    """A3 duplicates A. PR 1 deletes A, PR 2 deletes A3: each is green alone. PR 1 merges; an
    edit of PR 2's title does not repeat its green, gated against a tip that had A."""
    extra = {"A3": "Is every stored byte encrypted?"}
    fails = {item: checks | ({"A3"} if "A" in checks else set()) for item, checks in FAILS.items()}
    base = commit_on_main(scenario, {RUBRIC: rubric_yaml(["A", "A3", "B", "C", "D"], extra=extra),
                               VERDICTS: verdicts_jsonl({**TEXTS, **extra}, fails)}, "A3 duplicates A")
    scenario.git("reset", "-q", "--hard", base)
    second = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"], extra=extra)}, "PR 2: delete A3")
    assert run_gated(scenario, second).code == 0
    commit_on_main(scenario, {RUBRIC: rubric_yaml(["A3", "B", "C", "D"], extra=extra)}, "PR 1 merged: delete A")
    edited = run_gated(scenario, second, action="edited", payload={"changes": {"title": {"from": "x"}}})
    latest = max((r for r in scenario.fake.check_runs.values() if r["head_sha"] == second), key=lambda r: r["id"])
    assert edited.code == 1 and latest["conclusion"] == "failure", edited.stdout + edited.stderr


def test_a_commit_status_stands_only_for_the_base_it_was_gated_against(scenario: Scenario) -> None:
    """Where check runs are refused the result is a commit status: the retarget route again."""
    scenario.fake.checks_forbidden = True
    main_sha = scenario.base_sha
    scenario.git("checkout", "-q", "-b", "staging", "main")
    staging = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "staging: no A")
    scenario.git("checkout", "-q", "-B", "pr", staging)
    head = scenario.git.commit({"README.md": "tweak\n"}, "a harmless change on top of staging")
    scenario.base_sha = scenario.fake.base_sha = staging
    assert run_gated(scenario, head).code == 0
    scenario.base_sha = scenario.fake.base_sha = main_sha
    edited = run_gated(scenario, head, action="edited", payload={"changes": {"title": {"from": "x"}}})
    assert edited.code == 1 and scenario.fake.statuses[-1]["state"] == "failure", edited.stdout


# -- events: which ones gate, and what they may repeat -------------------------------------------

class TestEvents:
    def test_reopened_is_gated(self, scenario: Scenario) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head, action="reopened")

    @pytest.mark.parametrize("action", ["ready_for_review", "auto_merge_enabled", "review_requested", "assigned"])
    def test_other_pull_request_actions_are_gated(self, scenario: Scenario, action: str) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head, action=action)

    def test_a_label_re_applied_by_the_author_after_a_writer_removed_it(self, scenario: Scenario) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        apply_label(scenario, "labeled")
        apply_label(scenario, "unlabeled")
        apply_label(scenario, "labeled", who="mallory")
        rejected_run(scenario, head, labels=(OVERRIDE,))

    def test_a_label_applied_by_a_deleted_user(self, scenario: Scenario) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        scenario.fake.label_events.append({"event": "labeled", "actor": None, "label": {"name": OVERRIDE}})
        rejected_run(scenario, head, labels=(OVERRIDE,))

    def test_the_override_label_in_the_payload_but_another_label_applied(self, scenario: Scenario) -> None:
        """The `labeled` run of another label lists the override label (applied long ago, on an
        older head) among the PR's labels."""
        head = scenario.git.commit(DELETE_A, "delete A")
        apply_label(scenario, "labeled")
        rejected_run(scenario, head)  # the push's run
        scenario.fake.label_events.append({"event": "labeled", "actor": {"login": "maintainer"},
                                           "label": {"name": "docs"}})
        result = run_gated(scenario, head, labels=(OVERRIDE, "docs"))
        assert result.code == 1 and conclusion_of(scenario, head) == "failure", result.stdout


    @pytest.mark.parametrize("ref", ["refs/heads/pr", "refs/heads/main"])
    def test_a_push_run_posts_no_result_on_the_commit(self, scenario: Scenario, ref: str) -> None:
        """A push (to the PR's branch, or to main with the PR's commit) warms the cache: it gates
        nothing, so it must post nothing a required check could read as green."""
        head = scenario.git.commit(DELETE_A, "delete A")
        result = run_gated(scenario, head, event_name="push", env_extra={"GITHUB_SHA": head, "GITHUB_REF": ref},
                       payload={"ref": ref, "after": head})
        assert result.code == 0, result.stdout + result.stderr
        assert conclusion_of(scenario, head) is None and not scenario.fake.statuses, result.stdout


# -- one head, several pull requests ------------------------------------------------------------

class TestSameHead:
    def _staging_head(self, scenario: Scenario) -> tuple[str, str, str]:
        from tests.action.harness import branch_from

        main_sha = scenario.base_sha
        lenient = branch_from(scenario, "staging", "main", DELETE_A, "staging: no A")
        head = scenario.git.commit({"README.md": "tweak\n"}, "a harmless change on top of staging")
        return main_sha, lenient, head

    def test_the_strict_pr_is_listed_on_a_later_page(self, scenario: Scenario) -> None:
        """Forty other open PRs come first; the one proposing this head into main is on page 2."""
        main_sha, lenient, head = self._staging_head(scenario)
        others = {n: {"base": main_sha, "head": "0" * 40} for n in range(10, 50)}
        scenario.fake.other_pulls = {**others, 60: {"base": main_sha, "head": head}}
        scenario.fake.pr_number, scenario.base_sha, scenario.fake.base_sha = 8, lenient, lenient
        rejected_run(scenario, head)

    def test_the_strict_pr_comes_from_a_fork_of_the_same_commit(self, scenario: Scenario) -> None:
        main_sha, lenient, head = self._staging_head(scenario)
        scenario.fake.other_pulls = {7: {"base": main_sha, "head": head}}
        scenario.fake.pr_number, scenario.base_sha, scenario.fake.base_sha = 8, lenient, lenient
        rejected_run(scenario, head, fork=True)

    def test_an_override_on_one_pr_does_not_cover_the_same_head_into_another_base(self, scenario: Scenario) -> None:
        """#8 proposes the head into staging (overridden there); #7 proposes it into main."""
        main_sha, lenient, head = self._staging_head(scenario)
        scenario.fake.other_pulls = {7: {"base": main_sha, "head": head}}
        scenario.fake.pr_number, scenario.base_sha, scenario.fake.base_sha = 8, lenient, lenient
        apply_label(scenario, "labeled")
        rejected_run(scenario, head, labels=(OVERRIDE,))


    def test_a_pass_posted_after_the_strict_prs_failure_by_a_run_that_listed_before_it(self,
                                                                                        scenario: Scenario) -> None:
        """#8's run (the head into a lenient staging) listed the open PRs before #7 (the same head
        into main) was opened, and #7's run posted its failure first. The rule: the open PRs are read
        again before a pass is posted."""
        main_sha, lenient, head = self._staging_head(scenario)
        rejected_run(scenario, head)  # #7, opened while #8's run was under way, fails into main
        scenario.fake.pr_number, scenario.base_sha, scenario.fake.base_sha = 8, lenient, lenient
        scenario.fake.other_pulls = {7: {"base": main_sha, "head": head}}  # open by now
        original = scenario.fake.handle
        listings = []

        def listing_from_before_7(method, path, token, body):
            if method == "GET" and path.endswith("/pulls") and not listings:  # #8's run listed them before #7
                listings.append(path)
                scenario.fake.requests.append((method, path))
                return scenario.fake._page(path, [scenario.fake._pull(f"{scenario.fake.url}/repos/acme/rubrics", 8,
                                                                      {"base": lenient, "head": head})])
            return original(method, path, token, body)

        scenario.fake.handle = listing_from_before_7  # type: ignore[method-assign]
        late = run_gated(scenario, head)
        assert late.code == 1 and conclusion_of(scenario, head) == "failure", late.stdout


# -- the head's last result, repeated by an event that changes nothing ---------------------------

class TestStandingResult:
    """A label or title event repeats the head's last `rubric-gate` result instead of gating
    again; whatever it reads as "the last result" is a pass nobody gated, unless only the gate
    can have written it."""

    def test_a_passing_check_run_another_workflow_posted(self, scenario: Scenario) -> None:
        from tests.fakes.github import GITHUB_ACTIONS_APP

        head = scenario.git.commit(DELETE_A, "delete A; a workflow that posts a check run")
        rejected_run(scenario, head)  # the gate's own run
        rid = scenario.fake.new_id()
        scenario.fake.check_runs[rid] = {
            "id": rid, "name": "rubric-gate", "head_sha": head, "status": "completed", "conclusion": "success",
            "app": GITHUB_ACTIONS_APP, "external_id": f"base:{scenario.base_sha}",
            "output": {"title": "rubric-gate: pass", "summary": "", "annotations": []}}
        edited = run_gated(scenario, head, action="edited", payload={"changes": {"title": {"from": "x"}}})
        assert edited.code == 1, edited.stdout

    def test_a_passing_status_another_workflow_posted_where_check_runs_are_refused(self, scenario: Scenario) -> None:
        scenario.fake.checks_forbidden = True
        head = scenario.git.commit(DELETE_A, "delete A; a workflow that posts a status")
        first = run_gated(scenario, head)
        assert first.code == 1 and scenario.fake.statuses[-1]["state"] == "failure", first.stdout
        scenario.fake.statuses.append({"sha": head, "id": scenario.fake.new_id(), "state": "success",
                                       "context": "rubric-gate",
                                       "description": f"rubric-gate: pass · base {scenario.base_sha}",
                                       "creator": {"login": "github-actions[bot]", "type": "Bot"}})
        edited = run_gated(scenario, head, action="edited", payload={"changes": {"title": {"from": "x"}}})
        assert edited.code == 1, edited.stdout

    def test_a_forged_status_does_not_stand_for_a_head_whose_run_was_cancelled(self, scenario: Scenario) -> None:
        """A writer posts a `rubric-gate` commit status ("pass", with the base tip in its
        description) on the new head, whose own run the next label event cancels. That label
        event repeats "the head's last result": the writer's status, not the gate's. The rule: a
        standing status must be this token's."""
        head = scenario.git.commit(DELETE_A, "delete A")
        scenario.fake.statuses.append({"sha": head, "id": scenario.fake.new_id(), "state": "success",
                                       "context": "rubric-gate",
                                       "description": f"rubric-gate: pass · base {scenario.base_sha}",
                                       "creator": {"login": "mallory", "type": "User"}})
        scenario.fake.label_events.append({"event": "labeled", "actor": {"login": "mallory"},
                                           "label": {"name": "docs"}})
        result = run_gated(scenario, head, labels=("docs",))
        assert result.code == 1, result.stdout

    def test_a_writers_newer_status_does_not_stand_where_check_runs_are_refused(self, scenario: Scenario) -> None:
        scenario.fake.checks_forbidden = True
        head = scenario.git.commit(DELETE_A, "delete A")
        first = run_gated(scenario, head)
        assert first.code == 1 and scenario.fake.statuses[-1]["state"] == "failure", first.stdout
        scenario.fake.statuses.append({"sha": head, "id": scenario.fake.new_id(), "state": "success",
                                       "context": "rubric-gate",
                                       "description": f"rubric-gate: pass · base {scenario.base_sha}",
                                       "creator": {"login": "maintainer", "type": "User"}})
        edited = run_gated(scenario, head, action="edited", payload={"changes": {"title": {"from": "x"}}})
        assert edited.code == 1, edited.stdout

    def test_an_in_progress_check_run_of_a_cancelled_run_does_not_stand(self, scenario: Scenario) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        from tests.fakes.github import GITHUB_ACTIONS_APP

        rid = scenario.fake.new_id()
        scenario.fake.check_runs[rid] = {"id": rid, "name": "rubric-gate", "head_sha": head, "status": "in_progress",
                                         "conclusion": None, "app": GITHUB_ACTIONS_APP,
                                         "external_id": f"base:{scenario.base_sha}",
                                         "output": {"title": "rubric-gate: pass", "summary": "", "annotations": []}}
        result = run_gated(scenario, head, action="edited", payload={"changes": {"title": {"from": "x"}}})
        assert result.code == 1, result.stdout


    def test_an_overridden_pass_stands_only_while_a_writer_holds_the_label(self, scenario: Scenario) -> None:
        """The writer overrides, then removes the label; the author (who may label, not override)
        puts it back. Both label runs are cancelled by the author's title edit right after: the
        head's last result is the writer's overridden pass, and the label is on again."""
        head = scenario.git.commit(DELETE_A, "delete A")
        apply_label(scenario, "labeled")
        assert run_gated(scenario, head, labels=(OVERRIDE,)).code == 0  # the writer's override
        apply_label(scenario, "unlabeled")
        apply_label(scenario, "labeled", who="mallory")  # both runs cancelled by the next event
        edited = run_gated(scenario, head, action="edited", labels=(OVERRIDE,),
                       payload={"changes": {"title": {"from": "x"}}})
        assert edited.code == 1 and conclusion_of(scenario, head) == "failure", edited.stdout

    def test_an_override_record_another_workflow_posted_on_a_new_head(self, scenario: Scenario) -> None:
        """No check-run record grants an override: a run other than the label's own reads the head it was applied on from GitHub's workflow runs."""
        from tests.fakes.github import GITHUB_ACTIONS_APP

        first = scenario.git.commit({"README.md": "x\n", RUBRIC: rubric_yaml(["A", "B", "C", "E"])}, "delete D")
        apply_label(scenario, "labeled")
        assert run_gated(scenario, first, labels=(OVERRIDE,)).code == 0  # the writer's override, on this head
        second = scenario.git.commit(DELETE_A, "then delete A too")
        rejected_run(scenario, second, labels=(OVERRIDE,), action="synchronize")  # a new head: not overridden
        rid = scenario.fake.new_id()
        scenario.fake.check_runs[rid] = {
            "id": rid, "name": "rubric-gate", "head_sha": second, "status": "completed", "conclusion": "failure",
            "app": GITHUB_ACTIONS_APP, "external_id": f"base:{scenario.base_sha} pr:7 override",
            "output": {"title": "rubric-gate: fail", "summary": "", "annotations": []}}
        reopened = run_gated(scenario, second, labels=(OVERRIDE,), action="reopened")
        assert reopened.code == 1, reopened.stdout


# -- events and payload fields the action trusts -----------------------------------------------

class TestEventFields:
    def test_a_re_run_of_the_labeled_run_after_a_push(self, scenario: Scenario) -> None:
        """The re-run replays the label's payload (the old head): the new head stays red."""
        first = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "E"])}, "delete D")
        apply_label(scenario, "labeled")
        payload_event = scenario.event(first, labels=(OVERRIDE,))
        assert run_gated(scenario, first, labels=(OVERRIDE,)).code == 0
        second = scenario.git.commit(DELETE_A, "and delete A")
        rejected_run(scenario, second, labels=(OVERRIDE,), action="synchronize")
        rerun = scenario.run(first, payload=json.loads(payload_event.read_text()))
        scenario.fake.head_sha = second  # the PR's head now
        assert rerun.code == 0  # it gates (and grants) the head it names, only
        assert conclusion_of(scenario, second) == "failure"

    def test_a_push_back_to_an_overridden_head_after_main_moved(self, scenario: Scenario,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
        from datetime import timedelta

        first = scenario.git.commit(DELETE_A, "delete A")
        apply_label(scenario, "labeled")
        assert run_gated(scenario, first, labels=(OVERRIDE,)).code == 0
        scenario.git.commit({"README.md": "x\n"}, "another commit")
        # main moves after the label, by GitHub's clock (which the fake runs ahead of git's)
        monkeypatch.setenv("GIT_COMMITTER_DATE", (scenario.fake.clock + timedelta(minutes=1)).isoformat())
        commit_on_main(scenario, {"notes.txt": "main moved\n"}, "main moves")
        monkeypatch.delenv("GIT_COMMITTER_DATE")
        scenario.git("reset", "-q", "--hard", first)  # force-push back to the overridden head
        rejected_run(scenario, first, labels=(OVERRIDE,), action="synchronize")

    def test_the_labelers_on_a_second_page_of_events(self, scenario: Scenario) -> None:
        """A writer labeled first; 40 events later a triage user re-applied it: the last one counts."""
        head = scenario.git.commit(DELETE_A, "delete A")
        filler = [{"event": ("labeled", "unlabeled")[n % 2], "actor": {"login": "x"}, "label": {"name": "docs"}}
                  for n in range(40)]
        scenario.fake.label_events.extend(filler)
        apply_label(scenario, "labeled")
        apply_label(scenario, "unlabeled", who="triager")
        scenario.fake.label_events.extend(filler)
        apply_label(scenario, "labeled", who="triager")
        scenario.fake.permissions["triager"] = "triage"
        rejected_run(scenario, head, labels=(OVERRIDE,))

    @pytest.mark.parametrize("action", ["closed", "converted_to_draft", "milestoned", "locked", "demilestoned"])
    def test_other_pull_request_actions_post_no_green(self, scenario: Scenario, action: str) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head, action=action)

    def test_a_destroyed_merge_group_posts_no_green(self, scenario: Scenario) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        scenario.git("checkout", "-q", "-b", "gh-readonly-queue/main/pr-7", scenario.base_sha)
        scenario.git("merge", "-q", "--no-ff", "-m", "Merge pull request #7", head)
        group = scenario.git("rev-parse", "HEAD")
        payload = {**merge_group(scenario, group), "action": "destroyed", "reason": "dequeued"}
        result = scenario.run(group, event_name="merge_group", payload=payload)
        assert result.code == 1 and conclusion_of(scenario, group) == "failure", result.stdout

    @pytest.mark.parametrize("event", ["workflow_run", "repository_dispatch", "schedule", "status", "deployment",
                                       "pull_request_review_comment", "discussion"])
    def test_an_ungated_event_posts_nothing(self, scenario: Scenario, event: str) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        result = run_gated(scenario, head, event_name=event)
        assert result.code == 0 and latest_check_run(scenario, head) is None and not scenario.fake.statuses, result.stdout

    def test_an_edited_event_whose_base_change_names_the_same_branch(self, scenario: Scenario) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head, action="edited", payload={"changes": {"base": {"ref": {"from": "main"},
                                                                                  "sha": {"from": scenario.base_sha}}}})

    def test_a_payload_head_that_is_not_the_prs_head(self, scenario: Scenario) -> None:
        """An old payload (a re-run) names a commit the PR no longer has: that commit is gated,
        and the PR's current head gets nothing green from it."""
        good = scenario.git.commit({"README.md": "x\n"}, "harmless")
        bad = scenario.git.commit(DELETE_A, "delete A")
        assert run_gated(scenario, good).code == 0
        scenario.fake.head_sha = bad
        assert conclusion_of(scenario, bad) is None


# -- the copy-paste workflows listen for what the gate needs -----------------------------------------

def _yaml_blocks(markdown: str) -> list[dict]:
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", markdown, re.S)]
    return [b for b in blocks if isinstance(b, dict) and isinstance(b.get("jobs"), dict)
            and any("rubric-gate" in json.dumps(j) for j in b["jobs"].values())
            and "pull_request" in (b.get("on") or b.get(True) or {})]


def _workflow(source: str) -> dict:
    if source.endswith(".md"):
        (block,) = _yaml_blocks((ROOT / source).read_text(encoding="utf-8"))[:1]
        return block
    return yaml.safe_load((ROOT / source).read_text(encoding="utf-8"))


@pytest.mark.parametrize("source", [
    ".github/workflows/rubric-gate.yml",
    "src/rubric_gate/scaffold/files/rubric-gate.yml",
    "docs/action.md",
])
def test_the_copy_paste_workflow_gates_retargets_label_removals_and_merge_queues(source: str) -> None:
    workflow = _workflow(source)
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` key as True
    types = set(on["pull_request"]["types"])
    assert {"opened", "synchronize", "reopened", "labeled", "unlabeled", "edited"} <= types, types
    assert "merge_group" in on, sorted(on)
