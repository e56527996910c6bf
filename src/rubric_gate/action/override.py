"""The override label: honoured only for the head it was applied on, while it is on the PR, and
only when whoever applied it has write access.

The run for the `labeled` event of the override label is the one that can grant it: GitHub
built its payload when the label was applied, so its head sha is the head the label was
applied on. Any other run (a new push, a reopen, a merge queue) sees a head nobody overrode:
the label is reported, not honoured. Whether the label is on is read from the API at run time
(a re-run's payload still lists a label removed since).
"""

from __future__ import annotations

from dataclasses import dataclass

from github import GithubException
from github.Repository import Repository

from rubric_gate.action.client import describe
from rubric_gate.action.event import PullRequest

WRITE_PERMISSIONS = ("admin", "maintain", "write")


@dataclass(frozen=True)
class Override:
    granted: bool
    text: str  # shown in the comment (as the report's override, or as a notice when refused)


def label_on(repo: Repository, pr: PullRequest, label: str) -> bool:
    """Whether the label is on the PR now, read from the API (False when that cannot be read)."""
    if not label or pr.merge_group:
        return False
    try:
        return label in {current.name for current in repo.get_issue(pr.number).get_labels()}
    except GithubException:
        return False


def check_override(repo: Repository, pr: PullRequest, label: str) -> Override | None:
    """None when the label is not on the PR now; else whether it counts for this head, and why."""
    if not label or pr.merge_group:
        return None  # a merge group's head is a commit nobody labeled
    try:
        issue = repo.get_issue(pr.number)
        if label not in {current.name for current in issue.get_labels()}:
            return None
        if pr.action != "labeled" or pr.event_label != label:
            return Override(False, f"the `{label}` label is on this PR, but it was applied before its head "
                            f"{pr.head_sha[:7]} (an override covers the head it was applied on only): remove "
                            "and re-apply it to override this head")
        actor = None
        for event in issue.get_events():
            if event.event == "labeled" and event.label is not None and event.label.name == label:
                actor = event.actor.login if event.actor is not None else None  # the last one wins
        if actor is None:
            return Override(False, f"the `{label}` label is on this PR, but who applied it is unknown, so it was ignored")
        permission = repo.get_collaborator_permission(actor)
    except GithubException as exc:
        return Override(False, f"the `{label}` label is on this PR, but its state or its author's permission could "
                        f"not be checked ({describe(exc)}), so it was ignored")
    if permission in WRITE_PERMISSIONS:
        return Override(True, f"the `{label}` label was applied on {pr.head_sha[:7]} by @{actor}, who has "
                        f"{permission} access")
    return Override(False, f"the `{label}` label was applied by @{actor}, who has {permission} access (write is required), so it was ignored")
