"""What one gating asks for, validated once: `check`'s options and the action's inputs both
become a `GateRequest`, so the two cannot accept different combinations."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from rubric_gate.errors import RubricGateError


class RequestError(RubricGateError):
    """A combination the gate cannot run. `setting` names it neutrally (`samples`, `batch`);
    each front end words it as its own option or input."""

    def __init__(self, setting: str, message: str) -> None:
        super().__init__(message)
        self.setting = setting


@dataclass
class CallBudget:
    """The run's judge calls (`--max-calls`, `max_judge_calls`): every judging step takes what
    is left, then spends what it used (a step that needs more than is left refuses before its
    first call). One per run, shared by every rubric, judge, sample and repair."""

    limit: int | None
    used: int = 0

    def left(self) -> int | None:
        return None if self.limit is None else max(0, self.limit - self.used)

    def spend(self, judging: Any) -> None:
        """Count the calls of a judging step's statistics (a dict or stats object with `calls`)."""
        calls = judging.get("calls") if isinstance(judging, dict) else getattr(judging, "calls", 0)
        self.used += int(calls or 0)


def check_judging(*, judges: int, samples: int, paraphrases: int, min_stability: float | None,
                  batch: bool) -> None:
    """The rules on how to judge that hold whoever the judge turns out to be (RequestError).
    `GateRequest` applies them, and the action applies them to its inputs up front, before a
    rubric's own `judge` key may supply the judge its inputs lack."""
    if samples < 1 or samples % 2 == 0:
        raise RequestError("samples", f"must be an odd number >= 1 (a majority always exists), got {samples}")
    if paraphrases < 0:
        raise RequestError("paraphrases", f"must be >= 0, got {paraphrases}")
    if min_stability is not None and not 0 <= min_stability <= 1:
        raise RequestError("min_stability", f"expected a number between 0 and 1, got {min_stability}")
    if batch and (judges > 1 or samples > 1 or paraphrases):
        raise RequestError("batch", "batch judging asks one judge once per pair: drop the samples, the "
                                    "paraphrases or the extra judges, or judge those live")


@dataclass(frozen=True)
class GateRequest:
    """How to judge, gate, audit and repair one edit. No judges: replay recorded verdicts."""

    judges: tuple[str, ...] = ()  # several: a panel, gated on the per-pair majority
    samples: int = 1
    paraphrases: int = 0
    paraphraser: str | None = None
    min_stability: float | None = None  # rule U
    batch: bool = False
    batch_wait_seconds: float | None = None  # None: wait until the batches end
    poll_interval: float | None = None
    batch_progress: bool | None = None  # None: shown on a terminal
    concurrency: int = 8
    gates: frozenset[str] | None = None  # None: the gate's default (S+P)
    rates_rule: bool = False
    reject_correct_drop_at: float | None = None
    audit: bool = False
    audit_rule: bool = False  # implies `audit`
    audit_judges: tuple[str, ...] = ()  # default: the first judge
    suggest_repairs: bool = False
    repair_count: int = 3
    repair_model: str | None = None
    repair_objective: Any = field(default=None, compare=False)  # a repair.vfr.VfrObjective, or None
    # A judge change to gate (rule J): (old judges, new judges), `()` for the recorded verdicts;
    # None: none. Either side may be `judges` (the CLI gates the edit with the new judge, the
    # action with the base's, which the PR does not choose).
    judge_change: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    judge_change_alpha: float = 0.05  # rule J's level for a paired drop in a rate
    # The judges are still to be named (the action's inputs before a rubric's own `judge` key
    # names one): the rules that need a judge wait for `judged_by`, which makes the request a run uses.
    awaiting_judges: bool = False

    def __post_init__(self) -> None:
        check_judging(judges=len(self.judges), samples=self.samples, paraphrases=self.paraphrases,
                      min_stability=self.min_stability, batch=self.batch)
        if self.judge_change is not None:
            old, new = self.judge_change
            for side in (old, new):
                check_judging(judges=len(side), samples=self.samples, paraphrases=0, min_stability=None,
                              batch=self.batch)
            if tuple(old) == tuple(new):
                raise RequestError("against_judge", "the old and the new judge are the same: there is no judge "
                                                    "change to gate")
            if not 0 < self.judge_change_alpha < 1:
                raise RequestError("judge_change_alpha", f"expected a level between 0 and 1, got "
                                                         f"{self.judge_change_alpha}")
        if self.awaiting_judges:
            return
        if not self.judges and (self.samples > 1 or self.paraphrases or self.min_stability is not None):
            raise RequestError("judge", "samples, paraphrases and a minimum stability need a judge")
        if self.batch and not self.judges:
            raise RequestError("batch", "batch judging needs a judge")

    def judged_by(self, judges: tuple[str, ...]) -> GateRequest:
        """This request asked of `judges`; none: replay, where the settings that ask a judge for
        more answers (samples, paraphrases, a minimum stability, batches) have nothing to ask."""
        if judges:
            return replace(self, judges=judges, awaiting_judges=False)
        return replace(self, judges=(), samples=1, paraphrases=0, min_stability=None, batch=False,
                       awaiting_judges=False)

    @property
    def judge(self) -> str | None:
        return self.judges[0] if self.judges else None

    @property
    def measures_reliability(self) -> bool:
        """A panel, several samples or paraphrases: gate on the majority and measure agreement."""
        return bool(self.judges) and (len(self.judges) > 1 or self.samples > 1 or self.paraphrases > 0)

    @property
    def audits(self) -> bool:
        return self.audit or self.audit_rule

    @property
    def sides(self) -> list[tuple[str, ...]]:
        """Every set of judges this run reads: the gate's, and a judge change's old and new ones
        (`()`: the recorded verdicts), old first."""
        change = list(self.judge_change) if self.judge_change is not None else []
        return list(dict.fromkeys([*change, tuple(self.judges)]))

    def audit_panel(self) -> list[str]:
        return list(self.audit_judges) or ([self.judges[0]] if self.judges else [])
