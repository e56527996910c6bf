"""Gating one changed rubric file, as values: what goes in (`GateSettings`) and what comes out
(`RubricOutcome`, immutable: each step of `gate_file` returns a new one). The run decides on the
outcomes (`action.decide`), the comment and report.json show them."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from rubric_gate.action.cache.verdict_cache import VerdictCache
from rubric_gate.action.commits.changed import ChangedFile
from rubric_gate.action.commits.snapshot import Snapshots
from rubric_gate.errors import JudgeError, MissingVerdictsError, RubricGateError
from rubric_gate.results import CheckReport, RubricSummary
from rubric_gate.rubric import RubricDocument
from rubric_gate.service import CallBudget, GateRequest
from rubric_gate.trust import JudgedKey
from rubric_gate.trust.approval import Approval

if TYPE_CHECKING:
    from rubric_gate.audit import AuditReport
    from rubric_gate.repair import RepairReport

JUDGE_HINT = ("record verdicts for them in the PR, or set the action's `judge` input "
              "(e.g. `judge: anthropic:claude-sonnet-4-6`) with its API key to judge them")


def missing_verdicts(exc: MissingVerdictsError) -> str:
    """The checks a gating found no verdict for, and on how many items: "no verdict for checks ..."."""
    return "no verdict for checks " + ", ".join(f"{cid} ({n}/{exc.total_items} items)" for cid, n in exc.missing.items())


@dataclass(frozen=True)
class GateSettings:
    """The git facts of one rubric's gating, and the request (`service.GateRequest`) it runs."""

    snapshots: Snapshots  # the merge base (what the PR branched from), the base tip, the head
    trust_pr_verdicts: bool
    judge_unavailable: str | None = None  # why a configured judge is not used (then `request` replays)
    request: GateRequest = field(default_factory=GateRequest)  # no judges: replay recorded verdicts
    budget: CallBudget = field(default_factory=lambda: CallBudget(None))  # `max_judge_calls`, shared by the run
    cache: VerdictCache | None = None  # where judged verdicts go and come back from
    # Whether a writer approved this head (read when first asked: only a PR whose own recorded
    # verdicts are evidence asks); None: no approval is read (a preview, a merge group).
    approval: Callable[[], Approval | None] | None = None

    @property
    def judged(self) -> bool:
        return bool(self.request.judges)

    def audit_store(self) -> Any:  # a rubric_gate.audit.AuditStore, as the gate service takes it
        """Where audits are kept: beside the verdict cache, else a store for this run only."""
        if self.cache is not None:
            return self.cache.audit_store()
        from rubric_gate.audit import AuditStore

        return AuditStore()


@dataclass(frozen=True)
class RubricOutcome:
    """What gating one changed rubric file found: a report (an edit), an attribution (a new
    rubric), failures besides the gate's, or the error that stopped it; or pending, with pairs
    still being judged in a batch (then there is nothing to decide yet)."""

    file: ChangedFile
    report: CheckReport | None = None
    summary: RubricSummary | None = None  # a new rubric's attribution (no base to gate against)
    head: RubricDocument | None = None
    base: RubricDocument | None = None
    notices: tuple[str, ...] = ()
    failures: tuple[str, ...] = ()  # reasons to fail besides the gate
    error: str | None = None
    judge_failed: bool = False  # `error` is a judge's (no valid answer, a dead endpoint), not bad input
    judging: dict[str, object] | None = None
    pending_pairs: int = 0  # pairs still being judged in a batch: no decision yet
    audit_report: AuditReport | None = None  # of the added and reworded checks
    repair_report: RepairReport | None = None  # for the rejected changes
    override: str | None = None  # an honoured override label (also set on the report, when there is one)
    approval: Approval | None = None  # the approval read for the PR's own recorded verdicts (granted: they counted)
    # What a configured judge answered in this run, by (task, text, item) (`trust.JudgedKey`): a
    # changed recorded answer is excused for exactly these pairs, never for a whole check text.
    judged_pairs: Mapping[JudgedKey, str] = field(default_factory=dict)  # -> the judge's answer

    @property
    def pending(self) -> bool:
        return self.error is None and self.pending_pairs > 0

    @property
    def passed(self) -> bool:
        if self.error is not None or self.pending:
            return False
        gate_ok = self.report is None or self.report.decision == "pass"
        return gate_ok and (not self.failures or bool(self.override or (self.report and self.report.override)))

    def noted(self, *notices: str) -> RubricOutcome:
        return replace(self, notices=(*self.notices, *notices))

    def failing(self, *failures: str) -> RubricOutcome:
        return replace(self, failures=(*self.failures, *failures))

    def stopped_by(self, exc: RubricGateError) -> RubricOutcome:
        """This outcome so far, with the error that stopped the gating: verdicts nobody recorded
        (and how to get them), a judge's failure, or bad input."""
        if isinstance(exc, MissingVerdictsError):
            # Name the file to write: the store's display is `<commit>:<path>`, and the PR writes the path.
            path = re.sub(r"^[0-9a-f]{7,40}:", "", exc.verdicts or "")
            hint = JUDGE_HINT.replace("in the PR", f"in {path} in the PR") if path else JUDGE_HINT
            return replace(self, error=f"{missing_verdicts(exc)}: {hint}")
        return replace(self, error=exc.message, judge_failed=isinstance(exc, JudgeError))

    def to_dict(self) -> dict[str, object]:
        return {
            "file": self.file.path,
            "base_file": self.file.base_path,
            "status": self.file.status,
            "decision": "pending" if self.pending else "pass" if self.passed else "fail",
            "pending_pairs": self.pending_pairs,
            "error": self.error,
            "failures": list(self.failures),
            "notices": list(self.notices),
            "report": self.report.to_dict() if self.report else None,
            "attribution": self.summary.to_dict() if self.summary else None,
            "judging": self.judging,
            "audit": self.audit_report.to_dict() if self.audit_report is not None else None,
            "repairs": self.repair_report.to_dict() if self.repair_report is not None else None,
        }
