"""Ask what a panel needs before the gate runs: every judge's samples of every pair, and the
paraphrases of changed checks (generated once, then judged like any check)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from rubric_gate.calibration import CalibrationSet
from rubric_gate.errors import JudgeError
from rubric_gate.gate.diff import diff_rubrics
from rubric_gate.judges import JudgeRunStats, judge_missing
from rubric_gate.llm.accounting import run_totals
from rubric_gate.llm.errors import UnansweredError
from rubric_gate.paraphrase import ParaphraseStore, ensure_paraphrases, paraphrase_path
from rubric_gate.report.terminal import strip_controls
from rubric_gate.rubric import Check, Rubric, normalize_text
from rubric_gate.verdicts import VerdictStore


@dataclass
class Measured:
    runs: list[JudgeRunStats] = field(default_factory=list)
    paraphrases: dict[str, list[str]] = field(default_factory=dict)  # normalised text -> rewordings
    paraphrase_info: dict[str, Any] | None = None
    notices: list[str] = field(default_factory=list)  # advice that failed (paraphrases no rule reads)
    advice_usage: list[Any] = field(default_factory=list)  # the calls of that advice, still counted


def changed_texts(base: Rubric, head: Rubric) -> list[str]:
    """Head texts of added and reworded checks: the ones whose stability the gate may test."""
    return [c.head.text for c in diff_rubrics(base, head)
            if c.head is not None and (c.kind == "added" or c.reworded)]


def paraphrase_rubric(head: Rubric, paraphrases: dict[str, list[str]]) -> Rubric:
    checks = [Check(id=f"paraphrase-{n}", text=text)
              for n, text in enumerate(t for texts in paraphrases.values() for t in texts)]
    return head.model_copy(update={"checks": checks})


def judge_panel(
    base: Rubric,
    head: Rubric,
    items: CalibrationSet,
    store: VerdictStore,
    judges: Sequence[str],
    *,
    samples: int = 1,
    paraphrases: int = 0,
    paraphraser: str | None = None,
    concurrency: int = 8,
    max_calls: int | None = None,
    paraphrases_decide: bool = True,
) -> Measured:
    """Every judge's answers, then the paraphrases. A judge that fails does not stop the panel:
    every judge is asked, then the failures are raised together (with every judge's statistics).
    Paraphrases that no rule reads (`paraphrases_decide` False: no --min-stability) are advice:
    their failure is a notice, and the gate runs without them."""
    measured = Measured()
    budget = _Budget(max_calls)  # `max_calls` bounds the whole panel, not each judge
    left = budget.left
    failed: list[JudgeError] = []
    for judge in judges:
        try:
            stats = judge_missing([base, head], items, store, judge, concurrency=concurrency,
                                  max_calls=left(), samples=samples)
        except JudgeError as exc:
            failed.append(exc)
            for partial in run_totals(exc):
                budget.spent += partial.calls
                print(partial.summary, file=sys.stderr)
            continue
        budget.spent += stats.calls
        print(stats.summary, file=sys.stderr)
        measured.runs.append(stats)
    if failed:
        raise_panel(failed, measured.runs)
    if paraphrases <= 0:
        return measured
    if paraphrases_decide:
        _paraphrase(measured, base, head, items, store, judges, samples, paraphrases, paraphraser, concurrency, budget)
        return measured
    try:
        _paraphrase(measured, base, head, items, store, judges, samples, paraphrases, paraphraser, concurrency, budget)
    except JudgeError as exc:  # a model failure; a corrupt paraphrase file stays bad input (exit 2)
        measured.advice_usage.extend(run_totals(exc))
        measured.notices.append(f"Paraphrases did not finish (advice only: no --min-stability reads them, the "
                                f"gate's decision stands): {strip_controls(exc.message)}")
    return measured


@dataclass
class _Budget:
    limit: int | None
    spent: int = 0

    def left(self) -> int | None:
        return None if self.limit is None else max(0, self.limit - self.spent)


def raise_panel(failed: Sequence[JudgeError], runs: Sequence[JudgeRunStats]) -> NoReturn:
    """One error for the panel: each judge's failure, and the statistics of every judge asked."""
    if len(failed) == 1 and not runs:
        raise failed[0]
    totals = [*runs, *(s for exc in failed for s in run_totals(exc))]
    message = "; ".join(exc.message for exc in failed)
    if all(isinstance(exc, UnansweredError) for exc in failed):
        raise UnansweredError(message, failures=[f for exc in failed for f in exc.failures],  # type: ignore[attr-defined]
                              stats=totals)
    error = JudgeError(message)
    error.stats = totals  # type: ignore[attr-defined]
    raise error


def _paraphrase(measured: Measured, base: Rubric, head: Rubric, items: CalibrationSet, store: VerdictStore,
                judges: Sequence[str], samples: int, paraphrases: int, paraphraser: str | None, concurrency: int,
                budget: _Budget) -> None:
    model = paraphraser or judges[0]
    pstore = ParaphraseStore.load(paraphrase_path(store.path)) if store.path is not None else ParaphraseStore()
    texts = changed_texts(base, head)
    found, calls = ensure_paraphrases(texts, model, paraphrases, pstore)
    measured.paraphrases = {normalize_text(text): rewordings for text, rewordings in found.items()}
    judged = []
    if texts:
        extra = paraphrase_rubric(head, found)
        for judge in judges:
            stats = judge_missing([extra], items, store, judge, concurrency=concurrency,
                                  max_calls=budget.left(), samples=samples)
            budget.spent += stats.calls
            judged.append(stats.to_dict())
    measured.paraphrase_info = {
        "model": model, "per_check": paraphrases, "checks": len(texts), "generated": calls,
        "reused": paraphrases * len(texts) - calls, "judging": judged,
    }
    print(f"paraphrases by {model}: {calls} generated, {paraphrases * len(texts) - calls} reused; "
          f"judging them: {sum(s['calls'] for s in judged)} calls, {sum(s['reused'] for s in judged)} verdicts reused",
          file=sys.stderr)
