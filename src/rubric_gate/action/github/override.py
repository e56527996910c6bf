"""The override label: honoured only for the head it was applied on, while it is on the PR, and
only when whoever applied it last has write access.

Every fact a grant rests on is one GitHub itself attests; nothing another workflow can write
(a check run of the github-actions app, a commit status, a cache) grants or carries one:

- the label is on the PR now (the labels API; a re-run's payload still lists a label removed since);
- who applied it last, and when (`t`): the issue events API (`labeled`, its `actor` and `created_at`);
- that user's permission (the collaborator permission API): write, maintain or admin;
- the head it was applied on. The run of the label's own `labeled` event knows it from its
  payload (GitHub built it when the label was applied). Any other run (a reopen, a title edit,
  the run of another open PR with this head) reads it from the workflow run GitHub created for
  that event (the Actions workflow runs API): the first run of this workflow (its `path`, from
  `GITHUB_WORKFLOW_REF`) for this PR at or after `t` (the labeler's from `RUN_SLACK` before it),
  which must be the labeler's (`actor`)
  and created within `RUN_WINDOW` of `t`; its `head_sha` is the PR's head when the label was
  applied. See `labeled_head`, and docs/action.md ("Override") for what that leaves open;
- the base it covers: no retarget (`base_ref_changed` issue event) since `t`, and the base tip
  was committed no later than `t` (see `base_moved_since`). Every run asks this, the label's own
  too: it may start late, or be re-run (GITHUB_RUN_ATTEMPT above 1: a re-run replays the first
  attempt's payload, so it also reads the head as any other run does).

A push is a head nobody overrode, and a merge queue's group has no label.

The REST shapes relied on, as the documentation has them:
- GET /repos/{owner}/{repo}/actions/runs ("REST API endpoints for workflow runs", List workflow
  runs for a repository, docs.github.com/rest/actions/workflow-runs; octokit's
  listWorkflowRunsForRepo): query `event` and `created` (a date-time range in the search syntax,
  `a..b`: the OpenAPI `created-range` parameter; GitHub changelog 2021-09-02 "Filter workflow
  runs by created date"), `per_page` at most 100, at most 1,000 results for a filtered query;
  anyone with read access may list, a token needs `actions: read` (any refusal, 403 or 404,
  refuses the label, naming the permission). Each run has `path` (the workflow file), `event`, `head_sha`,
  `head_branch`, `head_repository`, `created_at`, `actor` (who triggered the run's event; a
  re-run keeps it and sets `triggering_actor`: go-github#2874, GitHub changelog 2022-07-19
  "differentiating triggering actor from executing actor") and `pull_requests`, which is empty
  for a PR from a fork (github/docs#22501, actions/runner#3444): such a run is matched by its
  head repository and branch.
- GET /repos/{owner}/{repo}/issues/{number}/events ("Issue event types"): `labeled` (with
  `label`, `actor`, `created_at`) and `base_ref_changed` ("The base reference branch of the pull
  request changed"), both in the issue events API for pull requests.
- GITHUB_WORKFLOW_REF ("Variables reference"): `owner/repo/.github/workflows/file.yml@ref`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from github import GithubException
from github.IssueEvent import IssueEvent
from github.Repository import Repository
from github.WorkflowRun import WorkflowRun as ApiRun

from rubric_gate.action.event import PullRequest
from rubric_gate.action.github.client import describe

WRITE_PERMISSIONS = ("admin", "maintain", "write")
# GitHub creates the `labeled` event's workflow run seconds after the label is applied. Runs
# created up to RUN_SLACK before `t` are considered too (the issue event and the run are
# stamped by two services, to the second), and the run must exist within RUN_WINDOW of `t`:
# later than that, a run of the labeler's next action on the PR could stand in for a labeled
# run GitHub never created, so the label is refused instead (re-applying it grants again).
RUN_SLACK = timedelta(seconds=5)
RUN_WINDOW = timedelta(minutes=5)
MAX_RUN_PAGES = 10  # 100 runs a page; the API answers at most 1,000 per query
ACTIONS_READ = "the workflow needs `actions: read` to read it"


@dataclass(frozen=True)
class Override:
    granted: bool
    text: str  # shown in the comment (as the report's override, or as a notice when refused)


@dataclass(frozen=True)
class WorkflowRun:
    """The fields of a workflow run (GET .../actions/runs) the rule reads."""

    id: int
    path: str
    event: str
    head_sha: str
    actor: str | None
    created_at: datetime
    pulls: tuple[int, ...]  # `pull_requests[].number`: empty for a fork's PR
    head_repo: str | None
    head_branch: str | None

    def is_for(self, pr: PullRequest) -> bool:
        if self.pulls:
            return pr.number in self.pulls
        return self.head_repo is not None and self.head_repo == pr.head_repo and \
            pr.head_ref is not None and self.head_branch == pr.head_ref


@dataclass(frozen=True)
class Labeling:
    """The last time the label was applied, as the issue events API has it."""

    actor: str | None
    at: datetime | None
    retargeted: bool  # a `base_ref_changed` event after it


def workflow_path(env: Mapping[str, str]) -> str | None:
    """This workflow's file in its repository, from GITHUB_WORKFLOW_REF
    (`owner/repo/.github/workflows/file.yml@refs/...`); None when it is not set or malformed."""
    ref = env.get("GITHUB_WORKFLOW_REF", "").split("@", 1)[0]
    parts = ref.split("/", 2)
    return parts[2] if len(parts) == 3 and parts[2].startswith(".github/") else None


def labeled_head(runs: Iterable[WorkflowRun], pr: PullRequest, labeling: Labeling, path: str,
                 event: str) -> tuple[str | None, str]:
    """The head the label was applied on, read from the workflow run of its `labeled` event:
    the first run of this workflow for this PR created at or after the label (the labeler's
    from RUN_SLACK before it), which must be the labeler's and within RUN_WINDOW. (None, why)
    when no run attests it."""
    assert labeling.at is not None
    # Someone else's run stamped before the label is an earlier event's (the labeled run is the
    # labeler's); after it, anyone else's run first means the labeled run is not known to be first.
    ours = sorted((r for r in runs if r.path == path and r.event == event and r.is_for(pr)
                   and (r.created_at >= labeling.at or (r.actor == labeling.actor
                                                        and r.created_at >= labeling.at - RUN_SLACK))),
                  key=lambda r: (r.created_at, r.id))
    first = ours[0] if ours else None
    if first is None or first.created_at > labeling.at + RUN_WINDOW:
        return None, (f"no run of this workflow ({path}) was created for the event of applying it, so the head it "
                      "was applied on is unknown")
    if first.actor != labeling.actor:
        return None, (f"the first run of this workflow for this PR after it was applied is not @{labeling.actor}'s "
                      f"(it is @{first.actor}'s), so the head it was applied on is unknown")
    return first.head_sha, ""


def base_moved_since(committed: datetime | None, labeling: Labeling) -> str | None:
    """Why the base the label was applied against is not the base now, or None. A retarget is
    an issue event; a moved base is a tip committed after the label (main's commits are its
    own history: GitHub stamps a merge when it makes it)."""
    if labeling.retargeted:
        return "the PR was retargeted to another base branch since"
    if committed is None:
        return "the base branch tip's commit date could not be read"
    if labeling.at is not None and committed > labeling.at:
        return "the base branch moved since (its tip was committed after the label was applied)"
    return None


def replayed(env: Mapping[str, str]) -> bool:
    """Whether this run is a re-run (GITHUB_RUN_ATTEMPT above 1), which replays the payload of its
    first attempt: a `labeled` payload then says nothing about the head when it runs."""
    attempt = env.get("GITHUB_RUN_ATTEMPT", "1")
    return not attempt.isdigit() or int(attempt) > 1


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _stamp(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Attestor:
    """Reads the workflow runs a label's head is attested by, once per window (a run reads the
    same label several times: before and after posting, and for each PR with this head)."""

    def __init__(self, repo: Repository, path: str | None, event: str,
                 base_committed: Callable[[str], datetime | None] = lambda _sha: None, *,
                 replayed: bool = False) -> None:
        self._repo, self.path, self.event, self._base_committed = repo, path, event, base_committed
        self.replayed = replayed  # this run is a re-run: its payload is its first attempt's
        self._runs: dict[datetime, list[WorkflowRun]] = {}

    def forget(self) -> None:
        """Read them again next time (another PR's labeled run may have been created since)."""
        self._runs.clear()

    def runs(self, at: datetime) -> list[WorkflowRun]:
        if at not in self._runs:
            listed = self._repo.get_workflow_runs(event=self.event,
                                                  created=f"{_stamp(at - RUN_SLACK)}..{_stamp(at + RUN_WINDOW)}")
            found = []
            for index, run in enumerate(listed):
                if index >= MAX_RUN_PAGES * 100:
                    break
                found.append(_workflow_run(run))
            self._runs[at] = found
        return self._runs[at]

    def committed(self, sha: str) -> datetime | None:
        return _utc(self._base_committed(sha))


def _workflow_run(run: ApiRun) -> WorkflowRun:
    return WorkflowRun(id=run.id, path=run.path or "", event=run.event or "", head_sha=run.head_sha or "",
                       actor=run.actor.login if run.actor is not None else None,
                       created_at=_utc(run.created_at) or datetime.min.replace(tzinfo=UTC),
                       pulls=tuple(p.number for p in run.pull_requests or ()),
                       head_repo=run.head_repository.full_name if run.head_repository is not None else None,
                       head_branch=run.head_branch)


def last_labeling(events: Iterable[IssueEvent], label: str) -> Labeling:
    """Who applied the label last and when, and whether the PR was retargeted after that."""
    actor: str | None = None
    at: datetime | None = None
    retargeted = False
    for event in events:  # oldest first
        if event.event == "labeled" and event.label is not None and event.label.name == label:
            actor = event.actor.login if event.actor is not None else None
            at, retargeted = _utc(event.created_at), False
        elif event.event == "base_ref_changed" and at is not None:
            retargeted = True
    return Labeling(actor, at, retargeted)


def label_on(repo: Repository, pr: PullRequest, label: str) -> bool:
    """Whether the label is on the PR now, read from the API (False when that cannot be read)."""
    if not label or pr.merge_group:
        return False
    try:
        return label in {current.name for current in repo.get_issue(pr.number).get_labels()}
    except GithubException:
        return False


def check_override(repo: Repository, pr: PullRequest, label: str, attestor: Attestor) -> Override | None:
    """None when the label is not on the PR now; else whether it counts for this head, and why."""
    if not label or pr.merge_group:
        return None  # a merge group's head is a commit nobody labeled
    on = f"the `{label}` label is on this PR, but"
    try:
        issue = repo.get_issue(pr.number)
        if label not in {current.name for current in issue.get_labels()}:
            return None
        labeling = last_labeling(issue.get_events(), label)
        if labeling.actor is None or labeling.at is None:
            return Override(False, f"{on} who applied it is unknown, so it was ignored")
        # The label's own run knows the head from its payload, built when the label was applied;
        # a re-run replays that payload later, so it reads the head as any other run does.
        labeled_now = pr.action == "labeled" and pr.event_label == label and not attestor.replayed
        refused = (None if labeled_now else _head_refused(attestor, pr, labeling, on)) or \
            _base_refused(attestor, pr, labeling, on)
        if refused is not None:
            return refused
        permission = repo.get_collaborator_permission(labeling.actor)
    except GithubException as exc:
        return Override(False, f"{on} its state or its author's permission could not be checked ({describe(exc)}), "
                        "so it was ignored")
    actor = labeling.actor
    if permission in WRITE_PERMISSIONS:
        return Override(True, f"the `{label}` label was applied on {pr.head_sha[:7]} by @{actor}, who has "
                        f"{permission} access")
    return Override(False, f"the `{label}` label was applied by @{actor}, who has {permission} access (write is required), so it was ignored")


AGAIN = "remove and re-apply it to override this head"


def _head_refused(attestor: Attestor, pr: PullRequest, labeling: Labeling, on: str) -> Override | None:
    """The refusal when GitHub's workflow runs do not show the label applied on this head."""
    assert labeling.at is not None
    if attestor.path is None:
        return Override(False, f"{on} this run cannot tell which workflow it is (GITHUB_WORKFLOW_REF is not set), so "
                        f"the head it was applied on cannot be read: {AGAIN}")
    try:
        runs = attestor.runs(labeling.at)
    except GithubException as exc:
        return Override(False, f"{on} the workflow runs that show the head it was applied on could not be read "
                        f"({describe(exc)}; {ACTIONS_READ}), so it was ignored")
    head, why = labeled_head(runs, pr, labeling, attestor.path, attestor.event)
    if head is None:
        return Override(False, f"{on} {why}: {AGAIN}")
    if head != pr.head_sha:
        return Override(False, f"{on} it was applied before its head {pr.head_sha[:7]} (on {head[:7]}; an override "
                        f"covers the head it was applied on only): {AGAIN}")
    return None


def _base_refused(attestor: Attestor, pr: PullRequest, labeling: Labeling, on: str) -> Override | None:
    """The refusal when the base is not the one the label was applied against (every run asks,
    the label's own included: it may run, or be re-run, after the base moved)."""
    moved = base_moved_since(attestor.committed(pr.base_sha), labeling)
    if moved is not None:
        return Override(False, f"{on} {moved} (an override covers the base it was applied against only): {AGAIN}")
    return None
