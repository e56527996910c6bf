"""Plan the PR review comments that carry repair suggestions: one per (file, check), posted once,
edited in place on the next push, never duplicated.

Pure logic: the action lists its own existing review comments (author checked as for the
sticky comment), calls `plan_review_comments`, and carries out the plan with the GitHub API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rubric_gate.repair.hunks import Hunk, hunk_holding
from rubric_gate.repair.model import RepairSuggestion
from rubric_gate.repair.render import REVIEW_MARKER, review_marker, suggestion_comment_body


@dataclass(frozen=True)
class ExistingComment:
    """A review comment already on the PR, written by this action."""

    id: int
    body: str
    path: str
    line: int | None  # None when GitHub marks the comment outdated
    start_line: int | None = None


@dataclass(frozen=True)
class NewComment:
    body: str
    path: str
    line: int  # last line of the check's entry (GitHub's `line`, side RIGHT)
    start_line: int | None  # first line, when the entry spans several (GitHub's `start_line`)


@dataclass
class ReviewPlan:
    create: list[NewComment] = field(default_factory=list)
    update: list[tuple[int, str]] = field(default_factory=list)  # (comment id, new body)
    delete: list[int] = field(default_factory=list)  # ids of comments whose check moved (re-created)
    # Suggestions whose lines no single diff hunk holds: GitHub would refuse them (422), so they
    # stay in the sticky comment, with why.
    unplaced: list[tuple[RepairSuggestion, str]] = field(default_factory=list)


def stale_body(marker: str) -> str:
    return f"{marker}\n*rubric-gate:* this repair suggestion no longer applies (the check was changed or now passes the gate).\n"


def unplaced_body(marker: str) -> str:
    return (f"{marker}\n*rubric-gate:* this repair suggestion is now in the rubric-gate comment: its lines "
            "are no longer inside one hunk of the diff, where GitHub places suggestions.\n")


def _why_unplaced(s: RepairSuggestion, hunks: Sequence[Hunk]) -> str:
    span = f"lines {s.start_line}-{s.end_line}" if s.start_line != s.end_line else f"line {s.end_line}"
    if not hunks:
        return f"{s.path} is not in the PR's diff at {span}"
    covered = ", ".join(f"{a}-{b}" for a, b in hunks[:5]) + (", ..." if len(hunks) > 5 else "")
    return f"{span} of {s.path} are not inside one diff hunk (the diff shows lines {covered})"


def best_per_check(suggestions: Sequence[RepairSuggestion]) -> list[RepairSuggestion]:
    """One suggestion per check for the review comment: the least blame, then the smallest edit,
    then the most credit (the sticky comment lists the others)."""
    best: dict[tuple[str | None, str], RepairSuggestion] = {}
    for s in suggestions:
        key = (s.path, s.check)
        rank = (sum(r.blame for r in s.rows), len(s.rows), -sum(r.credit for r in s.rows))
        current = best.get(key)
        if current is None or rank < (sum(r.blame for r in current.rows), len(current.rows),
                                      -sum(r.credit for r in current.rows)):
            best[key] = s
    return list(best.values())


def _marker_of(body: str) -> str | None:
    first = body.split("\n", 1)[0]
    return first if first.startswith(REVIEW_MARKER) else None


def plan_review_comments(existing: Sequence[ExistingComment], suggestions: Sequence[RepairSuggestion],
                         hunks: Mapping[str, Sequence[Hunk]] | None = None) -> ReviewPlan:
    """`hunks`: each path's head-side diff hunks; a suggestion must fit inside one to be posted
    (None: every line is placeable, for callers that checked already)."""
    plan = ReviewPlan()
    moved: set[str] = set()
    by_marker: dict[str, ExistingComment] = {}
    for comment in existing:
        marker = _marker_of(comment.body)
        if marker is None:
            continue
        if marker in by_marker:  # a duplicate left by an earlier failure: keep the first
            plan.delete.append(comment.id)
            continue
        by_marker[marker] = comment
    wanted: set[str] = set()
    for s in best_per_check(suggestions):
        if s.path is None or s.start_line is None or s.end_line is None:
            continue  # no lines to attach to: the sticky comment still shows it
        marker = review_marker(s.path, s.check)
        if hunks is not None and hunk_holding(hunks.get(s.path, ()), s.start_line, s.end_line) is None:
            plan.unplaced.append((s, _why_unplaced(s, hunks.get(s.path, ()))))
            moved.add(marker)
            continue
        wanted.add(marker)
        body = suggestion_comment_body(s)
        start = s.start_line if s.start_line < s.end_line else None
        current = by_marker.get(marker)
        if current is not None and current.path == s.path and current.line == s.end_line \
                and current.start_line == start:
            if current.body != body:
                plan.update.append((current.id, body))
            continue
        if current is not None:
            plan.delete.append(current.id)  # moved or outdated: a review comment cannot be moved
        plan.create.append(NewComment(body, s.path, s.end_line, start))
    for marker, comment in by_marker.items():
        body = unplaced_body(marker) if marker in moved else stale_body(marker)
        if marker not in wanted and comment.body != body:
            plan.update.append((comment.id, body))
    return plan
