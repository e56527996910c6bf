"""The `rubric-gate` check run with annotations; a commit status where check runs are refused."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from github import GithubException
from github.GithubObject import NotSet
from github.Repository import Repository

from rubric_gate.action.client import describe, is_forbidden
from rubric_gate.action.gate_file import RubricOutcome

CHECK_NAME = "rubric-gate"
ANNOTATIONS_PER_REQUEST = 50  # the Checks API limit
SUMMARY_LIMIT = 65535  # check run output.summary and output.text limit, in UTF-8 bytes
ANNOTATION_MESSAGE_BYTES = 60_000  # annotations[].message: "The maximum size is 64 KB"
ANNOTATION_TITLE_LIMIT = 255  # annotations[].title, characters
STATUS_DESCRIPTION_LIMIT = 140  # "description is too long (maximum is 140 characters)"


@dataclass(frozen=True)
class CheckResult:
    kind: str  # check_run | status | none
    detail: str | None = None
    url: str | None = None


def _cut_bytes(text: str, limit: int) -> str:
    return text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")


def annotations_for(outcomes: list[RubricOutcome]) -> list[dict[str, Any]]:
    """One failure annotation per rejected change, on the check's line in the head YAML."""
    out: list[dict[str, Any]] = []
    for outcome in outcomes:
        if outcome.report is None or outcome.head is None:
            continue
        lines = outcome.head.check_lines
        fallback = min(lines.values(), default=1) or 1
        for change in outcome.report.changes:
            if change.accepted:
                continue
            line = lines.get(change.check) or fallback
            out.append({
                "path": outcome.file.path,
                "start_line": line,
                "end_line": line,
                "annotation_level": "failure",
                "title": f"rubric-gate rejected the {change.change} check '{change.check}'"[:ANNOTATION_TITLE_LIMIT],
                "message": _cut_bytes(change.reason, ANNOTATION_MESSAGE_BYTES),
            })
    return out


def publish_check(repo: Repository, head_sha: str, conclusion: str, title: str, summary: str,
                  annotations: list[dict[str, Any]], target_url: str | None) -> CheckResult:
    batches = [annotations[i:i + ANNOTATIONS_PER_REQUEST] for i in range(0, len(annotations), ANNOTATIONS_PER_REQUEST)] or [[]]
    output: dict[str, Any] = {"title": title, "summary": _cut_bytes(summary, SUMMARY_LIMIT), "annotations": batches[0]}
    try:
        if conclusion == "pending":  # batches still judging: neither pass nor fail until collected
            run = repo.create_check_run(CHECK_NAME, head_sha, status="in_progress", output=output)
        else:
            run = repo.create_check_run(CHECK_NAME, head_sha, status="completed", conclusion=conclusion, output=output)
        for batch in batches[1:]:  # later batches are appended by updating the run
            run.edit(output={"title": title, "summary": output["summary"], "annotations": batch})
        return CheckResult("check_run", url=run.html_url)
    except GithubException as exc:
        if not is_forbidden(exc):
            return CheckResult("none", f"check run failed: {describe(exc)}")
        refused = describe(exc)
    state = "pending" if conclusion == "pending" else "success" if conclusion in ("success", "neutral") else "failure"
    try:
        repo.get_commit(head_sha).create_status(
            state, target_url=target_url or NotSet, description=title[:STATUS_DESCRIPTION_LIMIT], context=CHECK_NAME
        )
        return CheckResult("status", f"check runs refused ({refused}); posted a commit status instead")
    except GithubException as exc:
        return CheckResult("none", f"check run refused ({refused}); commit status refused ({describe(exc)})")


def standing_exit_code(repo: Repository, head_sha: str) -> int | None:
    """The exit code the head's last `rubric-gate` result stands for (0 for a completed success or
    neutral check run or a success status, 1 for anything else), None when the head has none.

    For an event that changes nothing the gate decides: its job's status (which a required
    check may name) repeats the head's result instead of passing bare, e.g. after the run of
    a push was cancelled by the next event. Only the workflow token's app writes these runs.
    """
    try:
        commit = repo.get_commit(head_sha)
        runs = [r for r in commit.get_check_runs(check_name=CHECK_NAME)
                if r.app is not None and r.app.slug == "github-actions"]
        if runs:
            latest = max(runs, key=lambda r: r.id)
            return 0 if latest.status == "completed" and latest.conclusion in ("success", "neutral") else 1
        for status in commit.get_statuses():  # newest first
            if status.context == CHECK_NAME:
                return 0 if status.state == "success" else 1
    except GithubException:
        return None
    return None
