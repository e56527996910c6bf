"""Verdict columns from a panel: several judges, each asked each pair `samples` times, and the
gate on them (`PanelLookup.gate`: the gate's report, with how far each decision can be trusted).

The gate sees one column per check text, the per-pair majority: first over a judge's samples,
then over the judges. An n/a answer is an abstention at both levels: the majority is among the
votes cast, a tie among them counts as "no", and a pair nobody voted on is n/a (never a fail).
The votes behind each column stay available for flip rate, alpha and the stability of each
decision, all read the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from rubric_gate.ensemble.stability import decisive_mask
from rubric_gate.gate import GateOptions, run_gate
from rubric_gate.gate.diff import diff_rubrics
from rubric_gate.reliability import (
    Vote,
    majority,
    nominal_alpha,
    pairwise_kappa,
    paraphrase_agreement,
    paraphrase_kappa,
    paraphrase_phi,
)
from rubric_gate.results import (
    ChangeReliability,
    CheckReliability,
    CheckReport,
    JudgeAgreement,
    ParaphraseStability,
    ReliabilityReport,
    RubricSummary,
    SampleStability,
)
from rubric_gate.rubric import Rubric, RubricDocument, normalize_text
from rubric_gate.scoring import VerdictLookup, run_check
from rubric_gate.verdicts import VerdictColumn, verdict_column


@dataclass
class Votes:
    """One check text's answers: `failed[j, s, i]` is judge j's sample s on item i. An n/a answer
    is an abstention (`reliability.majority`): it casts no vote, at every level."""

    failed: np.ndarray
    missing: np.ndarray
    not_applicable: np.ndarray | None = None  # same shape: the answer was "n/a" (never a fail)

    def _samples(self, judge: int) -> Vote:
        return majority(self.failed[judge], None if self.not_applicable is None else self.not_applicable[judge])

    @property
    def per_judge_not_applicable(self) -> np.ndarray | None:
        """(judges, items): True where a judge abstained, every one of its samples n/a."""
        if self.not_applicable is None:
            return None
        return np.stack([self._samples(j).abstained for j in range(len(self.failed))])

    @property
    def per_judge(self) -> np.ndarray:
        """(judges, items): each judge's majority over the samples it voted in."""
        return np.stack([self._samples(j).failed for j in range(len(self.failed))])

    @property
    def panel(self) -> Vote:
        """The judges' majority among those that voted: what the gate reads."""
        return majority(self.per_judge, self.per_judge_not_applicable)

    @property
    def unstable(self) -> np.ndarray:
        """Items on which some judge's samples voted both ways."""
        return np.asarray(np.stack([self._samples(j).split for j in range(len(self.failed))]).any(axis=0))

    @property
    def tied(self) -> np.ndarray:
        """Items on which the judges that voted split evenly (counted as "no")."""
        return self.panel.tie


@dataclass
class PanelLookup(VerdictLookup):
    judges: tuple[str, ...] = ()
    samples: int = 1
    # original check text (normalised) -> its paraphrases, judged like any check text
    paraphrases: dict[str, list[str]] = field(default_factory=dict)
    _votes: dict[str, Votes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.judges:
            raise ValueError("a panel needs at least one judge")
        self.judge = None  # columns come from `votes`, never from the single-judge lookup

    @property
    def measures_samples(self) -> bool:
        return self.samples > 1

    @property
    def measures_judges(self) -> bool:
        return len(self.judges) > 1

    @property
    def measures_anything(self) -> bool:
        return self.measures_samples or self.measures_judges or bool(self.paraphrases)

    def paraphrases_of(self, text: str) -> list[str]:
        return self.paraphrases.get(normalize_text(text), [])

    def paraphrase_agreement(self, text: str) -> float | None:
        paraphrases = self.paraphrases_of(text)
        if not paraphrases:
            return None
        return paraphrase_agreement(self.failed_column(text), np.stack([self.failed_column(p) for p in paraphrases]))

    def paraphrase_kappa(self, text: str) -> float | None:
        paraphrases = self.paraphrases_of(text)
        if not paraphrases:
            return None
        return paraphrase_kappa(self.failed_column(text), np.stack([self.failed_column(p) for p in paraphrases]))

    def _paraphrase_phi(self, text: str) -> float | None:
        paraphrases = self.paraphrases_of(text)
        if not paraphrases:
            return None
        return paraphrase_phi(self.failed_column(text), np.stack([self.failed_column(p) for p in paraphrases]))

    def stability(self, text: str) -> float | None:
        """The lower of the paraphrase kappa (chance-corrected; raw agreement where kappa is
        undefined) and 1 - flip rate, whichever were measured."""
        measured = []
        if self.measures_samples and len(self.calibration):
            measured.append(1 - float(self.votes(text).unstable.mean()))
        kappa = self.paraphrase_kappa(text)
        paraphrased = kappa if kappa is not None else self.paraphrase_agreement(text)
        if paraphrased is not None:
            measured.append(paraphrased)
        return min(measured) if measured else None

    def votes(self, text: str) -> Votes:
        cached = self._votes.get(text)
        if cached is None:
            columns = [
                [verdict_column(text, self.calibration.keys, self.store, judge=judge, prompt=self.prompt, sample=s,
                               task=self.task)
                 for s in range(self.samples)]
                for judge in self.judges
            ]
            cached = Votes(
                failed=np.array([[c.failed for c in row] for row in columns], dtype=bool).reshape(
                    len(self.judges), self.samples, len(self.calibration)),
                missing=np.array([[c.missing for c in row] for row in columns], dtype=bool).reshape(
                    len(self.judges), self.samples, len(self.calibration)),
                not_applicable=np.array(
                    [[c.not_applicable if c.not_applicable is not None else np.zeros(len(self.calibration), dtype=bool)
                      for c in row] for row in columns], dtype=bool).reshape(
                    len(self.judges), self.samples, len(self.calibration)),
            )
            self._votes[text] = cached
        return cached

    def column(self, text: str) -> VerdictColumn:
        cached = self._columns.get(text)
        if cached is None:
            votes = self.votes(text)
            vote = votes.panel
            cached = VerdictColumn(text, vote.failed, np.asarray(votes.missing.any(axis=(0, 1))),
                                   vote.abstained if vote.abstained.any() else None)
            self._columns[text] = cached
        return cached

    def for_judge(self, judge: str) -> PanelLookup:
        """The same votes with one judge alone: what `check --judge JUDGE` would see."""
        index = self.judges.index(judge)
        single = PanelLookup(self.calibration, self.store, self.rubric, prompt=self.prompt, judges=(judge,),
                                 samples=self.samples, paraphrases=self.paraphrases)
        single._votes = {text: Votes(v.failed[index:index + 1], v.missing[index:index + 1],
                                     None if v.not_applicable is None else v.not_applicable[index:index + 1])
                         for text, v in self._votes.items()}
        return single

    def check_reliability(self, text: str) -> CheckReliability:
        """Per-check figures, only those measured: flip rate with samples, alpha and ties with judges."""
        votes = self.votes(text)
        samples = judges = paraphrase = None
        if self.measures_samples:
            # With several judges an item is unstable when any judge's samples disagree.
            samples = SampleStability(float(votes.unstable.mean()) if len(self.calibration) else None,
                                      tuple(self.item_ids[i] for i in np.flatnonzero(votes.unstable)))
        if self.measures_judges:
            judges = JudgeAgreement(nominal_alpha(votes.per_judge, votes.per_judge_not_applicable),
                                    tuple(self.item_ids[i] for i in np.flatnonzero(votes.tied)))
        paraphrases = self.paraphrases_of(text)
        if paraphrases:
            paraphrase = ParaphraseStability(self.paraphrase_agreement(text), self.paraphrase_kappa(text),
                                             tuple(paraphrases), self._paraphrase_phi(text))
        return CheckReliability(samples, judges, paraphrase)

    def gate(self, base: RubricDocument, head: RubricDocument, options: GateOptions,
             min_stability: float | None = None) -> tuple[CheckReport, GateOptions]:
        """Gated on the per-pair majority, saying how far each decision can be trusted; with a
        minimum stability, rule U on each added or reworded check's measured stability."""
        if min_stability is not None:
            options = replace(options, min_stability=min_stability, stability=self.stability)
        return run_panel_check(base, head, self, options), options

    def summarize(self, rubric: Rubric, display: str) -> RubricSummary:
        summary = super().summarize(rubric, display)
        if not self.measures_anything:
            return summary
        texts = {check.id: check.text for check in rubric.checks}
        rows = [replace(row, reliability=self.check_reliability(texts[row.id])) for row in summary.checks]
        return replace(summary, checks=rows)


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
