"""A PR's approval as GitHub records it: its reviews and each approver's permission, read when the
run runs (the rule is `trust.approval`'s; this side only reads).

Nothing a workflow can write counts: the reviews API lists reviews people (and apps) submitted,
and the collaborator permission API answers for the reviewer now. A re-run reads them again
(its payload is its first attempt's, the reviews are today's). A merge queue's group has no
reviews: its head is a commit nobody approved.

The REST shapes relied on: GET /repos/{owner}/{repo}/pulls/{number}/reviews ("List reviews for a
pull request", oldest first, `per_page` at most 100; PyGithub's PullRequest.get_reviews) and GET
/repos/{owner}/{repo}/collaborators/{username}/permission (Repository.get_collaborator_permission,
the legacy `permission`: admin, write, read or none).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from github import GithubException
from github.PullRequestReview import PullRequestReview
from github.Repository import Repository

from rubric_gate.action.event import PullRequest
from rubric_gate.action.github.client import describe
from rubric_gate.trust.approval import Approval, Review, approval

MAX_REVIEWS = 3000  # 30 pages of 100: a PR with more reviews than this is read no further
DENIED = (401, 403)  # the token may not read it: a re-run with the same token would not either


def _review(review: PullRequestReview) -> Review:
    user = review.user
    return Review(id=review.id, login=user.login if user is not None else None,
                  bot=user is not None and (user.type or "").lower() == "bot",
                  state=(review.state or "").upper(), commit_id=review.commit_id)


def check_approval(repo: Repository, pr: PullRequest) -> Approval | None:
    """Whether a writer approved this head of the PR (None for a merge group: no PR reviews it)."""
    if pr.merge_group or not pr.number:
        return None
    try:
        pull = repo.get_pull(pr.number)  # lazy: no request until something is read from it
        reviews, cut = [], None
        for index, review in enumerate(pull.get_reviews()):
            if index >= MAX_REVIEWS:  # the newest lie past here: the rule counts no approval
                cut = MAX_REVIEWS
                break
            reviews.append(_review(review))
        author = pr.author if pr.author is not None else (pull.user.login if pull.user is not None else None)
    except GithubException as exc:
        return Approval(False, f"the PR's reviews could not be read ({describe(exc)}), so no approval counts",
                        refused=True, verifiable=exc.status not in DENIED)
    permission_of = _permission_reader(repo)
    try:
        found = approval(reviews, pr.head_sha, author, permission_of, read_only=cut)
        if pr.is_fork and not found.granted and author is not None and not permission_of.cache_info().currsize:
            # Nobody's permission was read yet: ask once whether this run may read one, so the
            # comment never asks for an approval this fork's runs cannot verify.
            permission_of(author)
        return found
    except _Unreadable as exc:
        # A fork's run has a read-only token, which GitHub may refuse this API ("Must have push
        # access to view collaborator permission"): then no approval can be verified in it.
        if pr.is_fork and exc.status in DENIED:
            return Approval(False, f"{exc}: this fork's run has a read-only token, so no approval can be verified in "
                            "it (a writer's override label can still be)", refused=True, verifiable=False)
        return Approval(False, f"{exc}, so no approval counts", refused=True, verifiable=exc.status not in DENIED)


class _Unreadable(Exception):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def _permission_reader(repo: Repository) -> Any:
    """A reviewer's permission now, each read once (`cache_info` says whether any was read)."""
    @cache
    def permission_of(login: str) -> str:
        try:
            return repo.get_collaborator_permission(login)
        except GithubException as exc:
            raise _Unreadable(f"@{login}'s permission could not be read ({describe(exc)})", exc.status) from None
    return permission_of


def approval_reader(repo: Repository, pr: PullRequest) -> Callable[[], Approval | None]:
    """`check_approval` for this PR, read once, when first asked (most runs never ask: only a PR
    whose own recorded verdicts are evidence does)."""
    return cache(lambda: check_approval(repo, pr))
