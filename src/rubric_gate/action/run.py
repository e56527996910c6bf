"""`rubric-gate action`: gate a pull request's rubric edits and report where reviewers look."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from github import GithubException
from github.Repository import Repository

from rubric_gate.action.cache import VerdictCache
from rubric_gate.action.changed import (
    ChangedFile,
    changed_via_git,
    changed_via_rest,
    merge_base_via_git,
    merge_base_via_rest,
    rubric_changes,
    unmatched_globs,
)
from rubric_gate.action.checks import (
    OVERRIDDEN,
    SUMMARY_LIMIT,
    annotations_for,
    publish_check,
    standing_exit_code,
)
from rubric_gate.action.client import connect, describe
from rubric_gate.action.comment import upsert_comment
from rubric_gate.action.config import ActionConfig, load_config
from rubric_gate.action.event import GATED_EVENTS, SHA, PullRequest, gate_target, load_event
from rubric_gate.action.gate_file import GateSettings, RubricOutcome, gate_file
from rubric_gate.action.judging import (
    SECRET_VARIABLES,
    CallBudget,
    JudgeBackend,
    load_backend,
    secret_values,
)
from rubric_gate.action.outputs import append_summary, command, write_outputs
from rubric_gate.action.override import check_override, label_on
from rubric_gate.action.pairing import pair_rewrites
from rubric_gate.action.render import RunSummary, fit, render_body
from rubric_gate.action.snapshot import Snapshots, load_snapshots
from rubric_gate.action.sources import FileReader, GitReader, RestReader, has_commit, is_shallow
from rubric_gate.action.standard import StandardFinding, gate_standard
from rubric_gate.action.warm import warm_cache
from rubric_gate.action.workspace import OUTPUT_NAMES, check_output_location, check_untracked
from rubric_gate.batch import DEFAULT_POLL_INTERVAL_S
from rubric_gate.errors import (
    EXIT_BAD_INPUT,
    EXIT_GATE_FAILED,
    EXIT_PASS,
    InputError,
    RubricGateError,
)
from rubric_gate.guard import JudgedKey
from rubric_gate.report import write_html_report
from rubric_gate.service import GateRequest, RequestError
from rubric_gate.tuning import env_number

FORK_DOCS = "see docs/action.md, 'Fork pull requests', for the two-workflow pattern that comments on forks"


def run_action(env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    config = load_config(env)
    for secret in [config.token, *secret_values(dict(env))]:
        if secret:
            command("add-mask", secret)
    # The verdict cache's index lives beside it, so actions/cache keeps both (it is checked
    # against the file's bytes before use, so a stale one is only rebuilt).
    os.environ.setdefault("RUBRIC_GATE_INDEX_DIR", str(config.cache_dir / "index"))
    if config.event_name == "push":
        return warm_cache(config, env)
    if config.event_name not in GATED_EVENTS:
        return _nothing_to_do(config, f"rubric-gate gates pull requests; nothing to do for a `{config.event_name}` event")
    pr, unchanged = gate_target(config.event_name, load_event(config.event_path), str(config.event_path),
                                config.override_label)
    if unchanged and config.token:
        # Nothing the gate decides changed: the head's last result stands (and this job repeats
        # it); a head with none (its run cancelled) is gated now.
        repo = connect(config.token, config.api_url, config.repository)
        standing = standing_exit_code(repo, pr.head_sha, _current_base(repo, pr).base_sha,
                                      lambda: label_on(repo, pr, config.override_label))
        if standing is not None:
            return _nothing_to_do(config, f"nothing to re-gate: {unchanged}; the head's last rubric-gate result "
                                  "stands", standing)
    # Cleaned before its files are checked: a refused run leaves nothing for the upload step.
    check_output_location(config.output_dir, config.workspace, config.cache_dir)
    _clear_output_dir(config.output_dir, config.workspace)
    check_untracked(config.output_dir, config.workspace, config.cache_dir)
    if not config.token:
        raise InputError("input github_token", "empty: pass `github_token: ${{ github.token }}`")
    repo = connect(config.token, config.api_url, config.repository)
    started = time.monotonic()
    cache = VerdictCache(config.cache_dir)
    for warning in cache.warnings:
        command("warning", warning)
    budget = CallBudget(config.max_judge_calls)  # per run, shared by every rubric (and every base)
    notices: list[str] = []
    gated = _gate_pull(config, repo, pr, cache, budget, notices)
    pr, reader, outcomes, standard = gated.pr, gated.reader, gated.outcomes, gated.standard
    summary = RunSummary("pass", outcomes, pr.head_sha, gated.merge_base, run_url=_run_url(env),
                         base_branch_sha=pr.base_sha, standard=standard, notices=notices)
    if reader.kind == "rest" and gated.changes:
        command("notice", "the checkout has no PR history (shallow clone): read files through the GitHub API")
    for finding in standard:
        command("error" if finding.blocking else "notice", f"{finding.path}: {finding.message}")

    errors = [o for o in outcomes if o.error is not None]
    failing = gated.failing
    if failing:
        override = check_override(repo, pr, config.override_label)
        if override is not None and override.granted and errors:
            summary.notices.append(f"The override does not apply: {override.text}, but {len(errors)} rubric file(s) "
                                   "could not be gated (invalid input). Fix the input; an override only covers "
                                   "changes the gate rejected.")
        elif override is not None and override.granted:
            summary.override = override.text
            for outcome in failing:
                if isinstance(outcome, RubricOutcome):
                    outcome.override = override.text  # e.g. a deletion, which has no gate report
                    if outcome.report is not None:
                        outcome.report.override = override.text
        elif override is not None:
            summary.notices.append(f"Override refused: {override.text}.")
    # The check run (and this job's status) belong to the head commit, not to this PR: a green
    # one would satisfy the required check of every PR with this head, whatever its base.
    elsewhere = _failing_elsewhere(config, repo, pr, cache, budget)
    summary.notices.extend(elsewhere)
    summary.decision = run_decision(failing=bool(failing), errors=bool(errors), overridden=bool(summary.override),
                                    pending=any(o.pending for o in outcomes), failing_elsewhere=bool(elsewhere))
    exit_code = _exit_code(config, summary.decision, bool(errors))

    report_path = _write_report(config, pr, summary, reader.kind)
    _publish(config, repo, pr, summary, exit_code, report_path)
    elapsed = time.monotonic() - started
    print(f"rubric-gate: {summary.decision} ({len(outcomes)} rubric file(s), {elapsed:.1f}s)", flush=True)
    return exit_code


@dataclass
class GatedPull:
    """One pull request's rubric edits gated against its base: what the run decides on."""

    pr: PullRequest  # with its base branch's tip as the API has it now
    reader: FileReader
    merge_base: str
    changes: list[ChangedFile]
    outcomes: list[RubricOutcome]
    standard: list[StandardFinding]

    @property
    def failing(self) -> list[RubricOutcome | StandardFinding]:
        return [o for o in self.outcomes if not o.passed and not o.pending] + [f for f in self.standard if f.blocking]


def run_decision(*, failing: bool, errors: bool, overridden: bool, pending: bool, failing_elsewhere: bool) -> str:
    """pass, fail or pending. An override covers what the gate rejected in this PR, never an input
    error and never another PR with the same head (the commit's check is shared with it)."""
    if errors or failing_elsewhere or (failing and not overridden):
        return "fail"
    return "pending" if pending else "pass"


def _gate_pull(config: ActionConfig, repo: Repository, pr: PullRequest, cache: VerdictCache, budget: CallBudget,
               notices: list[str]) -> GatedPull:
    pr = _current_base(repo, pr)
    reader, files, gate_base = _detect(config, repo, pr)
    return gate_changes(config, pr, reader, files, gate_base, cache, budget, notices)


def gate_changes(config: ActionConfig, pr: PullRequest, reader: FileReader, files: list[ChangedFile], gate_base: str,
                 cache: VerdictCache, budget: CallBudget, notices: list[str], *,
                 rubric_judges: bool = True) -> GatedPull:
    """Gate a PR's changed files from git facts alone (no GitHub call): the action's run, and
    `rubric-gate preview` on a laptop. `rubric_judges` False ignores the rubrics' own `judge`
    keys (an offline preview calls no model it was not given)."""
    # What the base branch vouches for (the merge base and its tip) and what the PR proposes.
    snapshots = load_snapshots(reader, gate_base, pr.base_sha, pr.head_sha, files)
    missing = unmatched_globs(sorted(set(snapshots.merge_base.paths()) | set(snapshots.head.paths())),
                              config.rubric_globs)
    if missing:
        raise InputError("input rubrics", f"{', '.join(repr(g) for g in missing)} matches no file in the repository; "
                         "fix the glob (a typo would otherwise pass every PR unchecked)")
    changes = pair_rewrites(rubric_changes(files, config.rubric_globs), snapshots, config.rubric_globs)
    outcomes, judged = (_gate_all(config, changes, snapshots, cache, budget, notices, rubric_judges)
                        if changes else ([], {}))
    standard = gate_standard(snapshots, config.rubric_globs, changes, judged)
    return GatedPull(pr, reader, gate_base, changes, outcomes, standard)


def _same_head_pulls(repo: Repository, pr: PullRequest) -> list[PullRequest]:
    """The other open pull requests whose head is this run's head commit (a branch proposed into
    two bases, or two branches at one commit). A merge group's head is its own commit."""
    if pr.merge_group:
        return []
    try:
        pulls = [p for p in repo.get_pulls(state="open") if p.head.sha == pr.head_sha and p.number != pr.number]
        return [PullRequest(number=p.number, base_sha=p.base.sha, head_sha=pr.head_sha, base_repo=pr.base_repo,
                            head_repo=p.head.repo.full_name if p.head.repo is not None else None, labels=(),
                            html_url=p.html_url or "") for p in pulls]
    except GithubException as exc:
        raise InputError(f"pull request #{pr.number}", "cannot list the open pull requests with its head through "
                         f"the API ({describe(exc)}): the check on {pr.head_sha[:7]} is read by each of them") from None


def _failing_elsewhere(config: ActionConfig, repo: Repository, pr: PullRequest, cache: VerdictCache,
                       budget: CallBudget) -> list[str]:
    """Why the head fails as proposed by another open PR into another base (one line each). Each is
    gated here as its own run would gate it, since this run's check lands on the commit they share."""
    out = []
    for other in _same_head_pulls(repo, pr):
        if other.base_sha == pr.base_sha:
            continue  # the same base tip: the same decision as this PR's
        where = f"#{other.number} (base {other.base_sha[:7]})"
        try:
            gated = _gate_pull(config, repo, other, cache, budget, [])
        except RubricGateError as exc:
            out.append(f"This head is also proposed by {where}, which cannot be gated ({exc.message}); the "
                       "`rubric-gate` check belongs to the commit both PRs share, so it fails here too.")
            continue
        if gated.failing:
            what = "; ".join(f"{f.file.path}: {_why(f)}" if isinstance(f, RubricOutcome) else f"{f.path}: {f.message}"
                             for f in gated.failing[:5])
            out.append(f"This head is also proposed by {where}, where the gate fails ({what}); the `rubric-gate` "
                       "check belongs to the commit both PRs share, so it fails here too (propose a head into one "
                       "base at a time).")
    return out


def _why(outcome: RubricOutcome) -> str:
    if outcome.error is not None:
        return outcome.error
    rejected = [f"{c.change} {c.check}" for c in (outcome.report.changes if outcome.report else []) if not c.accepted]
    return "; ".join([*(f"rejected {r}" for r in rejected), *outcome.failures]) or "failed"


def _current_base(repo: Repository, pr: PullRequest) -> PullRequest:
    """The PR with its base branch's tip as the API has it now: a re-run replays the payload of
    its first run, whose base sha is stale once the base branch moved (another PR merged)."""
    if pr.merge_group:
        return pr  # the group's base is the commit it was built on
    try:
        base_sha = repo.get_pull(pr.number).base.sha
    except GithubException as exc:
        raise InputError(f"pull request #{pr.number}", f"cannot read its base branch through the API "
                         f"({describe(exc)})") from None
    if not isinstance(base_sha, str) or not SHA.fullmatch(base_sha) or base_sha == pr.base_sha:
        return pr
    command("notice", f"the base branch moved since this event ({pr.base_sha[:7]} -> {base_sha[:7]}): "
            "gated against its tip now")
    return replace(pr, base_sha=base_sha)


def _nothing_to_do(config: ActionConfig, message: str, code: int = EXIT_PASS) -> int:
    command("notice", message)
    append_summary(config.summary_file, f"rubric-gate: {message}.")
    write_outputs(config.output_file, {"decision": "pass" if code == EXIT_PASS else "fail", "report": ""})
    return code


def _clear_output_dir(output_dir: Path, workspace: Path) -> None:
    """Remove whatever the checkout put where this run writes (a PR can commit `.rubric-gate/`).

    A committed symlink would have the report written through it to any file, or have the
    artifact upload follow it (e.g. to `.git/config`, which holds the checkout's token); a
    committed `verdicts/` file would pass for verdicts judged in this run. Symlinks anywhere
    under the output directory and the action's own output names are removed.
    """
    try:
        inside = output_dir.relative_to(workspace)
    except ValueError:
        inside = None
    if inside is not None:
        current = workspace
        for part in inside.parts[:-1]:
            current = current / part
            if current.is_symlink():
                raise InputError(f"input output_dir ({inside})", f"'{current.relative_to(workspace)}' is a symlink in the checkout")
    if output_dir.is_symlink():
        output_dir.unlink()
    if not output_dir.is_dir():
        return
    removed = 0
    if output_dir != workspace:
        for path in sorted(output_dir.rglob("*"), reverse=True):
            if path.is_symlink():
                path.unlink()
                removed += 1
    for name in OUTPUT_NAMES:
        path = output_dir / name
        if path.is_symlink() or path.is_file():
            path.unlink()
            removed += 1
        elif path.is_dir():
            shutil.rmtree(path)
            removed += 1
    if removed:
        command("warning", f"removed {removed} file(s) the checkout had under {output_dir.name}/ (a PR may not provide the action's output)")


def _detect(config: ActionConfig, repo: Repository, pr: PullRequest) -> tuple[FileReader, list[ChangedFile], str]:
    """The reader, the PR's changed files and its merge base: the commit the PR is gated against."""
    unrelated = (f"its head {pr.head_sha[:7]} shares no history with its base {pr.base_sha[:7]} (was the base "
                 "branch force-pushed with rewritten history?): rebase the PR onto its base branch")
    if has_commit(config.workspace, pr.base_sha) and has_commit(config.workspace, pr.head_sha):
        try:
            merge_base = merge_base_via_git(config.workspace, pr.base_sha, pr.head_sha)
        except InputError:
            if not is_shallow(config.workspace):
                raise InputError(f"pull request #{pr.number}", unrelated) from None
            # a partial history may lack the merge base: ask the API instead
        else:
            return GitReader(config.workspace), changed_via_git(config.workspace, merge_base, pr.head_sha), merge_base
    if pr.merge_group:  # no PR file list describes a merge group: its history must be checked out
        raise InputError("merge group", f"the checkout lacks {pr.head_sha[:7]} or its parent {pr.base_sha[:7]}: "
                         "check out the merge group with `fetch-depth: 0`")
    try:
        merge_base = merge_base_via_rest(repo, pr.base_sha, pr.head_sha)
    except GithubException as exc:
        # 404: a commit GitHub does not know, or two with no common ancestor.
        hint = "; if the base branch was force-pushed with rewritten history, rebase the PR onto it" \
            if exc.status == 404 else ""
        raise InputError(f"pull request #{pr.number}", f"cannot find the merge base of its head {pr.head_sha[:7]} "
                         f"and base {pr.base_sha[:7]} through the API ({describe(exc)}){hint}") from None
    try:
        return RestReader(repo), changed_via_rest(repo, pr.number, pr.head_sha), merge_base
    except GithubException as exc:
        raise InputError(f"pull request #{pr.number}", f"cannot list its files through the API ({describe(exc)})") from None


def _gate_all(config: ActionConfig, changes: list[ChangedFile], snapshots: Snapshots, cache: VerdictCache,
              budget: CallBudget, notices: list[str],
              rubric_judges: bool = True) -> tuple[list[RubricOutcome], dict[JudgedKey, str]]:
    backends: dict[str, tuple[JudgeBackend | None, str | None]] = {}
    outcomes = []
    judged: dict[JudgedKey, str] = {}
    unjudged: list[str] = []
    for change in changes:
        # The `judge` input wins; else the rubric's own `judge` key; else replay mode.
        own = _rubric_judge(snapshots, change) if rubric_judges else None
        specs = config.judges or tuple(j for j in [own] if j)
        judge, why_not = (None, None)
        for spec in specs:
            if spec not in backends:
                backends[spec] = load_backend(spec)
                if backends[spec][1]:
                    command("warning", str(backends[spec][1]))
        if specs:
            unavailable = [backends[spec][1] for spec in specs if backends[spec][0] is None]
            judge, why_not = (None, str(unavailable[0])) if unavailable else (backends[specs[0]][0], None)
        if not specs and change.status != "removed":
            unjudged.append(change.path)
            if snapshots.head.rubric_keys(change.path).get("judge"):
                notices.append(f"`{change.path}`: the `judge` key this PR adds takes effect once merged; this run "
                               "did not use it (a PR does not choose the judge of its own edit).")
        settings = GateSettings(snapshots=snapshots, trust_pr_verdicts=config.trust_pr_verdicts, judge_unavailable=why_not,
                                request=gate_request(config, specs if judge else ()), budget=budget, cache=cache)
        outcome = gate_file(change, settings)
        outcomes.append(outcome)
        if outcome.judging is not None:  # these pairs were judged live: their recorded answers unused
            judged.update(outcome.judged_pairs)
        for notice in outcome.notices:
            command("notice", f"{change.path}: {notice}")
        if outcome.error:
            command("error", f"{change.path}: {outcome.error}")
    keys = [name for name in SECRET_VARIABLES if os.environ.get(name, "").strip()]
    if unjudged and keys:
        message = (f"{', '.join(keys)} is set, but no judge is configured for {len(unjudged)} rubric file(s), so "
                   "nothing was judged and recorded verdicts were replayed. Set the action's `judge` input "
                   "(e.g. `judge: anthropic:claude-sonnet-4-6`) or the rubric's `judge` key to judge.")
        command("notice", message)
        notices.append(message)
    return outcomes, judged


def gate_request(config: ActionConfig, judges: tuple[str, ...]) -> GateRequest:
    """The action's inputs as the gate service's request; no usable judge: replay (the inputs
    that ask a judge for more answers then have nothing to ask)."""
    try:
        return GateRequest(judges=judges, samples=config.samples if judges else 1,
                           paraphrases=config.paraphrases if judges else 0,
                           min_stability=config.min_stability if judges else None, batch=config.batch and bool(judges),
                           batch_wait_seconds=config.batch_wait * 60,
                           poll_interval=env_number("RUBRIC_GATE_BATCH_POLL_SECONDS", DEFAULT_POLL_INTERVAL_S,
                                                    minimum=0.001),
                           batch_progress=False, concurrency=config.concurrency, rates_rule=config.rates_rule,
                           audit=config.audit, audit_rule=config.audit_rule, suggest_repairs=config.suggest_repairs)
    except RequestError as exc:
        raise InputError(f"input {exc.setting}", exc.message) from None


def _rubric_judge(snapshots: Snapshots, change: ChangedFile) -> str | None:
    """The rubric's own `judge` key: the base's for an edit, so the PR cannot pick the model
    that grades its own edit (a `judge` key it adds takes effect once merged). A new rubric has
    no base: only the `judge` input judges it, never a model (and bill) the PR chose."""
    if change.status == "added":
        return None
    return snapshots.merge_base.rubric_keys(change.base_path).get("judge") or None


def _exit_code(config: ActionConfig, decision: str, errors: bool) -> int:
    if config.fail_on == "never":
        return EXIT_PASS
    if errors:
        return EXIT_BAD_INPUT
    if decision == "fail" and config.fail_on == "rejected":
        return EXIT_GATE_FAILED
    if decision == "pending" and config.fail_on == "rejected":
        return EXIT_GATE_FAILED  # not passed yet: a required job must not go green before the verdict
    return EXIT_PASS


def _run_url(env: Mapping[str, str]) -> str | None:
    server, repo, run_id = env.get("GITHUB_SERVER_URL"), env.get("GITHUB_REPOSITORY"), env.get("GITHUB_RUN_ID")
    return f"{server}/{repo}/actions/runs/{run_id}" if server and repo and run_id else None


def _write_report(config: ActionConfig, pr: PullRequest, summary: RunSummary, source: str) -> Path:
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
    }
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    reports = [o.report for o in summary.outcomes if o.report is not None]
    if reports:  # the charts, for the workflow's artifact upload
        write_html_report(config.output_dir / "report.html", reports)
    return path


def _publish(config: ActionConfig, repo: Repository, pr: PullRequest, summary: RunSummary,
             exit_code: int, report_path: Path) -> None:
    where = "the job summary and the JSON report"
    posted_notices: list[str] = []
    body = fit(render_body(summary), where=where)
    if config.comment and not pr.merge_group:  # a merge group has no conversation to comment on
        result = upsert_comment(repo, pr.number, body, create=bool(summary.outcomes or summary.standard))
        if result.action in ("forbidden", "failed"):
            why = ("this PR comes from a fork, whose token is read-only" if pr.is_fork
                   else "the token may not write pull request comments (needs `pull-requests: write`)")
            posted_notices.append(f"No PR comment was posted: {why} ({result.detail}); {FORK_DOCS}.")
    conclusion = ("pending" if summary.decision == "pending" and exit_code != EXIT_BAD_INPUT
                  else "failure" if exit_code else ("success" if summary.decision == "pass" else "neutral"))
    title = f"rubric-gate: {summary.decision}" + (OVERRIDDEN if summary.override else "")
    check = publish_check(repo, pr.head_sha, conclusion, title,
                          fit(render_body(summary), SUMMARY_LIMIT, where, unit="bytes"),
                          annotations_for(summary.outcomes) + _audit_annotations(summary.outcomes), summary.run_url,
                          pr.base_sha)
    if not pr.merge_group:
        posted_notices.extend(_post_repairs(repo, pr, summary.outcomes))
    if check.kind == "none":
        posted_notices.append(f"No check run or commit status was posted: {check.detail}.")
    elif check.detail:
        command("notice", check.detail)
    for notice in posted_notices:
        command("warning", notice)
    summary.notices.extend(posted_notices)
    full = render_body(summary)
    # For the workflow_run pattern: the comment a privileged workflow posts for a fork PR
    # (without this run's "no comment was posted" notices, which would be wrong there).
    (config.output_dir / "comment.md").write_text(body, encoding="utf-8")
    (config.output_dir / "pr.json").write_text(json.dumps({"number": pr.number, "head_sha": pr.head_sha}) + "\n",
                                               encoding="utf-8")
    append_summary(config.summary_file, full.replace(f"{full.splitlines()[0]}\n", "", 1))
    write_outputs(config.output_file, {
        "decision": summary.decision,
        "report": _relative(report_path, config.workspace),
        "comment": _relative(config.output_dir / "comment.md", config.workspace),
    })


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
    from rubric_gate.action.comment import is_own, token_login
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
