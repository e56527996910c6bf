"""`check` with a panel: gate on the majority, then say how far each decision can be trusted."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from rubric_gate.ensemble.panel import PanelLookup
from rubric_gate.ensemble.stability import decisive_mask
from rubric_gate.gate import GateOptions, run_gate
from rubric_gate.gate.diff import diff_rubrics
from rubric_gate.reliability import pairwise_kappa
from rubric_gate.report.model import CheckReport
from rubric_gate.rubric import RubricDocument
from rubric_gate.scoring import run_check

LISTED_ITEMS = 10


@dataclass
class ReliabilityReport:
    judges: tuple[str, ...]
    samples: int
    paraphrased: int = 0  # checks measured under paraphrase
    min_paraphrase: tuple[str, float] | None = None  # (check id, agreement) of the least stable one
    judge_kappa: list[tuple[str, str, float | None]] = field(default_factory=list)
    changes: int = 0
    judges_agree: int | None = None  # changes on which every judge alone decides as the panel
    unstable_changes: list[str] = field(default_factory=list)
    tied_changes: list[str] = field(default_factory=list)
    max_flip: tuple[str, float] | None = None  # (check id, flip rate) of the least stable head check

    def to_dict(self) -> dict[str, Any]:
        return {
            "judges": list(self.judges),
            "samples": self.samples,
            "paraphrased_checks": self.paraphrased,
            "judge_kappa": [{"judges": [a, b], "kappa": None if k is None else round(k, 4)}
                            for a, b, k in self.judge_kappa],
            "judges_agree": None if self.judges_agree is None else {
                "changes": self.judges_agree, "of": self.changes,
                "share": None if not self.changes else round(self.judges_agree / self.changes, 4)},
            "unstable_changes": self.unstable_changes,
            "tied_changes": self.tied_changes,
        }

    def how_sure(self) -> list[str]:
        parts = []
        if len(self.judges) > 1:
            text = f"{len(self.judges)} judges, majority per pair"
            if self.changes:
                text += f": each alone decides as the panel on {self.judges_agree} of {self.changes} changes"
            kappas = [k for _, _, k in self.judge_kappa if k is not None]
            if kappas:
                text += f", kappa between judges {min(kappas):.2f}" + (
                    f" to {max(kappas):.2f}" if max(kappas) != min(kappas) else "")
            parts.append(text)
        if self.samples > 1:
            text = f"{self.samples} samples per pair"
            if self.max_flip is not None:
                text += f": flip rate up to {100 * self.max_flip[1]:.0f}% ({self.max_flip[0]})"
            parts.append(text)
        if self.min_paraphrase is not None:
            check, value = self.min_paraphrase
            parts.append(f"paraphrases of {self.paraphrased} changed check{'s' if self.paraphrased != 1 else ''}: "
                         f"agreement down to {100 * value:.0f}% ({check})")
        if self.unstable_changes:
            n = len(self.unstable_changes)
            parts.append(f"{n} decision{'s' if n != 1 else ''} rest{'s' if n == 1 else ''} on unstable verdicts")
        if self.tied_changes:
            n = len(self.tied_changes)
            parts.append(f"{n} decision{'s' if n != 1 else ''} rest{'s' if n == 1 else ''} on judges' ties (counted as no)")
        return parts


def _ids(lookup: PanelLookup, mask: np.ndarray) -> list[str]:
    return [lookup.item_ids[i] for i in np.flatnonzero(mask)]


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
        extra: dict[str, Any] = {}
        if lookup.measures_samples:
            unstable = decisive_mask(change, lambda text: lookup.votes(text).unstable, flawed)
            extra["unstable"] = bool(unstable.any())
            extra["unstable_items"] = _ids(lookup, unstable)[:LISTED_ITEMS]
            if unstable.any():
                reliability.unstable_changes.append(row.check)
        if lookup.measures_judges:
            tied = decisive_mask(change, lambda text: lookup.votes(text).tied, flawed)
            extra["tied_items"] = _ids(lookup, tied)[:LISTED_ITEMS]
            if tied.any():
                reliability.tied_changes.append(row.check)
            extra["by_judge"] = {j: "accepted" if by_judge[j][row.check] else "rejected" for j in lookup.judges}
            agree += all(by_judge[j][row.check] == row.accepted for j in lookup.judges)
        rows.append(replace(row, reliability=extra))
    report.changes = rows
    if lookup.measures_judges:
        reliability.judges_agree = agree
        reliability.judge_kappa = pairwise_kappa(_judge_answers(base, head, lookup))
    if lookup.measures_samples:
        flips = [(r.id, r.reliability["flip_rate"]) for r in report.head.checks
                 if r.reliability and r.reliability.get("flip_rate") is not None]
        reliability.max_flip = max(flips, key=lambda f: f[1]) if flips else None
    measured = [(r.id, r.reliability["paraphrase_agreement"]) for r in report.head.checks
                if r.reliability and r.reliability.get("paraphrase_agreement") is not None]
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
