"""Measure check texts for the `vfr` repair objective on the development split: the adversarial
fool rate (attacker, the gate's judge, a blind verifier) and inter-judge alpha (the judges'
verdicts, stored like any others). Everything is stored, so a rerun makes no call."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rubric_gate.audit.calls import CallStats
from rubric_gate.audit.model import Fool
from rubric_gate.audit.store import AuditStore
from rubric_gate.calibration import CalibrationSet
from rubric_gate.repair.objective import DEFAULT_DELTA, Robustness, agreement
from rubric_gate.rubric import Check, Rubric
from rubric_gate.verdicts import VerdictStore

DEFAULT_ATTACKS = 5


@dataclass(frozen=True)
class VfrObjective:
    dev: CalibrationSet  # the development split (items with `split: evaluation`)
    attacker: str
    verifier: str
    judges: tuple[str, ...]  # at least two, for alpha
    attacks: int = DEFAULT_ATTACKS
    delta: float = DEFAULT_DELTA


@dataclass
class Measurement:
    robustness: dict[str, Robustness] = field(default_factory=dict)  # by check text
    fools: dict[str, list[Fool]] = field(default_factory=dict)
    unstable: dict[str, list[str]] = field(default_factory=dict)  # dev item ids the judges disagree on
    usage: list[CallStats] = field(default_factory=list)
    judging: list[dict[str, Any]] = field(default_factory=list)


def measure(texts: Sequence[str], rubric: Rubric, objective: VfrObjective, *, judge: str, store: AuditStore,
            verdicts: VerdictStore, concurrency: int = 8, max_calls: int | None = None) -> Measurement:
    from rubric_gate.audit.adversarial import fool_rates
    from rubric_gate.judges.api import judge_missing
    from rubric_gate.judges.prompt import PROMPT_VERSION
    from rubric_gate.scoring import VerdictLookup

    texts = list(dict.fromkeys(texts))
    checks = [Check(id=f"m{i}", text=t) for i, t in enumerate(texts)]
    out = Measurement()
    rates, out.usage = fool_rates(rubric.task, checks, objective.dev.items, objective.attacks,
                                  attacker=objective.attacker, judge=judge, verifier=objective.verifier,
                                  store=store, concurrency=concurrency)
    scoring = rubric.model_copy(update={"checks": checks})
    answers: dict[str, list[np.ndarray]] = {t: [] for t in texts}
    for j in objective.judges:
        run = judge_missing([scoring], objective.dev, verdicts, j, concurrency=concurrency, max_calls=max_calls,
                            progress=False)
        out.judging.append(run.to_dict())
        lookup = VerdictLookup(objective.dev, verdicts, scoring, judge=j, prompt=PROMPT_VERSION)
        for t in texts:
            answers[t].append(~lookup.failed_column(t))
    ids = [i.id for i in objective.dev.items]
    for check in checks:
        attempts, fools = rates.get(check.id, (objective.attacks, []))
        stacked = np.vstack(answers[check.text])
        out.robustness[check.text] = Robustness(agreement(stacked), len(fools) / attempts if attempts else 0.0,
                                                len(fools), attempts)
        out.fools[check.text] = fools
        split = ~(stacked == stacked[0]).all(axis=0)
        out.unstable[check.text] = [ids[i] for i in np.flatnonzero(split)]
    return out


def combined(parts: Sequence[Robustness]) -> Robustness:
    """A split rewrite's figures: its worst part on each axis (most fools, least agreement)."""
    alphas = [p.alpha for p in parts]
    worst = max(parts, key=lambda p: p.vfr)
    return Robustness(None if any(a is None for a in alphas) else min(a for a in alphas if a is not None),
                      worst.vfr, worst.fools, worst.attacks)
