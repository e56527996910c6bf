"""`drift`: the configured judge asked again on a stratified sample of the pairs it answered, and
its answers now compared with the stored ones under the same full key (judge, model, prompt
version, task, check text, item content). Nothing is written to the verdict store: what a gate
replays stays what was stored."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from rubric_gate.calibration import CalibrationSet
from rubric_gate.drift.compare import drift_reasons, paired, per_check, weighted_flip_rate
from rubric_gate.drift.model import ChangedPair, RubricDrift, Thresholds
from rubric_gate.drift.sample import stratified_sample
from rubric_gate.errors import InputError
from rubric_gate.rubric import RubricDocument
from rubric_gate.verdicts import VerdictStore, task_hash
from rubric_gate.verdicts.table_data import ANSWER_CODES, NO, NOT_APPLICABLE

if TYPE_CHECKING:
    from rubric_gate.judges import JudgeRunStats

ANSWERS = len(ANSWER_CODES)  # codes per stratum: a check's stored yes, no and n/a are sampled apart


def _word(code: int) -> str:
    return "no" if code == NO else "n/a" if code == NOT_APPLICABLE else "yes"


def stored_population(doc: RubricDocument, calibration: CalibrationSet, store: VerdictStore, judge: str,
                      prompt: str) -> tuple[list[int], np.ndarray, np.ndarray, np.ndarray]:
    """(the check index of each distinct check text, then per stored pair: its check, its item and
    the stored answer code), for every pair this judge answered under this prompt and task."""
    task = task_hash(doc.rubric.task)
    seen: dict[str, int] = {}
    checks, rows, codes = [], [], []
    for index, check in enumerate(doc.rubric.checks):
        if check.normalized_text in seen:
            continue  # two checks with one text are one set of pairs
        seen[check.normalized_text] = index
        answers, missing = store.answer_codes(check.text, calibration.keys, judge=judge, prompt=prompt, task=task)
        present = np.flatnonzero(~missing)
        checks.append(np.full(len(present), index))
        rows.append(present)
        codes.append(answers[present])
    flat = [np.concatenate(a) if a else np.zeros(0, dtype=np.int64) for a in (checks, rows, codes)]
    return list(seen.values()), flat[0].astype(np.int64), flat[1].astype(np.int64), flat[2].astype(np.int64)


def drift_rubric(doc: RubricDocument, calibration: CalibrationSet, store: VerdictStore, judge: str, *,
                 sample: int, seed: int, thresholds: Thresholds | None = None, concurrency: int = 8,
                 max_calls: int | None = None) -> RubricDrift:
    """Ask `judge` again on a stratified sample of `sample` pairs it answered for `doc`, and compare."""
    from rubric_gate.judges import PROMPT_VERSION, judge_missing

    rubric = doc.rubric
    thresholds = thresholds or Thresholds()
    _, check_of, item_of, stored = stored_population(doc, calibration, store, judge, PROMPT_VERSION)
    if not len(check_of):
        raise InputError(doc.display, f"no verdict stored by {judge} under the current prompt version and task: "
                                      "nothing to ask again (judge the rubric first)")
    drawn = stratified_sample(check_of * ANSWERS + stored, sample, seed)
    picked_check, picked_item, picked_stored = check_of[drawn.chosen], item_of[drawn.chosen], stored[drawn.chosen]
    now = np.zeros(len(drawn.chosen), dtype=np.int64)
    items = calibration.items
    runs: list[JudgeRunStats] = []
    spent = 0
    for index in np.unique(picked_check).tolist():
        mine = np.flatnonzero(picked_check == index)
        check = rubric.checks[index]
        subset = CalibrationSet([items[i] for i in picked_item[mine]], calibration.display)
        asked = VerdictStore()  # in memory: every sampled pair is asked, none is read back from the store
        one = rubric.model_copy(update={"checks": [check]})
        left = None if max_calls is None else max(0, max_calls - spent)
        stats = judge_missing([one], subset, asked, judge, concurrency=concurrency, max_calls=left)
        spent += stats.calls
        runs.append(stats)
        codes, missing = asked.answer_codes(check.text, subset.keys, judge=judge, prompt=PROMPT_VERSION,
                                            task=task_hash(rubric.task))
        assert not missing.any()  # judge_missing raises on a pair left without a valid answer
        now[mine] = codes
    stored_failed, now_failed = picked_stored == NO, now == NO
    na_changed = (picked_stored != now) & ((picked_stored == NOT_APPLICABLE) | (now == NOT_APPLICABLE)) \
        & (stored_failed == now_failed)
    to_no, to_yes, kappa, p_value = paired(stored_failed, now_failed)
    weights = np.array([drawn.weights[int(s)] for s in drawn.strata])
    flip_rate = weighted_flip_rate(stored_failed != now_failed, weights)
    flawed = calibration.flawed
    ids = calibration.ids
    changed = [ChangedPair(rubric.checks[c].id, ids[i], "flawed" if flawed[i] else "correct", _word(s), _word(n))
               for c, i, s, n in zip(picked_check.tolist(), picked_item.tolist(), picked_stored.tolist(), now.tolist(),
                                     strict=True) if s != n]
    return RubricDrift(
        rubric=doc.display, rubric_id=rubric.id, judge=judge, prompt=PROMPT_VERSION, population=len(check_of),
        asked=len(drawn.chosen), seed=seed, to_no=to_no, to_yes=to_yes, not_applicable_changed=int(na_changed.sum()),
        flip_rate=flip_rate, kappa=kappa, p_value=p_value,
        checks=per_check([c.id for c in rubric.checks], picked_check, stored_failed, now_failed, na_changed),
        changed=changed, thresholds=thresholds, judging=_totals(runs, judge),
        reasons=drift_reasons(flip_rate, to_no, to_yes, p_value, thresholds),
    )


def _totals(runs: Sequence[JudgeRunStats], judge: str) -> dict[str, Any]:
    """The run's calls, tokens and cost over its per-check judging (a cost is unknown if any is)."""
    from rubric_gate.judges import JudgeRunStats

    return JudgeRunStats.combined(runs, judge).to_dict()
