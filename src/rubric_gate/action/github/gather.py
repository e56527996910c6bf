"""The GitHub facts a run decides on, read at run time: the PR's base tip now, the other open PRs
with its head (each gated into its own base), override labels, the head's standing result.

Everything here reads; nothing posts. The decision is `action.decide`'s, from what this returns.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from github import GithubException
from github.Repository import Repository

from rubric_gate.action.decide import OtherPull, PostedResult
from rubric_gate.action.event import SHA, PullRequest
from rubric_gate.action.gating.outcome import RubricOutcome
from rubric_gate.action.gating.standard import StandardFinding
from rubric_gate.action.github.checks import latest_result
from rubric_gate.action.github.client import describe
from rubric_gate.action.github.outputs import command
from rubric_gate.action.github.override import Attestor, Override, check_override
from rubric_gate.errors import InputError, RubricGateError
from rubric_gate.trust.approval import Approval


def current_base(repo: Repository, pr: PullRequest) -> PullRequest:
    """The PR with its base branch's tip as the API has it now: a re-run replays the payload of
    its first run, whose base sha is stale once the base branch moved (another PR merged)."""
    if pr.merge_group:
        return pr  # the group's base is the commit it was built on
    try:
        base_sha = repo.get_pull(pr.number).base.sha
    except GithubException as exc:
        raise InputError(f"pull request #{pr.number}", f"cannot read its base branch through the API ({describe(exc)})") from None
    if not isinstance(base_sha, str) or not SHA.fullmatch(base_sha) or base_sha == pr.base_sha:
        return pr
    command("notice", f"the base branch moved since this event ({pr.base_sha[:7]} -> {base_sha[:7]}): "
            "gated against its tip now")
    return replace(pr, base_sha=base_sha)


def same_head_pulls(repo: Repository, pr: PullRequest) -> list[PullRequest]:
    """The other open pull requests whose head is this run's head commit (a branch proposed into
    two bases, or two branches at one commit). A merge group's head is its own commit."""
    if pr.merge_group:
        return []
    try:
        pulls = [p for p in repo.get_pulls(state="open") if p.head.sha == pr.head_sha and p.number != pr.number]
        return [PullRequest(number=p.number, base_sha=p.base.sha, head_sha=pr.head_sha, base_repo=pr.base_repo,
                            head_repo=p.head.repo.full_name if p.head.repo is not None else None, labels=(),
                            html_url=p.html_url or "", head_ref=p.head.ref,
                            author=p.user.login if p.user is not None else None) for p in pulls]
    except GithubException as exc:
        raise InputError(f"pull request #{pr.number}", "cannot list the open pull requests with its head through the API "
                                   f"({describe(exc)}): the check on {pr.head_sha[:7]} is read by each of them") from None


def failing_reasons(failing: list[RubricOutcome | StandardFinding]) -> tuple[str, ...]:
    """One line per failing rubric file or blocking finding, as another PR's comment names them."""
    return tuple(f"{f.file.path}: {_why(f)}" if isinstance(f, RubricOutcome) else f"{f.path}: {f.message}"
                 for f in failing)


def _why(outcome: RubricOutcome) -> str:
    if outcome.error is not None:
        return outcome.error
    rejected = [f"{c.change} {c.check}" for c in (outcome.report.changes if outcome.report else []) if not c.accepted]
    return "; ".join([*(f"rejected {r}" for r in rejected), *outcome.failures]) or "failed"


def relied_approval(outcomes: list[RubricOutcome]) -> Approval | None:
    """The writer's approval a PR's gating counted (its own recorded verdicts were evidence)."""
    return next((o.approval for o in outcomes if o.approval is not None and o.approval.granted), None)


class SameHead:
    """The other open PRs with this run's head, each gated into its own base as its own run would
    gate it (the run's check lands on the commit they share). `refresh` lists them again and gates
    only what is new: a PR opened since, or one whose base tip moved; it re-reads the override
    labels a pass would rely on, and gates again one whose pass relied on an approval that changed.
    A PR into this PR's base tip is the same decision as this one's.

    `gate(pull)` is (why it fails, one line each; the approval its gating counted)."""

    def __init__(self, repo: Repository, pr: PullRequest,
                 gate: Callable[[PullRequest], tuple[tuple[str, ...], Approval | None]],
                 override_of: Callable[[PullRequest], Override | None],
                 approval_of: Callable[[PullRequest], Approval | None] = lambda pull: None) -> None:
        self._repo, self._pr, self._gate, self._override_of = repo, pr, gate, override_of
        self._approval_of = approval_of
        self._known: dict[int, tuple[PullRequest, OtherPull]] = {}

    @property
    def others(self) -> tuple[OtherPull, ...]:
        return tuple(other for _, other in self._known.values())

    def refresh(self) -> bool:
        """List the open PRs with this head again; True when anything the decision reads changed."""
        changed = False
        current: dict[int, tuple[PullRequest, OtherPull]] = {}
        for pull in same_head_pulls(self._repo, self._pr):
            if pull.base_sha == self._pr.base_sha:
                continue
            known = self._known.get(pull.number)
            if known is None or known[0].base_sha != pull.base_sha or self._approval_changed(pull, known[1]):
                current[pull.number] = (pull, self._gated(pull))
                changed = True
            elif known[1].failing and known[1].override is not None and known[1].override.granted:
                override = self._override_of(pull)  # the label a pass would rely on: still on?
                changed = changed or override != known[1].override
                current[pull.number] = (pull, replace(known[1], override=override))
            else:
                current[pull.number] = known
        changed = changed or current.keys() != self._known.keys()
        self._known = current
        return changed

    def reread_refused_overrides(self) -> bool:
        """Judge again the override labels refused on failing PRs (their label, or the workflow run
        of its `labeled` event, may be there since they were read); True when any of them changed."""
        changed = False
        for number, (pull, other) in list(self._known.items()):
            if other.failing and other.override is not None and not other.override.granted:
                override = self._override_of(pull)
                changed = changed or override != other.override
                self._known[number] = (pull, replace(other, override=override))
        return changed

    def _approval_changed(self, pull: PullRequest, known: OtherPull) -> bool:
        """Whether the approval a passing PR's gating counted reads differently now (dismissed,
        superseded, its writer's access removed): then it is gated again."""
        if known.failing or known.approval is None:
            return False
        return self._approval_of(pull) != known.approval

    def _gated(self, pull: PullRequest) -> OtherPull:
        try:
            failing, approval = self._gate(pull)
        except RubricGateError as exc:
            return OtherPull(pull.number, pull.base_sha, error=exc.message)
        override = self._override_of(pull) if failing else None
        return OtherPull(pull.number, pull.base_sha, failing, override=override, approval=approval)


def commit_date(repo: Repository, workspace: Path) -> Callable[[str], datetime | None]:
    """When a commit was committed: from git when the checkout has it, else the commits API
    (None when neither can say). The override reads the base tip's, to tell a moved base."""
    def read(sha: str) -> datetime | None:
        proc = subprocess.run(["git", "show", "-s", "--format=%cI", "--end-of-options", sha], cwd=workspace,
                              capture_output=True, text=True, check=False)
        if proc.returncode == 0 and proc.stdout.strip():
            try:
                return datetime.fromisoformat(proc.stdout.strip())
            except ValueError:
                pass
        try:
            committer = repo.get_commit(sha).commit.committer
            return committer.date if committer is not None else None
        except (GithubException, AttributeError):
            return None
    return read


def override_reader(repo: Repository, label: str, attestor: Attestor) -> Callable[[PullRequest], Override | None]:
    return lambda pull: check_override(repo, pull, label, attestor)


def standing(repo: Repository, pr: PullRequest) -> tuple[PostedResult | None, str]:
    """What `decide.standing_exit_code` reads: the head's last result and the base tip now."""
    return latest_result(repo, pr.head_sha), current_base(repo, pr).base_sha
