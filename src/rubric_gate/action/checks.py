"""The `rubric-gate` check run with annotations; a commit status where check runs are refused."""

from __future__ import annotations

from collections.abc import Callable
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
OVERRIDDEN = " (overridden)"  # ends the title of a result an override label turned into a pass


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


def gated_against(base_sha: str) -> str:
    """The check run's `external_id`: the base tip its result was gated against."""
    return f"base:{base_sha}"


def publish_check(repo: Repository, head_sha: str, conclusion: str, title: str, summary: str,
                  annotations: list[dict[str, Any]], target_url: str | None, base_sha: str = "") -> CheckResult:
    batches = [annotations[i:i + ANNOTATIONS_PER_REQUEST] for i in range(0, len(annotations), ANNOTATIONS_PER_REQUEST)] or [[]]
    output: dict[str, Any] = {"title": title, "summary": _cut_bytes(summary, SUMMARY_LIMIT), "annotations": batches[0]}
    external_id = gated_against(base_sha)
    try:
        if conclusion == "pending":  # batches still judging: neither pass nor fail until collected
            run = repo.create_check_run(CHECK_NAME, head_sha, status="in_progress", output=output,
                                        external_id=external_id)
        else:
            run = repo.create_check_run(CHECK_NAME, head_sha, status="completed", conclusion=conclusion, output=output,
                                        external_id=external_id)
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
            state, target_url=target_url or NotSet, description=_status_description(title, base_sha),
            context=CHECK_NAME
        )
        return CheckResult("status", f"check runs refused ({refused}); posted a commit status instead")
    except GithubException as exc:
        return CheckResult("none", f"check run refused ({refused}); commit status refused ({describe(exc)})")


def standing_exit_code(repo: Repository, head_sha: str, base_sha: str,
                       still_overridden: Callable[[], bool] = lambda: True) -> int | None:
    """The exit code the head's last `rubric-gate` result stands for (0 for a completed success or
    neutral check run or a success status, 1 for anything else), None when the head has none that
    still holds.

    For an event that changes nothing the gate decides: its job's status (which a required
    check may name) repeats the head's result instead of passing bare, e.g. after the run of
    a push was cancelled by the next event. Only the workflow token's app writes these runs.
    A result holds only as what it was computed under: gated against `base_sha`, the base tip
    now (a retarget, or a merge into the base, whose run this very event may have cancelled),
    and, for a pass an override gave, while `still_overridden()` (its label is on: the
    `unlabeled` run may have been cancelled). A commit status records the base in its description.
    """
    try:
        commit = repo.get_commit(head_sha)
        runs = [r for r in commit.get_check_runs(check_name=CHECK_NAME)
                if r.app is not None and r.app.slug == "github-actions"]
        if runs:
            latest = max(runs, key=lambda r: r.id)
            passed = latest.status == "completed" and latest.conclusion in ("success", "neutral")
            title = (latest.output.title if latest.output is not None else None) or ""
            return _standing(passed, latest.external_id == gated_against(base_sha), title, still_overridden)
        for status in commit.get_statuses():  # newest first
            if status.context == CHECK_NAME:
                description = status.description or ""
                return _standing(status.state == "success", description == _status_description(
                    description.rsplit(_BASE_MARK, 1)[0], base_sha), description, still_overridden)
    except GithubException:
        return None
    return None


_BASE_MARK = " · base "


def _status_description(title: str, base_sha: str) -> str:
    """A commit status has no external_id: its description ends with the base tip it was gated against."""
    suffix = f"{_BASE_MARK}{base_sha}"
    return title[:STATUS_DESCRIPTION_LIMIT - len(suffix)] + suffix


def _standing(passed: bool, same_base: bool, title: str, still_overridden: Callable[[], bool]) -> int | None:
    if not same_base or (passed and OVERRIDDEN in title and not still_overridden()):
        return None  # gate the head again
    return 0 if passed else 1

