"""The override label: honoured only for the head it was applied on, while it is on the PR, and
only when whoever applied it last has write access.

The run for the `labeled` event of the override label is the one that can grant it: GitHub
built its payload when the label was applied, so its head sha is the head the label was
applied on. That run records the grant on the head's check run (`CheckRecord.override`, with
the base tip it was gated against). Any other run honours the label only through that record:
the PR's latest record on this head is a grant at its base tip now. That is how a run sees the
override of another open PR with the same head, and how a reopen at the same head keeps it; a
new push is a head nobody overrode, and a merge queue's group has no label. Whether the label is
on is read from the API at run time (a re-run's payload still lists a label removed since).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from github import GithubException
from github.Repository import Repository

from rubric_gate.action.client import describe
from rubric_gate.action.event import PullRequest

WRITE_PERMISSIONS = ("admin", "maintain", "write")


class Record(Protocol):  # action.checks.CheckRecord (a protocol: checks imports decide, which imports this)
    @property
    def base_sha(self) -> str: ...
    @property
    def pull(self) -> int | None: ...
    @property
    def override(self) -> bool: ...


def granted_on_head(records: Sequence[Record], pr: PullRequest) -> bool:
    """Whether the PR's latest record on its head (newest first) is an override its `labeled` run
    granted there, gated against the PR's base tip now (a retarget or a moved base needs a new one)."""
    latest = next((r for r in records if r.pull == pr.number), None)
    return latest is not None and latest.override and latest.base_sha == pr.base_sha


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


def check_override(repo: Repository, pr: PullRequest, label: str,
                   records: Callable[[], Sequence[Record]] = lambda: ()) -> Override | None:
    """None when the label is not on the PR now; else whether it counts for this head, and why.
    `records`: the head's check-run records, newest first (read only when the label is on)."""
    if not label or pr.merge_group:
        return None  # a merge group's head is a commit nobody labeled
    try:
        issue = repo.get_issue(pr.number)
        if label not in {current.name for current in issue.get_labels()}:
            return None
        labeled_now = pr.action == "labeled" and pr.event_label == label
        if not labeled_now and not granted_on_head(records(), pr):
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
