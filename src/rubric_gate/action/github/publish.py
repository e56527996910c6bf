"""Where a run's decision goes: the sticky comment, the check run (or a commit status), repair
suggestions, and this job's files (the JSON and HTML reports, comment.md for the fork pattern,
the step outputs and the job summary)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from github import GithubException
from github.Repository import Repository

from rubric_gate.action.commits.merge_check import MergeFinding
from rubric_gate.action.config import ActionConfig
from rubric_gate.action.decide import Decision
from rubric_gate.action.event import PullRequest
from rubric_gate.action.gating.outcome import RubricOutcome
from rubric_gate.action.github.checks import (
    SUMMARY_LIMIT,
    CheckRecord,
    annotations_for,
    publish_check,
)
from rubric_gate.action.github.client import describe
from rubric_gate.action.github.comment import upsert_comment
from rubric_gate.action.github.outputs import append_summary, command, write_outputs
from rubric_gate.action.render import RunSummary, fit, render_body
from rubric_gate.report import write_html_report
from rubric_gate.trust.differences import Difference

FORK_DOCS = "see docs/action.md, 'Fork pull requests', for the two-workflow pattern that comments on forks"
WHERE = "the job summary and the JSON report"


def post(config: ActionConfig, repo: Repository, pr: PullRequest, summary: RunSummary, decision: Decision, *,
         repairs: bool = True) -> tuple[str, list[str]]:
    """The comment, the check run and (with `repairs`) suggestions on GitHub. Returns the comment's
    body and what could not be posted, one notice each (also printed as warnings)."""
    posted_notices: list[str] = []
    body = fit(render_body(summary), where=WHERE)
    if config.comment and not pr.merge_group:  # a merge group has no conversation to comment on
        result = upsert_comment(repo, pr.number, body, create=bool(summary.outcomes or summary.standard))
        if result.action in ("forbidden", "failed"):
            why = ("this PR comes from a fork, whose token is read-only" if pr.is_fork
                   else "the token may not write pull request comments (needs `pull-requests: write`)")
            posted_notices.append(f"No PR comment was posted: {why} ({result.detail}); {FORK_DOCS}.")
    record = CheckRecord(pr.base_sha, pr.number if not pr.merge_group else None)
    check = publish_check(repo, pr.head_sha, decision.conclusion, decision.title,
                          fit(render_body(summary), SUMMARY_LIMIT, WHERE, unit="bytes"),
                          annotations_for(summary.outcomes) + _audit_annotations(summary.outcomes), summary.run_url,
                          record)
    if repairs and not pr.merge_group:
        posted_notices.extend(_post_repairs(repo, pr, summary.outcomes))
    if check.kind == "none":
        posted_notices.append(f"No check run or commit status was posted: {check.detail}.")
    elif check.detail:
        command("notice", check.detail)
    for notice in posted_notices:
        command("warning", notice)
    return body, posted_notices


def write_report(config: ActionConfig, pr: PullRequest, summary: RunSummary, source: str,
                 differences: Sequence[Difference] = ()) -> Path:
    """report.json (its schema: schema/report.schema.json): the decision, each rubric's outcome,
    the findings the comment lists (`standard`), and every difference the run classified, with
    its kind and rule (`differences`: the diff's, allowed and gated ones too, then the merge's)."""
    config.output_dir.mkdir(parents=True, exist_ok=True)
    path = config.output_dir / "report.json"
    data = {
        "decision": summary.decision,
        "override": summary.override,
        "pull_request": pr.number,
        "base_sha": summary.base_sha,  # the merge base the PR was gated against
        "base_branch_sha": pr.base_sha,
        "head_sha": pr.head_sha,
        "files_from": source,
        "rubrics": [o.to_dict() for o in summary.outcomes],
        "standard": [f.to_dict() for f in summary.standard],
        "differences": [d.to_dict() for d in [*differences, *(f.as_difference() for f in summary.standard
                                                                if isinstance(f, MergeFinding))]],
    }
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    gated = [o for o in summary.outcomes if o.report is not None]
    if gated:  # the charts, for the workflow's artifact upload; the decision is the run's
        write_html_report(config.output_dir / "report.html", [o.report for o in gated if o.report is not None],
                          decision=summary.decision, failures=[o.failures for o in gated],
                          run_failures=[f"{f.path}: {f.message}" for f in summary.standard if f.blocking])
    return path


def write_job_files(config: ActionConfig, pr: PullRequest, summary: RunSummary, report_path: Path, body: str,
                    posted_notices: list[str]) -> None:
    """comment.md and pr.json (for the workflow_run pattern: the comment a privileged workflow posts
    for a fork PR, without this run's "no comment was posted" notices, which would be wrong there),
    the job summary (with them) and the step outputs."""
    summary.notices.extend(posted_notices)
    full = render_body(summary)
    (config.output_dir / "comment.md").write_text(body, encoding="utf-8")
    (config.output_dir / "pr.json").write_text(json.dumps({"number": pr.number, "head_sha": pr.head_sha}) + "\n",
                                               encoding="utf-8")
    append_summary(config.summary_file, full.replace(f"{full.splitlines()[0]}\n", "", 1))
    write_outputs(config.output_file, {
        "decision": summary.decision,
        "report": _relative(report_path, config.workspace),
        "comment": _relative(config.output_dir / "comment.md", config.workspace),
    })


def nothing_to_do(config: ActionConfig, message: str, code: int, *, skipped: bool = False) -> int:
    """A run that gates nothing: `skipped` for an event the action does not gate (no result at
    all, so a downstream step cannot read it as a pass), else the head's standing result repeated."""
    command("notice", message)
    append_summary(config.summary_file, f"rubric-gate: {message}.")
    decision = "skipped" if skipped else "pass" if code == 0 else "fail"
    write_outputs(config.output_file, {"decision": decision, "report": "", "comment": ""})
    return code


def _audit_annotations(outcomes: list[RubricOutcome]) -> list[dict]:
    audited = [(o.file.path, o.audit_report) for o in outcomes if o.audit_report is not None]
    if not audited:
        return []
    from rubric_gate.audit import audit_annotations

    return audit_annotations(audited)


def _post_repairs(repo: Repository, pr: PullRequest, outcomes: list[RubricOutcome]) -> list[str]:
    """Suggestion review comments for accepted rewrites: created once, edited on the next push."""
    suggestions = [s for o in outcomes if o.repair_report is not None for s in o.repair_report.suggestions]
    if not suggestions:
        return []
    from rubric_gate.action.github.comment import is_own, token_login
    from rubric_gate.repair.github_review import post_repair_suggestions

    try:
        login = token_login(repo)
        result = post_repair_suggestions(repo.get_pull(pr.number), pr.head_sha, suggestions,
                                         is_own=lambda comment: is_own(comment, login))
    except GithubException as exc:
        return [f"No repair suggestion was posted as a review comment ({describe(exc)}); they are in this comment."]
    return [f"A repair suggestion could not be posted: {failure}." for failure in result.failures]


def _relative(path: Path, workspace: Path) -> str:
    try:
        return str(path.relative_to(workspace))
    except ValueError:
        return str(path)
