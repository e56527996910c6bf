"""Post repair suggestions as PR review comments with PyGithub, following `plan_review_comments`:
one comment per (file, check), edited in place on the next push, never duplicated.

The caller decides which existing comments are its own (the same author test as the sticky
comment), so a comment anyone else wrote with our marker is never edited or deleted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from github import GithubException
from github.GithubObject import NotSet
from github.PullRequest import PullRequest

from rubric_gate.repair.hunks import head_hunks
from rubric_gate.repair.model import RepairSuggestion
from rubric_gate.repair.review import ExistingComment, plan_review_comments


@dataclass
class ReviewResult:
    created: int = 0
    updated: int = 0
    deleted: int = 0
    failures: list[str] = field(default_factory=list)  # e.g. a line outside the diff (HTTP 422)
    unplaced: int = 0  # suggestions left in the sticky comment: no one diff hunk holds their lines


def _describe(exc: GithubException) -> str:
    data = exc.data if isinstance(exc.data, dict) else {}
    return f"HTTP {exc.status}: {str(data.get('message') or exc)[:200]}"


def post_repair_suggestions(pr: PullRequest, head_sha: str, suggestions: Sequence[RepairSuggestion],
                            is_own: Callable[[Any], bool]) -> ReviewResult:
    own = [c for c in pr.get_review_comments() if is_own(c)]
    by_id = {c.id: c for c in own}
    paths = {s.path for s in suggestions}
    hunks = {f.filename: head_hunks(f.patch) for f in pr.get_files() if f.filename in paths}
    plan = plan_review_comments(
        [ExistingComment(c.id, c.body or "", c.path, c.line, c.start_line) for c in own], suggestions, hunks)
    result = ReviewResult(unplaced=len(plan.unplaced))
    for suggestion, why in plan.unplaced:
        result.failures.append(f"'{suggestion.check}' stays in this comment ({why}, and GitHub places a "
                               "suggestion only inside one hunk)")
    for comment_id in plan.delete:
        try:
            by_id[comment_id].delete()
            result.deleted += 1
        except GithubException as exc:
            result.failures.append(f"delete review comment {comment_id}: {_describe(exc)}")
    for comment_id, body in plan.update:
        try:
            by_id[comment_id].edit(body)
            result.updated += 1
        except GithubException as exc:
            result.failures.append(f"edit review comment {comment_id}: {_describe(exc)}")
    for new in plan.create:
        multi = new.start_line is not None
        try:
            pr.create_review_comment(new.body, head_sha, new.path, line=new.line, side="RIGHT",
                                     start_line=new.start_line if new.start_line is not None else NotSet,
                                     start_side="RIGHT" if multi else NotSet)
            result.created += 1
        except GithubException as exc:
            result.failures.append(f"review comment on {new.path}:{new.line}: {_describe(exc)}")
    return result
