"""The override rests on facts GitHub attests, never on a record another workflow can write.

A run other than the label's own `labeled` run honours the label for head H only when the label
is on, a writer applied it last at time t, and the first run of this workflow for this PR
created at or after t is that writer's, on H, within the window (the Actions workflow runs API);
and the base it covers has not changed since (no retarget event, a base tip committed no later
than t). Every end-to-end case below also has a `rubric-gate` check run another workflow posted
with an `override` record (what the old rule honoured), so each fails on the rule it replaces.

End to end through `rubric-gate action`, a real git repository and the fake GitHub, whose
workflow runs the harness records for every event it runs the action for.
"""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest

from rubric_gate.action.event import PullRequest
from rubric_gate.action.github.override import (
    RUN_SLACK,
    RUN_WINDOW,
    Labeling,
    WorkflowRun,
    base_moved_since,
    labeled_head,
    last_labeling,
    replayed,
    workflow_path,
)
from tests.action.harness import (
    OVERRIDE,
    REPO,
    RUBRIC,
    WORKFLOW,
    Pulls,
    Scenario,
    apply_label,
    both_fail,
    rubric_yaml,
    run_gated,
)
from tests.fakes.github import GITHUB_ACTIONS_APP

DELETE_A = {RUBRIC: rubric_yaml(["B", "C", "D"])}
RETITLED = {"changes": {"title": {"from": "x"}}}


def _forged_grant(scenario: Scenario, head: str, base: str | None = None, pull: int = 7,
                  conclusion: str = "success") -> None:
    """A `rubric-gate` check run another workflow of the repository posts on `head` as the
    github-actions app, with the grant record the old rule honoured."""
    rid = scenario.fake.new_id()
    scenario.fake.check_runs[rid] = {
        "id": rid, "name": "rubric-gate", "head_sha": head, "status": "completed", "conclusion": conclusion,
        "app": GITHUB_ACTIONS_APP, "external_id": f"base:{base or scenario.base_sha} pr:{pull} override",
        "output": {"title": "rubric-gate: pass", "summary": "", "annotations": []}}


def _said(result) -> str:
    """The job summary as a reader sees its words (mentions and shas carry a zero-width space)."""
    return str(result.summary).replace("\u200b", "")


def _latest(scenario: Scenario, head: str) -> str | None:
    runs = [r for r in scenario.fake.check_runs.values() if r["head_sha"] == head]
    return max(runs, key=lambda r: r["id"])["conclusion"] if runs else None


def _labeled_on(scenario: Scenario, head: str, who: str = "maintainer") -> None:
    """The writer applies the label while the PR's head is `head`; GitHub creates the `labeled`
    event's workflow run, which the workflow's concurrency group cancels before it posts."""
    apply_label(scenario, "labeled", who=who)
    scenario.fake.record_workflow_run(head_sha=head, actor=who)


# -- end to end ---------------------------------------------------------------------------------

def test_a_forged_grant_on_a_new_head_is_red_on_reopen(scenario: Scenario) -> None:
    first = scenario.git.commit({"README.md": "x\n"}, "a harmless change")
    apply_label(scenario, "labeled")
    assert run_gated(scenario, first, labels=(OVERRIDE,)).code == 0
    second = scenario.git.commit(DELETE_A, "then delete A")
    _forged_grant(scenario, second)
    result = run_gated(scenario, second, labels=(OVERRIDE,), action="reopened")
    assert result.code == 1 and _latest(scenario, second) == "failure", result.stdout + result.summary
    assert "applied before its head" in _said(result)


def test_a_label_applied_on_an_old_head_then_a_push_is_red_on_a_title_edit(scenario: Scenario) -> None:
    """The writer labels H0; the author pushes H1 (its run cancelled by the next event) and edits
    the title. The last result on H1 is a forged pass, so the edit gates H1 again."""
    h0 = scenario.git.commit({"README.md": "x\n"}, "a harmless change")
    _labeled_on(scenario, h0)
    h1 = scenario.git.commit(DELETE_A, "delete A, after the label")
    scenario.fake.record_workflow_run(head_sha=h1, actor="author")  # the push's run, cancelled
    _forged_grant(scenario, h1)
    result = run_gated(scenario, h1, labels=(OVERRIDE,), action="edited", payload=RETITLED)
    assert result.code == 1 and _latest(scenario, h1) == "failure", result.stdout + result.summary
    assert "applied before its head" in _said(result) and h0[:7] in _said(result)


def test_a_genuine_label_on_this_head_keeps_a_reopen_green_without_any_record(scenario: Scenario) -> None:
    """The `labeled` run was cancelled before it posted anything; the reopen reads GitHub's run."""
    head = scenario.git.commit(DELETE_A, "delete A")
    _labeled_on(scenario, head)
    result = run_gated(scenario, head, labels=(OVERRIDE,), action="reopened")
    assert result.code == 0 and _latest(scenario, head) == "success", result.stdout + result.summary
    assert result.report()["override"] and "@maintainer, who has write access" in result.report()["override"]


def test_a_label_applied_and_its_own_run_then_a_reopen_stays_green(scenario: Scenario) -> None:
    head = scenario.git.commit(DELETE_A, "delete A")
    apply_label(scenario, "labeled")
    assert run_gated(scenario, head, labels=(OVERRIDE,)).code == 0
    reopened = run_gated(scenario, head, labels=(OVERRIDE,), action="reopened")
    assert reopened.code == 0 and _latest(scenario, head) == "success", reopened.stdout + reopened.summary


def test_the_labeled_run_is_found_past_the_first_page_of_runs(scenario: Scenario) -> None:
    """150 runs of other PRs after the label: the runs API answers newest first, 100 a page."""
    head = scenario.git.commit(DELETE_A, "delete A")
    _labeled_on(scenario, head)
    for n in range(150):
        scenario.fake.record_workflow_run(head_sha="e" * 40, actor=f"dev{n}", number=100 + n, head_branch=f"b{n}")
    result = run_gated(scenario, head, labels=(OVERRIDE,), action="reopened")
    assert result.code == 0 and _latest(scenario, head) == "success", result.stdout + result.summary
    pages = [p for m, p in scenario.fake.requests if p.endswith("/actions/runs")]
    assert len(pages) >= 2, pages


def test_a_run_of_another_workflow_by_the_labeler_on_the_new_head_does_not_count(scenario: Scenario) -> None:
    """The label's event triggered only another workflow (this one's run never came); that run is
    the labeler's, on the new head."""
    head = scenario.git.commit(DELETE_A, "delete A")
    apply_label(scenario, "labeled")
    scenario.fake.record_workflow_run(head_sha=head, actor="maintainer", path=".github/workflows/ci.yml")
    _forged_grant(scenario, head)
    result = run_gated(scenario, head, labels=(OVERRIDE,), action="reopened")
    assert result.code == 1 and _latest(scenario, head) == "failure", result.stdout + result.summary
    # This workflow's first run after the label is the reopen's own, the author's.
    assert "is not @maintainer's (it is @author's)" in _said(result)


def test_the_first_run_after_the_label_being_someone_elses_does_not_count(scenario: Scenario) -> None:
    """This workflow's first run for the PR after the label is the author's (the labeled run
    never came): whose label event it was is unknown, so the label is refused."""
    head = scenario.git.commit(DELETE_A, "delete A")
    apply_label(scenario, "labeled")
    scenario.fake.record_workflow_run(head_sha=head, actor="author")
    scenario.fake.record_workflow_run(head_sha=head, actor="maintainer")  # a later edit of the writer's
    _forged_grant(scenario, head)
    result = run_gated(scenario, head, labels=(OVERRIDE,), action="reopened")
    assert result.code == 1 and "is not @maintainer's (it is @author's)" in _said(result), result.summary


def test_a_labeled_run_created_after_the_window_does_not_count(scenario: Scenario) -> None:
    head = scenario.git.commit(DELETE_A, "delete A")
    apply_label(scenario, "labeled")
    scenario.fake.stamp_events()
    scenario.fake.clock += RUN_WINDOW + timedelta(seconds=30)
    scenario.fake.record_workflow_run(head_sha=head, actor="maintainer")
    _forged_grant(scenario, head)
    result = run_gated(scenario, head, labels=(OVERRIDE,), action="reopened")
    assert result.code == 1 and "no run of this workflow" in _said(result), result.summary


def test_without_actions_read_the_label_is_refused_naming_the_permission(scenario: Scenario) -> None:
    head = scenario.git.commit(DELETE_A, "delete A")
    _labeled_on(scenario, head)
    _forged_grant(scenario, head)
    scenario.fake.actions_forbidden = True
    result = run_gated(scenario, head, labels=(OVERRIDE,), action="reopened")
    assert result.code == 1 and _latest(scenario, head) == "failure", result.stdout + result.summary
    assert "HTTP 403" in _said(result) and "'actions: read'" in _said(result)
    assert "Traceback" not in result.stdout + result.stderr


def test_without_the_workflow_ref_the_label_is_refused(scenario: Scenario) -> None:
    head = scenario.git.commit(DELETE_A, "delete A")
    _labeled_on(scenario, head)
    _forged_grant(scenario, head)
    result = run_gated(scenario, head, labels=(OVERRIDE,), action="reopened", env_extra={"GITHUB_WORKFLOW_REF": ""})
    assert result.code == 1 and "GITHUB_WORKFLOW_REF is not set" in _said(result), result.summary


def test_a_retarget_after_the_label_refuses_it(scenario: Scenario) -> None:
    """Labeled against main; retargeted into staging (main plus a note), where the head fails too."""
    head, pulls = both_fail(scenario)
    _labeled_on(scenario, head)
    assert run_gated(scenario, head, labels=(OVERRIDE,), action="reopened").code == 0  # attested, on main
    scenario.fake.label_events.append({"event": "base_ref_changed", "actor": {"login": "author"}})
    scenario.base_sha = scenario.fake.base_sha = pulls[8]["base"]
    _forged_grant(scenario, head, base=pulls[8]["base"])
    retargeted = run_gated(scenario, head, action="edited",
                       payload={"changes": {"base": {"ref": {"from": "main"}, "sha": {"from": pulls[7]["base"]}}}})
    assert retargeted.code == 1 and _latest(scenario, head) == "failure", retargeted.stdout + retargeted.summary
    assert "retargeted" in _said(retargeted)


def test_a_base_that_moved_after_the_label_refuses_it(scenario: Scenario) -> None:
    """Another PR merged after the label (the harness dates commits by the fake GitHub's clock)."""
    head = scenario.git.commit(DELETE_A, "delete A")
    _labeled_on(scenario, head)
    assert run_gated(scenario, head, labels=(OVERRIDE,), action="reopened").code == 0
    scenario.git("checkout", "-q", "main")
    tip = scenario.git.commit({"notes.txt": "main moves on\n"}, "another PR merged")
    scenario.git("checkout", "-q", "pr")
    scenario.base_sha = scenario.fake.base_sha = tip
    _forged_grant(scenario, head, base=tip)
    result = run_gated(scenario, head, labels=(OVERRIDE,), action="reopened")
    assert result.code == 1 and _latest(scenario, head) == "failure", result.stdout + result.summary
    assert "the base branch moved since" in _said(result)


def test_the_labeled_run_itself_refuses_a_base_that_moved_after_the_label(scenario: Scenario) -> None:
    """The `labeled` run started after another PR merged (a queued runner): its payload says
    nothing about the base it runs against."""
    head = scenario.git.commit(DELETE_A, "delete A")
    apply_label(scenario, "labeled")
    scenario.fake.stamp_events()
    scenario.git("checkout", "-q", "main")
    scenario.base_sha = scenario.fake.base_sha = scenario.git.commit({"notes.txt": "x\n"}, "another PR merged")
    scenario.git("checkout", "-q", "pr")
    result = run_gated(scenario, head, labels=(OVERRIDE,))
    assert result.code == 1 and "the base branch moved since" in _said(result), result.stdout + result.summary


def test_a_re_run_of_the_labeled_run_reads_the_head_from_the_workflow_runs(scenario: Scenario) -> None:
    """A re-run (GITHUB_RUN_ATTEMPT 2) replays the first attempt's `labeled` payload: it reads the
    head from GitHub's workflow runs like any other run (refused where they cannot be read)."""
    head = scenario.git.commit(DELETE_A, "delete A")
    apply_label(scenario, "labeled")
    labeled = json.loads(scenario.event(head, labels=(OVERRIDE,)).read_text())
    assert run_gated(scenario, head, labels=(OVERRIDE,)).code == 0
    rerun = scenario.run(head, payload=labeled, env_extra={"GITHUB_RUN_ATTEMPT": "2"})
    assert rerun.code == 0, rerun.stdout + rerun.summary  # the first attempt's workflow run shows this head
    scenario.fake.actions_forbidden = True
    refused = scenario.run(head, payload=labeled, env_extra={"GITHUB_RUN_ATTEMPT": "3"})
    assert refused.code == 1 and "'actions: read'" in _said(refused), refused.stdout + refused.summary


@pytest.mark.parametrize("moved", [False, True])
def test_in_a_shallow_checkout_the_base_tips_date_comes_from_the_api(scenario: Scenario, moved: bool) -> None:
    """The checkout lacks the base tip: its commit date is read through the commits API."""
    head = scenario.git.commit(DELETE_A, "delete A")
    _labeled_on(scenario, head)
    if moved:
        scenario.git("checkout", "-q", "main")
        scenario.base_sha = scenario.fake.base_sha = scenario.git.commit({"notes.txt": "x\n"}, "another PR merged")
        scenario.git("checkout", "-q", "pr")
    workspace = scenario.tmp / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "pr", scenario.git.path.as_uri(), str(workspace)],
                   check=True)
    _forged_grant(scenario, head)
    result = run_gated(scenario, head, labels=(OVERRIDE,), action="reopened", workspace=workspace)
    assert any(p.endswith(f"/commits/{scenario.base_sha}") for _, p in scenario.fake.requests)
    assert result.code == (1 if moved else 0), result.stdout + result.summary
    assert ("the base branch moved since" in _said(result)) is moved


def test_same_head_prs_each_overridden_end_green_with_no_record_of_either(scenario: Scenario) -> None:
    """Both PRs labeled by the writer; #7's `labeled` run was cancelled before it posted. #8's
    run reads #7's label and its workflow run, and posts the pass."""
    head, pulls = both_fail(scenario)
    prs = Pulls(scenario, pulls)
    prs.label(7)
    scenario.fake.label_events = prs.events[7]
    scenario.fake.record_workflow_run(head_sha=head, actor="maintainer", number=7)
    prs.label(8)
    result = prs.run(8, labels=(OVERRIDE,))
    assert result.code == 0 and _latest(scenario, head) == "success", result.stdout + result.summary
    assert "its override covers it there" in _said(result)


def test_same_head_pr_labeled_on_an_older_head_with_a_forged_record_fails(scenario: Scenario) -> None:
    head, pulls = both_fail(scenario)
    prs = Pulls(scenario, pulls)
    prs.label(7)
    scenario.fake.record_workflow_run(head_sha=pulls[7]["base"], actor="maintainer", number=7)  # on an older head
    _forged_grant(scenario, head, base=pulls[7]["base"], pull=7, conclusion="failure")
    prs.label(8)
    result = prs.run(8, labels=(OVERRIDE,))
    assert result.code == 1 and _latest(scenario, head) == "failure", result.stdout + result.summary
    assert "Its override label does not count" in _said(result)


def test_a_fork_prs_label_is_attested_by_its_head_repository_and_branch(scenario: Scenario) -> None:
    """A fork's run cannot post a check run (read-only token), and its workflow runs list no pull
    request: the reopen matches the labeled run by the fork's repository and branch."""
    head = scenario.git.commit(DELETE_A, "delete A")
    apply_label(scenario, "labeled")
    labeled = run_gated(scenario, head, labels=(OVERRIDE,), fork=True, token="read-only-token")
    assert labeled.code == 0, labeled.stdout + labeled.summary
    assert scenario.fake.workflow_runs[-1]["pull_requests"] == []
    reopened = run_gated(scenario, head, labels=(OVERRIDE,), fork=True, token="read-only-token", action="reopened")
    assert reopened.code == 0 and reopened.outputs["decision"] == "pass", reopened.stdout + reopened.summary


def test_a_fork_run_of_another_repositorys_branch_of_that_name_does_not_count(scenario: Scenario) -> None:
    head = scenario.git.commit(DELETE_A, "delete A")
    apply_label(scenario, "labeled")
    scenario.fake.record_workflow_run(head_sha=head, actor="maintainer", head_repo="someone/rubrics", fork=True)
    _forged_grant(scenario, head)
    reopened = run_gated(scenario, head, labels=(OVERRIDE,), fork=True, action="reopened")
    assert reopened.code == 1 and "is not @maintainer's (it is @author's)" in _said(reopened), reopened.summary


# -- the rule, as a pure function ---------------------------------------------------------------

T = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
H, H0 = "c" * 40, "d" * 40
PR = PullRequest(number=7, base_sha="a" * 40, head_sha=H, base_repo=REPO, head_repo=REPO, labels=(),
                 html_url="", head_ref="pr")
FORK = PullRequest(number=7, base_sha="a" * 40, head_sha=H, base_repo=REPO, head_repo="mallory/rubrics", labels=(),
                   html_url="", head_ref="pr")
LABELING = Labeling("maintainer", T, retargeted=False)


def _run(seconds: float, head: str = H, actor: str = "maintainer", path: str = WORKFLOW, event: str = "pull_request",
         pulls: tuple[int, ...] = (7,), head_repo: str = REPO, branch: str = "pr", rid: int = 0) -> WorkflowRun:
    return WorkflowRun(rid or int(seconds * 10) + 1000, path, event, head, actor, T + timedelta(seconds=seconds),
                       pulls, head_repo, branch)


@pytest.mark.parametrize(("runs", "pr", "head"), [
    ([_run(2)], PR, H),
    ([], PR, None),
    ([_run(2, head=H0)], PR, H0),  # applied on an older head
    ([_run(1, actor="author"), _run(2)], PR, None),  # the first run after it is someone else's
    ([_run(1, path=".github/workflows/ci.yml"), _run(2, head=H0)], PR, H0),  # another workflow's run is not read
    ([_run(1, event="pull_request_target")], PR, None),  # another event's run
    ([_run(1, pulls=(8,))], PR, None),  # another PR's run
    ([_run(-RUN_SLACK.total_seconds() - 1)], PR, None),  # created before the label
    ([_run(-1)], PR, H),  # within the slack: the two services stamp to the second
    ([_run(-2, actor="author", head=H0), _run(1)], PR, H),  # the author's push just before the label
    ([_run(-2, head=H0), _run(1)], PR, H0),  # the labeler's own run just before: refused on H
    ([_run(RUN_WINDOW.total_seconds() + 1)], PR, None),  # too late to be the label's run
    ([_run(3, head=H0), _run(3, rid=1)], PR, H),  # same second: the lower id was created first
    ([_run(2, pulls=(), head_repo="mallory/rubrics")], FORK, H),  # a fork's run lists no PR
    ([_run(2, pulls=(), head_repo="someone/rubrics")], FORK, None),  # another fork's branch of that name
    ([_run(2, pulls=(), head_repo="mallory/rubrics", branch="main")], FORK, None),
])
def test_labeled_head(runs: list[WorkflowRun], pr: PullRequest, head: str | None) -> None:
    assert labeled_head(runs, pr, LABELING, WORKFLOW, "pull_request")[0] == head


@pytest.mark.parametrize(("committed", "labeling", "moved"), [
    (T - timedelta(days=1), LABELING, False),
    (T, LABELING, False),
    (T + timedelta(seconds=1), LABELING, True),  # committed after the label: the base moved
    (T - timedelta(days=1), Labeling("maintainer", T, retargeted=True), True),
    (None, LABELING, True),  # unknown: refused
])
def test_base_moved_since(committed: datetime | None, labeling: Labeling, moved: bool) -> None:
    assert (base_moved_since(committed, labeling) is not None) is moved


@pytest.mark.parametrize(("ref", "path"), [
    (f"{REPO}/.github/workflows/rubric-gate.yml@refs/pull/7/merge", ".github/workflows/rubric-gate.yml"),
    ("acme/rubrics/.github/workflows/nested/x.yml@refs/heads/main", ".github/workflows/nested/x.yml"),
    ("", None),
    ("acme/rubrics", None),
    ("acme/rubrics/rubric-gate.yml@refs/heads/main", None),
])
def test_workflow_path(ref: str, path: str | None) -> None:
    assert workflow_path({"GITHUB_WORKFLOW_REF": ref} if ref else {}) == path


@pytest.mark.parametrize(("attempt", "replay"), [(None, False), ("1", False), ("2", True), ("x", True)])
def test_a_re_run_is_told_by_its_attempt(attempt: str | None, replay: bool) -> None:
    assert replayed({"GITHUB_RUN_ATTEMPT": attempt} if attempt is not None else {}) is replay


def _event(kind: str, who: str = "maintainer", seconds: int = 0, label: str | None = OVERRIDE) -> SimpleNamespace:
    return SimpleNamespace(event=kind, actor=SimpleNamespace(login=who), created_at=T + timedelta(seconds=seconds),
                           label=SimpleNamespace(name=label) if label else None)


@pytest.mark.parametrize(("events", "labeling"), [
    ([], Labeling(None, None, False)),
    ([_event("labeled", "a", 1), _event("unlabeled", "a", 2), _event("labeled", "b", 3)],
     Labeling("b", T + timedelta(seconds=3), False)),  # the last one counts
    ([_event("labeled", "a", 1), _event("base_ref_changed", label=None, seconds=2)],
     Labeling("a", T + timedelta(seconds=1), True)),  # retargeted after it
    ([_event("base_ref_changed", label=None, seconds=1), _event("labeled", "a", 2)],
     Labeling("a", T + timedelta(seconds=2), False)),  # retargeted before it: applied against the new base
    ([_event("labeled", "a", 1), _event("labeled", "b", 2, label="docs")], Labeling("a", T + timedelta(seconds=1), False)),
])
def test_last_labeling(events: list[SimpleNamespace], labeling: Labeling) -> None:
    assert last_labeling(events, OVERRIDE) == labeling  # type: ignore[arg-type]
