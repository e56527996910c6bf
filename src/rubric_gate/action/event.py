"""The event payload: only the fields the gate needs, and which events it gates.

Gated: a pull request's `pull_request`/`pull_request_target` events, a retargeted PR (`edited`
with `changes.base`), a review submitted or dismissed (`pull_request_review`: an approval changes
which evidence counts), and a merge queue's `merge_group` (its head is the base tip with the
queued PRs merged: exactly what lands). An `edited` event that changes no base, an edited
review's text, and a label event for a label other than the override, change nothing the gate
decides: nothing to do.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rubric_gate.errors import InputError

# A `pull_request_review` payload carries the PR as a `pull_request` run's does (GITHUB_SHA is the
# PR's merge commit, and a fork's run has a read-only token and no secrets).
PR_EVENTS = ("pull_request", "pull_request_target", "pull_request_review")
# The workflow runs the override reads a label's head from are the PR events' (a label is applied
# by a `labeled` pull_request event, whichever event this run is).
LABEL_EVENT = {"pull_request_review": "pull_request"}
GATED_EVENTS = (*PR_EVENTS, "merge_group")
SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")  # SHA-1, or SHA-256 repositories
# A merge queue's branch: refs/heads/gh-readonly-queue/<base>/pr-<number>-<sha>
QUEUE_PR = re.compile(r"/pr-(\d+)-[0-9a-f]+$")


@dataclass(frozen=True)
class PullRequest:
    number: int
    base_sha: str
    head_sha: str
    base_repo: str
    head_repo: str | None  # None when the fork was deleted
    labels: tuple[str, ...]
    html_url: str
    action: str = ""  # the payload's `action` (labeled, synchronize, edited, ...)
    event_label: str | None = None  # for labeled/unlabeled: the label added or removed
    merge_group: bool = False  # a merge queue's group: no PR to comment on
    head_ref: str | None = None  # the head branch's name (a fork PR's workflow runs are matched by it)
    author: str | None = None  # who opened the PR (`user.login`): their own approval vouches for nothing

    @property
    def is_fork(self) -> bool:
        return self.head_repo != self.base_repo


def load_event(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(path, f"event payload is not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise InputError(path, "event payload is not a JSON object")
    return data


def pull_request_from(event: dict[str, Any], display: str) -> PullRequest:
    pr = event.get("pull_request")
    if not isinstance(pr, dict):
        raise InputError(display, "event has no pull_request object")
    try:
        head_repo = (pr["head"].get("repo") or {}).get("full_name")
        pull = PullRequest(
            number=int(pr["number"]),
            base_sha=str(pr["base"]["sha"]),
            head_sha=str(pr["head"]["sha"]),
            base_repo=str(pr["base"]["repo"]["full_name"]),
            head_repo=head_repo,
            labels=tuple(str(label.get("name", "")) for label in pr.get("labels") or []),
            html_url=str(pr.get("html_url", "")),
            action=str(event.get("action") or ""),
            event_label=str((event.get("label") or {}).get("name", "")) if isinstance(event.get("label"), dict) else None,
            head_ref=str(pr["head"]["ref"]) if isinstance(pr["head"].get("ref"), str) else None,
            author=_login(pr.get("user")),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(display, f"pull_request payload lacks a field ({exc})") from None
    for name, sha in (("base", pull.base_sha), ("head", pull.head_sha)):
        if not SHA.fullmatch(sha):  # the shas reach git's command line
            raise InputError(display, f"pull_request.{name}.sha is not a commit sha: {sha[:80]!r}")
    return pull


def _login(user: object) -> str | None:
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) and login else None


def merge_group_from(event: dict[str, Any], display: str) -> PullRequest:
    """A merge queue's group, gated as a PR whose head is the group's commit and whose base is
    its parent (the base branch's tip): the merge as it will land."""
    group = event.get("merge_group")
    if not isinstance(group, dict):
        raise InputError(display, "event has no merge_group object")
    try:
        repo = str(event["repository"]["full_name"])
        head_ref = str(group.get("head_ref") or "")
        match = QUEUE_PR.search(head_ref)
        pull = PullRequest(number=int(match.group(1)) if match else 0, base_sha=str(group["base_sha"]),
                           head_sha=str(group["head_sha"]), base_repo=repo, head_repo=repo, labels=(),
                           html_url="", action=str(event.get("action") or ""), merge_group=True)
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(display, f"merge_group payload lacks a field ({exc})") from None
    for name, sha in (("base_sha", pull.base_sha), ("head_sha", pull.head_sha)):
        if not SHA.fullmatch(sha):
            raise InputError(display, f"merge_group.{name} is not a commit sha: {sha[:80]!r}")
    return pull


def gate_target(event_name: str, event: dict[str, Any], display: str,
                override_label: str) -> tuple[PullRequest, str | None]:
    """What this event asks the gate to decide, and why it changes nothing the gate decides
    (None when it may: then it is gated)."""
    if event_name == "merge_group":
        return merge_group_from(event, display), None
    pull = pull_request_from(event, display)
    if event_name == "pull_request_review":  # submitted or dismissed changes which approval counts
        return pull, ("a review's text was edited (its state and commit are unchanged)" if pull.action == "edited"
                      else None)
    if pull.action == "edited" and not isinstance((event.get("changes") or {}).get("base"), dict):
        return pull, "the pull request was edited without a change of its base branch"
    if pull.action in ("labeled", "unlabeled") and pull.event_label != override_label:
        return pull, f"a label other than `{override_label}` was added or removed"
    return pull, None
