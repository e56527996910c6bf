"""`rubric-gate action`: gate a pull request's rubric edits and report where reviewers look.

One run: gather (the event, the inputs, the PR's changes gated into its base, and the GitHub
facts in `action.gather`), decide (`action.decide`, a pure function of those facts), publish
(`action.publish`). A pass is posted only as of the open PRs with this head just before it is
posted, and checked again after: see `_settle` and `_verify`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

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
from rubric_gate.action.client import connect, describe
from rubric_gate.action.config import ActionConfig, load_config
from rubric_gate.action.decide import Decision, RunFacts, decide, standing_exit_code
from rubric_gate.action.event import GATED_EVENTS, PullRequest, gate_target, load_event
from rubric_gate.action.gate_file import GateSettings, RubricOutcome, gate_file
from rubric_gate.action.gather import (
    HeadRecords,
    SameHead,
    current_base,
    failing_reasons,
    override_reader,
    standing,
)
from rubric_gate.action.judging import (
    SECRET_VARIABLES,
    CallBudget,
    JudgeBackend,
    load_backend,
    secret_values,
)
from rubric_gate.action.outputs import command
from rubric_gate.action.override import Override
from rubric_gate.action.pairing import pair_rewrites
from rubric_gate.action.publish import nothing_to_do, post, write_job_files, write_report
from rubric_gate.action.render import RunSummary
from rubric_gate.action.snapshot import Snapshots, load_snapshots
from rubric_gate.action.sources import FileReader, GitReader, RestReader, has_commit, is_shallow
from rubric_gate.action.standard import StandardFinding, gate_standard
from rubric_gate.action.warm import warm_cache
from rubric_gate.action.workspace import check_output_location, check_untracked, clear_output_dir
from rubric_gate.batch import DEFAULT_POLL_INTERVAL_S
from rubric_gate.errors import EXIT_PASS, InputError
from rubric_gate.guard import JudgedKey
from rubric_gate.service import GateRequest, RequestError
from rubric_gate.tuning import env_number

SETTLE_ROUNDS = 3  # listings of the open PRs with this head that may each change before a pass is refused


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
        return nothing_to_do(config, f"rubric-gate gates pull requests; nothing to do for a `{config.event_name}` event",
                             EXIT_PASS)
    pr, unchanged = gate_target(config.event_name, load_event(config.event_path), str(config.event_path),
                                config.override_label)
    if unchanged and config.token:
        # Nothing the gate decides changed: the head's last result stands (and this job repeats
        # it); a head with none (its run cancelled) is gated now.
        code = standing_exit_code(*standing(connect(config.token, config.api_url, config.repository), pr,
                                            config.override_label))
        if code is not None:
            return nothing_to_do(config, f"nothing to re-gate: {unchanged}; the head's last rubric-gate result "
                                 "stands", code)
    # Cleaned before its files are checked: a refused run leaves nothing for the upload step.
    check_output_location(config.output_dir, config.workspace, config.cache_dir)
    clear_output_dir(config.output_dir, config.workspace)
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

    override_of = override_reader(repo, config.override_label, HeadRecords(repo, pr.head_sha))
    # The check run (and this job's status) belong to the head commit, not to this PR: a green
    # one would satisfy the required check of every PR with this head, whatever its base.
    same_head = SameHead(repo, pr, lambda other: failing_reasons(
        _gate_pull(config, repo, other, cache, budget, []).failing), override_of)
    same_head.refresh()
    facts = RunFacts(config.fail_on, failing=bool(gated.failing), errors=sum(o.error is not None for o in outcomes),
                     pending=any(o.pending for o in outcomes),
                     override=override_of(pr) if gated.failing else None, others=same_head.others)
    refresh = _refresher(same_head, lambda: override_of(pr))
    facts, decision = _settle(facts, refresh)
    _show(summary, gated, decision, notices)
    report_path = write_report(config, pr, summary, reader.kind)
    body, posted = post(config, repo, pr, summary, decision)
    # Checked once more after posting a pass: a PR opened between the last listing and the post
    # has its own run, which may have posted its red first; branch protection reads the latest
    # check run, so a pass that no longer holds is posted again as what it is now.
    facts, verified, _ = _recheck(facts, decision, refresh)
    if verified.decision != decision.decision:
        decision = verified
        _show(summary, gated, decision, notices)
        report_path = write_report(config, pr, summary, reader.kind)
        body, posted_again = post(config, repo, pr, summary, decision, repairs=False)
        posted += posted_again
    write_job_files(config, pr, summary, report_path, body, posted)
    elapsed = time.monotonic() - started
    print(f"rubric-gate: {summary.decision} ({len(outcomes)} rubric file(s), {elapsed:.1f}s)", flush=True)
    return decision.exit_code


Refresh = Callable[[RunFacts], tuple[RunFacts, bool]]


def _refresher(same_head: SameHead, own_override: Callable[[], Override | None]) -> Refresh:
    """Re-read what a pass relies on: the open PRs with this head (gating any new one) and the
    override labels that turned failures into the pass. True when any of it changed."""
    def refresh(facts: RunFacts) -> tuple[RunFacts, bool]:
        changed = same_head.refresh()
        override = facts.override
        if facts.failing and override is not None and override.granted:
            override = own_override()
            changed = changed or override != facts.override
        return replace(facts, others=same_head.others, override=override), changed
    return refresh


def _recheck(facts: RunFacts, decision: Decision, refresh: Refresh) -> tuple[RunFacts, Decision, bool]:
    """A pass reads its facts again: the new facts, the decision on them, and whether they changed."""
    if decision.decision != "pass":
        return facts, decision, False
    facts, changed = refresh(facts)
    return facts, decide(facts) if changed else decision, changed


def _settle(facts: RunFacts, refresh: Refresh) -> tuple[RunFacts, Decision]:
    """The decision, with a pass posted only as of the facts read just before posting it: a PR
    opened while this run gated is gated too. Facts that keep changing post no pass."""
    decision = decide(facts)
    for _ in range(SETTLE_ROUNDS):
        facts, decision, changed = _recheck(facts, decision, refresh)
        if not changed:
            return facts, decision
    if decision.decision == "pass":
        facts = replace(facts, unsettled=True)
        decision = decide(facts)
    return facts, decision


def _show(summary: RunSummary, gated: GatedPull, decision: Decision, notices: list[str]) -> None:
    """The decision as the comment and the report show it (each failing outcome names the override)."""
    summary.decision, summary.override = decision.decision, decision.override
    summary.notices = [*notices, *decision.notices]
    for outcome in gated.failing:
        if isinstance(outcome, RubricOutcome):
            outcome.override = decision.override  # e.g. a deletion, which has no gate report
            if outcome.report is not None:
                outcome.report.override = decision.override


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


def _gate_pull(config: ActionConfig, repo: Repository, pr: PullRequest, cache: VerdictCache, budget: CallBudget,
               notices: list[str]) -> GatedPull:
    pr = current_base(repo, pr)
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


def _run_url(env: Mapping[str, str]) -> str | None:
    server, repo, run_id = env.get("GITHUB_SERVER_URL"), env.get("GITHUB_REPOSITORY"), env.get("GITHUB_RUN_ID")
    return f"{server}/{repo}/actions/runs/{run_id}" if server and repo and run_id else None
