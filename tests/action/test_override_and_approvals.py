"""The override label and the records that vouch for a head: honoured only when a writer applied it to
this head, never carried to another head, base or merge group, and never forged by another workflow.
"""

from __future__ import annotations

import json

import pytest

from tests.action.harness import (
    CALIBRATION,
    DELETE_A,
    FAILS,
    LABELS,
    OVERRIDE,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Pulls,
    Scenario,
    apply_label,
    both_fail,
    calibration_jsonl,
    commit_on_main,
    conclusion_of,
    label_by_writer,
    latest_check_run,
    marked_comment_body,
    merge_group,
    rubric_yaml,
    run_gated,
    verdicts_jsonl,
    writer_override,
)


def test_an_overridden_deletion_is_counted_as_passed(scenario: Scenario) -> None:
    writer_override(scenario)
    head = scenario.git.commit({RUBRIC: None}, "delete the rubric")
    result = scenario.run(head, labels=(OVERRIDE,))
    assert result.code == 0 and result.outputs["decision"] == "pass"
    (rubric,) = result.report()["rubrics"]
    assert rubric["decision"] == "pass"
    assert "0 passed, 0 failed, 1 overridden" in marked_comment_body(scenario)  # not counted as failed


def test_an_override_removed_while_its_run_is_cancelled_does_not_stay_green(scenario: Scenario) -> None:
    """The label comes off; the `unlabeled` run is cancelled by the workflow's concurrency group
    when the author edits the PR's title right after. The title edit changes nothing the gate
    decides, but the head's last result is the override's pass, which no longer holds."""
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    apply_label(scenario, "labeled")
    assert run_gated(scenario, head, labels=(OVERRIDE,)).code == 0  # overridden, as the writer meant
    apply_label(scenario, "unlabeled")  # ... and taken back; its run is cancelled by the next event
    edited = run_gated(scenario, head, action="edited", payload={"changes": {"title": {"from": "x"}}})
    latest = max((r for r in scenario.fake.check_runs.values() if r["head_sha"] == head), key=lambda r: r["id"])
    assert edited.code != 0 and latest["conclusion"] != "success", edited.stdout + str(latest["conclusion"])


def test_an_override_applied_by_the_author_is_refused(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    apply_label(scenario, "labeled", who="mallory")
    assert run_gated(scenario, head, labels=(OVERRIDE,)).code == 1


@pytest.mark.parametrize("name", ["rubric-gate:override ", "Rubric-Gate:Override", "rubric\u2010gate:override"],
                         ids=["trailing-space", "other-case", "unicode-hyphen"])
def test_a_look_alike_override_label_changes_nothing(scenario: Scenario, name: str) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    assert run_gated(scenario, head).code == 1
    apply_label(scenario, "labeled", name=name, who="maintainer")
    assert run_gated(scenario, head, labels=(name,)).code == 1


def test_an_override_on_the_pr_does_not_carry_into_its_merge_group(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    apply_label(scenario, "labeled")
    assert run_gated(scenario, head, labels=(OVERRIDE,)).code == 0
    scenario.git("checkout", "-q", "-b", "gh-readonly-queue/main/pr-7", scenario.base_sha)
    scenario.git("merge", "-q", "--no-ff", "-m", "Merge pull request #7", head)
    group = scenario.git("rev-parse", "HEAD")
    result = scenario.run(group, event_name="merge_group", payload=merge_group(scenario, group))
    assert result.code == 1, result.stdout + result.stderr


# -- records another workflow can write: check runs of the github-actions app -----------------

def _forge(scenario: Scenario, head: str, external_id: str, conclusion: str = "failure", app: dict | None = None) -> None:
    """A `rubric-gate` check run another workflow of the repository posted (as the same app)."""
    from tests.fakes.github import GITHUB_ACTIONS_APP

    rid = scenario.fake.new_id()
    scenario.fake.check_runs[rid] = {
        "id": rid, "name": "rubric-gate", "head_sha": head, "status": "completed", "conclusion": conclusion,
        "app": app or GITHUB_ACTIONS_APP, "external_id": external_id,
        "output": {"title": f"rubric-gate: {conclusion}", "summary": "", "annotations": []}}


class TestForgedRecords:
    def _two_prs(self, scenario: Scenario):
        head, pulls = both_fail(scenario)
        prs = Pulls(scenario, pulls)
        return head, pulls, prs

    def test_a_forged_grant_for_the_other_pr_with_this_head(self, scenario: Scenario) -> None:
        """No check-run record grants an override (the other PR's label is
        honoured only as GitHub's workflow run of its `labeled` event shows it)."""
        head, pulls, prs = self._two_prs(scenario)
        prs.label(7)
        prs.label(8)  # a writer's label on #8, applied before this head: never granted here
        _forge(scenario, head, f"base:{pulls[8]['base']} pr:8 override")
        result = prs.run(7, labels=(OVERRIDE,))
        assert result.code == 1 and latest_check_run(scenario, head)["conclusion"] == "failure", result.stdout + result.summary

    def test_a_forged_grant_with_another_base_is_refused(self, scenario: Scenario) -> None:
        head, _pulls, prs = self._two_prs(scenario)
        prs.label(7)
        prs.label(8)
        _forge(scenario, head, f"base:{'0' * 40} pr:8 override")
        result = prs.run(7, labels=(OVERRIDE,))
        assert result.code == 1 and latest_check_run(scenario, head)["conclusion"] == "failure", result.stdout + result.summary

    def test_a_forged_grant_by_another_app_is_refused(self, scenario: Scenario) -> None:
        head, pulls, prs = self._two_prs(scenario)
        prs.label(7)
        prs.label(8)
        evil = {"id": 1, "slug": "github-actions-bot", "node_id": "E", "name": "GitHub Actions",
                "owner": {"login": "mallory", "type": "User"}}
        _forge(scenario, head, f"base:{pulls[8]['base']} pr:8 override", app=evil)
        result = prs.run(7, labels=(OVERRIDE,))
        assert result.code == 1 and latest_check_run(scenario, head)["conclusion"] == "failure", result.stdout + result.summary

    def test_a_forged_in_progress_run_does_not_stand_as_a_pass(self, scenario: Scenario) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        _forge(scenario, head, f"base:{scenario.base_sha}", conclusion="success")
        scenario.fake.check_runs[max(scenario.fake.check_runs)]["status"] = "in_progress"
        result = run_gated(scenario, head, action="labeled", labels=("docs",))
        assert result.code == 1, result.stdout

    def test_a_forged_newer_plain_record_changes_nothing(self, scenario: Scenario) -> None:
        """No check-run record grants or withdraws an override: the writer's label on
        this head (attested by its `labeled` workflow run) still counts on a reopen."""
        head = scenario.git.commit(DELETE_A, "delete A")
        apply_label(scenario, "labeled")
        assert run_gated(scenario, head, labels=(OVERRIDE,)).code == 0
        _forge(scenario, head, f"base:{scenario.base_sha} pr:7")
        result = run_gated(scenario, head, labels=(OVERRIDE,), action="reopened")
        assert result.code == 0, result.stdout


# -- the override, as the label's own run and its re-runs grant it -------------------------------

class TestOverrideReRuns:
    def test_a_re_run_of_the_labeled_run_after_main_moved(self, scenario: Scenario) -> None:
        """Every run, the label's own included, refuses an override when the base tip was committed
        after the label. The writer overrides deleting A against B0. main then deletes B (overridden there): the
        merge now loses R1 and R2. A re-run of the old `labeled` run (anyone with write access,
        the PR's author among them, may re-run a workflow) replays its payload: the label's own
        run, on the same head, against a base the writer never saw."""
        head = scenario.git.commit(DELETE_A, "delete A")
        apply_label(scenario, "labeled")
        labeled = json.loads(scenario.event(head, labels=(OVERRIDE,)).read_text())
        assert run_gated(scenario, head, labels=(OVERRIDE,)).code == 0  # the writer's override, at B0
        commit_on_main(scenario, {RUBRIC: rubric_yaml(["A", "C", "D"])}, "main deletes B (overridden on main)")
        rerun = scenario.run(head, payload=labeled)
        assert rerun.code == 1 and conclusion_of(scenario, head) == "failure", rerun.stdout + rerun.summary

    def test_a_re_run_of_the_labeled_run_after_a_retarget(self, scenario: Scenario) -> None:
        """A `base_ref_changed` event after the label refuses it. Overridden into main; then retargeted to `release`, where B is gone already."""
        head = scenario.git.commit(DELETE_A, "delete A")
        apply_label(scenario, "labeled")
        labeled = json.loads(scenario.event(head, labels=(OVERRIDE,)).read_text())
        assert run_gated(scenario, head, labels=(OVERRIDE,)).code == 0
        scenario.git("checkout", "-q", "-b", "release", scenario.base_sha)
        release = scenario.git.commit({RUBRIC: rubric_yaml(["A", "C", "D"])}, "release: without B")
        scenario.git("checkout", "-q", "pr")
        scenario.base_sha = scenario.fake.base_sha = release
        scenario.fake.label_events.append({"event": "base_ref_changed", "actor": {"login": "mallory"}})
        rerun = scenario.run(head, payload=labeled)
        assert rerun.code == 1 and conclusion_of(scenario, head) == "failure", rerun.stdout + rerun.summary

    def test_a_re_run_of_the_labeled_run_after_the_label_was_re_applied_by_a_triager(self, scenario: Scenario) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        apply_label(scenario, "labeled")
        labeled = json.loads(scenario.event(head, labels=(OVERRIDE,)).read_text())
        apply_label(scenario, "unlabeled", who="triager")
        apply_label(scenario, "labeled", who="triager")
        scenario.fake.permissions["triager"] = "triage"
        rerun = scenario.run(head, payload=labeled)
        assert rerun.code == 1 and conclusion_of(scenario, head) == "failure", rerun.stdout + rerun.summary


# -- an override covers the head it was applied on: relabels and changed answers pushed later --------

@pytest.mark.parametrize("later", ["relabel", "changed-answer"])
def test_an_override_does_not_cover_a_relabel_or_a_changed_answer_pushed_after_it(scenario: Scenario,
                                                                                 later: str) -> None:
    label_by_writer(scenario)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    overridden = scenario.run(head, labels=(OVERRIDE,))
    assert overridden.code == 0 and overridden.report()["override"], overridden.stdout + overridden.stderr
    if later == "relabel":
        files = {CALIBRATION: calibration_jsonl({**LABELS, "R4": "fail"})}
    else:
        files = {VERDICTS: verdicts_jsonl(TEXTS, {**FAILS, "R4": set()})}  # D on R4: no -> yes
    pushed = scenario.git.commit(files, f"{later} after the label")
    result = scenario.run(pushed, labels=(OVERRIDE,), action="synchronize")
    assert result.code == 1 and result.outputs["decision"] == "fail", result.stdout + result.stderr
    assert result.report()["override"] is None
    assert any(f["blocking"] for f in result.report()["standard"]), result.report()["standard"]
    runs = {r["head_sha"]: r["conclusion"] for r in scenario.fake.check_runs.values()}
    assert runs == {head: "success", pushed: "failure"}
