"""The sticky PR comment: found by its hidden marker and edited in place, never duplicated.

Only a comment the action itself wrote counts: anyone can post a comment that starts with the
marker (the PR author, to have a forged "PASS" edited in place under their own name, or to
have the report land in a comment they can edit afterwards).
"""

from __future__ import annotations

from dataclasses import dataclass

from github import GithubException
from github.IssueComment import IssueComment
from github.Repository import Repository

from rubric_gate.action.github.client import describe, is_forbidden
from rubric_gate.action.render import MARKER


@dataclass(frozen=True)
class CommentResult:
    action: str  # created | updated | skipped | forbidden | failed
    url: str | None = None
    detail: str | None = None


def token_login(repo: Repository) -> str | None:
    """The login of the token's user; None for an installation token (GITHUB_TOKEN), which has none."""
    try:
        _, data = repo.requester.requestJsonAndCheck("GET", "/user")
    except GithubException:
        return None  # 403 "Resource not accessible by integration"
    login = data.get("login") if isinstance(data, dict) else None
    return login if isinstance(login, str) and login else None


def is_own(comment: IssueComment, login: str | None) -> bool:
    user = comment.user
    return by_token(user.login if user is not None else None, login)


def by_token(author: str | None, login: str | None) -> bool:
    """Written (a comment, a commit status) by the token's user `login`; for an installation
    token (no login), by a GitHub App's bot account.

    A bot's login ends in `[bot]` (GITHUB_TOKEN writes as `github-actions[bot]`), which no
    user's login can, and only a repository admin can install an app.
    """
    if not author:
        return False
    if login is not None:
        return author == login
    return author.endswith("[bot]")


def find_comment(repo: Repository, number: int, login: str | None) -> IssueComment | None:
    for comment in repo.get_issue(number).get_comments():
        if (comment.body or "").startswith(MARKER) and is_own(comment, login):
            return comment
    return None


def upsert_comment(repo: Repository, number: int, body: str, *, create: bool = True) -> CommentResult:
    """Edit the marked comment, or create it when `create` (a PR touching no rubric only updates)."""
    try:
        login = token_login(repo)
        existing = find_comment(repo, number, login)
        if existing is not None:
            existing.edit(body)
            return CommentResult("updated", existing.html_url)
        if not create:
            return CommentResult("skipped")
        try:
            created = repo.get_issue(number).create_comment(body)
        except GithubException as exc:
            if is_forbidden(exc) or exc.status == 422:
                raise
            # The POST may have landed before the error (a retried or timed-out request):
            # look again rather than post a second comment.
            again = find_comment(repo, number, login)
            if again is None:
                raise
            again.edit(body)
            return CommentResult("updated", again.html_url)
        return CommentResult("created", created.html_url)
    except GithubException as exc:
        return CommentResult("forbidden" if is_forbidden(exc) else "failed", detail=describe(exc))
