"""The sticky PR comment: found by its hidden marker and edited in place, never duplicated."""

from __future__ import annotations

from dataclasses import dataclass

from github import GithubException
from github.IssueComment import IssueComment
from github.Repository import Repository

from rubric_gate.action.client import describe, is_forbidden
from rubric_gate.action.render import MARKER


@dataclass(frozen=True)
class CommentResult:
    action: str  # created | updated | skipped | forbidden | failed
    url: str | None = None
    detail: str | None = None


def find_comment(repo: Repository, number: int) -> IssueComment | None:
    for comment in repo.get_issue(number).get_comments():
        if (comment.body or "").startswith(MARKER):
            return comment
    return None


def upsert_comment(repo: Repository, number: int, body: str, *, create: bool = True) -> CommentResult:
    """Edit the marked comment, or create it when `create` (a PR touching no rubric only updates)."""
    try:
        existing = find_comment(repo, number)
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
            again = find_comment(repo, number)
            if again is None:
                raise
            again.edit(body)
            return CommentResult("updated", again.html_url)
        return CommentResult("created", created.html_url)
    except GithubException as exc:
        return CommentResult("forbidden" if is_forbidden(exc) else "failed", detail=describe(exc))
