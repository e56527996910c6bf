"""`check` with a panel: gate on the majority, then say how far each decision can be trusted."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from rubric_gate.ensemble.panel import PanelLookup
from rubric_gate.ensemble.stability import decisive_mask
from rubric_gate.gate import GateOptions, run_gate
from rubric_gate.gate.diff import diff_rubrics
from rubric_gate.reliability import pairwise_kappa
from rubric_gate.results import ChangeReliability, CheckReport, ReliabilityReport
from rubric_gate.rubric import RubricDocument
from rubric_gate.scoring import run_check

LISTED_ITEMS = 10


def _ids(lookup: PanelLookup, mask: np.ndarray) -> tuple[str, ...]:
    return tuple(lookup.item_ids[i] for i in np.flatnonzero(mask))


def run_panel_check(
    base: RubricDocument,
    head: RubricDocument,
    lookup: PanelLookup,
    options: GateOptions | None = None,
) -> CheckReport:
    options = options or GateOptions()
    report = run_check(base, head, lookup, options)
    if not lookup.measures_anything:
        return report
    flawed = lookup.calibration.flawed
    by_judge: dict[str, dict[str, bool]] = {}
    if lookup.measures_judges:
        for judge in lookup.judges:
            alone = lookup.for_judge(judge)
            own = replace(options, stability=alone.stability) if options.stability is not None else options
            result = run_gate(base.rubric, head.rubric, lookup.item_ids, flawed, alone.failed_column, own)
            by_judge[judge] = {d.change.check_id: d.accepted for d in result.decisions}
    reliability = ReliabilityReport(lookup.judges, lookup.samples, changes=len(report.changes))
    changes = {c.check_id: c for c in diff_rubrics(base.rubric, head.rubric)}  # ids are unique across kinds
    rows = []
    agree = 0
    for row in report.changes:
        change = changes[row.check]
        unstable_items = tied_items = None
        decided_alone: dict[str, bool] = {}  # judge -> accepted when it gates alone
        if lookup.measures_samples:
            unstable = decisive_mask(change, lambda text: lookup.votes(text).unstable, flawed)
            unstable_items = _ids(lookup, unstable)[:LISTED_ITEMS]
            if unstable.any():
                reliability.unstable_changes.append(row.check)
        if lookup.measures_judges:
            tied = decisive_mask(change, lambda text: lookup.votes(text).tied, flawed)
            tied_items = _ids(lookup, tied)[:LISTED_ITEMS]
            if tied.any():
                reliability.tied_changes.append(row.check)
            decided_alone = {j: by_judge[j][row.check] for j in lookup.judges}
            agree += all(accepted == row.accepted for accepted in decided_alone.values())
        rows.append(replace(row, reliability=ChangeReliability(unstable_items, tied_items, decided_alone)))
    report.changes = rows
    if lookup.measures_judges:
        reliability.judges_agree = agree
        reliability.judge_kappa = pairwise_kappa(_judge_answers(base, head, lookup))
    if lookup.measures_samples:
        flips = [(r.id, r.reliability.samples.flip_rate) for r in report.head.checks
                 if r.reliability and r.reliability.samples and r.reliability.samples.flip_rate is not None]
        reliability.max_flip = max(flips, key=lambda f: f[1]) if flips else None
    measured = [(r.id, r.reliability.paraphrase.kappa) for r in report.head.checks
                if r.reliability and r.reliability.paraphrase and r.reliability.paraphrase.kappa is not None]
    reliability.paraphrased = len(measured)
    reliability.min_paraphrase = min(measured, key=lambda m: m[1]) if measured else None
    report.reliability = reliability
    return report


def _judge_answers(base: RubricDocument, head: RubricDocument, lookup: PanelLookup) -> dict[str, np.ndarray]:
    """Each judge's answers (majority of its samples) over every (check text, item) pair of
    base and head, in one order, for pairwise kappa."""
    texts = list(dict.fromkeys(c.normalized_text for doc in (base, head) for c in doc.rubric.checks))
    raw = {c.normalized_text: c.text for doc in (base, head) for c in doc.rubric.checks}
    stacked = np.concatenate([lookup.votes(raw[t]).per_judge for t in texts], axis=1)
    return {judge: stacked[j] for j, judge in enumerate(lookup.judges)}
