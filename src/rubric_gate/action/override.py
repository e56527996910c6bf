"""The override label: honoured only when whoever applied it has write access."""

from __future__ import annotations

from dataclasses import dataclass

from github import GithubException
from github.Repository import Repository

from rubric_gate.action.client import describe

WRITE_PERMISSIONS = ("admin", "maintain", "write")


@dataclass(frozen=True)
class Override:
    granted: bool
    text: str  # shown in the comment (as the report's override, or as a notice when refused)


def check_override(repo: Repository, number: int, labels: tuple[str, ...], label: str) -> Override | None:
    """None when the label is not on the PR; else whether it counts, and why."""
    if not label or label not in labels:
        return None
    try:
        actor = None
        for event in repo.get_issue(number).get_events():
            if event.event == "labeled" and event.label is not None and event.label.name == label:
                actor = event.actor.login if event.actor is not None else None  # the last one wins
        if actor is None:
            return Override(False, f"the `{label}` label is on this PR, but who applied it is unknown, so it was ignored")
        permission = repo.get_collaborator_permission(actor)
    except GithubException as exc:
        return Override(False, f"the `{label}` label is on this PR, but its author's permission could not be checked ({describe(exc)}), so it was ignored")
    if permission in WRITE_PERMISSIONS:
        return Override(True, f"the `{label}` label was applied by @{actor}, who has {permission} access")
    return Override(False, f"the `{label}` label was applied by @{actor}, who has {permission} access (write is required), so it was ignored")
