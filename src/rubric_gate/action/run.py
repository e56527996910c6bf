"""`rubric-gate action`: gate a pull request's rubric edits and report where reviewers look.

One run: gather (the event, the inputs, the PR's changes gated into its base in `action.gating.pull_request`,
and the GitHub facts in `action.github.gather`), decide (`action.decide`, a pure function of those facts), publish
(`action.github.publish`). A pass is posted only as of the open PRs with this head just before it is
posted, and checked again after: see `_settle` and `_after_post`.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace

from rubric_gate.action.cache.verdict_cache import CACHE_FILE, VerdictCache
from rubric_gate.action.cache.warm import warm_cache
from rubric_gate.action.commits.workspace import (
    check_output_location,
    check_untracked,
    clear_output_dir,
    set_aside_restored_cache,
)
from rubric_gate.action.config import ActionConfig, load_config
from rubric_gate.action.decide import Decision, RunFacts, decide, standing_exit_code
from rubric_gate.action.event import GATED_EVENTS, LABEL_EVENT, PullRequest, gate_target, load_event
from rubric_gate.action.gating.judging import secret_values
from rubric_gate.action.gating.outcome import RubricOutcome
from rubric_gate.action.gating.pull_request import GatedPull, gate_pull
from rubric_gate.action.github.approval import check_approval
from rubric_gate.action.github.client import connect
from rubric_gate.action.github.gather import (
    SameHead,
    commit_date,
    failing_reasons,
    override_reader,
    relied_approval,
    standing,
)
from rubric_gate.action.github.outputs import command
from rubric_gate.action.github.override import Attestor, Override, replayed, workflow_path
from rubric_gate.action.github.publish import nothing_to_do, post, write_job_files, write_report
from rubric_gate.action.render import RunSummary
from rubric_gate.batch.journal import journal_path
from rubric_gate.errors import EXIT_PASS, InputError
from rubric_gate.service import CallBudget
from rubric_gate.trust.approval import Approval

SETTLE_ROUNDS = 3  # listings of the open PRs with this head that may each change before a pass is refused
AFTER_POST_ROUNDS = 2  # a failure turned pass by another PR's label read again, then that pass read again


def run_action(env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    config = load_config(env)
    for secret in [config.token, *secret_values(dict(env))]:
        if secret:
            command("add-mask", secret)
    with _index_dir(config, env):
        return _run(config, env)


@contextlib.contextmanager
def _index_dir(config: ActionConfig, env: Mapping[str, str]) -> Iterator[None]:
    """Where parsed verdict blobs and calibration columns are indexed for this run. On `push`
    (the base branch's own run) beside the verdict cache, so actions/cache keeps it for the next
    push. Any other run starts an empty one of its own: the restored cache directory may have
    been saved by any workflow running for the PR, and an index is read by blob id and size, so
    a planted one would rewrite the base's record: untrusted input never feeds the index."""
    if env.get("RUBRIC_GATE_INDEX_DIR"):  # the workflow's own setting
        yield
        return
    with contextlib.ExitStack() as stack:
        if config.event_name == "push":
            directory = str(config.cache_dir / "index")
        else:
            directory = stack.enter_context(tempfile.TemporaryDirectory(prefix="rubric-gate-index-"))
        with _env_set("RUBRIC_GATE_INDEX_DIR", directory):
            yield


@contextlib.contextmanager
def _env_set(name: str, value: str) -> Iterator[None]:
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def _run(config: ActionConfig, env: Mapping[str, str]) -> int:
    if config.event_name == "push":
        return warm_cache(config, env)
    if config.event_name not in GATED_EVENTS:
        return nothing_to_do(config, f"rubric-gate gates pull requests; nothing to do for a `{config.event_name}` event",
                             EXIT_PASS, skipped=True)
    pr, unchanged = gate_target(config.event_name, load_event(config.event_path), str(config.event_path),
                                config.override_label)
    if unchanged and config.token:
        # Nothing the gate decides changed: the head's last result stands (and this job repeats
        # it); a head with none (its run cancelled) is gated now.
        code = standing_exit_code(*standing(connect(config.token, config.api_url, config.repository), pr))
        if code is not None:
            return nothing_to_do(config, f"nothing to re-gate: {unchanged}; the head's last rubric-gate result "
                                 "stands", code)
    # Cleaned before its files are checked: a refused run leaves nothing for the upload step.
    check_output_location(config.output_dir, config.workspace, config.cache_dir)
    clear_output_dir(config.output_dir, config.workspace)
    check_untracked(config.output_dir, config.workspace, config.cache_dir)
    removed = set_aside_restored_cache(config.cache_dir, keep=(journal_path(config.cache_dir / CACHE_FILE).name,))
    if removed:
        command("notice", "rubric-gate: the verdict cache actions/cache restored was not read (in a pull request's "
                "run any workflow running for the PR can save it); this run judges and keeps its own")
    if not config.token:
        raise InputError("input github_token", "empty: pass `github_token: ${{ github.token }}`")
    repo = connect(config.token, config.api_url, config.repository)
    started = time.monotonic()
    cache = VerdictCache(config.cache_dir)
    for warning in cache.warnings:
        command("warning", warning)
    budget = CallBudget(config.max_judge_calls)  # per run, shared by every rubric (and every base)
    notices: list[str] = []
    gated = gate_pull(config, repo, pr, cache, budget, notices)
    pr, reader, outcomes, standard = gated.pr, gated.reader, gated.outcomes, gated.standard
    summary = RunSummary("pass", outcomes, pr.head_sha, gated.merge_base, run_url=_run_url(env),
                         base_branch_sha=pr.base_sha, standard=standard, notices=notices,
                         override_label=config.override_label)
    if reader.kind == "rest" and gated.changes:
        command("notice", "the checkout has no PR history (shallow clone): read files through the GitHub API")
    for finding in standard:
        command("error" if finding.blocking else "notice", f"{finding.path}: {finding.message}")

    # GitHub's own records of who applied the label and on which head (never a check run).
    attestor = Attestor(repo, workflow_path(env), LABEL_EVENT.get(config.event_name, config.event_name),
                        commit_date(repo, config.workspace), replayed=replayed(env))
    override_of = override_reader(repo, config.override_label, attestor)
    # The check run (and this job's status) belong to the head commit, not to this PR: a green
    # one would satisfy the required check of every PR with this head, whatever its base.
    def gate_other(other: PullRequest) -> tuple[tuple[str, ...], Approval | None]:
        gated_other = gate_pull(config, repo, other, cache, budget, [])
        return failing_reasons(gated_other.failing), relied_approval(gated_other.outcomes)

    same_head = SameHead(repo, pr, gate_other, override_of, lambda other: check_approval(repo, other))
    same_head.refresh()
    # An approval the gate counted is read again before a pass is posted (and after), as a label is.
    relied = relied_approval(outcomes)
    facts = RunFacts(config.fail_on, failing=bool(gated.failing), errors=sum(o.error is not None for o in outcomes),
                     pending=any(o.pending for o in outcomes),
                     override=override_of(pr) if gated.failing else None, others=same_head.others, approval=relied)
    refresh = _refresher(same_head, lambda: override_of(pr), lambda: check_approval(repo, pr))
    facts, decision = _settle(facts, refresh)
    _show(summary, gated, decision, notices)
    report_path = write_report(config, pr, summary, reader.kind, gated.differences)
    body, posted = post(config, repo, pr, summary, decision)
    for _ in range(AFTER_POST_ROUNDS):
        try:
            facts, after = _after_post(facts, decision, refresh, lambda: _regranted(attestor, same_head))
        except InputError as exc:  # e.g. the open PRs cannot be listed now: a pass is not left standing
            facts = replace(facts, unverified=exc.what)
            after = decide(facts)
        if after.decision == decision.decision:
            break
        decision = after
        _show(summary, gated, decision, notices)
        report_path = write_report(config, pr, summary, reader.kind, gated.differences)
        body, posted_again = post(config, repo, pr, summary, decision, repairs=False)
        posted += posted_again
    write_job_files(config, pr, summary, report_path, body, posted)
    elapsed = time.monotonic() - started
    print(f"rubric-gate: {summary.decision} ({len(outcomes)} rubric file(s), {elapsed:.1f}s)", flush=True)
    return decision.exit_code


Refresh = Callable[[RunFacts], tuple[RunFacts, bool]]


def _refresher(same_head: SameHead, own_override: Callable[[], Override | None],
               own_approval: Callable[[], Approval | None]) -> Refresh:
    """Re-read what a pass relies on: the open PRs with this head (gating any new one), the
    override labels that turned failures into the pass, and the approval that made this PR's own
    records count. True when any of it changed."""
    def refresh(facts: RunFacts) -> tuple[RunFacts, bool]:
        changed = same_head.refresh()
        override, approval = facts.override, facts.approval
        if facts.failing and override is not None and override.granted:
            override = own_override()
            changed = changed or override != facts.override
        if approval is not None and approval.granted:
            approval = own_approval()
            changed = changed or approval != facts.approval
        return replace(facts, others=same_head.others, override=override, approval=approval), changed
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


def _after_post(facts: RunFacts, decision: Decision, refresh: Refresh,
                regranted: Callable[[], bool]) -> tuple[RunFacts, Decision]:
    """What holds once this run's result is posted; branch protection reads the latest check run.

    A pass reads its facts once more: a PR opened between the last listing and the post has its
    own run, which may have posted its red first, so a pass that no longer holds is posted again
    as what it is now. A failure that another PR's refused override label caused reads that
    label again: the workflow run of its `labeled` event, overlapping this one, may exist now
    (else each of two runs misses the other's label and both stay red).
    """
    if decision.decision == "pass":
        facts, verified, _ = _recheck(facts, decision, refresh)
        return facts, verified
    if decision.decision == "fail" and regranted():
        return _settle(refresh(facts)[0], refresh)
    return facts, decision


def _regranted(attestor: Attestor, same_head: SameHead) -> bool:
    attestor.forget()
    return same_head.reread_refused_overrides()


def _show(summary: RunSummary, gated: GatedPull, decision: Decision, notices: list[str]) -> None:
    """The decision as the comment and the report show it (each failing outcome names the override)."""
    summary.decision, summary.override = decision.decision, decision.override
    summary.notices = [*notices, *decision.notices]
    failing = [o for o in gated.failing if isinstance(o, RubricOutcome)]
    # Each failing outcome with the decision's override (a deletion has no gate report to carry it).
    summary.outcomes = [replace(o, override=decision.override) if any(o is f for f in failing) else o
                        for o in gated.outcomes]
    for outcome in failing:
        if outcome.report is not None:
            outcome.report.override = decision.override


def _run_url(env: Mapping[str, str]) -> str | None:
    server, repo, run_id = env.get("GITHUB_SERVER_URL"), env.get("GITHUB_REPOSITORY"), env.get("GITHUB_RUN_ID")
    return f"{server}/{repo}/actions/runs/{run_id}" if server and repo and run_id else None
