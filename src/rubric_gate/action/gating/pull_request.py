"""A PR's rubric changes gated against its base: the changed files (git, or the PR files API),
the two snapshots (what the base branch vouches for and what the PR proposes), each rubric
file through the gate service, and the findings on labels and recorded verdicts. The outcomes
are what `action.decide` decides on; `rubric-gate preview` calls `gate_changes` on a laptop.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from github import GithubException
from github.Repository import Repository

from rubric_gate.action.cache.provenance import base_branch_cache, base_ref_of
from rubric_gate.action.cache.verdict_cache import VerdictCache
from rubric_gate.action.commits.changed import (
    ChangedFile,
    changed_via_git,
    changed_via_rest,
    merge_base_via_git,
    merge_base_via_rest,
    unmatched_globs,
)
from rubric_gate.action.commits.configs import changed_rubrics
from rubric_gate.action.commits.merge_check import landing_problems
from rubric_gate.action.commits.snapshot import Snapshots, diff_snapshots, load_snapshots
from rubric_gate.action.commits.sources import (
    FileReader,
    GitReader,
    RestReader,
    has_commit,
    is_shallow,
)
from rubric_gate.action.config import ActionConfig
from rubric_gate.action.event import PullRequest
from rubric_gate.action.gating.confirm import LiveConfirmer
from rubric_gate.action.gating.gate_file import gate_file
from rubric_gate.action.gating.judging import SECRET_VARIABLES, JudgeBackend, load_backend
from rubric_gate.action.gating.outcome import GateSettings, RubricOutcome
from rubric_gate.action.gating.pairing import pair_rewrites
from rubric_gate.action.gating.standard import StandardFinding, findings_of
from rubric_gate.action.github.approval import approval_reader
from rubric_gate.action.github.client import describe
from rubric_gate.action.github.gather import current_base
from rubric_gate.action.github.outputs import command
from rubric_gate.errors import InputError
from rubric_gate.gate import JUDGE_CHANGE_ALPHA
from rubric_gate.service import CallBudget
from rubric_gate.trust.approval import Approval
from rubric_gate.trust.differences import Difference


@dataclass
class GatedPull:
    """One pull request's rubric edits gated against its base: what the run decides on."""

    pr: PullRequest  # with its base branch's tip as the API has it now
    reader: FileReader
    merge_base: str
    changes: list[ChangedFile]
    outcomes: list[RubricOutcome]
    standard: list[StandardFinding]  # the diff's findings, then the merge's (`action.commits.merge_check`)
    differences: list[Difference] = field(default_factory=list)  # every one the diff classified

    @property
    def failing(self) -> list[RubricOutcome | StandardFinding]:
        return [o for o in self.outcomes if not o.passed and not o.pending] + [f for f in self.standard if f.blocking]


def gate_pull(config: ActionConfig, repo: Repository, pr: PullRequest, cache: VerdictCache, budget: CallBudget,
               notices: list[str]) -> GatedPull:
    pr = current_base(repo, pr)
    # What actions/cache restored here may have been saved by any workflow running for the PR:
    # the gate reads the cache a push run on the base branch left as an artifact instead.
    cache.distrust_restored(lambda: base_branch_cache(repo, base_ref_of(os.environ), pr.base_sha))
    reader, files, gate_base = _detect(config, repo, pr)
    return gate_changes(config, pr, reader, files, gate_base, cache, budget, notices,
                        approval=approval_reader(repo, pr))


def gate_changes(config: ActionConfig, pr: PullRequest, reader: FileReader, files: list[ChangedFile], gate_base: str,
                 cache: VerdictCache, budget: CallBudget, notices: list[str], *,
                 rubric_judges: bool = True, approval: Callable[[], Approval | None] | None = None) -> GatedPull:
    """Gate a PR's changed files from git facts alone (no GitHub call but `approval`, read only
    when the PR's own recorded verdicts are evidence): the action's run, and `rubric-gate preview`
    on a laptop (no approval). `rubric_judges` False ignores the rubrics' own `judge` keys (an
    offline preview calls no model it was not given)."""
    # What the base branch vouches for (the merge base and its tip) and what the PR proposes.
    snapshots = load_snapshots(reader, gate_base, pr.base_sha, pr.head_sha, files)
    missing = unmatched_globs(sorted(set(snapshots.merge_base.paths()) | set(snapshots.head.paths())),
                              config.rubric_globs)
    if missing:
        raise InputError("input rubrics", f"{', '.join(repr(g) for g in missing)} matches no file in the repository; "
                         "fix the glob (a typo would otherwise pass every PR unchecked)")
    # The rubric files under the globs and the promptfoo configs `.rubric-gate.yaml` names.
    changes = pair_rewrites(changed_rubrics(snapshots, config.rubric_globs), snapshots)
    outcomes, specs = (_gate_all(config, changes, snapshots, cache, budget, notices, rubric_judges, approval)
                       if changes else ([], ()))
    # A changed recorded answer stands where the configured judge, live in this run, gives it at
    # the line's full key (`action.gating.confirm`); the restored verdict cache never confirms one.
    confirms = LiveConfirmer(tuple(dict.fromkeys((*config.judges, *specs))), cache, budget,
                             concurrency=config.request.concurrency, notices=notices)
    # Every difference of the classified diff is kept for report.json; the comment reads findings.
    # A change of `judge` rule J decided (both judges called in this run) is the gate's; else the override's.
    judge_gated = frozenset(o.file.path for o in outcomes if o.report is not None and o.report.judge_change is not None)
    try:
        differences = diff_snapshots(snapshots, config.rubric_globs, changes, confirms, judge_gated)
    except InputError as exc:
        # A calibration set or verdict file the PR leaves unloadable is bad input: exit 2 with a
        # failed check naming its line, which no override covers.
        outcomes = [*outcomes, RubricOutcome(_file_named(files, exc.path), error=exc.message)]
        command("error", exc.message)
        differences = []
    standard = findings_of(differences)
    # The gate reviews a model of the merge (check by check, from one merge base): where the merge
    # git or GitHub writes differs from it, the PR fails (the override covers it, a reviewer's call).
    standard += landing_problems(config.workspace, pr, reader, snapshots, changes, config.rubric_globs,
                                 changes_facts=bool(changes or differences))
    return GatedPull(pr, reader, gate_base, changes, outcomes, standard, differences)


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
              budget: CallBudget, notices: list[str], rubric_judges: bool = True,
              approval: Callable[[], Approval | None] | None = None) -> tuple[list[RubricOutcome], tuple[str, ...]]:
    """Each changed rubric gated; and the judges that gated them (the base versions' own `judge`
    keys too), which also re-judge the recorded answers the PR changes."""
    backends: dict[str, tuple[JudgeBackend | None, str | None]] = {}
    # A judge change's sides, by spec: kept apart from `backends`, the judges that gate edits and
    # confirm changed recorded answers (a judge a PR names never does either).
    reachable: dict[str, bool] = {}
    outcomes = []
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
        request = config.request.judged_by(specs if judge else ())
        sides = _judge_change(snapshots, change, reachable) if judge is not None and rubric_judges else None
        if sides is not None:
            request = replace(request, judge_change=sides, judge_change_alpha=JUDGE_CHANGE_ALPHA)
        settings = GateSettings(snapshots=snapshots, trust_pr_verdicts=config.trust_pr_verdicts, judge_unavailable=why_not,
                                request=request, budget=budget, cache=cache,
                                approval=approval)
        outcome = gate_file(change, settings)
        outcomes.append(outcome)
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
    return outcomes, tuple(backends)


def _judge_change(snapshots: Snapshots, change: ChangedFile,
                  reachable: dict[str, bool]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(old judges, new judges) when the PR changes the rubric's `judge` from one judge (or panel)
    to another and this run can call every one of them: rule J compares them on the calibration
    set. The edit itself stays gated by the base's judge (a PR does not choose the judge of its
    own edit). An added or removed key, or a judge without its API key, needs the override."""
    if change.status != "modified" and change.status != "renamed":
        return None
    old = _judges(snapshots.merge_base.rubric_keys(change.base_path).get("judge"))
    new = _judges(snapshots.head.rubric_keys(change.path).get("judge"))
    if not old or not new or old == new:
        return None
    for spec in (*old, *new):
        if spec not in reachable:
            reachable[spec] = load_backend(spec)[0] is not None
    return (old, new) if all(reachable[spec] for spec in (*old, *new)) else None


def _judges(key: object) -> tuple[str, ...]:
    """A `judge` key as judges: comma-separated, a panel (as the `judge` input reads it)."""
    return tuple(dict.fromkeys(j.strip() for j in str(key or "").split(",") if j.strip()))


def _rubric_judge(snapshots: Snapshots, change: ChangedFile) -> str | None:
    """The rubric's own `judge` key: the base's for an edit, so the PR cannot pick the model
    that grades its own edit (a `judge` key it adds takes effect once merged). A new rubric has
    no base: only the `judge` input judges it, never a model (and bill) the PR chose."""
    if change.status == "added":
        return None
    return snapshots.merge_base.rubric_keys(change.base_path).get("judge") or None


def _file_named(files: list[ChangedFile], display: str | None) -> ChangedFile:
    """The changed file an error names (its display may carry a commit prefix, `abc1234:path`)."""
    path = (display or "").rpartition(":")[2] if display and ":" in display else (display or "")
    return next((f for f in files if f.path == path), ChangedFile(path or "(unknown file)", None, "modified"))
