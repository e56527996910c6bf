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

from github import GithubException
from github.PullRequestReview import PullRequestReview
from github.Repository import Repository

from rubric_gate.action.event import PullRequest
from rubric_gate.action.github.client import describe
from rubric_gate.trust.approval import Approval, Review, approval

MAX_REVIEWS = 3000  # 30 pages of 100: a PR with more reviews than this is read no further


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
        reviews = []
        for index, review in enumerate(pull.get_reviews()):
            if index >= MAX_REVIEWS:
                break
            reviews.append(_review(review))
        author = pr.author if pr.author is not None else (pull.user.login if pull.user is not None else None)
        return approval(reviews, pr.head_sha, author, repo.get_collaborator_permission)
    except GithubException as exc:
        return Approval(False, f"the PR's reviews, or its approvers' permissions, could not be read ({describe(exc)}), "
                        "so no approval counts", refused=True)


def approval_reader(repo: Repository, pr: PullRequest) -> Callable[[], Approval | None]:
    """`check_approval` for this PR, read once, when first asked (most runs never ask: only a PR
    whose own recorded verdicts are evidence does)."""
    return cache(lambda: check_approval(repo, pr))
