"""The `rubric-gate` check run with annotations; a commit status where check runs are refused."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from github import GithubException
from github.CommitStatus import CommitStatus
from github.GithubObject import NotSet
from github.PaginatedList import PaginatedList
from github.Repository import Repository

from rubric_gate.action.decide import PostedResult
from rubric_gate.action.gating.outcome import RubricOutcome
from rubric_gate.action.github.client import describe, is_forbidden
from rubric_gate.action.github.comment import by_token, token_login

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


@dataclass(frozen=True)
class CheckRecord:
    """What a check run records in its `external_id`: the base tip it was gated against and the
    PR whose run posted it. Read back only to repeat a failure (`latest_result`), which can only
    make the gate stricter: any workflow of the repository writes check runs as the app this one
    writes as, so a record never excuses anything. Older runs wrote an `override` field; it is
    read as nothing (an override rests on GitHub's own records, `action.github.override`)."""

    base_sha: str
    pull: int | None = None

    def external_id(self) -> str:
        return " ".join([f"base:{self.base_sha}", *([f"pr:{self.pull}"] if self.pull is not None else [])])

    @classmethod
    def parse(cls, external_id: str | None) -> CheckRecord | None:
        fields = (external_id or "").split(" ")
        if not fields[0].startswith("base:"):
            return None
        pulls = [f[3:] for f in fields[1:] if f.startswith("pr:") and f[3:].isdigit()]
        return cls(fields[0][5:], int(pulls[0]) if pulls else None)


def publish_check(repo: Repository, head_sha: str, conclusion: str, title: str, summary: str,
                  annotations: list[dict[str, Any]], target_url: str | None, record: CheckRecord) -> CheckResult:
    batches = [annotations[i:i + ANNOTATIONS_PER_REQUEST] for i in range(0, len(annotations), ANNOTATIONS_PER_REQUEST)] or [[]]
    output: dict[str, Any] = {"title": title, "summary": _cut_bytes(summary, SUMMARY_LIMIT), "annotations": batches[0]}
    external_id = record.external_id()
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
            state, target_url=target_url or NotSet, description=_status_description(title, record.base_sha),
            context=CHECK_NAME
        )
        return CheckResult("status", f"check runs refused ({refused}); posted a commit status instead")
    except GithubException as exc:
        return CheckResult("none", f"check run refused ({refused}); commit status refused ({describe(exc)})")


def _own_runs(repo: Repository, head_sha: str) -> list[Any]:
    """The head's latest `rubric-gate` check runs that the workflow token's app wrote, newest
    first (as branch protection reads them)."""
    runs = repo.get_commit(head_sha).get_check_runs(check_name=CHECK_NAME)
    return sorted((r for r in runs if r.app is not None and r.app.slug == "github-actions"), key=lambda r: -r.id)


def latest_result(repo: Repository, head_sha: str) -> PostedResult | None:
    """The head's last `rubric-gate` result: its latest check run (the one branch protection
    reads), else the latest commit status this token posted; None when it has none or it cannot
    be read. Only the workflow token's app writes these runs."""
    try:
        runs = _own_runs(repo, head_sha)
        if runs:
            latest = runs[0]
            record = CheckRecord.parse(latest.external_id)
            return PostedResult(latest.status == "completed" and latest.conclusion in ("success", "neutral"),
                                record.base_sha if record else None)
        login: list[str | None] = []  # the token's user, read once, at the first status of this name
        for status in _statuses(repo, head_sha):  # newest first
            if status.context == CHECK_NAME:
                login = login or [token_login(repo)]
                if not by_token(status.creator.login if status.creator is not None else None, login[0]):
                    continue  # anyone with write access can post a status of this name: not the gate's result
                description = status.description or ""
                base = description.rsplit(_BASE_MARK, 1)[1] if _BASE_MARK in description else None
                return PostedResult(status.state == "success", base)
    except GithubException:
        return None
    return None


def _statuses(repo: Repository, sha: str) -> PaginatedList[CommitStatus]:
    """List commit statuses for a reference: `GET /repos/{owner}/{repo}/commits/{ref}/statuses`,
    newest first. PyGithub's `Commit.get_statuses()` reads `/statuses/{sha}`, which GitHub's REST
    description has for POST (create a status) only."""
    return PaginatedList(CommitStatus, repo.requester, f"{repo.url}/commits/{sha}/statuses", None)


_BASE_MARK = " · base "


def _status_description(title: str, base_sha: str) -> str:
    """A commit status has no external_id: its description ends with the base tip it was gated against."""
    suffix = f"{_BASE_MARK}{base_sha}"
    return title[:STATUS_DESCRIPTION_LIMIT - len(suffix)] + suffix
