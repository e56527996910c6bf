"""What a run decides, as pure functions of the facts it gathered (no git, no GitHub).

The check run belongs to the head commit, not to one pull request: branch protection on every
base the head is proposed into reads it. So a pass means that every open PR with this head
passes or carries the override on this head, and that nothing the run gated as "this PR" was
invalid input (an override never covers that).
"""

from __future__ import annotations

from dataclasses import dataclass

from rubric_gate.action.github.override import Override
from rubric_gate.errors import EXIT_BAD_INPUT, EXIT_GATE_FAILED, EXIT_PASS
from rubric_gate.trust.approval import Approval

OVERRIDDEN = " (overridden)"  # ends the title of a result an override label turned into a pass
_SHARED = "the `rubric-gate` check belongs to the commit both PRs share"


@dataclass(frozen=True)
class OtherPull:
    """Another open PR with this run's head, gated into its own base as its own run would."""

    number: int
    base_sha: str
    failing: tuple[str, ...] = ()  # why the gate fails there, one line each; empty: it passes
    error: str | None = None  # it could not be gated (invalid input, an API error)
    override: Override | None = None  # its override label, judged for this head
    # The writer's approval its pass relies on (its own recorded verdicts counted): read again
    # before this run posts a pass, as its override label is.
    approval: Approval | None = None

    @property
    def where(self) -> str:
        return f"#{self.number} (base {self.base_sha[:7]})"


@dataclass(frozen=True)
class RunFacts:
    """Everything the decision depends on, gathered from git and GitHub."""

    fail_on: str  # the `fail_on` input: rejected | error | never
    failing: bool  # this PR: a change the gate rejected, or a blocking label/verdict finding
    errors: int  # rubric files that could not be gated (invalid input)
    pending: bool  # batches still judging
    override: Override | None = None  # this PR's override label (None: not on the PR, or not asked)
    others: tuple[OtherPull, ...] = ()  # the other open PRs with this head
    unsettled: bool = False  # the open PRs with this head kept changing while this run gated them
    unverified: str | None = None  # why a posted pass could not be read again (an API error)
    # The approval that made this PR's own recorded verdicts count, as last read (a pass relies
    # on it: read again before posting, it may have been dismissed or superseded since).
    approval: Approval | None = None


@dataclass(frozen=True)
class Decision:
    decision: str  # pass | fail | pending
    exit_code: int
    conclusion: str  # the check run's: success | failure | neutral | pending
    title: str
    override: str | None  # the override that turned this PR's failures into a pass (shown)
    notices: tuple[str, ...]  # lines for the comment, in order

    @property
    def green(self) -> bool:
        """What branch protection reads as passing."""
        return self.conclusion in ("success", "neutral")


def run_decision(*, failing: bool, errors: bool, overridden: bool, pending: bool, failing_elsewhere: bool) -> str:
    """pass, fail or pending. An override covers what the gate rejected in this PR, never an input
    error; another PR with the same head fails this one unless its own override covers it."""
    if errors or failing_elsewhere or (failing and not overridden):
        return "fail"
    return "pending" if pending else "pass"


def exit_code(fail_on: str, decision: str, errors: bool) -> int:
    if fail_on == "never":
        return EXIT_PASS
    if errors:
        return EXIT_BAD_INPUT
    if decision in ("fail", "pending") and fail_on == "rejected":
        return EXIT_GATE_FAILED  # pending: not passed yet, a required job must not go green before the verdict
    return EXIT_PASS


def conclusion(decision: str, code: int) -> str:
    if decision == "pending" and code != EXIT_BAD_INPUT:
        return "pending"
    if code:
        return "failure"
    return "success" if decision == "pass" else "neutral"


def title(decision: str, overridden: bool) -> str:
    return f"rubric-gate: {decision}" + (OVERRIDDEN if overridden else "")


def decide(facts: RunFacts) -> Decision:
    notices: list[str] = []
    override = None
    if facts.failing and facts.override is not None:
        if facts.override.granted and facts.errors:
            notices.append(f"The override does not apply: {facts.override.text}, but {facts.errors} rubric file(s) "
                           "could not be gated (invalid input). Fix the input; an override only covers changes the "
                           "gate rejected.")
        elif facts.override.granted:
            override = facts.override.text
        else:
            notices.append(f"Override refused: {facts.override.text}.")
    elsewhere = covered = False
    for other in facts.others:
        line = _other_notice(other)
        if line is not None:
            notices.append(line[0])
            elsewhere = elsewhere or line[1]
            covered = covered or not line[1]
    if facts.unsettled:
        notices.append("The open pull requests with this head kept changing while this run gated them, so it posts "
                       f"no pass ({_SHARED}): re-run the job.")
    withdrawn = facts.approval is not None and not facts.approval.granted
    if withdrawn:
        assert facts.approval is not None
        notices.append(f"The approval this PR's own recorded verdicts counted on no longer holds "
                       f"({facts.approval.text}), so this result is posted as a failure: a review submitted or "
                       "dismissed gates the head again.")
    if facts.unverified is not None:
        notices.append(f"The open pull requests with this head could not be read again after this run posted its "
                       f"pass ({facts.unverified}), so it is posted as a failure ({_SHARED}): re-run the job.")
    decision = run_decision(failing=facts.failing, errors=bool(facts.errors) or facts.unverified is not None,
                            overridden=override is not None, pending=facts.pending,
                            failing_elsewhere=elsewhere or facts.unsettled or withdrawn)
    code = exit_code(facts.fail_on, decision, bool(facts.errors) or facts.unverified is not None)
    overridden = decision == "pass" and (override is not None or covered)
    return Decision(decision, code, conclusion(decision, code), title(decision, overridden), override, tuple(notices))


def _other_notice(other: OtherPull) -> tuple[str, bool] | None:
    """The comment's line about another PR with this head, and whether it fails this run."""
    if other.error is not None:
        return (f"This head is also proposed by {other.where}, which cannot be gated ({other.error}); {_SHARED}, "
                "so it fails here too."), True
    if not other.failing:
        return None
    what = "; ".join(other.failing[:5])
    if other.override is not None and other.override.granted:
        return (f"This head is also proposed by {other.where}, where the gate fails ({what}); its override "
                f"covers it there: {other.override.text}."), False
    refused = f" Its override label does not count: {other.override.text}." if other.override is not None else ""
    return (f"This head is also proposed by {other.where}, where the gate fails ({what}); {_SHARED}, so it fails "
            f"here too (propose a head into one base at a time, or override it there too).{refused}"), True


@dataclass(frozen=True)
class PostedResult:
    """The head's last `rubric-gate` result on GitHub, as a later run reads it back."""

    passed: bool  # a completed success or neutral check run, or a success status
    base_sha: str | None  # the base tip it was gated against (None: not recorded)


def standing_exit_code(result: PostedResult | None, base_sha: str) -> int | None:
    """The exit code the head's last result stands for, for an event that changes nothing the gate
    decides; None when the head is gated again.

    Only a failure stands, and only as what it was computed under: gated against `base_sha`, the
    base tip now (a retarget, or a merge into the base, whose run this very event may have
    cancelled). A pass is gated again: any workflow that runs on the head can post a passing
    `rubric-gate` check run or status as the same app this one writes as (a workflow the PR adds,
    a writer's own), and an overridden pass holds only as its label's state now does. Repeating a
    failure can only keep the job stricter.
    """
    if result is None or result.passed or result.base_sha != base_sha:
        return None
    return EXIT_GATE_FAILED
